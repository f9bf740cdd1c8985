#include "librarian/diff/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "librarian/store/manifest.h"
#include "librarian/store/store.h"

namespace trove::librarian::diff {
namespace {

// An RFC 3339 UTC timestamp as the store writes them ("2026-01-02T03:04:05.678Z"): the
// fraction padded or cut to milliseconds, so that string order is time order. nullopt when
// `s` is not one.
std::optional<std::string> NormalizeTimestamp(std::string_view s) {
  if (s.size() < 20 || s.back() != 'Z') return std::nullopt;
  const std::string_view head = s.substr(0, 19);
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd";
  for (std::size_t i = 0; i < kShape.size(); ++i) {
    const char c = head[i];
    if (kShape[i] == 'd' ? (c < '0' || c > '9') : c != kShape[i]) return std::nullopt;
  }
  std::string_view frac = s.substr(19, s.size() - 20);
  std::string ms = "000";
  if (!frac.empty()) {
    if (frac.front() != '.' || frac.size() < 2) return std::nullopt;
    frac.remove_prefix(1);
    for (std::size_t i = 0; i < frac.size(); ++i) {
      if (frac[i] < '0' || frac[i] > '9') return std::nullopt;
      if (i < 3) ms[i] = frac[i];
    }
  }
  return fmt::format("{}.{}Z", head, ms);
}

bool TreeSitterLanguage(std::string_view language) {
  for (std::string_view l :
       {"c", "cpp", "python", "javascript", "typescript", "tsx", "go", "rust", "java"}) {
    if (language == l) return true;
  }
  return false;
}

// docs/librarian.md §4.1 base signals by extractor family, clean spans assumed (diff.h).
double BaseSignal(bool module, std::string_view language) {
  if (TreeSitterLanguage(language)) return module ? 0.8 : 0.9;
  if (language == "text" || language.empty()) return 0.5;
  return 0.6;
}

RunInfo Info(const store::RunRecord& r) {
  return RunInfo{r.run_id, r.state, r.mode, r.started_at, r.finished_at};
}

void Listed(std::vector<std::string>& list, const std::string& item) {
  if (list.size() < kMaxListed) list.push_back(item);
}

struct Side {
  std::map<std::string, std::string> files;  // path -> sha256
  std::unordered_map<std::string, store::RunSymbol> symbols;
  double functions = 0, modules = 0, packs = 0, signal_sum = 0;
};

Result<Side> Load(store::Store& store, const std::string& run_id) {
  Side side;
  ASSIGN_OR_RETURN(std::vector<store::ManifestFile> files, store::RunManifest(store, run_id));
  for (store::ManifestFile& f : files) side.files.emplace(std::move(f.path), std::move(f.sha256));
  ASSIGN_OR_RETURN(std::vector<store::RunSymbol> symbols, store::RunSymbols(store, run_id));
  for (store::RunSymbol& s : symbols) {
    const bool module = s.kind == "module";
    if (module) ++side.modules;
    if (s.kind == "function" || s.kind == "method") ++side.functions;
    if (!s.pack_id.empty()) {
      ++side.packs;
      side.signal_sum += BaseSignal(module, s.language);
    }
    std::string key = s.target_id;
    side.symbols.emplace(std::move(key), std::move(s));
  }
  return side;
}

StatDelta Delta(double before, double after) { return StatDelta{before, after, after - before}; }

}  // namespace

Result<std::optional<store::RunRecord>> ResolveRun(store::Store& store, std::string_view spec,
                                                   std::string_view field) {
  if (spec.empty()) return Status::InvalidArgument(fmt::format("{}: must not be empty", field));
  ASSIGN_OR_RETURN(std::vector<store::RunRecord> runs, store.ListRuns());  // insertion order
  if (spec == "latest") {
    if (runs.empty()) return std::optional<store::RunRecord>();
    return std::optional<store::RunRecord>(runs.back());
  }
  for (const store::RunRecord& r : runs) {
    if (r.run_id == spec) return std::optional<store::RunRecord>(r);
  }
  if (std::optional<std::string> ts = NormalizeTimestamp(spec)) {
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      if (!it->finished_at.empty() && it->finished_at <= *ts) {
        return std::optional<store::RunRecord>(*it);
      }
    }
  }
  return std::optional<store::RunRecord>();
}

Result<RunDiff> DiffRuns(store::Store& store, std::string_view workspace, std::string_view run1,
                         std::string_view run2) {
  RunDiff d;
  d.workspace = std::string(workspace);
  ASSIGN_OR_RETURN(std::optional<store::RunRecord> a, ResolveRun(store, run1, "run1"));
  ASSIGN_OR_RETURN(std::optional<store::RunRecord> b, ResolveRun(store, run2, "run2"));
  auto not_found = [&d](std::string message) {
    d.error = std::move(message);
    d.error_code = "RESOURCE_NOT_FOUND";
    d.summary = *d.error;
    return d;
  };
  if (a) d.run1 = Info(*a);
  if (b) d.run2 = Info(*b);
  if (!a) return not_found(fmt::format("run1: no run {} in this workspace", run1));
  if (!b) return not_found(fmt::format("run2: no run {} in this workspace", run2));
  for (const auto& [field, run] : {std::pair{"run1", &*a}, std::pair{"run2", &*b}}) {
    ASSIGN_OR_RETURN(bool has, store::HasManifest(store, run->run_id));
    if (!has) {
      return not_found(fmt::format(
          "{}: run {} has no file manifest (only the last {} runs keep one, and runs recorded "
          "before this version have none)",
          field, run->run_id, store::kManifestRuns));
    }
  }
  ASSIGN_OR_RETURN(Side before, Load(store, a->run_id));
  ASSIGN_OR_RETURN(Side after, Load(store, b->run_id));

  FileChanges& f = d.files;
  for (const auto& [path, sha] : after.files) {
    auto it = before.files.find(path);
    if (it == before.files.end()) {
      ++f.added_count;
      Listed(f.added, path);
    } else if (it->second != sha) {
      ++f.modified_count;
      Listed(f.modified, path);
    } else {
      ++f.unchanged_count;
    }
  }
  for (const auto& [path, sha] : before.files) {
    if (after.files.count(path) == 0) {
      ++f.removed_count;
      Listed(f.removed, path);
    }
  }

  // Symbols and packs, target ids sorted so the listed ones are the first in byte order.
  std::vector<std::string> ids;
  ids.reserve(before.symbols.size() + after.symbols.size());
  for (const auto& [id, s] : before.symbols) ids.push_back(id);
  for (const auto& [id, s] : after.symbols) {
    if (before.symbols.count(id) == 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  SymbolChanges& s = d.symbols;
  PackChanges& p = d.packs;
  for (const std::string& id : ids) {
    auto x = before.symbols.find(id);
    auto y = after.symbols.find(id);
    const store::RunSymbol* old_s = x == before.symbols.end() ? nullptr : &x->second;
    const store::RunSymbol* new_s = y == after.symbols.end() ? nullptr : &y->second;
    const bool is_symbol = (old_s ? old_s->kind : new_s->kind) != "module";
    const bool old_pack = old_s && !old_s->pack_id.empty();
    const bool new_pack = new_s && !new_s->pack_id.empty();
    if (old_pack && new_pack) {
      ++(old_s->span_sha256 == new_s->span_sha256 ? p.unchanged : p.changed);
    } else if (new_pack) {
      ++p.added;
    } else if (old_pack) {
      ++p.removed;
    }
    if (!is_symbol) continue;
    if (old_s && new_s) {
      if (old_s->span_sha256 == new_s->span_sha256) {
        ++s.unchanged_count;
      } else {
        ++s.changed_count;
        Listed(s.changed, id);
      }
    } else if (new_s) {
      ++s.added_count;
      Listed(s.added, id);
    } else {
      ++s.removed_count;
      Listed(s.removed, id);
    }
  }

  d.stats.functions = Delta(before.functions, after.functions);
  d.stats.modules = Delta(before.modules, after.modules);
  d.stats.context_packs = Delta(before.packs, after.packs);
  d.stats.avg_confidence = Delta(before.packs > 0 ? before.signal_sum / before.packs : 0,
                                 after.packs > 0 ? after.signal_sum / after.packs : 0);
  d.summary = fmt::format(
      "{} -> {}: files +{} -{} ~{} ({} unchanged); symbols +{} -{} ~{} ({} unchanged); packs "
      "+{} -{} ~{}",
      a->run_id, b->run_id, f.added_count, f.removed_count, f.modified_count, f.unchanged_count,
      s.added_count, s.removed_count, s.changed_count, s.unchanged_count, p.added, p.removed,
      p.changed);
  return d;
}

}  // namespace trove::librarian::diff
