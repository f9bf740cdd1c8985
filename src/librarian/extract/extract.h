// Extractor: turns one file's content into FileFacts (docs/librarian.md §6.2, §6.7, §6.7). The
// route decides the extractor: a tree-sitter grammar for the nine languages of docs/librarian.md
// §6.7, universal-ctags for other languages it knows, plain-text windows otherwise. Fallbacks, each
// recorded in
// FileFacts::notes: a grammar the core rejects -> ctags (then text); ctags unavailable, failing
// or finding no symbol -> text. A time limit ends the file with kDeadlineExceeded (the caller
// applies the file-timeout policy of docs/librarian.md §6.2); it is never turned into a fallback.
//
// Usage:
//   ASSIGN_OR_RETURN(auto extractor, Extractor::Create({}));
//   Routing routing = extractor->Route("src/x.cc", /*workspace_has_cpp=*/true);
//   ASSIGN_OR_RETURN(FileFacts facts, extractor->Extract("src/x.cc", content, routing));
//
// Thread safety: one thread uses an Extractor at a time (it owns a tree-sitter parser); open
// one per worker.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/cancellation.h"
#include "base/status.h"
#include "librarian/extract/facts.h"
#include "librarian/extract/routing.h"

struct TSLanguage;

namespace trove::librarian::extract {

class Ctags;
namespace internal {
class TreeSitterExtractor;
}

struct ExtractorOptions {
  // The universal-ctags program ("ctags", looked up in PATH). Empty disables ctags. When it
  // cannot run, Create still succeeds and ctags-routed files become text. Default "ctags".
  std::string ctags_program = "ctags";
  // Wall-time limit for one file (parse, walk, ctags run), in milliseconds; 0 disables.
  // Default 30,000 (docs/librarian.md §6.2 fileTimeoutMs).
  std::int64_t timeout_ms = 30'000;
  // Called after each ctags run with whether it succeeded (false: ctags failed or timed out),
  // on the extracting thread, so it must be thread-safe; shared by Fork(). Empty: not called.
  // The Librarian server feeds its "ctags" circuit breaker with it
  // (docs/decisions/0052-breakers-around-dependencies.md).
  std::function<void(bool ok)> on_ctags_run;
};

class Extractor {
 public:
  static Result<std::unique_ptr<Extractor>> Create(const ExtractorOptions& options);
  // Returns a new extractor with the same options (time limit included) for another thread.
  // It shares this one's ctags (immutable, probed once by Create: each probe starts two
  // processes) and has its own tree-sitter parser; grammar overrides are not copied.
  std::unique_ptr<Extractor> Fork() const;
  Extractor(const Extractor&) = delete;
  Extractor& operator=(const Extractor&) = delete;
  ~Extractor();

  // Routes `path` with the ctags language map when ctags is available.
  Routing Route(std::string_view path, bool workspace_has_cpp) const;

  // Extracts `content` (the file at workspace-relative `path`) as `routing` says: symbols,
  // imports, calls and chunks. `cancel` may be null. Returns kDeadlineExceeded past the time
  // limit, kCancelled when cancelled, kResourceExhausted for content above 4 GiB.
  Result<FileFacts> Extract(std::string_view path, std::string_view content, const Routing& routing,
                            const base::Cancellation* cancel = nullptr);

  // The ctags in use, or null.
  const Ctags* ctags() const { return ctags_.get(); }
  const ExtractorOptions& options() const { return options_; }

  // Parses `language` with `grammar` instead of the linked grammar (null restores it), to test
  // the rejected-grammar fallback. `grammar` must outlive its use.
  void OverrideGrammarForTesting(Language language, const TSLanguage* grammar);

  // Replaces the time limit (tests and the docs/librarian.md §6.2 retry policy, which doubles it).
  void set_timeout_ms(std::int64_t timeout_ms) { options_.timeout_ms = timeout_ms; }

 private:
  Extractor(const ExtractorOptions& options, std::shared_ptr<const Ctags> ctags);
  Result<FileFacts> ExtractWithCtags(std::string_view path, std::string_view content,
                                     const std::string& language);
  static FileFacts TextFacts(std::string_view path, std::string_view content);

  ExtractorOptions options_;
  const std::shared_ptr<const Ctags> ctags_;  // null without ctags; shared by Fork()
  const std::unique_ptr<internal::TreeSitterExtractor> tree_sitter_;
};

}  // namespace trove::librarian::extract
