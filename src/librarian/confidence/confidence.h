// Confidence: typed claim confidence and its algebra (docs/librarian.md §5.3), and
// Pollock defeaters with their severities (§5.2).
//
// A claim's confidence is one of five typed values, never a bare number:
//
//   deterministic  1 or 0 and a reason: a syntactic fact held or did not
//   derived        a value, the formula that made it and the input confidences
//   measured       calibrated against recorded outcomes (dataset, sample size, accuracy, interval)
//   bounded        a range [low, high] from outside knowledge, with its basis and citation
//   absent         the honest default: uncalibrated, insufficient_data or not_applicable
//
// The algebra (decision 0063): AND is the minimum of the inputs' effective values and is
// `absent` when any input is; OR is the maximum and ignores absent inputs unless all are; a
// weighted combination ignores absent inputs and is absent when all are or none are given;
// decay halves the value every half-life (absent stays absent); the effective value used for
// decisions is conservative (absent -> 0, bounded -> its low end). AND/OR over deterministic
// inputs only stay deterministic (a conjunction of syntactic facts is a syntactic fact); every
// other composition is `derived` and keeps its inputs.
//
// Pack signals (ranking heuristics, §1.6) are not Confidence values: they are plain doubles
// adjusted by defeater severities (AdjustSignal), and never called confidence in code.
//
// Thread safety: values and pure functions; use from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trove::librarian::confidence {

enum class Kind : std::uint8_t { kDeterministic, kDerived, kMeasured, kBounded, kAbsent };
enum class AbsentReason : std::uint8_t { kUncalibrated, kInsufficientData, kNotApplicable };
enum class BoundedBasis : std::uint8_t { kTheoretical, kLiterature, kFormalAnalysis };

// "deterministic", "derived", "measured", "bounded", "absent".
std::string_view KindName(Kind kind);
// "uncalibrated", "insufficient_data", "not_applicable".
std::string_view AbsentReasonName(AbsentReason reason);
// "theoretical", "literature", "formal_analysis".
std::string_view BoundedBasisName(BoundedBasis basis);

// Deepest nesting of derived inputs kept; deeper inputs are summarized by their value only, so
// a value built by repeated composition stays bounded in size.
inline constexpr int kMaxDerivedDepth = 8;

struct Confidence {
  Kind kind = Kind::kAbsent;
  // deterministic: 0 or 1; derived, measured: in [0, 1]; bounded and absent: unused (0).
  double value = 0;
  std::string reason;              // deterministic: what was checked
  std::string formula;             // derived: "and", "or", "weighted(...)", "decay(...)"
  std::vector<Confidence> inputs;  // derived: the inputs, at most kMaxDerivedDepth deep
  // measured
  std::string dataset_id;
  std::uint64_t sample_size = 0;
  double observed_accuracy = 0;
  double interval_low = 0, interval_high = 0;  // confidence interval of the accuracy
  std::string measured_at;                     // RFC 3339
  // bounded
  double low = 0, high = 0;
  BoundedBasis basis = BoundedBasis::kTheoretical;
  std::string citation;
  // absent
  AbsentReason absent_reason = AbsentReason::kUncalibrated;

  static Confidence Deterministic(bool holds, std::string reason);
  static Confidence Absent(AbsentReason reason = AbsentReason::kUncalibrated);
  // REQUIRES: 0 <= low <= high <= 1 (clamped and ordered otherwise).
  static Confidence Bounded(double low, double high, BoundedBasis basis, std::string citation);
  static Confidence Measured(double value, std::string dataset_id, std::uint64_t sample_size,
                             double observed_accuracy, double interval_low, double interval_high,
                             std::string measured_at);
  static Confidence Derived(double value, std::string formula, std::vector<Confidence> inputs);

  bool absent() const { return kind == Kind::kAbsent; }
};

// The conservative value for decisions: absent -> 0, bounded -> low, otherwise `value`.
double EffectiveValue(const Confidence& c);

// AND = minimum; absent when no inputs are given or any input is absent.
Confidence And(std::span<const Confidence> inputs);
// OR = maximum over the non-absent inputs; absent when all are absent or none are given.
Confidence Or(std::span<const Confidence> inputs);
// Weighted mean of the non-absent inputs' effective values (weights > 0; others ignored);
// absent (insufficient_data) when no input with a positive weight is present.
Confidence Weighted(std::span<const std::pair<Confidence, double>> inputs);
// `c` after `age_seconds`, halving every `half_life_seconds`: derived with value
// EffectiveValue(c) * 0.5^(age / half_life). Absent stays absent; age <= 0 or half_life <= 0
// returns `c` unchanged.
Confidence Decay(const Confidence& c, double age_seconds, double half_life_seconds);

// The JSON shape of §5.3: {"type", ...fields of that type}; derived inputs nested.
nlohmann::json ToJson(const Confidence& c);

// --- Defeaters (Pollock; docs/librarian.md §5.2) ---

// full -0.5, partial -0.2, warning -0.05.
enum class Severity : std::uint8_t { kFull, kPartial, kWarning };
// rebutting: evidence against the claim; undercutting: attacks the justification (the source
// changed); undermining: lowers confidence without defeat.
enum class DefeaterClass : std::uint8_t { kRebutting, kUndercutting, kUndermining };

inline constexpr double kFullAdjustment = -0.5;
inline constexpr double kPartialAdjustment = -0.2;
inline constexpr double kWarningAdjustment = -0.05;
inline constexpr double kAdjustmentFloor = -0.8;

std::string_view SeverityName(Severity s);            // "full", "partial", "warning"
std::string_view DefeaterClassName(DefeaterClass c);  // "rebutting", ...
std::optional<Severity> ParseSeverity(std::string_view name);
std::optional<DefeaterClass> ParseDefeaterClass(std::string_view name);
double Adjustment(Severity s);

// One defeater as checked.
struct Defeater {
  std::string type;  // code_change, file_deleted, ...
  bool activated = false;
  Severity severity = Severity::kWarning;
  DefeaterClass defeater_class = DefeaterClass::kUndermining;
  std::string reason;
};

// The summed adjustment of the active defeaters, floored at kAdjustmentFloor (<= 0).
double SummedAdjustment(std::span<const Defeater> defeaters);
// Valid exactly when no `full` defeater is active.
bool KnowledgeValid(std::span<const Defeater> defeaters);
// `signal` plus SummedAdjustment, clamped to [0, 1]: still a ranking signal.
double AdjustSignal(double signal, std::span<const Defeater> defeaters);
// A claim's typed confidence after its defeaters: absent (not_applicable) stays absent; a
// `full` active rebutting or undercutting defeater makes it deterministic 0 with the
// defeater's reason; otherwise each active defeater lowers it by its adjustment as a derived
// value (formula "defeated(<types>)"), and with none active `c` is returned unchanged.
Confidence ApplyDefeaters(const Confidence& c, std::span<const Defeater> defeaters);

}  // namespace trove::librarian::confidence
