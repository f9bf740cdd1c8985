#include "warden/oracle/oracle.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "base/env.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"

namespace trove::warden::oracle {

namespace {

using Json = nlohmann::json;

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$';
}

// Known aliases (§8.3): a routine exported or named under two names folds to one.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"stackSave", "emscripten_stack_get_current"},
    {"stackRestore", "_emscripten_stack_restore"},
    {"stackAlloc", "_emscripten_stack_alloc"},
    {"dlmalloc", "malloc"},
    {"dlfree", "free"},
    {"dlcalloc", "calloc"},
    {"dlrealloc", "realloc"},
    {"dlmemalign", "memalign"},
    {"dlposix_memalign", "posix_memalign"},
    {"dlmalloc_usable_size", "malloc_usable_size"},
    {"emscripten_builtin_malloc", "malloc"},
    {"emscripten_builtin_free", "free"},
    {"emscripten_builtin_memalign", "memalign"},
};

template <std::size_t N>
void ParseHex(std::string_view hex, std::array<std::uint8_t, N>& out) {
  auto nibble = [](char c) -> std::uint8_t {
    if (c >= '0' && c <= '9') return static_cast<std::uint8_t>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<std::uint8_t>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<std::uint8_t>(c - 'A' + 10);
    return 0;
  };
  out.fill(0);
  for (std::size_t i = 0; i < N && 2 * i + 1 < hex.size(); ++i) {
    out[i] = static_cast<std::uint8_t>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  }
}

// What identity::Compare reads, from a stored record or a signature: the one similarity
// function of docs/warden.md §5.4 serves the Oracle.
identity::FunctionIdentity ToIdentity(const kb::FunctionRecord& r) {
  identity::FunctionIdentity f;
  f.type_signature = r.type_signature;
  f.instruction_count = r.instruction_count;
  f.call_outs = r.call_outs;
  f.minhash = r.minhash;
  f.histogram = r.histogram;
  ParseHex(r.norm_hash, f.base);
  ParseHex(r.structural_hash, f.structural);
  ParseHex(r.exact_hash, f.exact);
  return f;
}

identity::FunctionIdentity ToIdentity(const Signature& s) {
  identity::FunctionIdentity f;
  f.type_signature = s.type_signature;
  f.instruction_count = s.instruction_count;
  f.call_outs = s.call_targets;
  f.minhash = s.minhash;
  f.histogram = s.histogram;
  ParseHex(s.norm_hash, f.base);
  ParseHex(s.structural_hash, f.structural);
  ParseHex(s.exact_hash, f.exact);
  return f;
}

std::string StructuralKey(const kb::FunctionRecord& r) {
  std::string key = r.structural_hash;
  key.push_back('\0');
  key += r.type_signature;
  for (const std::string& c : r.call_outs) {
    key.push_back('\0');
    key += c;
  }
  return key;
}

// The written name of a key's signatures: the most frequent, ties to the smallest.
const Signature* Representative(const std::vector<const Signature*>& sigs) {
  std::map<std::string_view, int> count;
  for (const Signature* s : sigs) ++count[s->name];
  std::string_view best;
  int best_count = 0;
  for (const auto& [name, n] : count) {
    if (n > best_count) {
      best = name;
      best_count = n;
    }
  }
  for (const Signature* s : sigs) {
    if (s->name == best) return s;
  }
  return sigs.front();
}

enum class Why : std::uint8_t {
  kNone,
  kAmbiguousTarget,
  kAmbiguousName,
  kNameTaken,
  kFuzzyBelow,
  kFuzzyNotMutual,
  kInconsistent
};

struct Matcher {
  Matcher(std::span<const kb::FunctionRecord> f, OracleStore& s, MatchOptions o, bool n)
      : functions(f), store(s), options(o), naive(n) {}

  std::span<const kb::FunctionRecord> functions;
  OracleStore& store;
  MatchOptions options;
  bool naive = false;

  MatchResult result;
  std::vector<std::size_t> defined;  // positions in functions
  std::vector<bool> matched;         // per position in functions
  std::vector<Why> why;              // per position in functions
  std::set<std::string> names_taken;
  std::map<std::string, double> vote;
  std::unordered_map<std::uint32_t, std::size_t> pos_of_index;  // func_index -> position
  std::vector<std::string> matched_norm;  // per position: the normalised name given this run
  // Matches whose corpus signatures may propagate names to their callees: position and the
  // key's signatures (all agreeing on the name). Exact, norm and call-graph matches only.
  std::vector<std::pair<std::size_t, std::vector<const Signature*>>> anchors;
  std::size_t anchors_done = 0;
  // Position -> (anchor, call site) of every anchor's call of it.
  std::unordered_map<std::size_t, std::vector<std::pair<std::size_t, std::size_t>>> called_by;

  Match MakeMatch(const kb::FunctionRecord& r, Pass pass, double score, const Signature& sig,
                  std::int64_t candidates) {
    Match m;
    m.func_index = r.func_index;
    m.stable_id = r.stable_id;
    m.instruction_count = r.instruction_count;
    m.pass = pass;
    m.score = score;
    m.confidence = std::min(score, options.confidence_cap);
    m.name = sig.name;
    m.name_norm = sig.name_norm;
    m.library = sig.library;
    m.emscripten_version = sig.emscripten_version;
    m.opt_level = sig.opt_level;
    m.signature_id = sig.id;
    m.candidates = candidates;
    return m;
  }

  void Accept(std::size_t pos, Match m, std::vector<const Signature*> sigs = {}) {
    matched[pos] = true;
    why[pos] = Why::kNone;
    matched_norm[pos] = m.name_norm;
    if (!naive) names_taken.insert(m.name_norm);
    if (!naive && !sigs.empty() &&
        (m.pass == Pass::kExact || m.pass == Pass::kNorm || m.pass == Pass::kCallGraph)) {
      const std::vector<std::uint32_t>& callees = functions[pos].defined_callees;
      for (std::size_t i = 0; i < callees.size(); ++i) {
        const auto it = pos_of_index.find(callees[i]);
        if (it != pos_of_index.end()) called_by[it->second].emplace_back(anchors.size(), i);
      }
      anchors.emplace_back(pos, std::move(sigs));
    }
    ++result.per_pass[static_cast<std::size_t>(m.pass)];
    result.matches.push_back(std::move(m));
  }

  Status KeyedPass(Pass pass) {
    const double confidence = pass == Pass::kExact  ? kExactConfidence
                              : pass == Pass::kNorm ? kNormConfidence
                                                    : kStructuralConfidence;
    const std::uint32_t min_size = naive ? 0 : kMinKeyedInstructions;
    std::map<std::string, std::vector<std::size_t>> groups;
    for (std::size_t pos : defined) {
      const kb::FunctionRecord& r = functions[pos];
      if (matched[pos] || r.instruction_count < min_size) continue;
      std::string key = pass == Pass::kExact  ? r.exact_hash
                        : pass == Pass::kNorm ? r.norm_hash
                                              : StructuralKey(r);
      groups[std::move(key)].push_back(pos);
    }
    for (const auto& [key, group] : groups) {
      const kb::FunctionRecord& r = functions[group.front()];
      std::vector<const Signature*> sigs;
      if (pass == Pass::kExact) {
        ASSIGN_OR_RETURN(sigs, store.ByExact(r.exact_hash));
      } else if (pass == Pass::kNorm) {
        ASSIGN_OR_RETURN(sigs, store.ByNorm(r.norm_hash));
      } else {
        ASSIGN_OR_RETURN(sigs, store.ByStructural(r.structural_hash, r.type_signature));
        // The skeleton drops every immediate, so short or straight-line bodies share it: the
        // corpus function must also pass the §5.4 size gate (ratio within [0.5, 2]) and the
        // minimum size on its own side.
        std::erase_if(sigs, [&r, min_size](const Signature* s) {
          const std::uint32_t lo = std::min(s->instruction_count, r.instruction_count);
          const std::uint32_t hi = std::max(s->instruction_count, r.instruction_count);
          return s->call_targets != r.call_outs || lo < min_size || hi > 2 * lo;
        });
        // And closer than the skeleton says (decision 0071): sizes within kStructuralMaxRatio
        // and op-class histograms with a cosine of at least kStructuralMinCosine.
        const identity::FunctionIdentity t = ToIdentity(r);
        std::erase_if(sigs, [&](const Signature* s) {
          const double lo = std::min(s->instruction_count, r.instruction_count);
          const double hi = std::max(s->instruction_count, r.instruction_count);
          return hi > kStructuralMaxRatio * lo ||
                 identity::HistogramCosine(t.histogram, s->histogram) < kStructuralMinCosine;
        });
      }
      if (sigs.empty()) continue;
      if (pass != Pass::kStructural && r.instruction_count >= kMinVoteInstructions) {
        std::set<std::string_view> versions;
        for (const Signature* s : sigs) versions.insert(s->emscripten_version);
        for (std::string_view v : versions) {
          vote[std::string(v)] += static_cast<double>(r.instruction_count) *
                                  static_cast<double>(group.size()) /
                                  static_cast<double>(versions.size());
        }
      }
      if (group.size() > 1) {
        for (std::size_t pos : group) why[pos] = Why::kAmbiguousTarget;
        continue;
      }
      std::set<std::string_view> names;
      for (const Signature* s : sigs) names.insert(s->name_norm);
      if (names.size() > 1) {
        why[group.front()] = Why::kAmbiguousName;
        continue;
      }
      const Signature* sig = Representative(sigs);
      if (names_taken.contains(sig->name_norm)) {
        why[group.front()] = Why::kNameTaken;
        continue;
      }
      if (pass == Pass::kStructural) {
        // No call-graph neighbour named this run may contradict it, and a small one (a
        // skeleton shared by many short wrappers) needs one that agrees.
        const int agree = Agreement(group.front(), sig->name_norm, sigs);
        if (agree < 0 || (agree == 0 && r.instruction_count < kStructuralAnchorBelow)) {
          why[group.front()] = Why::kInconsistent;
          continue;
        }
      }
      Accept(group.front(),
             MakeMatch(r, pass, confidence, *sig, static_cast<std::int64_t>(sigs.size())),
             std::move(sigs));
    }
    return Status::Ok();
  }

  struct Proposal {
    std::size_t pos = 0;
    double score = 0;
    const Signature* sig = nullptr;
    identity::Similarity components;
    std::int64_t candidates = 0;
  };

  Status FuzzyPass() {
    std::vector<Proposal> proposals;
    for (std::size_t pos : defined) {
      const kb::FunctionRecord& r = functions[pos];
      if (matched[pos] || r.instruction_count < kMinFuzzyInstructions) continue;
      std::map<std::int64_t, const Signature*> candidates;
      for (int band = 0; band < kLshBands; ++band) {
        ASSIGN_OR_RETURN(std::vector<const Signature*> bucket,
                         store.ByBucket(band, LshBucket(r.minhash, band), options.max_bucket));
        if (static_cast<int>(bucket.size()) > options.max_bucket) continue;
        for (const Signature* s : bucket) candidates.emplace(s->id, s);
      }
      if (candidates.empty()) continue;
      const identity::FunctionIdentity target = ToIdentity(r);
      double best = -1;
      std::vector<std::pair<const Signature*, identity::Similarity>> best_sigs;
      for (const auto& [id, s] : candidates) {
        const identity::Similarity sim = identity::Compare(target, ToIdentity(*s));
        if (sim.overall > best + 1e-12) {
          best = sim.overall;
          best_sigs.clear();
        }
        if (sim.overall >= best - 1e-12) best_sigs.emplace_back(s, sim);
      }
      const std::uint32_t n =
          std::min(r.instruction_count, best_sigs.front().first->instruction_count);
      if (!identity::AcceptFuzzy(best, n, identity::MatchPurpose::kOracle)) {
        why[pos] = Why::kFuzzyBelow;
        continue;
      }
      std::set<std::string_view> names;
      std::vector<const Signature*> sigs;
      for (const auto& [s, sim] : best_sigs) {
        names.insert(s->name_norm);
        sigs.push_back(s);
      }
      if (names.size() > 1) {
        why[pos] = Why::kAmbiguousName;
        continue;
      }
      const Signature* rep = Representative(sigs);
      identity::Similarity components = best_sigs.front().second;
      for (const auto& [s, sim] : best_sigs) {
        if (s == rep) components = sim;
      }
      proposals.push_back(
          {pos, best, rep, components, static_cast<std::int64_t>(candidates.size())});
    }
    // Mutual best: a name goes to the target that scores highest for it; a tie refuses all.
    std::map<std::string_view, std::vector<const Proposal*>> by_name;
    for (const Proposal& p : proposals) by_name[p.sig->name_norm].push_back(&p);
    std::vector<const Proposal*> accepted;
    for (const auto& [name, list] : by_name) {
      double top = -1;
      for (const Proposal* p : list) top = std::max(top, p->score);
      std::vector<const Proposal*> winners;
      for (const Proposal* p : list) {
        if (p->score >= top - 1e-12) {
          winners.push_back(p);
        } else {
          why[p->pos] = Why::kFuzzyNotMutual;
        }
      }
      if (winners.size() != 1) {
        for (const Proposal* p : winners) why[p->pos] = Why::kFuzzyNotMutual;
        continue;
      }
      if (names_taken.contains(std::string(name))) {
        why[winners.front()->pos] = Why::kNameTaken;
        continue;
      }
      if (!Consistent(winners.front()->pos, std::string(name), {winners.front()->sig})) {
        why[winners.front()->pos] = Why::kInconsistent;
        continue;
      }
      accepted.push_back(winners.front());
    }
    std::sort(accepted.begin(), accepted.end(),
              [](const Proposal* a, const Proposal* b) { return a->pos < b->pos; });
    for (const Proposal* p : accepted) {
      Match m = MakeMatch(functions[p->pos], Pass::kFuzzy, p->score, *p->sig, p->candidates);
      m.confidence = std::min({p->score, kFuzzyCap, options.confidence_cap});
      m.components = p->components;
      Accept(p->pos, std::move(m));
    }
    return Status::Ok();
  }

  // The names the anchors' corpus signatures give the callees of `pos` and its callers' call
  // sites give `pos`: the positional reading of a call list, used only when a signature's
  // callee list has exactly the target's length (otherwise the two lists cannot be aligned).
  // Returns, for `pos`, every normalised name so given.
  std::set<std::string> NamesFromCallers(std::size_t pos) const {
    std::set<std::string> out;
    const auto it = called_by.find(pos);
    if (it == called_by.end()) return out;
    for (const auto& [anchor, site] : it->second) {
      for (const Signature* sig : anchors[anchor].second) {
        if (sig->callees.size() != functions[anchors[anchor].first].defined_callees.size()) {
          continue;
        }
        std::string n = NormaliseName(sig->callees[site]);
        if (!n.empty()) out.insert(std::move(n));
      }
    }
    return out;
  }

  // Whether naming `pos` `name` (from `sigs`) agrees with its call-graph neighbours already
  // named this run: every matched callee at a call site must carry the name the signatures
  // give that site, and every anchor calling `pos` must name it `name` (§8.3, anchor
  // consistency). A signature whose callee list cannot be aligned says nothing. When the
  // function has matched neighbours, at least one must agree.
  bool Consistent(std::size_t pos, const std::string& name,
                  const std::vector<const Signature*>& sigs) const {
    return Agreement(pos, name, sigs) >= 0;
  }
  // -1 when a neighbour contradicts, else the number of neighbours that agree.
  int Agreement(std::size_t pos, const std::string& name,
                const std::vector<const Signature*>& sigs) const {
    int agree = 0, neighbours = 0;
    const std::vector<std::uint32_t>& callees = functions[pos].defined_callees;
    for (const Signature* sig : sigs) {
      if (sig->callees.size() != callees.size()) continue;
      for (std::size_t i = 0; i < callees.size(); ++i) {
        const auto it = pos_of_index.find(callees[i]);
        if (it == pos_of_index.end() || it->second == pos || !matched[it->second]) continue;
        ++neighbours;
        if (NormaliseName(sig->callees[i]) != matched_norm[it->second]) return -1;
        ++agree;
      }
    }
    for (const std::string& n : NamesFromCallers(pos)) {
      ++neighbours;
      if (n != name) return -1;
      ++agree;
    }
    return neighbours == 0 || agree > 0 ? agree : -1;
  }

  // Call-graph propagation (§8.3): an anchor's corpus signatures name its callees by call
  // site. A callee is named when it is unmatched, has >= kMinKeyedInstructions instructions,
  // every proposal for it agrees on one name, no other function is proposed that name, the
  // name is not taken, and a corpus signature of that name has its type signature and a size
  // within the §5.4 ratio. Repeated from the new matches, at most kCallGraphRounds rounds.
  Status CallGraphPass() {
    for (int round = 0; round < kCallGraphRounds && anchors_done < anchors.size(); ++round) {
      std::map<std::size_t, std::set<std::string>> proposed;
      const std::size_t end = anchors.size();
      for (std::size_t a = anchors_done; a < end; ++a) {
        const auto& [caller, sigs] = anchors[a];
        const std::vector<std::uint32_t>& callees = functions[caller].defined_callees;
        for (const Signature* sig : sigs) {
          if (sig->callees.size() != callees.size()) continue;
          for (std::size_t i = 0; i < callees.size(); ++i) {
            const auto it = pos_of_index.find(callees[i]);
            if (it == pos_of_index.end() || matched[it->second]) continue;
            proposed[it->second].insert(NormaliseName(sig->callees[i]));
          }
        }
      }
      anchors_done = end;
      std::map<std::string, std::vector<std::size_t>> by_name;
      for (const auto& [pos, names] : proposed) {
        const kb::FunctionRecord& r = functions[pos];
        if (r.is_import || r.instruction_count < kMinKeyedInstructions) continue;
        if (names.size() != 1 || names.begin()->empty()) {
          why[pos] = Why::kAmbiguousName;
          continue;
        }
        by_name[*names.begin()].push_back(pos);
      }
      for (auto& [name, positions] : by_name) {
        if (positions.size() != 1) {
          for (std::size_t pos : positions) why[pos] = Why::kAmbiguousTarget;
          continue;
        }
        const std::size_t pos = positions.front();
        if (names_taken.contains(name)) {
          why[pos] = Why::kNameTaken;
          continue;
        }
        const kb::FunctionRecord& r = functions[pos];
        ASSIGN_OR_RETURN(std::vector<const Signature*> sigs, store.ByName(name));
        std::erase_if(sigs, [&r](const Signature* s) {
          const std::uint32_t lo = std::min(s->instruction_count, r.instruction_count);
          const std::uint32_t hi = std::max(s->instruction_count, r.instruction_count);
          return s->type_signature != r.type_signature || hi > 2 * lo;
        });
        if (sigs.empty()) {
          why[pos] = Why::kInconsistent;
          continue;
        }
        if (!Consistent(pos, name, sigs)) {
          why[pos] = Why::kInconsistent;
          continue;
        }
        const Signature* sig = Representative(sigs);
        Accept(pos,
               MakeMatch(r, Pass::kCallGraph, kCallGraphConfidence, *sig,
                         static_cast<std::int64_t>(sigs.size())),
               std::move(sigs));
      }
    }
    return Status::Ok();
  }

  Result<MatchResult> Run() {
    matched.assign(functions.size(), false);
    why.assign(functions.size(), Why::kNone);
    matched_norm.assign(functions.size(), std::string());
    for (std::size_t i = 0; i < functions.size(); ++i) pos_of_index[functions[i].func_index] = i;
    for (std::size_t i = 0; i < functions.size(); ++i) {
      if (functions[i].is_import) {
        ++result.refusals.imports;
        continue;
      }
      defined.push_back(i);
      ++result.defined;
      if (!naive && functions[i].instruction_count < kMinKeyedInstructions) {
        ++result.refusals.too_small;
      }
    }
    RETURN_IF_ERROR(KeyedPass(Pass::kExact));
    RETURN_IF_ERROR(KeyedPass(Pass::kNorm));
    if (!naive) {
      RETURN_IF_ERROR(CallGraphPass());
      RETURN_IF_ERROR(KeyedPass(Pass::kStructural));
      RETURN_IF_ERROR(FuzzyPass());
      RETURN_IF_ERROR(CallGraphPass());
    }
    for (std::size_t pos : defined) {
      if (matched[pos]) continue;
      switch (why[pos]) {
        case Why::kNone:
          break;
        case Why::kAmbiguousTarget:
          ++result.refusals.ambiguous_target;
          break;
        case Why::kAmbiguousName:
          ++result.refusals.ambiguous_name;
          break;
        case Why::kNameTaken:
          ++result.refusals.name_taken;
          break;
        case Why::kFuzzyBelow:
          ++result.refusals.fuzzy_below;
          break;
        case Why::kFuzzyNotMutual:
          ++result.refusals.fuzzy_not_mutual;
          break;
        case Why::kInconsistent:
          ++result.refusals.inconsistent;
          break;
      }
    }
    std::sort(result.matches.begin(), result.matches.end(),
              [](const Match& a, const Match& b) { return a.func_index < b.func_index; });
    for (const auto& [v, w] : vote) result.vote.emplace_back(v, w);
    std::sort(result.vote.begin(), result.vote.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    return std::move(result);
  }
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The Emscripten era of an LLVM major version, for the ABI-tag hint (§8.3 (3)); empty when
// unknown. Coarse by design: the hint is the weakest source.
std::string_view EraOfLlvm(int major) {
  switch (major) {
    case 15:
      return "3.1.2x";
    case 16:
      return "3.1.3x";
    case 17:
      return "3.1.4x";
    case 18:
      return "3.1.5x";
    case 19:
    case 20:
    case 21:
      return "4.0.x";
    default:
      return "";
  }
}

}  // namespace

std::string_view PassName(Pass p) {
  switch (p) {
    case Pass::kExact:
      return "exact";
    case Pass::kNorm:
      return "norm";
    case Pass::kStructural:
      return "structural";
    case Pass::kFuzzy:
      return "fuzzy";
    case Pass::kCallGraph:
      return "callgraph";
  }
  return "exact";
}

std::string NormaliseName(std::string_view name) {
  std::string stripped;
  stripped.reserve(name.size());
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name.substr(i).starts_with("[abi:")) {
      const std::size_t close = name.find(']', i);
      if (close != std::string_view::npos) {
        i = close;
        continue;
      }
    }
    stripped.push_back(name[i]);
  }
  std::string out;
  out.reserve(stripped.size());
  bool space = false;
  for (char c : stripped) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      space = true;
      continue;
    }
    if (space && !out.empty() && IsIdentChar(out.back()) && IsIdentChar(c)) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  // LLVM's uniquing suffix of a local symbol ("pad.3" for a static pad): its number depends
  // on link order, not on the function.
  if (const std::size_t dot = out.rfind('.');
      dot != std::string::npos && dot > 0 && dot + 1 < out.size() && IsIdentChar(out[dot - 1])) {
    if (std::all_of(out.begin() + static_cast<std::ptrdiff_t>(dot) + 1, out.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      out.resize(dot);
    }
  }
  for (const auto& [alias, canonical] : kAliases) {
    if (out == alias) return std::string(canonical);
  }
  return out;
}

namespace {

std::optional<std::string> ConfigStore(base::Env& env, const std::string& path) {
  if (path.empty() || !env.FileExists(path)) return std::nullopt;
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) return std::nullopt;
  const Json j = Json::parse(*text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  if (auto it = j.find("oracle.store"); it != j.end() && it->is_string()) {
    return it->get<std::string>();
  }
  if (auto it = j.find("oracle"); it != j.end() && it->is_object()) {
    if (auto s = it->find("store"); s != it->end() && s->is_string()) return s->get<std::string>();
  }
  return std::nullopt;
}

// A relative path is taken against `dir`; a PostgreSQL URL is passed through untouched.
std::string Against(const std::string& dir, const std::string& path) {
  if (IsStoreUrl(path)) return path;
  const std::filesystem::path p(path);
  return (p.is_relative() ? std::filesystem::path(dir) / p : p).lexically_normal().string();
}

}  // namespace

std::string ProjectDirOfKb(const std::string& kb_path) {
  // A KB at a PostgreSQL URL has no directory (never one named after the URL).
  if (IsStoreUrl(kb_path)) return {};
  const std::filesystem::path p(kb_path);
  if (p.parent_path().filename() == ".warden") return p.parent_path().parent_path().string();
  return p.parent_path().string();
}

std::string ResolveStorePath(base::Env& env, const std::optional<std::string>& flag,
                             const std::string& project_dir, const std::string& cwd) {
  if (flag) return Against(cwd, *flag);
  const std::string dir = project_dir.empty() ? cwd : project_dir;
  if (auto s = ConfigStore(env, dir + "/.warden/config.json")) return Against(dir, *s);
  std::string global_file;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    global_file = std::string(xdg) + "/warden/config.json";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    global_file = std::string(home) + "/.config/warden/config.json";
  }
  if (auto s = ConfigStore(env, global_file)) return Against(dir, *s);
  return Against(dir, ".warden/oracle.db");
}

std::vector<Signature> ExtractSignatures(std::span<const kb::FunctionRecord> functions,
                                         const BuildOptions& options, BuildCounts& counts) {
  std::vector<Signature> out;
  std::set<std::pair<std::string, std::string>> seen;  // (exact_hash, name)
  std::unordered_map<std::uint32_t, std::string_view> name_of;
  for (const kb::FunctionRecord& r : functions) {
    if (r.raw_name && !r.raw_name->empty()) {
      name_of.emplace(r.func_index, *r.raw_name);
    } else if (!r.export_names.empty()) {
      name_of.emplace(r.func_index, r.export_names.front());
    }
  }
  for (const kb::FunctionRecord& r : functions) {
    if (r.is_import) continue;
    ++counts.functions;
    std::string name;
    if (r.raw_name && !r.raw_name->empty()) {
      name = *r.raw_name;
    } else if (!r.export_names.empty()) {
      name = r.export_names.front();
    }
    if (name.empty()) {
      ++counts.unnamed;
      continue;
    }
    if (r.instruction_count < kMinKeyedInstructions) {
      ++counts.too_small;
      continue;
    }
    if (!seen.emplace(r.exact_hash, name).second) {
      ++counts.duplicates;
      continue;
    }
    Signature s;
    s.name = name;
    s.name_norm = NormaliseName(name);
    s.library = options.library.empty() ? "unknown" : options.library;
    s.emscripten_version =
        options.emscripten_version.empty() ? "unknown" : options.emscripten_version;
    s.opt_level = options.opt_level;
    s.flags = options.flags;
    s.source_ref = options.source_ref;
    s.exact_hash = r.exact_hash;
    s.norm_hash = r.norm_hash;
    s.structural_hash = r.structural_hash;
    s.minhash = r.minhash;
    s.histogram = r.histogram;
    s.call_targets = r.call_outs;
    s.type_signature = r.type_signature;
    s.instruction_count = r.instruction_count;
    s.callees.reserve(r.defined_callees.size());
    for (std::uint32_t callee : r.defined_callees) {
      const auto it = name_of.find(callee);
      s.callees.emplace_back(it == name_of.end() ? std::string_view() : it->second);
    }
    out.push_back(std::move(s));
  }
  return out;
}

Status AddModule(OracleStore& store, std::span<const std::uint8_t> bytes, const std::string& path,
                 const BuildOptions& options, BuildCounts& counts) {
  ingest::IngestOptions io;
  io.seed = false;
  io.threads = 1;
  ASSIGN_OR_RETURN(ingest::PreparedVersion prepared, ingest::PrepareVersion(bytes, path, io));
  BuildOptions o = options;
  if (o.source_ref.empty()) {
    const std::size_t slash = path.find_last_of('/');
    o.source_ref = slash == std::string::npos ? path : path.substr(slash + 1);
  }
  std::vector<Signature> sigs = ExtractSignatures(prepared.functions.span(), o, counts);
  ASSIGN_OR_RETURN(std::int64_t added, store.Add(sigs));
  counts.added += added;
  counts.duplicates += static_cast<std::int64_t>(sigs.size()) - added;
  ++counts.modules;
  return Status::Ok();
}

namespace {

// Reads the store's index into memory when `preload` says so or, by default, when the target's
// lookups (about eleven per defined function) would cost more than reading it
// (docs/decisions/0080-warden-diff-oracle-speed.md).
Status MaybePreload(std::span<const kb::FunctionRecord> functions, OracleStore& store,
                    std::optional<bool> preload) {
  if (store.preloaded() || preload == false) return Status::Ok();
  if (!preload.has_value()) {
    std::int64_t defined = 0;
    for (const kb::FunctionRecord& r : functions) defined += r.is_import ? 0 : 1;
    ASSIGN_OR_RETURN(const std::int64_t signatures, store.Count());
    if (defined * kPreloadSignaturesPerFunction < signatures) return Status::Ok();
  }
  return store.Preload();
}

}  // namespace

Result<MatchResult> MatchFunctions(std::span<const kb::FunctionRecord> functions,
                                   OracleStore& store, const MatchOptions& options) {
  RETURN_IF_ERROR(MaybePreload(functions, store, options.preload));
  Matcher m(functions, store, options, false);
  return m.Run();
}

Result<MatchResult> MatchNaive(std::span<const kb::FunctionRecord> functions, OracleStore& store) {
  RETURN_IF_ERROR(MaybePreload(functions, store, std::nullopt));
  Matcher m(functions, store, MatchOptions{}, true);
  return m.Run();
}

VersionGuess HintFromNames(std::span<const kb::FunctionRecord> functions) {
  VersionGuess g;
  for (const kb::FunctionRecord& r : functions) {
    if (!r.raw_name) continue;
    const std::string& n = *r.raw_name;
    // "[abi:ne190106]" (demangled) or "B8ne190106" (mangled): letters, then 6 digits.
    for (std::size_t at = n.find("[abi:"); at != std::string::npos; at = n.find("[abi:", at + 1)) {
      std::size_t i = at + 5;
      while (i < n.size() && std::isalpha(static_cast<unsigned char>(n[i])) != 0) ++i;
      if (i + 6 > n.size()) continue;
      const std::string digits = n.substr(i, 6);
      if (!std::all_of(digits.begin(), digits.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
        continue;
      }
      const int major = std::stoi(digits.substr(0, 2));
      const int minor = std::stoi(digits.substr(2, 2));
      const int patch = std::stoi(digits.substr(4, 2));
      const std::string_view era = EraOfLlvm(major);
      if (era.empty()) continue;
      g.version = std::string(era);
      g.source = "hint";
      g.detail =
          fmt::format("libc++ ABI tag {} in {} (LLVM {}.{}.{})", n.substr(at, i + 6 - at + 1),
                      n.size() > 60 ? n.substr(0, 60) + "..." : n, major, minor, patch);
      return g;
    }
  }
  return g;
}

Toolchain DetectToolchain(std::string_view producers_json,
                          const std::optional<std::string>& glue_version,
                          std::span<const kb::FunctionRecord> functions) {
  Toolchain t;
  const Json p = Json::parse(producers_json, nullptr, false);
  bool producers_emscripten = false;
  std::string foreign;
  if (p.is_object()) {
    std::vector<std::string> parts;
    for (const auto& [field, list] : p.items()) {
      if (!list.is_array()) continue;
      std::vector<std::string> entries;
      for (const Json& e : list) {
        if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_string()) continue;
        const std::string name = e[0].get<std::string>();
        const std::string version = e[1].get<std::string>();
        entries.push_back(version.empty() ? name : name + " " + version);
        const std::string lower = Lower(name + " " + version);
        if (lower.find("emscripten") != std::string::npos) producers_emscripten = true;
        if (foreign.empty() &&
            (lower.starts_with("rust") || lower.starts_with("go") || lower.starts_with("tinygo") ||
             lower.starts_with("wasm-bindgen") || lower.starts_with("assemblyscript") ||
             lower.starts_with("zig") || lower.starts_with("swift") ||
             lower.starts_with("kotlin") || lower.starts_with("dotnet"))) {
          foreign = name;
        }
      }
      if (!entries.empty()) parts.push_back(fmt::format("{}: {}", field, fmt::join(entries, ", ")));
    }
    t.producers = fmt::format("{}", fmt::join(parts, "; "));
  }
  if (glue_version) {
    t.reason = fmt::format("the JS glue names Emscripten {}", *glue_version);
    return t;
  }
  if (producers_emscripten) {
    t.reason = "the producers section names Emscripten";
    return t;
  }
  if (!foreign.empty()) {
    t.emscripten = false;
    t.reason = fmt::format("the producers section names {} ({})", foreign, t.producers);
    return t;
  }
  // Signs of Emscripten's runtime in the module itself.
  for (const kb::FunctionRecord& r : functions) {
    std::vector<std::string_view> names;
    if (r.is_import) {
      names.push_back(r.import_field);
    } else {
      for (const std::string& e : r.export_names) names.push_back(e);
      if (r.raw_name) names.push_back(*r.raw_name);
    }
    for (std::string_view n : names) {
      if (n.find("emscripten") != std::string_view::npos || n.starts_with("__syscall_") ||
          n == "stackSave" || n == "stackRestore" || n == "stackAlloc") {
        t.reason = fmt::format("it has Emscripten's runtime names ({})", n);
        return t;
      }
    }
  }
  t.emscripten = false;
  t.reason = t.producers.empty()
                 ? "no JS glue version, no producers section and no Emscripten runtime names"
                 : fmt::format("no Emscripten sign (producers: {})", t.producers);
  return t;
}

Result<IdentifyReport> Identify(kb::Kb& kb, std::int64_t version_id, OracleStore& store,
                                const IdentifyOptions& options) {
  ASSIGN_OR_RETURN(kb::VersionInfo info, kb.GetVersion(version_id));
  ASSIGN_OR_RETURN(std::vector<kb::FunctionRecord> records, kb.FunctionRecords(version_id));
  ASSIGN_OR_RETURN(std::string producers, kb.VersionProducersJson(version_id));
  kb::FunctionQuery query;
  query.version_id = version_id;
  ASSIGN_OR_RETURN(kb::FunctionPage page, kb.ListFunctions(query));
  std::unordered_map<std::uint32_t, const kb::FunctionRow*> rows;
  for (const kb::FunctionRow& row : page.functions) rows.emplace(row.index, &row);

  IdentifyReport report;
  report.version_id = version_id;
  report.label = info.label;
  report.store_path = store.path();
  report.dry_run = options.dry_run;
  ASSIGN_OR_RETURN(report.store, store.Stats());
  const std::optional<std::string> glue_version =
      info.emscripten_version_source == "glue" ? info.emscripten_version : std::nullopt;
  report.toolchain = DetectToolchain(producers, glue_version, records);

  MatchOptions match = options.match;
  if (!report.toolchain.emscripten)
    match.confidence_cap = std::min(match.confidence_cap, kForeignCap);
  ASSIGN_OR_RETURN(report.result, MatchFunctions(records, store, match));

  // Version inference (§8.3).
  VersionGuess& v = report.version;
  const bool stored_weak = !info.emscripten_version || info.emscripten_version_source == "hint" ||
                           info.emscripten_version_source == "oracle-vote";
  if (!report.toolchain.emscripten) {
    v.detail = fmt::format("not inferred: not an Emscripten module ({})", report.toolchain.reason);
  } else if (!stored_weak) {
    v.version = info.emscripten_version;
    v.source = info.emscripten_version_source;
    v.detail = fmt::format("from the {} at ingest", v.source.value_or("?"));
  } else if (!report.result.vote.empty()) {
    double total = 0;
    for (const auto& [ver, w] : report.result.vote) total += w;
    v.version = report.result.vote.front().first;
    v.source = "oracle-vote";
    v.share = total > 0 ? report.result.vote.front().second / total : 0.0;
    v.detail = fmt::format("vote of exact and norm hits of >= {} instructions, weighted by size",
                           kMinVoteInstructions);
  } else {
    VersionGuess hint = HintFromNames(records);
    if (hint.version) {
      v = std::move(hint);
    } else if (info.emscripten_version) {
      v.version = info.emscripten_version;
      v.source = info.emscripten_version_source;
      v.detail = "kept: no vote and no hint this time";
    } else {
      v.detail =
          "unknown: no glue version, no vote (no exact or norm hit of >= 20 instructions) "
          "and no libc++ ABI tag";
    }
  }

  if (!report.toolchain.emscripten) {
    report.note = fmt::format(
        "{} is not an Emscripten module: {}. Still tried: all four passes against the store, with "
        "confidences capped at {:.2f}; the Emscripten version was not inferred.",
        info.label, report.toolchain.reason, kForeignCap);
  }

  const std::string vote_json = v.share ? fmt::format("{:.3f}", *v.share) : std::string("null");
  for (const Match& m : report.result.matches) {
    WriteOutcome w;
    w.func_index = m.func_index;
    auto it = rows.find(m.func_index);
    const bool same = it != rows.end() && it->second->name == m.name &&
                      it->second->provenance == std::optional<std::string>("oracle");
    if (options.dry_run) {
      w.reason = "dry run";
    } else if (same) {
      w.reason = "unchanged: already named so by the Oracle";
      ++report.unchanged;
    } else {
      Json details = {
          {"version_id", version_id},       {"func_index", m.func_index},
          {"pass", PassName(m.pass)},       {"score", m.score},
          {"signature_id", m.signature_id}, {"corpus_name", m.name},
          {"library", m.library},           {"emscripten_version", m.emscripten_version},
          {"opt_level", m.opt_level},       {"candidates", m.candidates},
          {"store", store.path()}};
      if (m.components) {
        details["components"] = {{"minhash", m.components->minhash},
                                 {"histogram_cosine", m.components->histogram_cosine},
                                 {"call_out_jaccard", m.components->call_out_jaccard},
                                 {"structural", m.components->structural}};
      }
      kb::Proposal proposal;
      proposal.name = m.name;
      proposal.confidence = m.confidence;
      proposal.details_json = details.dump(-1, ' ', false, Json::error_handler_t::replace);
      ASSIGN_OR_RETURN(kb::Decision d, kb.OracleWrite(PassName(m.pass), m.stable_id, proposal));
      w.attempted = true;
      w.written = d.accepted;
      w.reason = d.reason;
      if (d.accepted) {
        ++report.written;
      } else {
        ++report.rejected;
      }
    }
    report.writes.push_back(std::move(w));
  }
  (void)vote_json;
  if (!options.dry_run && v.version && v.source &&
      (*v.source == "oracle-vote" || *v.source == "hint") &&
      (info.emscripten_version != v.version || info.emscripten_version_source != v.source)) {
    RETURN_IF_ERROR(kb.SetEmscriptenVersion(version_id, *v.version, *v.source));
    report.version_stored = true;
  }
  return report;
}

Result<std::optional<OracleFact>> CurrentOracleFact(kb::Kb& kb, std::string_view stable_id) {
  ASSIGN_OR_RETURN(std::optional<kb::SymbolRecord> sym, kb.GetSymbol(stable_id));
  if (!sym || sym->provenance != "oracle" || !sym->name) return std::optional<OracleFact>();
  for (auto it = sym->evidence.rbegin(); it != sym->evidence.rend(); ++it) {
    if (!it->accepted || it->provenance != "oracle" || it->name != sym->name) continue;
    const Json d = Json::parse(it->details_json, nullptr, false);
    if (!d.is_object()) continue;
    OracleFact f;
    f.name = *sym->name;
    f.pass = d.value("pass", it->actor.starts_with("oracle:") ? it->actor.substr(7) : "");
    f.score = d.value("score", 0.0);
    f.confidence = it->confidence.value_or(sym->confidence);
    f.library = d.value("library", "");
    f.emscripten_version = d.value("emscripten_version", "");
    f.signature_id = d.value("signature_id", std::int64_t{0});
    return std::optional<OracleFact>(std::move(f));
  }
  return std::optional<OracleFact>();
}

std::string ReportJson(const IdentifyReport& r) {
  Json matches = Json::array();
  for (std::size_t i = 0; i < r.result.matches.size(); ++i) {
    const Match& m = r.result.matches[i];
    Json j = {{"func_index", m.func_index},
              {"stable_id", m.stable_id},
              {"name", m.name},
              {"pass", PassName(m.pass)},
              {"score", m.score},
              {"confidence", m.confidence},
              {"library", m.library},
              {"emscripten_version", m.emscripten_version},
              {"opt_level", m.opt_level},
              {"instructions", m.instruction_count},
              {"candidates", m.candidates}};
    if (i < r.writes.size()) {
      j["written"] = r.writes[i].written;
      j["reason"] = r.writes[i].reason;
    }
    matches.push_back(std::move(j));
  }
  Json per_pass = Json::object();
  for (std::size_t p = 0; p < kPassCount; ++p) {
    per_pass[std::string(PassName(static_cast<Pass>(p)))] = r.result.per_pass[p];
  }
  std::map<std::string, std::int64_t> libs;
  for (const Match& m : r.result.matches) ++libs[m.library];
  Json vote = Json::array();
  for (const auto& [v, w] : r.result.vote)
    vote.push_back({{"emscripten_version", v}, {"weight", w}});
  const Refusals& f = r.result.refusals;
  Json out = {
      {"version_id", r.version_id},
      {"label", r.label},
      {"store",
       {{"path", r.store_path},
        {"signatures", r.store.signatures},
        {"libraries", r.store.libraries},
        {"emscripten_versions", r.store.emscripten_versions}}},
      {"emscripten", r.toolchain.emscripten},
      {"toolchain_reason", r.toolchain.reason},
      {"producers", r.toolchain.producers.empty() ? Json(nullptr) : Json(r.toolchain.producers)},
      {"note", r.note.empty() ? Json(nullptr) : Json(r.note)},
      {"dry_run", r.dry_run},
      {"defined", r.result.defined},
      {"matched", r.result.matches.size()},
      {"per_pass", per_pass},
      {"per_library", libs},
      {"written", r.written},
      {"rejected", r.rejected},
      {"unchanged", r.unchanged},
      {"refused",
       {{"imports", f.imports},
        {"too_small", f.too_small},
        {"ambiguous_target", f.ambiguous_target},
        {"ambiguous_name", f.ambiguous_name},
        {"name_taken", f.name_taken},
        {"fuzzy_below_threshold", f.fuzzy_below},
        {"fuzzy_not_mutual", f.fuzzy_not_mutual},
        {"inconsistent", f.inconsistent}}},
      {"emscripten_version",
       {{"version", r.version.version ? Json(*r.version.version) : Json(nullptr)},
        {"source", r.version.source ? Json(*r.version.source) : Json(nullptr)},
        {"share", r.version.share ? Json(*r.version.share) : Json(nullptr)},
        {"detail", r.version.detail},
        {"stored", r.version_stored},
        {"vote", vote}}},
      {"matches", matches}};
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string ReportText(const IdentifyReport& r) {
  std::string out;
  out += fmt::format("oracle identify {} (id {}) against {} ({} signatures, {} libraries)\n",
                     r.label, r.version_id, r.store_path, r.store.signatures, r.store.libraries);
  if (!r.note.empty()) out += fmt::format("note: {}\n", r.note);
  out += fmt::format("matched {} of {} defined functions\n", r.result.matches.size(),
                     r.result.defined);
  for (std::size_t p = 0; p < kPassCount; ++p) {
    out += fmt::format("  {:<11} {}\n", PassName(static_cast<Pass>(p)), r.result.per_pass[p]);
  }
  std::map<std::string, std::int64_t> libs;
  for (const Match& m : r.result.matches) ++libs[m.library];
  if (!libs.empty()) {
    out += "per library:\n";
    for (const auto& [lib, n] : libs) out += fmt::format("  {:<11} {}\n", lib, n);
  }
  if (r.dry_run) {
    out += fmt::format("dry run: nothing written ({} names would be proposed to the gate)\n",
                       r.result.matches.size());
  } else {
    out += fmt::format("written {}, rejected by the gate {}, unchanged {}\n", r.written, r.rejected,
                       r.unchanged);
  }
  const Refusals& f = r.result.refusals;
  out += fmt::format(
      "not matched: {} too small, {} ambiguous targets, {} ambiguous names, {} names taken, {} "
      "fuzzy below threshold, {} fuzzy not mutual, {} inconsistent with the call graph; {} "
      "imports never matched\n",
      f.too_small, f.ambiguous_target, f.ambiguous_name, f.name_taken, f.fuzzy_below,
      f.fuzzy_not_mutual, f.inconsistent, f.imports);
  if (r.version.version) {
    out += fmt::format("emscripten version: {} ({}{}){}\n", *r.version.version,
                       r.version.source.value_or("?"),
                       r.version.share ? fmt::format(", share {:.2f}", *r.version.share) : "",
                       r.version_stored ? ", stored" : "");
  } else {
    out += fmt::format("emscripten version: {}\n", r.version.detail);
  }
  return out;
}

}  // namespace trove::warden::oracle
