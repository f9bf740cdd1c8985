#include "librarian/crawl/file_timeout.h"

#include <fmt/format.h>

namespace trove::librarian::crawl {

Result<FileTimeoutPolicy> ParseFileTimeoutPolicy(std::string_view name) {
  if (name == "skip") return FileTimeoutPolicy::kSkip;
  if (name == "retry") return FileTimeoutPolicy::kRetry;
  if (name == "fail") return FileTimeoutPolicy::kFail;
  return Status::InvalidArgument("fileTimeoutPolicy: must be one of skip, retry, fail");
}

std::string_view FileTimeoutPolicyName(FileTimeoutPolicy policy) {
  switch (policy) {
    case FileTimeoutPolicy::kSkip:
      return "skip";
    case FileTimeoutPolicy::kRetry:
      return "retry";
    case FileTimeoutPolicy::kFail:
      return "fail";
  }
  return "skip";
}

Status ValidateFileTimeoutOptions(const FileTimeoutOptions& options) {
  if (options.timeout_ms < 0 || options.timeout_ms > 3'600'000) {
    return Status::InvalidArgument(
        fmt::format("fileTimeoutMs: must be between 0 and 3600000, got {}", options.timeout_ms));
  }
  if (options.retries < 0 || options.retries > 10) {
    return Status::InvalidArgument(
        fmt::format("fileTimeoutRetries: must be between 0 and 10, got {}", options.retries));
  }
  return Status::Ok();
}

FileAttempts RunFileWithTimeouts(const FileTimeoutOptions& options,
                                 const std::function<Status(std::int64_t limit_ms)>& attempt,
                                 bool final_pass) {
  FileAttempts out;
  const std::int64_t limit = final_pass ? options.timeout_ms * 2 : options.timeout_ms;
  const std::int32_t tries = final_pass ? 1 : 1 + options.retries;
  for (std::int32_t i = 0; i < tries; ++i) {
    ++out.attempts;
    out.last = attempt(limit);
    if (out.last.ok()) {
      out.verdict = FileVerdict::kDone;
      return out;
    }
    if (out.last.code() != base::StatusCode::kDeadlineExceeded) {
      out.verdict = FileVerdict::kFailed;
      return out;
    }
    ++out.timeouts;
  }
  if (final_pass) {
    out.verdict = FileVerdict::kTimedOut;
  } else {
    switch (options.policy) {
      case FileTimeoutPolicy::kSkip:
        out.verdict = FileVerdict::kTimedOut;
        break;
      case FileTimeoutPolicy::kRetry:
        out.verdict = FileVerdict::kDeferred;
        break;
      case FileTimeoutPolicy::kFail:
        out.verdict = FileVerdict::kFailRun;
        break;
    }
  }
  return out;
}

}  // namespace trove::librarian::crawl
