// Status and Result<T>: Trove's one error type.
//
// A Status holds a code and a message; OK costs one null pointer (LevelDB's Status). Result<T>
// holds a value or a non-OK Status and mirrors the subset of std::expected<T, Status> Trove
// uses. RETURN_IF_ERROR and ASSIGN_OR_RETURN keep the happy path flat.
// Messages are lower-case, end without a period and say where ("0x1f4: function body: ...").
// WithContext prefixes the outer step, so a message reads from the outermost step inward.
// Thread safety: values; a const Status may be read from any thread.
#pragma once

#include <cassert>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace trove::base {

// The codes stay few, each one something a caller acts on. Codes whose message speaks to the
// caller about its own request: kInvalidArgument, kNotFound, kAlreadyExists, kMalformed
// (corrupt input), kUnsupported, kPermissionDenied, kResourceExhausted (a limit reached),
// kDeadlineExceeded. Codes that describe the server's side: kIo, kInternal, kUnavailable (a
// transient condition such as a busy or locked database: the same call may succeed if retried
// after a short delay) and kDataLoss (a stored file of the server's is corrupt or not what it
// should be, e.g. SQLITE_CORRUPT). Their messages may name paths and SQL, so a protocol layer shows
// them to the operator's log only (mcp::ToolErrorFromStatus). kCancelled: the caller asked to stop.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kMalformed,
  kUnsupported,
  kPermissionDenied,
  kResourceExhausted,
  kCancelled,
  kIo,
  kInternal,
  kDeadlineExceeded,
  kUnavailable,
  kDataLoss,
};

// Returns the lower-case name of `code` ("invalid argument").
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {StatusCode::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) {
    return {StatusCode::kAlreadyExists, std::move(msg)};
  }
  static Status Malformed(std::string msg) { return {StatusCode::kMalformed, std::move(msg)}; }
  static Status Unsupported(std::string msg) { return {StatusCode::kUnsupported, std::move(msg)}; }
  static Status PermissionDenied(std::string msg) {
    return {StatusCode::kPermissionDenied, std::move(msg)};
  }
  static Status ResourceExhausted(std::string msg) {
    return {StatusCode::kResourceExhausted, std::move(msg)};
  }
  static Status Cancelled(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
  static Status Io(std::string msg) { return {StatusCode::kIo, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
  static Status DeadlineExceeded(std::string msg) {
    return {StatusCode::kDeadlineExceeded, std::move(msg)};
  }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status DataLoss(std::string msg) { return {StatusCode::kDataLoss, std::move(msg)}; }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  // Returns the message, empty when OK.
  const std::string& message() const;
  // Returns "code name: message", or "ok".
  std::string ToString() const;

  // Returns this status with "context: " prefixed to its message; OK stays OK.
  Status WithContext(std::string_view context) const&;
  Status WithContext(std::string_view context) &&;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

// Result<T>: a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  using value_type = T;

  Result(const T& value) : status_(), has_value_(true) { new (&storage_) T(value); }
  Result(T&& value) : status_(), has_value_(true) { new (&storage_) T(std::move(value)); }
  template <typename U, typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                                    !std::is_same_v<std::decay_t<U>, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Status> &&
                                                    !std::is_same_v<std::decay_t<U>, Result<T>>>>
  Result(U&& value) : status_(), has_value_(true) {
    new (&storage_) T(std::forward<U>(value));
  }
  // REQUIRES: !status.ok()
  Result(Status status) : status_(std::move(status)), has_value_(false) {
    assert(!status_.ok());
    if (status_.ok()) status_ = Status::Internal("ok status given to Result without a value");
  }
  Result(const Result& other) : status_(other.status_), has_value_(other.has_value_) {
    if (has_value_) new (&storage_) T(*other.ptr());
  }
  Result(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
      : status_(std::move(other.status_)), has_value_(other.has_value_) {
    if (has_value_) new (&storage_) T(std::move(*other.ptr()));
  }
  Result& operator=(const Result& other) {
    if (this != &other) {
      Reset();
      status_ = other.status_;
      has_value_ = other.has_value_;
      if (has_value_) new (&storage_) T(*other.ptr());
    }
    return *this;
  }
  Result& operator=(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) {
      Reset();
      status_ = std::move(other.status_);
      has_value_ = other.has_value_;
      if (has_value_) new (&storage_) T(std::move(*other.ptr()));
    }
    return *this;
  }
  ~Result() { Reset(); }

  bool ok() const { return has_value_; }
  bool has_value() const { return has_value_; }
  explicit operator bool() const { return has_value_; }

  // Returns the error; OK when a value is held.
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }
  const Status& error() const& { return status_; }

  T& value() & {
    assert(has_value_);
    return *ptr();
  }
  const T& value() const& {
    assert(has_value_);
    return *ptr();
  }
  T&& value() && {
    assert(has_value_);
    return std::move(*ptr());
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return has_value_ ? *ptr() : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  T* ptr() { return std::launder(reinterpret_cast<T*>(&storage_)); }
  const T* ptr() const { return std::launder(reinterpret_cast<const T*>(&storage_)); }
  void Reset() {
    if (has_value_) ptr()->~T();
    has_value_ = false;
  }

  Status status_;
  bool has_value_;
  alignas(T) unsigned char storage_[sizeof(T)];
};

namespace internal {
inline Status AsStatus(const Status& s) { return s; }
inline Status AsStatus(Status&& s) { return std::move(s); }
template <typename T>
Status AsStatus(const Result<T>& r) {
  return r.status();
}
template <typename T>
Status AsStatus(Result<T>&& r) {
  return std::move(r).status();
}
}  // namespace internal

}  // namespace trove::base

namespace trove {
using base::Result;
using base::Status;
}  // namespace trove

#define TROVE_CONCAT_INNER_(a, b) a##b
#define TROVE_CONCAT_(a, b) TROVE_CONCAT_INNER_(a, b)

// RETURN_IF_ERROR(expr): returns the Status of `expr` (a Status or Result) when it is not OK.
#define RETURN_IF_ERROR(...)                                           \
  do {                                                                 \
    auto&& trove_status_or_ = (__VA_ARGS__);                           \
    if (!trove_status_or_.ok()) {                                      \
      return ::trove::base::internal::AsStatus(                        \
          std::forward<decltype(trove_status_or_)>(trove_status_or_)); \
    }                                                                  \
  } while (false)

#define TROVE_ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return std::move(tmp).status();      \
  decl = std::move(tmp).value()

// ASSIGN_OR_RETURN(decl, expr): evaluates the Result `expr`; returns its Status on error, else
// assigns or declares `decl` with the value.
#define ASSIGN_OR_RETURN(decl, ...) \
  TROVE_ASSIGN_OR_RETURN_IMPL_(TROVE_CONCAT_(trove_result_, __LINE__), decl, (__VA_ARGS__))

// CHECK(cond): aborts with file and line when a programmer invariant is broken.
#define TROVE_CHECK(cond)                                                         \
  do {                                                                            \
    if (!(cond)) ::trove::base::internal::CheckFailed(__FILE__, __LINE__, #cond); \
  } while (false)

namespace trove::base::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond);
}  // namespace trove::base::internal
