// RankSignals: why a context pack ranked where it did (docs/conventions.md §10.3, clangd's
// Quality.h).
// Each source of evidence (lexical BM25, symbol match, path match, call-graph proximity to
// `affectedFiles`, scoping, the pack type's weight for the depth and intentType, the pack's
// base signal) fills in what it knows; a default RankSignals is neutral, so a source that
// found nothing neither helps nor hurts. Merge() combines sources with each field's rule
// written beside it, and Evaluate() is the one place that holds the weights (docs/librarian.md
// §4.4).
//
// The result of Evaluate() is a ranking signal named `score`, never a probability or a
// calibrated confidence (docs/librarian.md §5.1).
//
// Thread safety: values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trove::librarian::rank {

// Hops from an affected file along calls/imports; kNotConnected when unrelated or unknown.
inline constexpr std::uint8_t kNotConnected = 255;

// The coefficients of Evaluate(). The docs/librarian.md §4.4 starting values were
// rel = 0.55·lex + 0.15·sym + 0.10·path + 0.10·graph + 0.10·scope. The defaults below were
// chosen on the development split only, by `librarian_eval --split dev --system librarian
// --weights L,S,P,G,Sc,NW,IW,OW,F` (docs/decisions/0023 and 0027, docs/retrieval.md): the best
// function-level MRR among the runs whose file-level nDCG@10 stayed at or above the
// baseline's. Branch librarian-mrr added the name-word signals and the file prior; with them
// `sym` (whole-name equality, graded share of sub-words) added nothing on the dev split, so it
// is 0 and the name-word signals carry the name match. `graph` (call in-degree without
// affectedFiles) changed neither level measurably, so it is 0; with affectedFiles, proximity
// still counts through `scope`.
struct Weights {
  double lexical = 0.40;
  double symbol = 0;
  double path = 0.20;
  double graph = 0;
  double scope = 0.10;
  double name_words = 0.40;
  double intent_words = 0.60;
  double owner_words = 0.30;
  double file = 1.0;
  // Not tuned: the evaluation strips identifiers from its queries, so this signal is 0 there;
  // a name the user typed as an identifier outweighs every other signal but lexical ties.
  // Not settable by --weights.
  double identifier = 2.0;
  // Branch librarian-mrr3 (decision 0036): the share of the intent's words found in the
  // target's own code. Chosen on the development split, standard and hard variants.
  double coverage = 0.5;
  // Decision 0064: the name words the intent predicts through the workspace's own word
  // associations (query/assoc.h). Chosen on the development split; `librarian_eval --weights`
  // takes an eleventh value for it.
  double assoc = 0.3;
  // Decision 0070: the optional embeddings engine (embed/embed.h), 0 unless the user set one
  // up. Not tuned (no embedding endpoint is available offline): a value that lets a close
  // vector lift a candidate about as much as a name-word match does.
  double embed = 0.5;
  // Decision 0095: name confidence (ForNameConfidence). When no function candidate of the query
  // is both lexically strong and named by the intent (the best name_words × lexical below
  // `name_confidence_high`), the intent probably does not name its function, and a name that
  // shares some of its words is weaker evidence: the weights of the function's own name words
  // (name_words, intent_words) are scaled down towards `name_damping` × their value (reached at
  // `name_confidence_low`) and lexical gains up to `lexical_shift`; owner_words keeps its weight
  // (an intent that does not name the function may still name its class). `name_damping` 1 and
  // `lexical_shift` 0 turn it off. Chosen on the
  // development splits of both evaluation sets, standard and hard variants; `librarian_eval
  // --name-confidence LOW,HIGH,DAMPING,SHIFT` sets them.
  double name_confidence_low = 0.3;
  double name_confidence_high = 0.8;
  double name_damping = 0.8;
  double lexical_shift = 0.04;
  // Decision 0096: workspace vectors (semvec/semvec.h), learned at bootstrap from the
  // workspace's own text. Chosen on the development split (0.5-3 tried; 1 raised the hard
  // variant's function MRR on both sets and kept the standard one); `librarian_eval
  // --semvec-weight` sets it.
  double semvec = 1.0;
};

// Returns the weights for a query's function candidates given `confidence`, the best
// name_words × lexical among them (Weights::name_confidence_low and following): `w` unchanged
// at or above name_confidence_high; name_words and intent_words scaled by name_damping and
// lexical raised by lexical_shift at or below name_confidence_low; linear in between. Module and
// other packs keep `w`.
Weights ForNameConfidence(const Weights& w, double confidence);

struct RankSignals {
  // BM25 of the pack's best chunk over the best among all candidates, in [0, 1]; 0: no match.
  double lexical = 0;
  // 1 when an intent token equals the target's name or last qualified segment
  // (case-insensitive), else 0.6 × the share of its name sub-words that occur in the intent,
  // as written or as a simple inflection (docs/decisions/0023).
  double symbol = 0;
  // 1 when the intent holds the target's name written as a compound identifier
  // (parse_config, parseHttp, fn_17_3), else 0. The graded `symbol` also counts a one-word
  // name equal to an English word of the intent ("close"), which misleads on sentences.
  double identifier = 0;
  // How the target's name meets the intent's words (query/vocabulary.h MatchNameWords), each in
  // [0, 1]: the share of the name's content sub-words found in the intent, the share of the
  // intent's content words the name carries, and the share carried by the owner's name only.
  // Words are compared stemmed, abbreviations as the word they stand for (msg = message).
  double name_words = 0;
  double intent_words = 0;
  double owner_words = 0;
  // The file prior: the lexical signal of the pack's primary file (the best BM25 of the file's
  // chunks, a symbol chunk counting 0.7, over the best candidate's), in [0, 1]. A function in
  // a file that matches the intent as a whole ranks above an equal one in a file that does not.
  double file = 0;
  // Body coverage: the share of the intent's content words (compared as CanonicalWord forms,
  // stop words left out) found in the target function's own chunk, its name's sub-words or the
  // identifiers and words of its code, in [0, 1]; 0 for module packs and for candidates ranked
  // too low to be read (query.cc, kCoverageCandidates). Unlike BM25, which sums per-term
  // weights so that one rare word repeated in a long body can outweigh the rest, it counts
  // how much of the sentence the function speaks of, and it still sees the intent's words when
  // the name carries none of them.
  double coverage = 0;
  // Learned association (query/assoc.h): the mean, over the target function's canonical name
  // sub-words, of the strongest association an intent word has with that sub-word in this
  // workspace (normalized PMI), in [0, 1]; 0 for module packs or without a model. Not lexical:
  // it fires when the intent's words predict a name they do not contain.
  double assoc = 0;
  // Embedding similarity (embed/embed.h): the cosine between the intent's vector and the target
  // function's, clamped to [0, 1]; 0 for module packs or when no embeddings engine ran.
  double embed = 0;
  // Workspace-vector similarity (semvec/semvec.h): the cosine between the intent's folded-in
  // vector and the target function's, clamped to [0, 1]; 0 for module packs or without a model.
  double semvec = 0;
  // Share of the primary file's path sub-words that occur in the intent, in [0, 1].
  double path = 0;
  // Call-graph proximity in [0, 1]: from `graph_hops` when affectedFiles were given, else the
  // target's in-degree over the candidates' maximum (a cheap stand-in for PageRank).
  double graph = 0;
  // Distance from an affected file (0: in affectedFiles); kNotConnected when none.
  std::uint8_t graph_hops = kNotConnected;
  // Relevance inherited through graph expansion (parent's relevance × 0.5 per hop), in [0, 1].
  double inherited = 0;
  // The pack type's weight for the depth times its weight for the intentType (docs/librarian.md
  // §4.2, §6).
  double pack_type_weight = 1;
  // The pack's base signal after defeaters (docs/librarian.md §4.1 ladder, docs/librarian.md §4.4
  // step 8), in [0, 1].
  double base_signal = 1;

  // Combines another source's view of the same pack: lexical, symbol, identifier, the name-word
  // shares, file, coverage, path, graph, inherited: max; graph_hops: min; pack_type_weight and
  // base_signal: kept from *this unless neutral.
  void Merge(const RankSignals& other);

  // Returns scope from graph_hops: 1 for 0 hops, 0.5 for 1 hop, else 0.
  double Scope() const;
  // Returns rel = the weighted sum of the signals (max of it and `inherited`).
  double Relevance(const Weights& w = {}) const;
  // Returns score = rel · pack_type_weight · (0.5 + 0.5 · base_signal).
  double Evaluate(const Weights& w = {}) const;

  // "lex=0.82 sym=1 ident=1 namew=1 intentw=0.5 ownerw=0 file=0.9 cover=0.75 path=0.5 graph=0
  // hops=- inh=0 type=1.2 base=0.9" for logs and tests.
  std::string Debug() const;
};

}  // namespace trove::librarian::rank
