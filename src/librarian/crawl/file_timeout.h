// Per-file timeout policy of Librarian's bootstrap (docs/librarian.md §6.2): the `fileTimeoutMs`,
// `fileTimeoutRetries` and `fileTimeoutPolicy` options, their validation, and the one loop
// that applies them to a file's processing, so the indexer keeps no policy logic of its own.
//
// A file gets 1 + retries attempts with the same limit. After the last one times out: kSkip
// records it `timed_out` and the run goes on; kRetry defers it to one more attempt at the end
// of the run with twice the limit (then `timed_out`); kFail stops the run. An attempt signals a
// timeout by returning kDeadlineExceeded; enforcing the limit (tree-sitter's timeout, killing
// ctags, deadline checks) is the attempt's job. Any other error marks the file `failed`
// without retrying, as a retry cannot fix it.
// Thread safety: free functions without state; `attempt` runs on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "base/status.h"

namespace trove::librarian::crawl {

enum class FileTimeoutPolicy : std::uint8_t { kSkip, kRetry, kFail };

struct FileTimeoutOptions {
  // Wall time for one attempt, in ms; 0 disables the limit. Range 0-3,600,000. Default 30,000.
  // Wire name `fileTimeoutMs`.
  std::int64_t timeout_ms = 30'000;
  // Extra attempts after a timeout. Range 0-10. Default 0. Wire name `fileTimeoutRetries`.
  std::int32_t retries = 0;
  // What happens after the last attempt times out. Default kSkip. Wire `fileTimeoutPolicy`.
  FileTimeoutPolicy policy = FileTimeoutPolicy::kSkip;
};

// Returns the policy named `name` ("skip", "retry", "fail"), else kInvalidArgument:
// `fileTimeoutPolicy: must be one of skip, retry, fail`.
Result<FileTimeoutPolicy> ParseFileTimeoutPolicy(std::string_view name);
std::string_view FileTimeoutPolicyName(FileTimeoutPolicy policy);

// Returns kInvalidArgument naming the field when a value is out of range.
Status ValidateFileTimeoutOptions(const FileTimeoutOptions& options);

enum class FileVerdict : std::uint8_t {
  kDone,      // an attempt succeeded
  kTimedOut,  // record `timed_out`, go on
  kDeferred,  // kRetry: run RunFileWithTimeouts again at the end of the run with final_pass
  kFailRun,   // kFail: stop the run (`failed`, success false), naming the file and limit
  kFailed,    // an attempt failed for another reason: record `failed`, go on
};

struct FileAttempts {
  FileVerdict verdict = FileVerdict::kDone;
  std::int32_t attempts = 0;  // attempts made
  std::int32_t timeouts = 0;  // of which timed out
  Status last;                // the last attempt's status (OK for kDone)
};

// Runs `attempt(limit_ms)` per `options` (limit 0 = none). With `final_pass` (the end-of-run
// retry of a kDeferred file), makes one attempt with twice the limit and never defers or
// fails the run. REQUIRES: ValidateFileTimeoutOptions(options) is OK.
FileAttempts RunFileWithTimeouts(const FileTimeoutOptions& options,
                                 const std::function<Status(std::int64_t limit_ms)>& attempt,
                                 bool final_pass = false);

}  // namespace trove::librarian::crawl
