#include "librarian/extract/routing.h"

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace trove::librarian::extract {
namespace {

std::string_view BaseName(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Returns the extension without the dot ("" when none; a leading-dot name has none).
std::string_view Extension(std::string_view path) {
  std::string_view base = BaseName(path);
  std::size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  return base.substr(dot + 1);
}

constexpr std::array<std::pair<std::string_view, Language>, 25> kExtensions{{
    {"c", Language::kC},
    {"cc", Language::kCpp},
    {"cpp", Language::kCpp},
    {"cxx", Language::kCpp},
    {"c++", Language::kCpp},
    {"hpp", Language::kCpp},
    {"hh", Language::kCpp},
    {"hxx", Language::kCpp},
    {"ipp", Language::kCpp},
    {"inl", Language::kCpp},
    {"tpp", Language::kCpp},
    {"py", Language::kPython},
    {"pyi", Language::kPython},
    {"js", Language::kJavaScript},
    {"mjs", Language::kJavaScript},
    {"cjs", Language::kJavaScript},
    {"jsx", Language::kJavaScript},
    {"ts", Language::kTypeScript},
    {"mts", Language::kTypeScript},
    {"cts", Language::kTypeScript},
    {"tsx", Language::kTsx},
    {"go", Language::kGo},
    {"rs", Language::kRust},
    {"java", Language::kJava},
    {"h", Language::kC},  // resolved against workspace_has_cpp below
}};

}  // namespace

std::string_view LanguageName(Language language) {
  switch (language) {
    case Language::kC:
      return "c";
    case Language::kCpp:
      return "cpp";
    case Language::kPython:
      return "python";
    case Language::kJavaScript:
      return "javascript";
    case Language::kTypeScript:
      return "typescript";
    case Language::kTsx:
      return "tsx";
    case Language::kGo:
      return "go";
    case Language::kRust:
      return "rust";
    case Language::kJava:
      return "java";
    case Language::kCtags:
      return "ctags";
    case Language::kText:
      return "text";
  }
  return "text";
}

bool IsCppSourcePath(std::string_view path) {
  std::string_view ext = Extension(path);
  if (ext == "h" || ext == "c") return false;
  for (const auto& [e, lang] : kExtensions) {
    if (e == ext) return lang == Language::kCpp;
  }
  return false;
}

CtagsLanguages CtagsLanguages::Parse(std::string_view text) {
  CtagsLanguages out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.empty() || line.front() == '#') continue;
    std::string language;
    std::size_t i = 0;
    bool first = true;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      std::size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      if (i == start) break;
      std::string_view word = line.substr(start, i - start);
      if (first) {
        language = std::string(word);
        first = false;
      } else if (word.size() > 2 && word.substr(0, 2) == "*.") {
        out.by_ext_.emplace(std::string(word.substr(2)), language);  // first mapping wins
      } else if (word.find_first_of("*?[") == std::string_view::npos) {
        out.by_name_.emplace(std::string(word), language);
      }
    }
  }
  return out;
}

std::string CtagsLanguages::Find(std::string_view path) const {
  std::string_view base = BaseName(path);
  if (auto it = by_name_.find(base); it != by_name_.end()) return it->second;
  std::string_view ext = Extension(path);
  if (ext.empty()) return {};
  if (auto it = by_ext_.find(ext); it != by_ext_.end()) return it->second;
  return {};
}

Routing Route(std::string_view path, bool workspace_has_cpp, const CtagsLanguages* ctags) {
  std::string_view ext = Extension(path);
  for (const auto& [e, lang] : kExtensions) {
    if (e != ext) continue;
    if (ext == "h") return {workspace_has_cpp ? Language::kCpp : Language::kC, {}};
    return {lang, {}};
  }
  if (ctags != nullptr) {
    std::string name = ctags->Find(path);
    if (!name.empty()) return {Language::kCtags, std::move(name)};
  }
  return {Language::kText, {}};
}

}  // namespace trove::librarian::extract
