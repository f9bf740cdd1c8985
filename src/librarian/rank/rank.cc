#include "librarian/rank/rank.h"

#include <fmt/format.h>

#include <algorithm>

namespace trove::librarian::rank {

void RankSignals::Merge(const RankSignals& other) {
  lexical = std::max(lexical, other.lexical);           // the best evidence of a lexical match
  symbol = std::max(symbol, other.symbol);              // any source naming the symbol
  name_words = std::max(name_words, other.name_words);  // the name is the pack's own: max
  intent_words = std::max(intent_words, other.intent_words);
  owner_words = std::max(owner_words, other.owner_words);
  file = std::max(file, other.file);
  coverage = std::max(coverage, other.coverage);
  assoc = std::max(assoc, other.assoc);
  embed = std::max(embed, other.embed);
  semvec = std::max(semvec, other.semvec);
  identifier = std::max(identifier, other.identifier);
  path = std::max(path, other.path);                    // same path for one pack; max is safe
  graph = std::max(graph, other.graph);                 // the closest view of the graph
  graph_hops = std::min(graph_hops, other.graph_hops);  // shortest distance
  inherited = std::max(inherited, other.inherited);     // the best parent
  // The type weight and base signal describe the pack itself, not a source's view of it:
  // a neutral value (1) is replaced by a known one.
  if (pack_type_weight == 1) pack_type_weight = other.pack_type_weight;
  if (base_signal == 1) base_signal = other.base_signal;
}

double RankSignals::Scope() const {
  if (graph_hops == 0) return 1;
  if (graph_hops == 1) return 0.5;
  return 0;
}

double RankSignals::Relevance(const Weights& w) const {
  // docs/librarian.md §4.4 starting coefficients (Weights defaults); eval/ tunes them on dev only.
  const double rel = w.lexical * lexical + w.symbol * symbol + w.name_words * name_words +
                     w.intent_words * intent_words + w.owner_words * owner_words + w.file * file +
                     w.coverage * coverage + w.assoc * assoc + w.embed * embed + w.semvec * semvec +
                     w.identifier * identifier + w.path * path + w.graph * graph +
                     w.scope * Scope();
  return std::max(rel, inherited);
}

Weights ForNameConfidence(const Weights& w, double confidence) {
  const double span = w.name_confidence_high - w.name_confidence_low;
  double t = 1;  // 1: confident, weights unchanged; 0: no name confidence
  if (span > 0) {
    t = std::clamp((confidence - w.name_confidence_low) / span, 0.0, 1.0);
  } else if (confidence < w.name_confidence_high) {
    t = 0;
  }
  Weights out = w;
  const double scale = w.name_damping + (1 - w.name_damping) * t;
  out.name_words *= scale;
  out.intent_words *= scale;
  out.lexical += (1 - t) * w.lexical_shift;
  return out;
}

double RankSignals::Evaluate(const Weights& w) const {
  return Relevance(w) * pack_type_weight * (0.5 + 0.5 * base_signal);
}

std::string RankSignals::Debug() const {
  return fmt::format(
      "lex={:.3g} sym={:.3g} ident={:.3g} namew={:.3g} intentw={:.3g} ownerw={:.3g} file={:.3g} "
      "cover={:.3g} assoc={:.3g} path={:.3g} "
      "graph={:.3g} hops={} inh={:.3g} type={:.3g} base={:.3g} embed={:.3g} semvec={:.3g}",
      lexical, symbol, identifier, name_words, intent_words, owner_words, file, coverage, assoc,
      path, graph, graph_hops == kNotConnected ? std::string("-") : std::to_string(graph_hops),
      inherited, pack_type_weight, base_signal, embed, semvec);
}

}  // namespace trove::librarian::rank
