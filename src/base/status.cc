#include "base/status.h"

#include <cstdio>
#include <cstdlib>

namespace trove::base {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kAlreadyExists:
      return "already exists";
    case StatusCode::kMalformed:
      return "malformed";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kPermissionDenied:
      return "permission denied";
    case StatusCode::kResourceExhausted:
      return "resource exhausted";
    case StatusCode::kCancelled:
      return "cancelled";
    case StatusCode::kIo:
      return "io error";
    case StatusCode::kInternal:
      return "internal";
    case StatusCode::kDeadlineExceeded:
      return "deadline exceeded";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kDataLoss:
      return "data loss";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) rep_ = std::make_unique<Rep>(Rep{code, std::move(message)});
}

Status::Status(const Status& other)
    : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
  return *this;
}

const std::string& Status::message() const {
  static const std::string* const kEmpty = new std::string();
  return rep_ ? rep_->message : *kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(StatusCodeName(code()));
  out += ": ";
  out += rep_->message;
  return out;
}

Status Status::WithContext(std::string_view context) const& {
  Status copy(*this);
  return std::move(copy).WithContext(context);
}

Status Status::WithContext(std::string_view context) && {
  if (rep_) {
    std::string msg(context);
    msg += ": ";
    msg += rep_->message;
    rep_->message = std::move(msg);
  }
  return std::move(*this);
}

namespace internal {
void CheckFailed(const char* file, int line, const char* cond) {
  std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, cond);
  std::abort();
}
}  // namespace internal

}  // namespace trove::base
