#include "librarian/verify/verify.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/hash.h"
#include "base/rfc3339.h"
#include "librarian/confidence/confidence.h"
#include "librarian/crawl/path.h"
#include "librarian/extract/extract.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"

namespace trove::librarian::verify {

namespace {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// Lines first..last (1-based, inclusive) of `content`.
std::string LinesOf(std::string_view content, std::uint32_t first, std::uint32_t last) {
  std::string out;
  std::uint32_t line = 1;
  std::size_t pos = 0;
  while (pos <= content.size() && line <= last) {
    std::size_t nl = content.find('\n', pos);
    if (nl == std::string_view::npos) nl = content.size();
    if (line >= first) {
      out.append(content.substr(pos, nl - pos));
      out.push_back('\n');
    }
    if (nl == content.size()) break;
    pos = nl + 1;
    ++line;
  }
  return out;
}

std::string Short(std::string_view line) {
  std::size_t b = line.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  line = line.substr(b);
  if (line.size() > 80) return std::string(line.substr(0, 77)) + "...";
  return std::string(line);
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// `text` with every whole-identifier occurrence of `name` replaced by `$`, and trailing
// whitespace of each line dropped: equal for a function and its renamed copy.
std::string MaskName(std::string_view text, std::string_view name) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (!name.empty() && text.compare(i, name.size(), name) == 0 &&
        (i == 0 || !IsIdentChar(text[i - 1])) &&
        (i + name.size() >= text.size() || !IsIdentChar(text[i + name.size()]))) {
      out.push_back('$');
      i += name.size();
      continue;
    }
    out.push_back(text[i++]);
  }
  std::string trimmed;
  for (std::string_view line : SplitLines(out)) {
    std::size_t e = line.find_last_not_of(" \t\r");
    trimmed.append(e == std::string_view::npos ? std::string_view() : line.substr(0, e + 1));
    trimmed.push_back('\n');
  }
  return trimmed;
}

double BaseSignal(bool module, const std::string& extractor, bool parse_error, bool end_known) {
  const bool tree_sitter = extractor.rfind("tree-sitter", 0) == 0;
  const bool ctags = extractor.rfind("ctags", 0) == 0;
  if (!module) {
    if (tree_sitter) return parse_error ? 0.7 : 0.9;
    if (ctags) return end_known ? 0.6 : 0.5;
    return 0.5;
  }
  if (tree_sitter) return parse_error ? 0.6 : 0.8;
  if (ctags) return 0.6;
  return 0.5;
}

// The check as the confidence module's defeater (decision 0063).
confidence::Defeater AsDefeater(const DefeaterResult& d) {
  return confidence::Defeater{
      d.type, d.activated,
      confidence::ParseSeverity(d.severity).value_or(confidence::Severity::kWarning),
      confidence::ParseDefeaterClass(d.defeater_class)
          .value_or(confidence::DefeaterClass::kUndermining),
      d.reason};
}

std::string At(const Location& l) {
  return fmt::format("{}:{}-{}", l.file, l.start_line, l.end_line);
}

}  // namespace

std::vector<DefeaterResult> ActiveDefeaters(const Verification& v) {
  std::vector<DefeaterResult> out;
  for (const DefeaterResult& d : v.results) {
    if (d.activated) out.push_back(d);
  }
  return out;
}

std::string DiffSummary(std::string_view before, std::string_view after) {
  std::vector<std::string_view> a = SplitLines(before);
  std::vector<std::string_view> b = SplitLines(after);
  std::size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  const std::size_t n = a.size() - prefix - suffix;
  const std::size_t m = b.size() - prefix - suffix;
  if (n == 0 && m == 0) return "no line differs (whitespace at the end or line endings only)";
  std::size_t removed = n;
  std::size_t added = m;
  if (n > 0 && m > 0 && n <= kMaxDiffLines && m <= kMaxDiffLines) {
    // LCS of the differing middle, one row at a time.
    std::vector<std::uint32_t> prev(m + 1, 0), cur(m + 1, 0);
    for (std::size_t i = 1; i <= n; ++i) {
      for (std::size_t j = 1; j <= m; ++j) {
        cur[j] = a[prefix + i - 1] == b[prefix + j - 1] ? prev[j - 1] + 1
                                                        : std::max(prev[j], cur[j - 1]);
      }
      std::swap(prev, cur);
    }
    removed = n - prev[m];
    added = m - prev[m];
  }
  std::string first;
  if (prefix < a.size() && prefix < b.size()) {
    first = fmt::format("; first difference at span line {}: `{}` -> `{}`", prefix + 1,
                        Short(a[prefix]), Short(b[prefix]));
  } else if (prefix < b.size()) {
    first =
        fmt::format("; first difference at span line {}: added `{}`", prefix + 1, Short(b[prefix]));
  } else if (prefix < a.size()) {
    first = fmt::format("; first difference at span line {}: removed `{}`", prefix + 1,
                        Short(a[prefix]));
  }
  return fmt::format("{} line{} removed, {} added{}", removed, removed == 1 ? "" : "s", added,
                     first);
}

std::string FileState(const std::string& abs_path) {
  struct stat st {};
  if (::stat(abs_path.c_str(), &st) != 0) return "missing";
  return fmt::format(
      "{}:{}", static_cast<std::int64_t>(st.st_size),
      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec);
}

Verifier::Verifier(base::Env& env, VerifyOptions options)
    : env_(env), options_(std::move(options)) {}

Verifier::~Verifier() = default;

Result<extract::Extractor*> Verifier::GetExtractor() {
  if (!extractor_) {
    ASSIGN_OR_RETURN(extractor_,
                     extract::Extractor::Create({.ctags_program = options_.ctags_program,
                                                 .timeout_ms = options_.timeout_ms}));
  }
  return extractor_.get();
}

Result<Verification> Verifier::Verify(store::Store& store, std::string_view root,
                                      std::string_view claim_id, const base::Cancellation* cancel) {
  if (claim_id.empty()) return Status::InvalidArgument("claimId: must not be empty");
  if (claim_id.size() > kMaxClaimIdChars) {
    return Status::InvalidArgument(
        fmt::format("claimId: longer than {} characters", kMaxClaimIdChars));
  }
  Verification v;
  v.claim_id = std::string(claim_id);
  v.checked_at = base::NowRfc3339();
  ASSIGN_OR_RETURN(std::optional<store::ContentSymbol> claim, store::FindPack(store, claim_id));
  if (!claim) return v;
  v.found = true;
  const store::ContentSymbol& c = *claim;
  const bool module = c.kind == "module";
  v.evidence =
      CitedEvidence{c.path,        c.start_line, c.end_line,
                    c.span_sha256, c.target_id,  module ? "module_context" : "function_context"};

  // The pack's base signal, from the extractor that indexed the cited content.
  ASSIGN_OR_RETURN(std::optional<store::FileRecord> indexed, store.GetFile(c.path));
  const double signal = BaseSignal(module, c.extractor, c.parse_error, c.end_known);

  DefeaterResult code_change{"code_change", false, "", "full", "undercutting", std::nullopt};
  DefeaterResult file_deleted{"file_deleted", false, "", "full", "undercutting", std::nullopt};
  DefeaterResult removed{"symbol_removed", false, "", "full", "undercutting", std::nullopt};
  DefeaterResult moved{"symbol_moved", false, "", "warning", "undermining", std::nullopt};
  DefeaterResult contradiction{"contradiction", false, "", "full", "rebutting", std::nullopt};
  DefeaterResult test_failure{
      "test_failure", false,         "no test outcomes are recorded for this pack",
      "partial",      "undermining", std::nullopt};
  bool span_holds = false;  // the cited span still has the cited hash

  // The primary file, confined to the workspace (a symlink swapped in cannot lead out).
  Result<std::string> rel = crawl::ResolveInWorkspace(root, c.path, {.field = "evidence.file"});
  std::optional<std::string> content;
  if (rel.ok()) {
    const std::string abs = fmt::format("{}/{}", root, *rel);
    Result<std::uint64_t> size = env_.FileSize(abs);
    if (size.ok() && *size <= kMaxVerifyFileBytes) {
      Result<std::string> read = env_.ReadFile(abs);
      if (read.ok()) {
        content = std::move(read).value();
      } else if (read.status().code() != base::StatusCode::kNotFound) {
        return read.status();
      }
    } else if (size.ok()) {
      content = std::string();  // too large to re-read: reported changed below
      code_change.activated = true;
      code_change.reason = fmt::format("{} grew past {} bytes", c.path, kMaxVerifyFileBytes);
    } else if (size.status().code() != base::StatusCode::kNotFound) {
      return size.status();
    }
  }
  const std::string not_applicable = "not applicable to a module_context claim";

  if (!content) {
    file_deleted.activated = true;
    file_deleted.reason = rel.ok() ? fmt::format("{} no longer exists", c.path)
                                   : fmt::format("{} cannot be read inside the workspace: {}",
                                                 c.path, rel.status().message());
    code_change.reason = "file is gone (see file_deleted)";
    removed.reason = module ? not_applicable : "file is gone (see file_deleted)";
    contradiction.reason = "file is gone; nothing to compare";
  } else if (!code_change.activated && base::Sha256Hex(*content) == c.sha256) {
    span_holds = true;
    code_change.reason = "file unchanged since indexing";
    file_deleted.reason = "file exists";
    removed.reason = module ? not_applicable : "file unchanged since indexing";
    moved.reason = module ? not_applicable : "file unchanged since indexing";
    contradiction.reason = "file unchanged since indexing";
  } else if (!code_change.activated) {
    file_deleted.reason = "file exists";
    if (c.end_byte <= content->size() && c.start_byte <= c.end_byte) {
      span_holds = base::Sha256Hex(std::string_view(*content).substr(
                       c.start_byte, c.end_byte - c.start_byte)) == c.span_sha256 &&
                   !module;
    }
    // Re-extract the live file.
    ASSIGN_OR_RETURN(extract::Extractor * ex, GetExtractor());
    const bool has_cpp = indexed && indexed->language == "cpp";
    ASSIGN_OR_RETURN(extract::FileFacts facts,
                     ex->Extract(c.path, *content, ex->Route(c.path, has_cpp), cancel));
    const store::PreparedRows rows = store::PrepareRows(c.path, facts, *content);
    if (module) {
      // Compare the symbol manifests of the indexed and the live content.
      ASSIGN_OR_RETURN(std::vector<store::ContentSymbol> old,
                       store::ContentSymbols(store, c.path, c.sha256));
      std::unordered_map<std::string, std::string> before;
      for (const store::ContentSymbol& s : old) {
        if (s.kind != "module") before[s.target_id] = s.span_sha256;
      }
      std::size_t added = 0, changed = 0, same = 0;
      for (std::size_t i = 0; i < rows.target_ids.size(); ++i) {
        auto it = before.find(rows.target_ids[i]);
        if (it == before.end()) {
          ++added;
        } else {
          (it->second == rows.span_sha256[i] ? same : changed) += 1;
          before.erase(it);
        }
      }
      code_change.activated = true;
      code_change.reason = fmt::format(
          "{} changed since indexing: {} symbols changed, {} added, {} removed, {} unchanged",
          c.path, changed, added, before.size(), same);
      removed.reason = not_applicable;
      moved.reason = not_applicable;
      contradiction.reason = "no key fact of a module claim is re-derived in v1";
    } else {
      // The target in the live file, by target id.
      std::optional<std::size_t> at;
      for (std::size_t i = 0; i < rows.target_ids.size(); ++i) {
        if (rows.target_ids[i] == c.target_id) at = i;
      }
      // The indexed text of the span, for the diff and the rename check: the symbol's chunk
      // while the index still holds that content.
      std::optional<std::string> old_text;
      if (c.current) {
        ASSIGN_OR_RETURN(std::vector<store::ChunkRow> chunks, store.FileChunks(c.path));
        for (const store::ChunkRow& ch : chunks) {
          if (ch.target_id == c.target_id) old_text = ch.body;
        }
      }
      if (at) {
        const extract::Symbol& s = facts.symbols[*at];
        const Location now{c.path, s.start_line, s.end_line};
        if (rows.span_sha256[*at] == c.span_sha256) {
          code_change.activated = true;
          code_change.severity = "warning";
          code_change.defeater_class = "undermining";
          code_change.reason = fmt::format(
              "{} changed since indexing but the span of {} is identical", c.path, c.target_id);
          if (s.start_line != c.start_line || s.end_line != c.end_line) {
            moved.activated = true;
            moved.reason = fmt::format("same body now at {} (cited {}:{}-{})", At(now), c.path,
                                       c.start_line, c.end_line);
            moved.new_location = now;
          } else {
            moved.reason = "span at the cited lines";
          }
        } else {
          code_change.activated = true;
          const std::string live = LinesOf(*content, s.start_line, s.end_line);
          code_change.reason = old_text
                                   ? fmt::format("span of {} changed ({}): {}", c.target_id,
                                                 At(now), DiffSummary(*old_text, live))
                                   : fmt::format(
                                         "span of {} changed ({}); the indexed text is no longer "
                                         "kept, so no line diff",
                                         c.target_id, At(now));
          moved.reason = "target found at its place";
          if (s.start_line != c.start_line || s.end_line != c.end_line) {
            moved.reason = fmt::format("target now spans {}", At(now));
          }
        }
        removed.reason = fmt::format("{} still defined", c.target_id);
        if (s.signature != c.signature) {
          contradiction.activated = true;
          contradiction.reason =
              fmt::format("signature is now `{}` (indexed: `{}`)", s.signature, c.signature);
        } else {
          contradiction.reason = "signature unchanged";
        }
      } else {
        removed.activated = true;
        removed.reason = fmt::format("no symbol {} in {} now", c.target_id, c.path);
        code_change.reason = "target no longer found (see symbol_removed)";
        contradiction.reason = "target no longer found; nothing to compare";
        // Found again in this file: the same body under another qualified name (moved into
        // another scope), else the body with its name masked (a rename).
        std::optional<std::size_t> same_body, renamed;
        const std::string masked_old = old_text ? MaskName(*old_text, c.name) : std::string();
        for (std::size_t i = 0; i < facts.symbols.size(); ++i) {
          const extract::Symbol& s = facts.symbols[i];
          if (!extract::IsCallable(s.kind)) continue;
          if (rows.span_sha256[i] == c.span_sha256 && !same_body) same_body = i;
          if (old_text && !renamed &&
              MaskName(LinesOf(*content, s.start_line, s.end_line), s.name) == masked_old) {
            renamed = i;
          }
        }
        if (same_body) {
          const extract::Symbol& s = facts.symbols[*same_body];
          moved.activated = true;
          moved.new_location = Location{c.path, s.start_line, s.end_line};
          moved.reason = fmt::format("same body now defined as {} at {}",
                                     rows.target_ids[*same_body], At(*moved.new_location));
        } else if (renamed) {
          const extract::Symbol& s = facts.symbols[*renamed];
          removed.new_location = Location{c.path, s.start_line, s.end_line};
          removed.reason += fmt::format("; renamed: the same body is now `{}` at {}", s.name,
                                        At(*removed.new_location));
          moved.reason = "renamed in place (see symbol_removed)";
        }
      }
    }
  }

  // A function gone from its file (or with its file): a definition of the same name elsewhere,
  // by the store's symbol table, same body first.
  if (!module && !moved.activated && !removed.new_location &&
      (file_deleted.activated || removed.activated)) {
    ASSIGN_OR_RETURN(std::vector<store::SymbolRow> defs, store.FindSymbols(c.name, 20));
    const store::SymbolRow* best = nullptr;
    for (const store::SymbolRow& d : defs) {
      if (d.path == c.path || d.name != c.name || d.target_id.rfind("fn:", 0) != 0) continue;
      if (best == nullptr ||
          (d.span_sha256 == c.span_sha256 && best->span_sha256 != c.span_sha256)) {
        best = &d;
      }
    }
    if (best != nullptr) {
      moved.activated = true;
      moved.severity = "partial";
      moved.new_location = Location{best->path, best->start_line, best->end_line};
      moved.reason =
          fmt::format("{} {} is defined in another file: {} at {}",
                      best->span_sha256 == c.span_sha256 ? "the same body of" : "a function named",
                      c.name, best->target_id, At(*moved.new_location));
    } else if (moved.reason.empty()) {
      moved.reason = fmt::format("no definition of {} found elsewhere in the index", c.name);
    }
  }
  if (moved.reason.empty()) moved.reason = module ? not_applicable : "not moved";
  if (file_deleted.reason.empty()) file_deleted.reason = "file exists";
  for (DefeaterResult* d : {&code_change, &removed, &contradiction}) {
    if (d->reason.empty()) d->reason = "not checked: the file is too large to re-read";
  }

  v.results = {code_change, file_deleted, removed, moved, contradiction, test_failure};
  std::vector<confidence::Defeater> defeaters;
  for (const DefeaterResult& d : v.results) defeaters.push_back(AsDefeater(d));
  v.verified = confidence::KnowledgeValid(defeaters);
  v.confidence = confidence::AdjustSignal(signal, defeaters);
  v.claim_confidence.value = span_holds ? 1.0 : 0.0;
  v.claim_confidence.reason =
      span_holds ? fmt::format("{} lines {}-{} still hold the cited content (SHA-256 {})", c.path,
                               c.start_line, c.end_line, c.span_sha256.substr(0, 12))
                 : fmt::format("{} lines {}-{} no longer hold the cited content", c.path,
                               c.start_line, c.end_line);
  return v;
}

VerifyCache::VerifyCache(std::chrono::milliseconds ttl, std::size_t capacity, Clock now)
    : ttl_(ttl),
      capacity_(capacity),
      now_(now ? std::move(now) : [] { return std::chrono::steady_clock::now(); }) {}

std::optional<Verification> VerifyCache::Get(const std::string& key, const std::string& generation,
                                             const std::string& file_state) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  const Entry& e = it->second;
  if (now_() - e.stored >= ttl_ || e.generation != generation || e.file_state != file_state) {
    entries_.erase(it);
    return std::nullopt;
  }
  Verification v = e.v;
  v.cached = true;
  return v;
}

void VerifyCache::Put(const std::string& key, const std::string& generation,
                      const std::string& file_state, const Verification& v) {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.size() >= capacity_ && entries_.find(key) == entries_.end()) {
    // Drop the oldest entry (a linear scan; the cache is small).
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.stored < oldest->second.stored) oldest = it;
    }
    if (oldest != entries_.end()) entries_.erase(oldest);
  }
  entries_[key] = Entry{v, generation, file_state, now_()};
}

}  // namespace trove::librarian::verify
