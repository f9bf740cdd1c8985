// Universal-ctags as the fallback extractor (docs/librarian.md §6.7): languages without a grammar,
// and grammars the core rejects. Runs `ctags --output-format=json --fields=+neKS -f - -L <list>`
// as a subprocess with a time limit (killed with SIGKILL past it). The list goes through a
// file rather than stdin so that a child that dies early cannot raise SIGPIPE in the server.
// Non-tag records (pseudo tags, errors) are ignored; a tag without `end` extends to the line
// before the next tag of its file, or to the end of the file (Symbol::end_known false).
// Kinds map to SymbolKind: function; method/member/singletonMethod -> method; class; struct;
// interface/trait/protocol -> interface; enum; namespace/module/package -> namespace;
// typedef/type/alias -> type_alias. Other kinds (variables, constants, fields, macros) are not
// symbols.
// Thread safety: a Ctags is immutable after Create; TagFiles may run on several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "librarian/extract/facts.h"
#include "librarian/extract/routing.h"

namespace trove::librarian::extract {

// Files per ctags run in TagFilesBatched (docs/librarian.md §6.7).
inline constexpr std::size_t kCtagsBatchSize = 200;

struct CtagsTag {
  std::string name;
  std::string path;
  std::string language;  // ctags' name ("Ruby")
  std::string kind;      // long kind name ("method")
  std::string scope;     // enclosing scope's name, may be empty
  std::string scope_kind;
  std::string signature;
  std::uint32_t line = 0;
  std::uint32_t end = 0;  // 0: ctags gave no end
};

class Ctags {
 public:
  // Probes `program` with --version and --list-maps. Returns kNotFound when it cannot run and
  // kUnsupported when it is not Universal Ctags.
  static Result<std::unique_ptr<Ctags>> Create(const std::string& program = "ctags");

  // "5.9" for "Universal Ctags 5.9.0, ...".
  const std::string& version() const { return version_; }
  const CtagsLanguages& languages() const { return languages_; }

  // Tags the files at `paths` (readable paths) in one run; returns their tags by path, in
  // ctags' order. `language_force`, when not empty, is passed as --language-force.
  // Returns kDeadlineExceeded after `timeout_micros` (0: no limit), kResourceExhausted when
  // the output passes 64 MiB, kIo when ctags fails.
  Result<std::map<std::string, std::vector<CtagsTag>>> TagFiles(
      const std::vector<std::string>& paths, std::int64_t timeout_micros,
      std::string_view language_force = {}) const;

  struct FileTags {
    Status status;  // OK, or the error of the file's own run (kDeadlineExceeded, ...)
    std::vector<CtagsTag> tags;
  };
  // Tags `paths` in runs of up to kCtagsBatchSize files, each run limited to
  // `per_file_timeout_micros` times its size (0: no limit); a run that fails is retried file
  // by file, so one slow or crashing file costs only itself (docs/librarian.md §6.7). Returns one
  // entry per path, in order.
  std::vector<FileTags> TagFilesBatched(const std::vector<std::string>& paths,
                                        std::int64_t per_file_timeout_micros) const;

 private:
  Ctags(std::string program, std::string version, CtagsLanguages languages)
      : program_(std::move(program)),
        version_(std::move(version)),
        languages_(std::move(languages)) {}

  const std::string program_;
  const std::string version_;
  const CtagsLanguages languages_;
};

// Returns the tags of one ctags JSON line, or nothing for a non-tag or unparsable line.
// Exposed for tests.
bool ParseCtagsLine(std::string_view line, CtagsTag& tag);

// Builds symbols (spans from `end` or the next tag; bytes and signatures from `content`) from
// the tags of one file. Fills symbols only; chunks are left to BuildChunks.
void SymbolsFromTags(const std::vector<CtagsTag>& tags, std::string_view content, FileFacts& facts);

}  // namespace trove::librarian::extract
