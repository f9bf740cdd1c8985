#include "warden/diff/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>

#include "base/hash.h"
#include "warden/identity/identity.h"

namespace trove::warden::diff {

std::string_view ChangeClassName(ChangeClass c) {
  switch (c) {
    case ChangeClass::kUnchanged:
      return "unchanged";
    case ChangeClass::kMoved:
      return "moved";
    case ChangeClass::kModified:
      return "modified";
    case ChangeClass::kNew:
      return "new";
    case ChangeClass::kDeleted:
      return "deleted";
  }
  return "unknown";
}

std::string_view OriginName(Origin o) { return o == Origin::kRuntime ? "runtime" : "application"; }

std::string_view PassName(Pass p) {
  switch (p) {
    case Pass::kNone:
      return "none";
    case Pass::kExact:
      return "exact";
    case Pass::kStableId:
      return "stable_id";
    case Pass::kNormalised:
      return "normalised";
    case Pass::kCallGraph:
      return "call_graph";
    case Pass::kFuzzy:
      return "fuzzy";
  }
  return "unknown";
}

namespace {

// Pass 3 refuses functions below this many instructions (docs/warden.md §9.1).
constexpr std::uint32_t kNormalisedMinInstructions = 5;
// Fuzzy scoring never accepts a pair below this size (docs/warden.md §5.4), so smaller functions
// are not even bucketed.
constexpr std::uint32_t kFuzzyMinInstructions = 10;
// LSH: 8 bands of 4 MinHash values.
constexpr std::size_t kBands = 8;
constexpr std::size_t kRowsPerBand = 4;
static_assert(kBands * kRowsPerBand == identity::kMinHashSize);
constexpr std::uint32_t kUnpaired = 0xffffffff;
// The call-graph neighbourhood pass (after fuzzy) pairs a proposal scoring at least this.
constexpr double kNeighbourMinScore = 0.6;
// The toolchain-robust candidates (after LSH and the neighbourhood pass, docs/decisions/0088-
// warden-diff-robust-candidates.md): functions of at least this many instructions on both sides,
// histogram cosine at least kRobustMinCosine, and a lead of kRobustMargin over the runner-up on
// both sides.
constexpr std::uint32_t kRobustMinInstructions = 20;
constexpr double kRobustMinCosine = 0.90;
constexpr double kRobustMargin = 0.05;
// Call-outs, paired callees and referenced strings must each agree at least this much (Jaccard)
// when either side has any.
constexpr double kRobustMinJaccard = 0.5;

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

// The hashes identity::Compare reads, parsed once from a stored record's hex columns; the
// other fields Compare reads are the record's own (CompareView points at them), so the one
// similarity function serves the diff as it serves the Oracle (docs/warden.md §5.4) without a
// FunctionIdentity copy per function (docs/decisions/0080-warden-diff-oracle-speed.md).
struct RecordHashes {
  base::Sha256Digest exact{};
  identity::Hash128 base{};
  identity::Hash128 structural{};
};

RecordHashes ParseHashes(const kb::FunctionRecord& r) {
  RecordHashes h;
  ParseHex(r.norm_hash, h.base);
  ParseHex(r.structural_hash, h.structural);
  ParseHex(r.exact_hash, h.exact);
  return h;
}

// The passes key their hash tables on 64-bit hashes of the keys of docs/warden.md §9.1, not on
// the keys' text: no key string is built per function and pass. Two different keys share a
// hash with a probability of about n^2 / 2^64 (1e-11 for 2 x 22,000 functions); the effect
// would be one pair refused as ambiguous, not a wrong pair, since a slot pairs only when it
// holds exactly one function of each side.
class KeyHasher {
 public:
  KeyHasher& Add(std::uint64_t v) {
    char bytes[sizeof(v)];
    std::memcpy(bytes, &v, sizeof(v));
    buffer_.append(bytes, sizeof(v));
    return *this;
  }
  KeyHasher& Add(std::string_view text) { return Add(base::XxHash3_64(text)); }
  std::uint64_t Hash() const { return base::XxHash3_64(buffer_); }
  void Clear() { buffer_.clear(); }

 private:
  std::string buffer_;
};

// The hash of a list of strings, each one ending in '\0' (a call-out set).
std::uint64_t ListHash(const std::vector<std::string>& list) {
  std::string joined;
  for (const std::string& item : list) {
    joined += item;
    joined.push_back('\0');
  }
  return base::XxHash3_64(joined);
}

// One side while the passes run.
struct Side {
  const VersionSide* version = nullptr;
  std::vector<const kb::FunctionRecord*> functions;  // defined only, index order
  std::vector<const Annotation*> annotations;
  std::vector<RecordHashes> hashes;
  std::unordered_map<std::uint32_t, std::uint32_t> position;  // func_index -> position
  std::vector<std::uint32_t> pair;                            // position -> pair number, kUnpaired
  // Per function, computed once: the keys of passes 1-3 (pass 3: nullopt below its minimum
  // size), the pass-4 shape (signature, opcode stream, call-outs) and the signature's hash.
  std::vector<std::uint64_t> exact_key;
  std::vector<std::uint64_t> stable_key;
  std::vector<std::optional<std::uint64_t>> normalised_key;
  std::vector<std::uint64_t> shape;
  std::vector<std::uint64_t> signature;

  // What identity::Compare reads of the function at position p.
  identity::CompareView View(std::uint32_t p) const {
    const kb::FunctionRecord& r = *functions[p];
    return {.exact = &hashes[p].exact,
            .base = &hashes[p].base,
            .structural = &hashes[p].structural,
            .type_signature = r.type_signature,
            .instruction_count = r.instruction_count,
            .minhash = &r.minhash,
            .histogram = &r.histogram,
            .call_outs = &r.call_outs};
  }
};

identity::Similarity Compare(const Side& from, std::uint32_t f, const Side& to, std::uint32_t t) {
  return identity::Compare(from.View(f), to.View(t));
}

Side MakeSide(const VersionSide& v) {
  static const Annotation kNoAnnotation;
  Side s;
  s.version = &v;
  const std::size_t n = v.functions.size();
  s.functions.reserve(n);
  s.annotations.reserve(n);
  s.hashes.reserve(n);
  s.position.reserve(n);
  KeyHasher key;
  for (std::size_t i = 0; i < n; ++i) {
    const kb::FunctionRecord& r = v.functions[i];
    if (r.is_import) continue;
    s.position.emplace(r.func_index, static_cast<std::uint32_t>(s.functions.size()));
    s.functions.push_back(&r);
    s.annotations.push_back(i < v.annotations.size() ? &v.annotations[i] : &kNoAnnotation);
    s.hashes.push_back(ParseHashes(r));
    const std::uint64_t signature = base::XxHash3_64(r.type_signature);
    const std::uint64_t call_outs = ListHash(r.call_outs);
    s.signature.push_back(signature);
    // 1: the exact hash covers the body only; the signature keeps two empty bodies of
    // different types apart.
    key.Clear();
    s.exact_key.push_back(key.Add(std::uint64_t{1}).Add(r.exact_hash).Add(signature).Hash());
    key.Clear();
    s.stable_key.push_back(key.Add(std::uint64_t{2}).Add(r.stable_id).Hash());
    if (r.instruction_count >= kNormalisedMinInstructions) {
      key.Clear();
      s.normalised_key.push_back(key.Add(std::uint64_t{3})
                                     .Add(r.structural_hash)
                                     .Add(signature)
                                     .Add(call_outs)
                                     .Add(std::uint64_t{r.instruction_count})
                                     .Hash());
    } else {
      s.normalised_key.push_back(std::nullopt);
    }
    key.Clear();
    s.shape.push_back(
        key.Add(std::uint64_t{4}).Add(signature).Add(r.opcodes).Add(call_outs).Hash());
  }
  s.pair.assign(s.functions.size(), kUnpaired);
  return s;
}

std::vector<std::string> SortedSet(std::vector<std::string> v);

struct PairRecord {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  Pass pass = Pass::kNone;
  identity::Similarity similarity;
};

class Matcher {
 public:
  Matcher(const VersionSide& from, const VersionSide& to, const DiffOptions& options)
      : from_(MakeSide(from)), to_(MakeSide(to)), options_(options) {}

  void Run() {
    PairUnique(Pass::kExact, [](const Side& s, std::uint32_t p) -> std::optional<std::uint64_t> {
      return s.exact_key[p];
    });
    PairUnique(Pass::kStableId, [](const Side& s, std::uint32_t p) -> std::optional<std::uint64_t> {
      return s.stable_key[p];
    });
    PairUnique(Pass::kNormalised,
               [](const Side& s, std::uint32_t p) { return s.normalised_key[p]; });
    KeyHasher scratch;
    for (int round = 0; round < options_.max_propagation_rounds; ++round) {
      const std::size_t before = pairs_.size();
      PairUnique(Pass::kCallGraph, [&scratch](const Side& s, std::uint32_t p) {
        return CallGraphKey(s, p, scratch);
      });
      if (pairs_.size() == before) break;
    }
    Fuzzy();
    for (int round = 0; round < options_.max_propagation_rounds; ++round) {
      if (!Neighbours()) break;
    }
    if (options_.robust_candidates && Robust()) {
      for (int round = 0; round < options_.max_propagation_rounds; ++round) {
        if (!Neighbours()) break;
      }
    }
  }

  const Side& from() const { return from_; }
  const Side& to() const { return to_; }
  const std::vector<PairRecord>& pairs() const { return pairs_; }

 private:
  // The token stream of pass 4 (docs/warden.md §9.1), over the stored data: the hash of
  // signature, opcode stream (immediates masked) and call-outs, then each direct defined callee
  // in call order as its pair number (or "unpaired"). Null without a paired callee: then the
  // key would carry no call-graph evidence at all.
  static std::optional<std::uint64_t> CallGraphKey(const Side& s, std::uint32_t p, KeyHasher& key) {
    const kb::FunctionRecord& r = *s.functions[p];
    if (r.defined_callees.empty()) return std::nullopt;
    key.Clear();
    key.Add(s.shape[p]);
    bool any = false;
    for (std::uint32_t callee : r.defined_callees) {
      std::uint32_t token = kUnpaired;
      auto it = s.position.find(callee);
      if (it != s.position.end()) token = s.pair[it->second];
      any = any || token != kUnpaired;
      key.Add(std::uint64_t{token});
    }
    if (!any) return std::nullopt;
    return key.Hash();
  }

  void Pair(std::uint32_t f, std::uint32_t t, Pass pass, const identity::Similarity& s) {
    const auto number = static_cast<std::uint32_t>(pairs_.size());
    from_.pair[f] = number;
    to_.pair[t] = number;
    pairs_.push_back({f, t, pass, s});
  }

  // Pairs the unmatched functions whose key (null: none) is unique on both sides.
  template <typename KeyFn>
  void PairUnique(Pass pass, KeyFn key_of) {
    struct Slot {
      std::uint32_t from = kUnpaired;
      std::uint32_t to = kUnpaired;
      bool from_many = false;
      bool to_many = false;
    };
    std::unordered_map<std::uint64_t, Slot> slots;
    slots.reserve(from_.functions.size());
    for (std::uint32_t p = 0; p < from_.functions.size(); ++p) {
      if (from_.pair[p] != kUnpaired) continue;
      std::optional<std::uint64_t> key = key_of(from_, p);
      if (!key) continue;
      Slot& slot = slots[*key];
      if (slot.from != kUnpaired) slot.from_many = true;
      slot.from = p;
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> found;  // (to, from)
    std::vector<Slot*> touched;
    for (std::uint32_t p = 0; p < to_.functions.size(); ++p) {
      if (to_.pair[p] != kUnpaired) continue;
      std::optional<std::uint64_t> key = key_of(to_, p);
      if (!key) continue;
      auto it = slots.find(*key);
      if (it == slots.end()) continue;
      Slot& slot = it->second;
      if (slot.to != kUnpaired) slot.to_many = true;
      slot.to = p;
      touched.push_back(&slot);
    }
    for (Slot* slot : touched) {
      if (slot->from_many || slot->to_many || slot->from == kUnpaired) continue;
      found.emplace_back(slot->to, slot->from);
      slot->from_many = true;  // once
    }
    std::sort(found.begin(), found.end());
    for (const auto& [t, f] : found) {
      identity::Similarity s = Compare(from_, f, to_, t);
      if (pass == Pass::kExact) {
        s.overall = identity::kExactScore;
      } else if (pass == Pass::kStableId) {
        s.overall = identity::kBaseScore;
      }
      Pair(f, t, pass, s);
    }
  }

  // Pass 5: LSH candidates, best score first, mutual best, ties refused.
  void Fuzzy() {
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> buckets;
    KeyHasher key;
    auto band_key = [&key](const Side& s, std::uint32_t p, std::size_t band) {
      const kb::FunctionRecord& r = *s.functions[p];
      key.Clear();
      key.Add(std::uint64_t{5}).Add(s.signature[p]).Add(std::uint64_t{band});
      for (std::size_t i = 0; i < kRowsPerBand; ++i) key.Add(r.minhash[band * kRowsPerBand + i]);
      return key.Hash();
    };
    auto eligible = [](const Side& s, std::uint32_t p) {
      return s.pair[p] == kUnpaired && s.functions[p]->instruction_count >= kFuzzyMinInstructions;
    };
    for (std::uint32_t p = 0; p < from_.functions.size(); ++p) {
      if (!eligible(from_, p)) continue;
      for (std::size_t band = 0; band < kBands; ++band) {
        buckets[band_key(from_, p, band)].push_back(p);
      }
    }
    struct Candidate {
      double score = 0;
      std::uint32_t from = 0;
      std::uint32_t to = 0;
    };
    std::vector<Candidate> candidates;
    std::vector<std::uint32_t> seen(from_.functions.size(), kUnpaired);
    for (std::uint32_t t = 0; t < to_.functions.size(); ++t) {
      if (!eligible(to_, t)) continue;
      for (std::size_t band = 0; band < kBands; ++band) {
        auto it = buckets.find(band_key(to_, t, band));
        if (it == buckets.end() || it->second.size() > options_.max_bucket) continue;
        for (std::uint32_t f : it->second) {
          if (seen[f] == t) continue;
          seen[f] = t;
          const identity::Similarity s = Compare(from_, f, to_, t);
          const std::uint32_t n =
              std::min(from_.functions[f]->instruction_count, to_.functions[t]->instruction_count);
          if (!identity::AcceptFuzzy(s.overall, n, identity::MatchPurpose::kDiff)) continue;
          candidates.push_back({s.overall, f, t});
        }
      }
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      if (a.score != b.score) return a.score > b.score;
      if (a.to != b.to) return a.to < b.to;
      return a.from < b.from;
    });
    // Walk groups of equal score: the first group with both sides free holds the best
    // remaining score of each of its members; a member appearing twice in a group is a tie
    // and pairs with neither.
    std::unordered_map<std::uint32_t, int> from_uses, to_uses;
    for (std::size_t i = 0; i < candidates.size();) {
      std::size_t j = i;
      while (j < candidates.size() && candidates[j].score == candidates[i].score) ++j;
      from_uses.clear();
      to_uses.clear();
      for (std::size_t k = i; k < j; ++k) {
        const Candidate& c = candidates[k];
        if (from_.pair[c.from] != kUnpaired || to_.pair[c.to] != kUnpaired) continue;
        ++from_uses[c.from];
        ++to_uses[c.to];
      }
      for (std::size_t k = i; k < j; ++k) {
        const Candidate& c = candidates[k];
        if (from_.pair[c.from] != kUnpaired || to_.pair[c.to] != kUnpaired) continue;
        if (from_uses[c.from] != 1 || to_uses[c.to] != 1) continue;
        Pair(c.from, c.to, Pass::kFuzzy, Compare(from_, c.from, to_, c.to));
      }
      // A tied function stays out of lower groups too: its best match is ambiguous.
      for (std::size_t k = i; k < j; ++k) {
        const Candidate& c = candidates[k];
        if (from_uses[c.from] > 1 && from_.pair[c.from] == kUnpaired) tied_from_.push_back(c.from);
        if (to_uses[c.to] > 1 && to_.pair[c.to] == kUnpaired) tied_to_.push_back(c.to);
      }
      for (std::uint32_t f : tied_from_) from_.pair[f] = kTied;
      for (std::uint32_t t : tied_to_) to_.pair[t] = kTied;
      i = j;
    }
    for (std::uint32_t& p : from_.pair) {
      if (p == kTied) p = kUnpaired;
    }
    for (std::uint32_t& p : to_.pair) {
      if (p == kTied) p = kUnpaired;
    }
  }

  // The pair numbers of the paired defined callees of the function at position p, sorted, each
  // once.
  static std::vector<std::uint32_t> PairedCallees(const Side& s, std::uint32_t p) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t callee : s.functions[p]->defined_callees) {
      auto it = s.position.find(callee);
      if (it == s.position.end() || s.pair[it->second] == kUnpaired) continue;
      out.push_back(s.pair[it->second]);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  template <typename T>
  static double Jaccard(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.empty() && b.empty()) return 1;
    std::size_t common = 0;
    for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
      if (a[i] < b[j]) {
        ++i;
      } else if (b[j] < a[i]) {
        ++j;
      } else {
        ++common;
        ++i;
        ++j;
      }
    }
    return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
  }

  // Toolchain-robust candidates for the functions still unpaired (docs/decisions/0088): a
  // compiler upgrade reorders and rewrites instruction sequences, so the opcode-shingle MinHash
  // of a kept function may share no LSH band with its old self, while its signature, its
  // call-outs, its already-paired callees and its instruction mix survive. Candidates are the
  // unpaired functions of equal signature that share the call-out set, or share a paired
  // callee, each key's bucket bounded by max_bucket (a hash lookup, never all pairs). A pair is
  // taken only when the count gate passes, call-outs, paired callees and referenced strings each
  // agree (Jaccard >= kRobustMinJaccard when either side has any), at least one of them is
  // shared (an anchor), the histogram cosine is at least kRobustMinCosine, and each is the other's
  // best candidate by cosine with a lead of kRobustMargin over both runners-up. Recorded as fuzzy
  // pairs (modified). Returns whether it paired anything.
  bool Robust() {
    auto eligible = [](const Side& s, std::uint32_t p) {
      return s.pair[p] == kUnpaired && s.functions[p]->instruction_count >= kRobustMinInstructions;
    };
    KeyHasher key;
    auto call_out_key = [&key](const Side& s, std::uint32_t p) {
      key.Clear();
      return key.Add(std::uint64_t{6})
          .Add(s.signature[p])
          .Add(ListHash(s.functions[p]->call_outs))
          .Hash();
    };
    auto callee_key = [&key](const Side& s, std::uint32_t p, std::uint32_t number) {
      key.Clear();
      return key.Add(std::uint64_t{7}).Add(s.signature[p]).Add(std::uint64_t{number}).Hash();
    };
    std::vector<std::vector<std::uint32_t>> from_callees(from_.functions.size());
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> buckets;
    for (std::uint32_t p = 0; p < from_.functions.size(); ++p) {
      if (!eligible(from_, p)) continue;
      from_callees[p] = PairedCallees(from_, p);
      buckets[call_out_key(from_, p)].push_back(p);
      for (std::uint32_t number : from_callees[p])
        buckets[callee_key(from_, p, number)].push_back(p);
    }
    struct Candidate {
      double cosine = 0;
      std::uint32_t from = 0;
      std::uint32_t to = 0;
      bool agrees = false;  // passes every gate but the ranking
    };
    std::vector<Candidate> candidates;
    std::vector<std::uint32_t> seen(from_.functions.size(), kUnpaired);
    std::vector<std::uint64_t> keys;
    for (std::uint32_t t = 0; t < to_.functions.size(); ++t) {
      if (!eligible(to_, t)) continue;
      const std::vector<std::uint32_t> to_callees = PairedCallees(to_, t);
      keys.clear();
      keys.push_back(call_out_key(to_, t));
      for (std::uint32_t number : to_callees) keys.push_back(callee_key(to_, t, number));
      const std::vector<std::string> to_strings = SortedSet(to_.functions[t]->referenced_strings);
      for (std::uint64_t k : keys) {
        auto it = buckets.find(k);
        if (it == buckets.end() || it->second.size() > options_.max_bucket) continue;
        for (std::uint32_t f : it->second) {
          if (seen[f] == t) continue;
          seen[f] = t;
          const kb::FunctionRecord& fr = *from_.functions[f];
          const identity::Similarity s = Compare(from_, f, to_, t);
          if (!s.signature_gate || !s.count_gate) continue;
          Candidate c{s.histogram_cosine, f, t, false};
          const double callees = Jaccard(from_callees[f], to_callees);
          if (s.histogram_cosine < kRobustMinCosine || s.call_out_jaccard < kRobustMinJaccard ||
              callees < kRobustMinJaccard) {
            candidates.push_back(c);
            continue;
          }
          const std::vector<std::string> from_strings = SortedSet(fr.referenced_strings);
          const double strings = Jaccard(from_strings, to_strings);
          // An anchor: an instruction mix alone is shared by unrelated functions of one
          // compiler, so the pair must also share a paired callee, an import or a string.
          const bool anchored = (!from_callees[f].empty() && !to_callees.empty()) ||
                                (!fr.call_outs.empty() && s.call_out_jaccard > 0) ||
                                (!from_strings.empty() && !to_strings.empty());
          c.agrees = strings >= kRobustMinJaccard && anchored;
          candidates.push_back(c);
        }
      }
    }
    // Best and runner-up cosine of each function over all of its candidates.
    struct Rank {
      double best = -1;
      double second = -1;
      std::uint32_t partner = kUnpaired;
    };
    std::vector<Rank> from_rank(from_.functions.size()), to_rank(to_.functions.size());
    auto note = [](Rank& r, double cosine, std::uint32_t partner) {
      if (cosine > r.best) {
        r.second = r.best;
        r.best = cosine;
        r.partner = partner;
      } else if (cosine > r.second) {
        r.second = cosine;
      }
    };
    for (const Candidate& c : candidates) {
      note(from_rank[c.from], c.cosine, c.to);
      note(to_rank[c.to], c.cosine, c.from);
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> accepted;  // (to, from)
    for (const Candidate& c : candidates) {
      if (!c.agrees) continue;
      const Rank& fr = from_rank[c.from];
      const Rank& tr = to_rank[c.to];
      if (fr.partner != c.to || tr.partner != c.from) continue;
      if (fr.best - fr.second < kRobustMargin || tr.best - tr.second < kRobustMargin) continue;
      accepted.emplace_back(c.to, c.from);
    }
    std::sort(accepted.begin(), accepted.end());
    for (const auto& [t, f] : accepted) Pair(f, t, Pass::kFuzzy, Compare(from_, f, to_, t));
    return !accepted.empty();
  }

  // The unpaired defined callees of the function at position p, each once, in call order.
  static std::vector<std::uint32_t> UnpairedCallees(const Side& s, std::uint32_t p,
                                                    std::vector<std::uint32_t>& paired_tokens) {
    std::vector<std::uint32_t> out;
    paired_tokens.clear();
    for (std::uint32_t callee : s.functions[p]->defined_callees) {
      auto it = s.position.find(callee);
      if (it == s.position.end()) continue;
      const std::uint32_t q = it->second;
      if (s.pair[q] != kUnpaired) {
        paired_tokens.push_back(s.pair[q]);
      } else if (std::find(out.begin(), out.end(), q) == out.end()) {
        out.push_back(q);
      }
    }
    return out;
  }

  // Call-graph neighbourhood, after the fuzzy pass (docs/decisions/0080-warden-diff-oracle-
  // speed.md): a pair whose two functions each call exactly one unpaired defined function,
  // or are each called by exactly one unpaired defined function, proposes those two; the
  // paired callees must be the same pairs on both sides. A proposal pairs when the two have the
  // same signature, pass the count gate and score at least kNeighbourMinScore, and neither
  // function is proposed with another partner (unique on both sides). Returns whether a round
  // paired anything; recorded as call_graph pairs (modified).
  bool Neighbours() {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> proposals;  // (from, to)
    std::vector<std::uint32_t> from_tokens, to_tokens;
    // Per pair number: the unpaired functions that call the pair's function on each side.
    std::vector<std::vector<std::uint32_t>> from_unpaired_callers_of_pair(pairs_.size());
    std::vector<std::vector<std::uint32_t>> to_unpaired_callers_of_pair(pairs_.size());
    for (std::uint32_t p = 0; p < from_.functions.size(); ++p) {
      if (from_.pair[p] != kUnpaired) continue;
      for (std::uint32_t callee : from_.functions[p]->defined_callees) {
        auto it = from_.position.find(callee);
        if (it == from_.position.end() || from_.pair[it->second] == kUnpaired) continue;
        auto& list = from_unpaired_callers_of_pair[from_.pair[it->second]];
        if (std::find(list.begin(), list.end(), p) == list.end()) list.push_back(p);
      }
    }
    for (std::uint32_t p = 0; p < to_.functions.size(); ++p) {
      if (to_.pair[p] != kUnpaired) continue;
      for (std::uint32_t callee : to_.functions[p]->defined_callees) {
        auto it = to_.position.find(callee);
        if (it == to_.position.end() || to_.pair[it->second] == kUnpaired) continue;
        auto& list = to_unpaired_callers_of_pair[to_.pair[it->second]];
        if (std::find(list.begin(), list.end(), p) == list.end()) list.push_back(p);
      }
    }
    for (std::uint32_t number = 0; number < pairs_.size(); ++number) {
      const PairRecord& pr = pairs_[number];
      const std::vector<std::uint32_t> fc = UnpairedCallees(from_, pr.from, from_tokens);
      const std::vector<std::uint32_t> tc = UnpairedCallees(to_, pr.to, to_tokens);
      if (fc.size() == 1 && tc.size() == 1 && from_tokens == to_tokens) {
        proposals.emplace_back(fc[0], tc[0]);
      }
      const auto& fu = from_unpaired_callers_of_pair[number];
      const auto& tu = to_unpaired_callers_of_pair[number];
      if (fu.size() == 1 && tu.size() == 1) proposals.emplace_back(fu[0], tu[0]);
    }
    // Unique on both sides: a function proposed with two partners pairs with neither.
    std::sort(proposals.begin(), proposals.end());
    proposals.erase(std::unique(proposals.begin(), proposals.end()), proposals.end());
    std::unordered_map<std::uint32_t, int> from_uses, to_uses;
    for (const auto& [f, t] : proposals) {
      ++from_uses[f];
      ++to_uses[t];
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> accepted;  // (to, from)
    for (const auto& [f, t] : proposals) {
      if (from_uses[f] != 1 || to_uses[t] != 1) continue;
      if (from_.pair[f] != kUnpaired || to_.pair[t] != kUnpaired) continue;
      if (from_.signature[f] != to_.signature[t]) continue;
      const identity::Similarity sim = Compare(from_, f, to_, t);
      if (!sim.signature_gate || !sim.count_gate || sim.overall < kNeighbourMinScore) continue;
      accepted.emplace_back(t, f);
    }
    std::sort(accepted.begin(), accepted.end());
    for (const auto& [t, f] : accepted) Pair(f, t, Pass::kCallGraph, Compare(from_, f, to_, t));
    return !accepted.empty();
  }

  static constexpr std::uint32_t kTied = 0xfffffffe;
  Side from_;
  Side to_;
  const DiffOptions options_;
  std::vector<PairRecord> pairs_;
  std::vector<std::uint32_t> tied_from_;
  std::vector<std::uint32_t> tied_to_;
};

std::vector<std::string> SortedSet(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<std::string> Minus(const std::vector<std::string>& a,
                               const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool IsOracle(const Annotation& a) { return a.name && a.provenance && *a.provenance == "oracle"; }

void TakeName(Change& c, const Annotation& a) {
  c.name = a.name;
  c.provenance = a.provenance;
  c.confidence = a.confidence;
  c.locked = a.locked;
}

}  // namespace

DiffReport ComputeDiff(const VersionSide& from, const VersionSide& to, const DiffOptions& options) {
  Matcher m(from, to, options);
  m.Run();
  const Side& fs = m.from();
  const Side& ts = m.to();

  DiffReport report;
  report.from = {from.id, from.label, from.emscripten_version};
  report.to = {to.id, to.label, to.emscripten_version};
  report.toolchain_changed = from.emscripten_version && to.emscripten_version &&
                             *from.emscripten_version != *to.emscripten_version;
  report.changes.reserve(fs.functions.size() + ts.functions.size());

  for (std::uint32_t t = 0; t < ts.functions.size(); ++t) {
    const kb::FunctionRecord& tr = *ts.functions[t];
    Change c;
    c.to_index = tr.func_index;
    c.to_stable_id = tr.stable_id;
    c.to_instructions = tr.instruction_count;
    c.to_type = tr.type_signature;
    const std::vector<std::string> to_strings = SortedSet(tr.referenced_strings);
    const Annotation& ta = *ts.annotations[t];
    if (ts.pair[t] == kUnpaired) {
      c.change = ChangeClass::kNew;
      c.origin = IsOracle(ta) ? Origin::kRuntime : Origin::kApplication;
      TakeName(c, ta);
      c.call_outs_added = tr.call_outs;
      c.strings_added = to_strings;
    } else {
      const PairRecord& p = m.pairs()[ts.pair[t]];
      const kb::FunctionRecord& fr = *fs.functions[p.from];
      const Annotation& fa = *fs.annotations[p.from];
      c.pass = p.pass;
      c.score = p.similarity.overall;
      c.components = p.similarity;
      c.from_index = fr.func_index;
      c.from_stable_id = fr.stable_id;
      c.from_instructions = fr.instruction_count;
      c.from_type = fr.type_signature;
      if (p.pass == Pass::kExact || p.pass == Pass::kStableId) {
        c.change = fr.func_index == tr.func_index ? ChangeClass::kUnchanged : ChangeClass::kMoved;
      } else {
        c.change = ChangeClass::kModified;
      }
      c.origin = IsOracle(fa) || IsOracle(ta) ? Origin::kRuntime : Origin::kApplication;
      TakeName(c, fa.name ? fa : ta);
      c.call_outs_added = Minus(tr.call_outs, fr.call_outs);
      c.call_outs_removed = Minus(fr.call_outs, tr.call_outs);
      const std::vector<std::string> from_strings = SortedSet(fr.referenced_strings);
      c.strings_added = Minus(to_strings, from_strings);
      c.strings_removed = Minus(from_strings, to_strings);
      ++report.pass_pairs[static_cast<std::size_t>(p.pass)];
    }
    ++report.counts[static_cast<std::size_t>(c.change)][static_cast<std::size_t>(c.origin)];
    report.changes.push_back(std::move(c));
  }
  for (std::uint32_t f = 0; f < fs.functions.size(); ++f) {
    if (fs.pair[f] != kUnpaired) continue;
    const kb::FunctionRecord& fr = *fs.functions[f];
    const Annotation& fa = *fs.annotations[f];
    Change c;
    c.change = ChangeClass::kDeleted;
    c.origin = IsOracle(fa) ? Origin::kRuntime : Origin::kApplication;
    TakeName(c, fa);
    c.from_index = fr.func_index;
    c.from_stable_id = fr.stable_id;
    c.from_instructions = fr.instruction_count;
    c.from_type = fr.type_signature;
    c.call_outs_removed = fr.call_outs;
    c.strings_removed = SortedSet(fr.referenced_strings);
    ++report.counts[static_cast<std::size_t>(c.change)][static_cast<std::size_t>(c.origin)];
    report.changes.push_back(std::move(c));
  }
  return report;
}

// ---------------------------------------------------------------------------------------------
// JSON

namespace {

using Json = nlohmann::json;

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json VersionJson(const VersionRef& v) {
  return Json{{"version_id", v.id},
              {"label", v.label},
              {"emscripten_version", OrNull(v.emscripten_version)}};
}

}  // namespace

namespace {

Json ReportObject(const DiffReport& report, bool include_unchanged) {
  Json counts = Json::object();
  for (std::size_t c = 0; c < kChangeClassCount; ++c) {
    const auto& row = report.counts[c];
    counts[std::string(ChangeClassName(static_cast<ChangeClass>(c)))] =
        Json{{"application", row[0]}, {"runtime", row[1]}, {"total", row[0] + row[1]}};
  }
  Json passes = Json::object();
  for (std::size_t p = 1; p < kPassCount; ++p) {
    passes[std::string(PassName(static_cast<Pass>(p)))] = report.pass_pairs[p];
  }
  Json changes = Json::array();
  for (const Change& c : report.changes) {
    if (!include_unchanged &&
        (c.change == ChangeClass::kUnchanged || c.change == ChangeClass::kMoved)) {
      continue;
    }
    Json components = nullptr;
    if (c.components) {
      const identity::Similarity& s = *c.components;
      components = Json{{"exact_equal", s.exact_equal},
                        {"base_equal", s.base_equal},
                        {"minhash", s.minhash},
                        {"histogram_cosine", s.histogram_cosine},
                        {"call_out_jaccard", s.call_out_jaccard},
                        {"structural", s.structural}};
    }
    changes.push_back(Json{
        {"class", ChangeClassName(c.change)},
        {"origin", OriginName(c.origin)},
        {"pass", c.pass == Pass::kNone ? Json(nullptr) : Json(PassName(c.pass))},
        {"score", c.score},
        {"components", std::move(components)},
        {"from_index", OrNull(c.from_index)},
        {"to_index", OrNull(c.to_index)},
        {"from_stable_id", OrNull(c.from_stable_id)},
        {"to_stable_id", OrNull(c.to_stable_id)},
        {"name", OrNull(c.name)},
        {"provenance", OrNull(c.provenance)},
        {"confidence", OrNull(c.confidence)},
        {"locked", c.locked},
        {"from_instructions", OrNull(c.from_instructions)},
        {"to_instructions", OrNull(c.to_instructions)},
        {"from_type", OrNull(c.from_type)},
        {"to_type", OrNull(c.to_type)},
        {"call_outs_added", c.call_outs_added},
        {"call_outs_removed", c.call_outs_removed},
        {"strings_added", c.strings_added},
        {"strings_removed", c.strings_removed},
    });
  }
  return Json{{"from", VersionJson(report.from)},
              {"to", VersionJson(report.to)},
              {"toolchain_changed", report.toolchain_changed},
              {"counts", std::move(counts)},
              {"passes", std::move(passes)},
              {"changes", std::move(changes)}};
}

}  // namespace

std::string ReportJson(const DiffReport& report, bool include_unchanged) {
  return ReportObject(report, include_unchanged)
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string StoredReportJson(const DiffReport& report) {
  // Unchanged and moved pairs as [from_index, to_index, pass] triples: every function stays in
  // the stored report at a tenth of the size (and JSON time) of full change objects. They are
  // written straight after the object's other members ("unchanged_or_moved" sorts last among
  // its keys), the bytes nlohmann::json would write, without a JSON value per triple.
  std::string out =
      ReportObject(report, false).dump(-1, ' ', false, Json::error_handler_t::replace);
  out.pop_back();  // the closing brace
  out += ",\"unchanged_or_moved\":[";
  bool first = true;
  for (const Change& c : report.changes) {
    if (c.change != ChangeClass::kUnchanged && c.change != ChangeClass::kMoved) continue;
    if (!first) out.push_back(',');
    first = false;
    fmt::format_to(std::back_inserter(out), "[{},{},{}]", *c.from_index, *c.to_index,
                   static_cast<int>(c.pass));
  }
  out += "]}";
  return out;
}

}  // namespace trove::warden::diff
