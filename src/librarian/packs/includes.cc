#include "librarian/packs/includes.h"

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace trove::librarian::packs {
namespace {

std::optional<std::string> ReadSmallFile(const std::string& path, std::string* note) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > kMaxCompileCommandsBytes) {
      ::close(fd);
      *note = "compile_commands.json: larger than 64 MiB, ignored";
      return std::nullopt;
    }
  }
  ::close(fd);
  return out;
}

// `abs` (normalized, absolute) relative to `root`, "" for the root itself; nullopt outside it.
std::optional<std::string> RelativeTo(const std::string& root, const std::string& abs) {
  if (abs == root) return std::string();
  if (abs.size() > root.size() && abs.compare(0, root.size(), root) == 0 &&
      abs[root.size()] == '/') {
    return abs.substr(root.size() + 1);
  }
  return std::nullopt;
}

std::string Join(std::string_view dir, std::string_view rel) {
  if (dir.empty()) return std::string(rel);
  std::string out(dir);
  if (out.back() != '/') out.push_back('/');
  out.append(rel);
  return out;
}

}  // namespace

std::optional<std::string> NormalizeLexically(std::string_view path) {
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i <= path.size()) {
    const std::size_t j = std::min(path.find('/', i), path.size());
    const std::string_view seg = path.substr(i, j - i);
    if (seg.empty() || seg == ".") {
      // skip
    } else if (seg == "..") {
      if (parts.empty()) {
        if (!absolute) return std::nullopt;
      } else {
        parts.pop_back();
      }
    } else {
      parts.push_back(seg);
    }
    i = j + 1;
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (k > 0) out.push_back('/');
    out.append(parts[k]);
  }
  return out;
}

std::vector<std::string> IncludeResolver::SplitCommand(std::string_view command) {
  std::vector<std::string> out;
  std::string cur;
  bool have = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < command.size()) {
        cur.push_back(command[++i]);
      } else {
        cur.push_back(c);
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      have = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      cur.push_back(command[++i]);
      have = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (have) out.push_back(std::move(cur));
      cur.clear();
      have = false;
    } else {
      cur.push_back(c);
      have = true;
    }
  }
  if (have) out.push_back(std::move(cur));
  return out;
}

std::vector<std::string> IncludeResolver::IncludeFlags(const std::vector<std::string>& args) {
  static constexpr std::string_view kFlags[] = {"-isystem", "-iquote", "-idirafter", "-I"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    for (std::string_view flag : kFlags) {
      if (a.compare(0, flag.size(), flag) != 0) continue;
      if (a.size() > flag.size()) {
        out.push_back(a.substr(flag.size()));
      } else if (i + 1 < args.size()) {
        out.push_back(args[++i]);
      }
      break;
    }
  }
  return out;
}

IncludeResolver IncludeResolver::FromJson(const std::string& root, std::string_view text) {
  IncludeResolver r;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) {
    r.note_ = "compile_commands.json: not a JSON array, ignored";
    return r;
  }
  std::set<std::string> seen_all;
  for (const nlohmann::json& e : j) {
    if (!e.is_object() || !e.contains("file") || !e["file"].is_string()) continue;
    std::string directory = e.value("directory", std::string());
    if (!e.contains("directory") || !e["directory"].is_string()) directory = root;
    if (directory.empty() || directory.front() != '/') directory = Join(root, directory);
    std::vector<std::string> args;
    if (e.contains("arguments") && e["arguments"].is_array()) {
      for (const nlohmann::json& a : e["arguments"]) {
        if (a.is_string()) args.push_back(a.get<std::string>());
      }
    } else if (e.contains("command") && e["command"].is_string()) {
      args = SplitCommand(e["command"].get<std::string>());
    }
    std::string file = e["file"].get<std::string>();
    if (file.empty() || file.front() != '/') file = Join(directory, file);
    std::optional<std::string> file_norm = NormalizeLexically(file);
    if (!file_norm) continue;
    std::optional<std::string> file_rel = RelativeTo(root, *file_norm);
    if (!file_rel) continue;  // a file outside the workspace
    std::vector<std::string> dirs;
    for (const std::string& d : IncludeFlags(args)) {
      std::optional<std::string> abs =
          NormalizeLexically(!d.empty() && d.front() == '/' ? d : Join(directory, d));
      if (!abs) continue;
      std::optional<std::string> rel = RelativeTo(root, *abs);
      if (!rel) continue;  // confined to the workspace
      if (std::find(dirs.begin(), dirs.end(), *rel) == dirs.end()) dirs.push_back(*rel);
      if (seen_all.insert(*rel).second) r.all_dirs_.push_back(*rel);
    }
    r.per_file_[*file_rel] = std::move(dirs);
  }
  return r;
}

IncludeResolver IncludeResolver::Load(const std::string& root) {
  for (std::string_view rel : {"compile_commands.json", "build/compile_commands.json"}) {
    std::string note;
    std::optional<std::string> text = ReadSmallFile(Join(root, rel), &note);
    if (!text) {
      if (!note.empty()) {
        IncludeResolver r;
        r.note_ = std::move(note);
        return r;
      }
      continue;
    }
    IncludeResolver r = FromJson(root, *text);
    if (r.note_.empty()) r.source_ = std::string(rel);
    return r;
  }
  return IncludeResolver();
}

const std::vector<std::string>& IncludeResolver::DirsFor(std::string_view file) const {
  if (auto it = per_file_.find(file); it != per_file_.end() && !it->second.empty()) {
    return it->second;
  }
  return all_dirs_;
}

std::optional<std::string> IncludeResolver::Resolve(std::string_view includer,
                                                    std::string_view spelled,
                                                    const std::set<std::string>& files) const {
  if (spelled.empty() || spelled.front() == '/') return std::nullopt;
  const std::size_t slash = includer.rfind('/');
  const std::string_view dir =
      slash == std::string_view::npos ? std::string_view() : includer.substr(0, slash);
  auto try_in = [&](std::string_view base) -> std::optional<std::string> {
    std::optional<std::string> p = NormalizeLexically(Join(base, spelled));
    if (p && !p->empty() && files.count(*p) != 0) return p;
    return std::nullopt;
  };
  if (auto p = try_in(dir)) return p;
  for (const std::string& d : DirsFor(includer)) {
    if (auto p = try_in(d)) return p;
  }
  return std::nullopt;
}

}  // namespace trove::librarian::packs
