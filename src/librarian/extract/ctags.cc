#include "librarian/extract/ctags.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "librarian/extract/subprocess.h"
#include "librarian/extract/temp_files.h"
#include "librarian/extract/text_util.h"

namespace trove::librarian::extract {
namespace {

constexpr std::size_t kMaxOutputBytes = std::size_t{64} << 20;
constexpr std::int64_t kProbeTimeoutMicros = 10'000'000;

std::optional<SymbolKind> MapKind(std::string_view kind) {
  if (kind == "function" || kind == "func" || kind == "procedure" || kind == "subroutine") {
    return SymbolKind::kFunction;
  }
  if (kind == "method" || kind == "member" || kind == "singletonMethod") {
    return SymbolKind::kMethod;
  }
  if (kind == "class") return SymbolKind::kClass;
  if (kind == "struct") return SymbolKind::kStruct;
  if (kind == "interface" || kind == "trait" || kind == "protocol") return SymbolKind::kInterface;
  if (kind == "enum") return SymbolKind::kEnum;
  if (kind == "namespace" || kind == "module" || kind == "package") return SymbolKind::kNamespace;
  if (kind == "typedef" || kind == "type" || kind == "alias") return SymbolKind::kTypeAlias;
  return std::nullopt;
}

std::string StringField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return {};
  return it->get<std::string>();
}
std::uint32_t LineField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return 0;
  std::uint64_t v = it->get<std::uint64_t>();
  return v > UINT32_MAX ? 0 : static_cast<std::uint32_t>(v);
}

}  // namespace

bool ParseCtagsLine(std::string_view line, CtagsTag& tag) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || StringField(j, "_type") != "tag") return false;
  tag.name = StringField(j, "name");
  tag.path = StringField(j, "path");
  tag.language = StringField(j, "language");
  tag.kind = StringField(j, "kind");
  tag.scope = StringField(j, "scope");
  tag.scope_kind = StringField(j, "scopeKind");
  tag.signature = StringField(j, "signature");
  tag.line = LineField(j, "line");
  tag.end = LineField(j, "end");
  return !tag.name.empty() && tag.line > 0;
}

Result<std::unique_ptr<Ctags>> Ctags::Create(const std::string& program) {
  ASSIGN_OR_RETURN(internal::ProgramResult version,
                   internal::RunProgram({program, "--version"}, kProbeTimeoutMicros, 1 << 20));
  if (version.exit_code != 0 || version.out.rfind("Universal Ctags", 0) != 0) {
    return Status::Unsupported(fmt::format("{} is not Universal Ctags", program));
  }
  // "Universal Ctags 5.9.0, Copyright ..." -> "5.9".
  std::string v;
  std::size_t at = std::string_view("Universal Ctags ").size();
  int dots = 0;
  while (at < version.out.size()) {
    char c = version.out[at++];
    if (c == '.' && ++dots == 2) break;
    if (!(c == '.' || (c >= '0' && c <= '9'))) break;
    v.push_back(c);
  }
  if (v.empty()) v = "unknown";
  ASSIGN_OR_RETURN(internal::ProgramResult maps,
                   internal::RunProgram({program, "--list-maps"}, kProbeTimeoutMicros, 1 << 20));
  if (maps.exit_code != 0) {
    return Status::Unsupported(fmt::format("{} --list-maps failed", program));
  }
  return std::unique_ptr<Ctags>(new Ctags(program, std::move(v), CtagsLanguages::Parse(maps.out)));
}

Result<std::map<std::string, std::vector<CtagsTag>>> Ctags::TagFiles(
    const std::vector<std::string>& paths, std::int64_t timeout_micros,
    std::string_view language_force) const {
  std::map<std::string, std::vector<CtagsTag>> out;
  if (paths.empty()) return out;
  ASSIGN_OR_RETURN(internal::ScratchDir scratch, internal::ScratchDir::Create("trove_ctags"));
  std::string list;
  for (const std::string& p : paths) {
    if (p.find('\n') != std::string::npos) {
      return Status::InvalidArgument(fmt::format("ctags: path with a newline: {}", p));
    }
    list += p;
    list.push_back('\n');
  }
  std::string list_path = scratch.path() + "/files";
  RETURN_IF_ERROR(internal::WriteWholeFile(list_path, list));
  std::vector<std::string> argv = {
      program_, "--output-format=json", "--fields=+neKS", "--sort=no", "-f", "-", "-L", list_path};
  if (!language_force.empty()) {
    argv.insert(argv.begin() + 1, fmt::format("--language-force={}", language_force));
  }
  ASSIGN_OR_RETURN(internal::ProgramResult run,
                   internal::RunProgram(argv, timeout_micros, kMaxOutputBytes));
  if (run.exit_code != 0) {
    return Status::Io(fmt::format("ctags exited with status {}", run.exit_code));
  }
  std::size_t pos = 0;
  while (pos < run.out.size()) {
    std::size_t eol = run.out.find('\n', pos);
    if (eol == std::string::npos) eol = run.out.size();
    CtagsTag tag;
    if (ParseCtagsLine(std::string_view(run.out).substr(pos, eol - pos), tag)) {
      out[tag.path].push_back(std::move(tag));
    }
    pos = eol + 1;
  }
  return out;
}

std::vector<Ctags::FileTags> Ctags::TagFilesBatched(const std::vector<std::string>& paths,
                                                    std::int64_t per_file_timeout_micros) const {
  std::vector<FileTags> out(paths.size());
  for (std::size_t begin = 0; begin < paths.size(); begin += kCtagsBatchSize) {
    std::size_t end = std::min(paths.size(), begin + kCtagsBatchSize);
    std::vector<std::string> batch(paths.begin() + static_cast<std::ptrdiff_t>(begin),
                                   paths.begin() + static_cast<std::ptrdiff_t>(end));
    auto run = TagFiles(batch, per_file_timeout_micros * static_cast<std::int64_t>(batch.size()));
    if (run.ok()) {
      for (std::size_t i = begin; i < end; ++i) {
        auto it = run->find(paths[i]);
        if (it != run->end()) out[i].tags = std::move(it->second);
      }
      continue;
    }
    for (std::size_t i = begin; i < end; ++i) {
      auto one = TagFiles({paths[i]}, per_file_timeout_micros);
      if (!one.ok()) {
        out[i].status = std::move(one).status();
        continue;
      }
      auto it = one->find(paths[i]);
      if (it != one->end()) out[i].tags = std::move(it->second);
    }
  }
  return out;
}

void SymbolsFromTags(const std::vector<CtagsTag>& tags, std::string_view content,
                     FileFacts& facts) {
  internal::LineIndex lines(content);
  struct Item {
    const CtagsTag* tag;
    SymbolKind kind;
  };
  std::vector<Item> items;
  for (const CtagsTag& t : tags) {
    std::optional<SymbolKind> kind = MapKind(t.kind);
    if (!kind || t.line > lines.count()) continue;
    items.push_back({&t, *kind});
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.tag->line < b.tag->line; });
  for (std::size_t i = 0; i < items.size(); ++i) {
    const CtagsTag& t = *items[i].tag;
    Symbol s;
    s.name = t.name;
    s.kind = items[i].kind;
    // Ruby scopes print as "A.B" and C++ as "a::B"; the tag's own separator is kept.
    std::string_view sep = t.scope.find("::") != std::string::npos ? "::" : ".";
    s.qualified_name = t.scope.empty() ? t.name : t.scope + std::string(sep) + t.name;
    if (s.kind == SymbolKind::kFunction &&
        (t.scope_kind == "class" || t.scope_kind == "struct" || t.scope_kind == "module")) {
      s.kind = SymbolKind::kMethod;
    }
    s.start_line = t.line;
    if (t.end >= t.line && t.end <= lines.count()) {
      s.end_line = t.end;
    } else {
      s.end_known = false;
      s.end_line = lines.count();
      for (std::size_t j = i + 1; j < items.size(); ++j) {
        if (items[j].tag->line > t.line) {
          s.end_line = items[j].tag->line - 1;
          break;
        }
      }
    }
    s.start_byte = lines.Start(s.start_line);
    s.end_byte = lines.End(s.end_line);
    s.signature = internal::TruncateUtf8(internal::CollapseSpace(lines.LineText(t.line)), 240);
    facts.symbols.push_back(std::move(s));
  }
  // Parents: the innermost earlier symbol whose span holds this one.
  for (std::size_t i = 0; i < facts.symbols.size(); ++i) {
    Symbol& s = facts.symbols[i];
    for (std::size_t j = i; j-- > 0;) {
      const Symbol& p = facts.symbols[j];
      if (p.start_line <= s.start_line && p.end_line >= s.end_line && p.end_known) {
        s.parent = static_cast<std::int32_t>(j);
        break;
      }
    }
  }
}

}  // namespace trove::librarian::extract
