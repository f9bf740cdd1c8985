#include "librarian/crawl/glob.h"

#include <fmt/format.h>

#include <utility>

namespace trove::librarian::crawl {
namespace {

// Returns `pattern` fit for an error message: at most 80 bytes, control bytes as `?`.
std::string Printable(std::string_view pattern) {
  std::string out;
  for (char c : pattern.substr(0, 80)) {
    out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
  }
  if (pattern.size() > 80) out += "...";
  return out;
}

}  // namespace

bool Glob::CharClass::Contains(unsigned char c) const {
  bool in = false;
  for (const auto& [lo, hi] : ranges) {
    if (c >= lo && c <= hi) {
      in = true;
      break;
    }
  }
  return in != negated;
}

Result<Glob> Glob::Compile(std::string_view pattern) {
  auto error = [&](std::string_view what) {
    return Status::InvalidArgument(fmt::format("glob \"{}\": {}", Printable(pattern), what));
  };
  if (pattern.empty()) return error("is empty");
  if (pattern.size() > kMaxGlobChars) {
    return error(fmt::format("longer than {} characters", kMaxGlobChars));
  }
  if (pattern.find('\0') != std::string_view::npos) return error("contains a NUL byte");

  Glob glob;
  glob.pattern_ = std::string(pattern);
  std::string_view body = pattern;
  // A trailing `/` (not an escaped one) means directories only.
  while (!body.empty() && body.back() == '/' &&
         !(body.size() >= 2 && body[body.size() - 2] == '\\')) {
    glob.dir_only_ = true;
    body.remove_suffix(1);
  }
  if (!body.empty() && body.front() == '/') {
    glob.anchored_ = true;
    body.remove_prefix(1);
  }
  if (body.empty()) return error("matches nothing");
  if (body.find('/') != std::string_view::npos) glob.anchored_ = true;

  const std::size_t n = body.size();
  std::size_t i = 0;
  auto literal = [&glob](char c) {
    glob.tokens_.push_back({Op::kLiteral, static_cast<unsigned char>(c)});
  };
  while (i < n) {
    const char c = body[i];
    if (c == '\\') {
      if (i + 1 == n) return error("ends with a lone backslash");
      literal(body[i + 1]);
      i += 2;
    } else if (c == '*') {
      std::size_t j = i;
      while (j < n && body[j] == '*') ++j;
      const bool at_segment_start = i == 0 || body[i - 1] == '/';
      const bool at_segment_end = j == n || body[j] == '/';
      if (j - i >= 2 && at_segment_start && at_segment_end) {
        if (j == n) {
          glob.tokens_.push_back({Op::kAnyRun});
          i = j;
        } else {
          glob.tokens_.push_back({Op::kSegmentsSlash});
          i = j + 1;  // the `/` belongs to the token
        }
      } else {
        glob.tokens_.push_back({Op::kStar});
        i = j;
      }
    } else if (c == '?') {
      glob.tokens_.push_back({Op::kAnyChar});
      ++i;
    } else if (c == '[') {
      CharClass cls;
      std::size_t j = i + 1;
      if (j < n && (body[j] == '!' || body[j] == '^')) {
        cls.negated = true;
        ++j;
      }
      bool closed = false;
      bool first = true;
      while (j < n) {
        char lo = body[j];
        if (lo == ']' && !first) {
          closed = true;
          ++j;
          break;
        }
        first = false;
        if (lo == '[' && j + 1 < n && body[j + 1] == ':') {
          return error(fmt::format("named character class at offset {} is not supported", j));
        }
        if (lo == '\\') {
          if (j + 1 == n) break;
          lo = body[++j];
        }
        ++j;
        char hi = lo;
        if (j + 1 < n && body[j] == '-' && body[j + 1] != ']') {
          hi = body[j + 1];
          j += 2;
          if (hi == '\\') {
            if (j == n) break;
            hi = body[j++];
          }
        }
        cls.ranges.emplace_back(static_cast<unsigned char>(lo), static_cast<unsigned char>(hi));
      }
      if (!closed) {
        return error(fmt::format("unterminated character class at offset {}",
                                 i + (glob.anchored_ && pattern.front() == '/' ? 1 : 0)));
      }
      glob.tokens_.push_back({Op::kClass, static_cast<std::uint32_t>(glob.classes_.size())});
      glob.classes_.push_back(std::move(cls));
      i = j;
    } else {
      literal(c);
      ++i;
    }
  }
  return glob;
}

bool Glob::Matches(std::string_view path, bool is_dir) const {
  if (dir_only_ && !is_dir) return false;
  if (!anchored_) {
    const std::size_t slash = path.rfind('/');
    if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  }
  return MatchTokens(path);
}

// A set-of-states simulation: `cur[j]` says whether the tokens so far can consume exactly the
// first j bytes of `text`. Each token maps one set to the next in O(n), so no input backtracks.
bool Glob::MatchTokens(std::string_view text) const {
  const std::size_t n = text.size();
  std::vector<char> cur(n + 1, 0);
  std::vector<char> next(n + 1, 0);
  cur[0] = 1;
  for (const Token& token : tokens_) {
    std::fill(next.begin(), next.end(), 0);
    bool any = false;
    switch (token.op) {
      case Op::kLiteral:
        for (std::size_t j = 0; j < n; ++j) {
          if (cur[j] && static_cast<unsigned char>(text[j]) == token.arg) next[j + 1] = 1;
        }
        break;
      case Op::kAnyChar:
        for (std::size_t j = 0; j < n; ++j) {
          if (cur[j] && text[j] != '/') next[j + 1] = 1;
        }
        break;
      case Op::kClass: {
        const CharClass& cls = classes_[token.arg];
        for (std::size_t j = 0; j < n; ++j) {
          if (cur[j] && text[j] != '/' && cls.Contains(static_cast<unsigned char>(text[j]))) {
            next[j + 1] = 1;
          }
        }
        break;
      }
      case Op::kStar:
        for (std::size_t j = 0; j <= n; ++j) {
          next[j] = cur[j] || (j > 0 && next[j - 1] && text[j - 1] != '/');
        }
        break;
      case Op::kAnyRun:
        for (std::size_t j = 0; j <= n; ++j) next[j] = cur[j] || (j > 0 && next[j - 1]);
        break;
      case Op::kSegmentsSlash: {
        bool seen = false;  // some cur[k] with k < j
        for (std::size_t j = 0; j <= n; ++j) {
          next[j] = cur[j] || (seen && text[j - 1] == '/');
          seen = seen || cur[j];
        }
        break;
      }
    }
    for (char v : next) any = any || v;
    if (!any) return false;
    cur.swap(next);
  }
  return cur[n] != 0;
}

IgnoreRules IgnoreRules::Parse(std::string_view text, std::string_view source,
                               std::vector<std::string>* warnings) {
  IgnoreRules rules;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Unescaped trailing spaces are dropped; `\ ` keeps its space.
    while (!line.empty() && line.back() == ' ' &&
           !(line.size() >= 2 && line[line.size() - 2] == '\\')) {
      line.remove_suffix(1);
    }
    if (line.empty() || line.front() == '#') continue;
    bool negated = false;
    if (line.front() == '!') {
      negated = true;
      line.remove_prefix(1);
      if (line.empty()) continue;
    }
    Result<Glob> glob = Glob::Compile(line);
    if (!glob.ok()) {
      if (warnings != nullptr) {
        warnings->push_back(fmt::format("{}:{}: {}", source, line_number, glob.status().message()));
      }
      continue;
    }
    rules.rules_.push_back(Rule{.glob = std::move(glob).value(), .negated = negated});
  }
  return rules;
}

IgnoreRules::Verdict IgnoreRules::Evaluate(std::string_view path, bool is_dir) const {
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (it->glob.Matches(path, is_dir)) return it->negated ? Verdict::kInclude : Verdict::kIgnore;
  }
  return Verdict::kNone;
}

}  // namespace trove::librarian::crawl
