// Language routing by file name (docs/librarian.md §6.7): `.c` -> c; `.h` -> cpp when the workspace
// has C++ sources, else c; `.cc .cpp .cxx .c++ .hpp .hh .hxx .ipp .inl .tpp` -> cpp; `.py .pyi` ->
// python; `.js .mjs .cjs .jsx` -> javascript; `.ts .mts .cts` -> typescript; `.tsx` -> tsx;
// `.go` -> go; `.rs` -> rust; `.java` -> java; other files -> ctags when it knows the
// language (CtagsLanguages, from `ctags --list-maps`), else plain text.
// Thread safety: pure functions; a CtagsLanguages is immutable once built.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace trove::librarian::extract {

enum class Language : std::uint8_t {
  kC,
  kCpp,
  kPython,
  kJavaScript,
  kTypeScript,
  kTsx,
  kGo,
  kRust,
  kJava,
  kCtags,  // no grammar; universal-ctags knows the language
  kText,   // plain-text windows
};
inline constexpr int kTreeSitterLanguageCount = 9;  // kC .. kJava

// Returns "c", "cpp", "python", "javascript", "typescript", "tsx", "go", "rust", "java",
// "ctags", "text".
std::string_view LanguageName(Language language);

// Returns whether `path`'s extension is a C++-only one (.cc .cpp .cxx .c++ .hpp .hh .hxx .ipp
// .inl .tpp): a workspace with such a file routes `.h` to cpp.
bool IsCppSourcePath(std::string_view path);

// The languages universal-ctags maps by file name, parsed from `ctags --list-maps`.
class CtagsLanguages {
 public:
  CtagsLanguages() = default;
  // Parses `ctags --list-maps` output: lines "<Language> <pattern>..." where a pattern is
  // "*.ext" (case-sensitive, as ctags matches on Linux) or an exact file name. A header line
  // starting with '#' is skipped.
  static CtagsLanguages Parse(std::string_view list_maps_output);

  // Returns ctags' name of the language for `path` ("Ruby"), or "" when ctags has none.
  std::string Find(std::string_view path) const;
  bool empty() const { return by_ext_.empty() && by_name_.empty(); }

 private:
  std::map<std::string, std::string, std::less<>> by_ext_;   // "rb" -> "Ruby"
  std::map<std::string, std::string, std::less<>> by_name_;  // "Makefile" -> "Make"
};

struct Routing {
  Language language = Language::kText;
  std::string ctags_language;  // for kCtags: ctags' language name, for --language-force
};

// Routes `path` (workspace-relative or absolute). `workspace_has_cpp`: whether any file in
// the workspace satisfies IsCppSourcePath. `ctags` may be null (no ctags: text instead).
Routing Route(std::string_view path, bool workspace_has_cpp, const CtagsLanguages* ctags);

}  // namespace trove::librarian::extract
