#include "librarian/confidence/confidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace trove::librarian::confidence {
namespace {

double Clamp01(double v) {
  if (std::isnan(v)) return 0;
  return std::clamp(v, 0.0, 1.0);
}

// Keeps `c` as an input at `depth` below a new derived value: past kMaxDerivedDepth, a derived
// input keeps its value and formula but not its own inputs.
Confidence Trim(const Confidence& c, int depth) {
  Confidence out = c;
  if (out.kind != Kind::kDerived) return out;
  if (depth >= kMaxDerivedDepth) {
    out.inputs.clear();
    return out;
  }
  for (Confidence& in : out.inputs) in = Trim(in, depth + 1);
  return out;
}

std::vector<Confidence> Inputs(std::span<const Confidence> inputs) {
  std::vector<Confidence> out;
  out.reserve(inputs.size());
  for (const Confidence& c : inputs) out.push_back(Trim(c, 1));
  return out;
}

bool AllDeterministic(std::span<const Confidence> inputs) {
  return std::all_of(inputs.begin(), inputs.end(),
                     [](const Confidence& c) { return c.kind == Kind::kDeterministic; });
}

std::string JoinReasons(std::span<const Confidence> inputs, std::string_view sep) {
  std::string out;
  for (const Confidence& c : inputs) {
    if (!out.empty()) out += sep;
    out += c.reason;
  }
  return out;
}

}  // namespace

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kDeterministic:
      return "deterministic";
    case Kind::kDerived:
      return "derived";
    case Kind::kMeasured:
      return "measured";
    case Kind::kBounded:
      return "bounded";
    case Kind::kAbsent:
      return "absent";
  }
  return "absent";
}

std::string_view AbsentReasonName(AbsentReason reason) {
  switch (reason) {
    case AbsentReason::kUncalibrated:
      return "uncalibrated";
    case AbsentReason::kInsufficientData:
      return "insufficient_data";
    case AbsentReason::kNotApplicable:
      return "not_applicable";
  }
  return "uncalibrated";
}

std::string_view BoundedBasisName(BoundedBasis basis) {
  switch (basis) {
    case BoundedBasis::kTheoretical:
      return "theoretical";
    case BoundedBasis::kLiterature:
      return "literature";
    case BoundedBasis::kFormalAnalysis:
      return "formal_analysis";
  }
  return "theoretical";
}

Confidence Confidence::Deterministic(bool holds, std::string reason) {
  Confidence c;
  c.kind = Kind::kDeterministic;
  c.value = holds ? 1.0 : 0.0;
  c.reason = std::move(reason);
  return c;
}

Confidence Confidence::Absent(AbsentReason reason) {
  Confidence c;
  c.kind = Kind::kAbsent;
  c.absent_reason = reason;
  return c;
}

Confidence Confidence::Bounded(double low, double high, BoundedBasis basis, std::string citation) {
  Confidence c;
  c.kind = Kind::kBounded;
  c.low = Clamp01(std::min(low, high));
  c.high = Clamp01(std::max(low, high));
  c.basis = basis;
  c.citation = std::move(citation);
  return c;
}

Confidence Confidence::Measured(double value, std::string dataset_id, std::uint64_t sample_size,
                                double observed_accuracy, double interval_low, double interval_high,
                                std::string measured_at) {
  Confidence c;
  c.kind = Kind::kMeasured;
  c.value = Clamp01(value);
  c.dataset_id = std::move(dataset_id);
  c.sample_size = sample_size;
  c.observed_accuracy = Clamp01(observed_accuracy);
  c.interval_low = Clamp01(std::min(interval_low, interval_high));
  c.interval_high = Clamp01(std::max(interval_low, interval_high));
  c.measured_at = std::move(measured_at);
  return c;
}

Confidence Confidence::Derived(double value, std::string formula, std::vector<Confidence> inputs) {
  Confidence c;
  c.kind = Kind::kDerived;
  c.value = Clamp01(value);
  c.formula = std::move(formula);
  c.inputs = std::move(inputs);
  for (Confidence& in : c.inputs) in = Trim(in, 1);
  return c;
}

double EffectiveValue(const Confidence& c) {
  switch (c.kind) {
    case Kind::kAbsent:
      return 0;
    case Kind::kBounded:
      return c.low;
    default:
      return Clamp01(c.value);
  }
}

Confidence And(std::span<const Confidence> inputs) {
  if (inputs.empty()) return Confidence::Absent(AbsentReason::kInsufficientData);
  for (const Confidence& c : inputs) {
    if (c.absent()) return Confidence::Absent(c.absent_reason);
  }
  double v = 1;
  for (const Confidence& c : inputs) v = std::min(v, EffectiveValue(c));
  if (AllDeterministic(inputs))
    return Confidence::Deterministic(v == 1.0, JoinReasons(inputs, "; and "));
  Confidence out;
  out.kind = Kind::kDerived;
  out.value = v;
  out.formula = "and";
  out.inputs = Inputs(inputs);
  return out;
}

Confidence Or(std::span<const Confidence> inputs) {
  std::vector<Confidence> present;
  for (const Confidence& c : inputs) {
    if (!c.absent()) present.push_back(c);
  }
  if (present.empty()) {
    return Confidence::Absent(inputs.empty() ? AbsentReason::kInsufficientData
                                             : inputs.front().absent_reason);
  }
  double v = 0;
  for (const Confidence& c : present) v = std::max(v, EffectiveValue(c));
  if (AllDeterministic(present))
    return Confidence::Deterministic(v == 1.0, JoinReasons(present, "; or "));
  Confidence out;
  out.kind = Kind::kDerived;
  out.value = v;
  out.formula = "or";
  out.inputs = Inputs(present);
  return out;
}

Confidence Weighted(std::span<const std::pair<Confidence, double>> inputs) {
  double sum = 0, weights = 0;
  std::vector<Confidence> used;
  std::string formula = "weighted(";
  for (const auto& [c, w] : inputs) {
    if (c.absent() || !(w > 0) || std::isinf(w)) continue;
    sum += w * EffectiveValue(c);
    weights += w;
    if (!used.empty()) formula += ",";
    formula += fmt::format("{:g}", w);
    used.push_back(c);
  }
  if (used.empty()) return Confidence::Absent(AbsentReason::kInsufficientData);
  formula += ")";
  Confidence out;
  out.kind = Kind::kDerived;
  out.value = Clamp01(sum / weights);
  out.formula = std::move(formula);
  out.inputs = Inputs(used);
  return out;
}

Confidence Decay(const Confidence& c, double age_seconds, double half_life_seconds) {
  if (c.absent() || !(age_seconds > 0) || !(half_life_seconds > 0)) return c;
  const double factor = std::pow(0.5, age_seconds / half_life_seconds);
  Confidence out;
  out.kind = Kind::kDerived;
  out.value = Clamp01(EffectiveValue(c) * factor);
  out.formula = fmt::format("decay(age={:g}s,half_life={:g}s)", age_seconds, half_life_seconds);
  out.inputs = {Trim(c, 1)};
  return out;
}

nlohmann::json ToJson(const Confidence& c) {
  nlohmann::json j = nlohmann::json::object();
  j["type"] = KindName(c.kind);
  switch (c.kind) {
    case Kind::kDeterministic:
      j["value"] = c.value;
      j["reason"] = c.reason;
      break;
    case Kind::kDerived: {
      j["value"] = c.value;
      j["formula"] = c.formula;
      nlohmann::json inputs = nlohmann::json::array();
      for (const Confidence& in : c.inputs) inputs.push_back(ToJson(in));
      j["inputs"] = std::move(inputs);
      break;
    }
    case Kind::kMeasured:
      j["value"] = c.value;
      j["datasetId"] = c.dataset_id;
      j["sampleSize"] = c.sample_size;
      j["observedAccuracy"] = c.observed_accuracy;
      j["confidenceInterval"] = {c.interval_low, c.interval_high};
      j["measuredAt"] = c.measured_at;
      break;
    case Kind::kBounded:
      j["low"] = c.low;
      j["high"] = c.high;
      j["basis"] = BoundedBasisName(c.basis);
      j["citation"] = c.citation;
      break;
    case Kind::kAbsent:
      j["reason"] = AbsentReasonName(c.absent_reason);
      break;
  }
  return j;
}

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kFull:
      return "full";
    case Severity::kPartial:
      return "partial";
    case Severity::kWarning:
      return "warning";
  }
  return "warning";
}

std::string_view DefeaterClassName(DefeaterClass c) {
  switch (c) {
    case DefeaterClass::kRebutting:
      return "rebutting";
    case DefeaterClass::kUndercutting:
      return "undercutting";
    case DefeaterClass::kUndermining:
      return "undermining";
  }
  return "undermining";
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  for (Severity s : {Severity::kFull, Severity::kPartial, Severity::kWarning}) {
    if (SeverityName(s) == name) return s;
  }
  return std::nullopt;
}

std::optional<DefeaterClass> ParseDefeaterClass(std::string_view name) {
  for (DefeaterClass c :
       {DefeaterClass::kRebutting, DefeaterClass::kUndercutting, DefeaterClass::kUndermining}) {
    if (DefeaterClassName(c) == name) return c;
  }
  return std::nullopt;
}

double Adjustment(Severity s) {
  switch (s) {
    case Severity::kFull:
      return kFullAdjustment;
    case Severity::kPartial:
      return kPartialAdjustment;
    case Severity::kWarning:
      return kWarningAdjustment;
  }
  return kWarningAdjustment;
}

double SummedAdjustment(std::span<const Defeater> defeaters) {
  double sum = 0;
  for (const Defeater& d : defeaters) {
    if (d.activated) sum += Adjustment(d.severity);
  }
  return std::max(sum, kAdjustmentFloor);
}

bool KnowledgeValid(std::span<const Defeater> defeaters) {
  return std::none_of(defeaters.begin(), defeaters.end(), [](const Defeater& d) {
    return d.activated && d.severity == Severity::kFull;
  });
}

double AdjustSignal(double signal, std::span<const Defeater> defeaters) {
  return Clamp01(signal + SummedAdjustment(defeaters));
}

Confidence ApplyDefeaters(const Confidence& c, std::span<const Defeater> defeaters) {
  if (c.absent()) return c;
  std::string types;
  for (const Defeater& d : defeaters) {
    if (!d.activated) continue;
    if (d.severity == Severity::kFull && d.defeater_class != DefeaterClass::kUndermining) {
      return Confidence::Deterministic(
          false, fmt::format("{} ({}, {}): {}", d.type, SeverityName(d.severity),
                             DefeaterClassName(d.defeater_class), d.reason));
    }
    if (!types.empty()) types += ",";
    types += d.type;
  }
  if (types.empty()) return c;
  return Confidence::Derived(EffectiveValue(c) + SummedAdjustment(defeaters),
                             fmt::format("defeated({})", types), {c});
}

}  // namespace trove::librarian::confidence
