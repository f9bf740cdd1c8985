#include "librarian/extract/extract.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "librarian/extract/chunks.h"
#include "librarian/extract/ctags.h"
#include "librarian/extract/grammars.h"
#include "librarian/extract/temp_files.h"
#include "librarian/extract/tree_sitter_extract.h"

namespace trove::librarian::extract {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A scratch file name with `path`'s extension, so ctags sees the language it would on disk.
std::string ScratchName(std::string_view path) {
  std::size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::string out = "input";
  std::size_t dot = base.rfind('.');
  if (dot != std::string_view::npos && dot > 0) {
    for (char c : base.substr(dot)) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+') {
        out.push_back(c);
      }
    }
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Extractor>> Extractor::Create(const ExtractorOptions& options) {
  std::unique_ptr<Ctags> ctags;
  if (!options.ctags_program.empty()) {
    Result<std::unique_ptr<Ctags>> made = Ctags::Create(options.ctags_program);
    if (made.ok()) ctags = std::move(made).value();
  }
  return std::unique_ptr<Extractor>(new Extractor(options, std::move(ctags)));
}

std::unique_ptr<Extractor> Extractor::Fork() const {
  return std::unique_ptr<Extractor>(new Extractor(options_, ctags_));
}

Extractor::Extractor(const ExtractorOptions& options, std::shared_ptr<const Ctags> ctags)
    : options_(options),
      ctags_(std::move(ctags)),
      tree_sitter_(std::make_unique<internal::TreeSitterExtractor>()) {}

Extractor::~Extractor() = default;

void Extractor::OverrideGrammarForTesting(Language language, const TSLanguage* grammar) {
  tree_sitter_->OverrideGrammarForTesting(language, grammar);
}

Routing Extractor::Route(std::string_view path, bool workspace_has_cpp) const {
  return extract::Route(path, workspace_has_cpp, ctags_ ? &ctags_->languages() : nullptr);
}

FileFacts Extractor::TextFacts(std::string_view path, std::string_view content) {
  FileFacts facts;
  facts.language = "text";
  facts.extractor = "text";
  BuildWindows(path, content, facts);
  return facts;
}

Result<FileFacts> Extractor::ExtractWithCtags(std::string_view path, std::string_view content,
                                              const std::string& language) {
  ASSIGN_OR_RETURN(internal::ScratchDir scratch, internal::ScratchDir::Create("trove_extract"));
  std::string file = scratch.path() + "/" + ScratchName(path);
  RETURN_IF_ERROR(internal::WriteWholeFile(file, content));
  Result<std::map<std::string, std::vector<CtagsTag>>> run =
      ctags_->TagFiles({file}, options_.timeout_ms * 1000, language);
  if (options_.on_ctags_run) options_.on_ctags_run(run.ok());
  ASSIGN_OR_RETURN(auto tags, std::move(run));
  FileFacts facts;
  facts.language = Lower(language);
  facts.extractor = fmt::format("ctags@{}", ctags_->version());
  SymbolsFromTags(tags[file], content, facts);
  return facts;
}

Result<FileFacts> Extractor::Extract(std::string_view path, std::string_view content,
                                     const Routing& routing, const base::Cancellation* cancel) {
  if (content.size() > UINT32_MAX) {
    return Status::ResourceExhausted(fmt::format("{}: file too large to extract", path));
  }
  if (cancel != nullptr && cancel->requested()) return Status::Cancelled("extraction cancelled");
  std::vector<std::string> notes;
  std::string ctags_language = routing.ctags_language;
  if (routing.language != Language::kCtags && routing.language != Language::kText) {
    Result<FileFacts> facts =
        tree_sitter_->Extract(content, routing.language, options_.timeout_ms * 1000, cancel);
    if (facts.ok()) {
      BuildChunks(path, content, *facts);
      return facts;
    }
    if (facts.status().code() != base::StatusCode::kUnsupported) {
      return facts.status().WithContext(path);
    }
    // docs/librarian.md §6.7: a grammar the core rejects is routed to ctags and recorded.
    notes.push_back(facts.status().message());
    if (ctags_ != nullptr) {
      ctags_language = ctags_->languages().Find(path);
      if (ctags_language.empty()) {
        // ctags' names for the grammar languages when the extension is not in its map.
        const GrammarInfo* g = FindGrammar(routing.language);
        ctags_language = g != nullptr && g->name == "cpp"      ? "C++"
                         : g != nullptr && g->name == "python" ? "Python"
                                                               : "";
      }
    }
  }
  if (!ctags_language.empty()) {
    if (ctags_ == nullptr) {
      notes.push_back("ctags unavailable: plain text");
    } else {
      Result<FileFacts> facts = ExtractWithCtags(path, content, ctags_language);
      if (!facts.ok() && facts.status().code() == base::StatusCode::kDeadlineExceeded) {
        return facts.status().WithContext(path);
      }
      if (facts.ok() && !facts->symbols.empty()) {
        BuildChunks(path, content, *facts);
        facts->notes = std::move(notes);
        return facts;
      }
      notes.push_back(facts.ok() ? "ctags: no symbols: plain text"
                                 : fmt::format("ctags: {}: plain text", facts.status().message()));
    }
  }
  FileFacts facts = TextFacts(path, content);
  facts.notes = std::move(notes);
  return facts;
}

}  // namespace trove::librarian::extract
