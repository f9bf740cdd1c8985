#include "kodo/trust/annotations.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <system_error>

namespace trove::kodo::trust {

const ast::Annotation* FindAnnotation(const ast::Function& fn, std::string_view name) {
  for (const ast::Annotation& a : fn.annotations) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

bool HasAnnotation(const ast::Function& fn, std::string_view name) {
  return FindAnnotation(fn, name) != nullptr;
}

std::optional<double> ConfidenceValue(const ast::Annotation& annotation) {
  for (const ast::AnnotationArg& arg : annotation.args) {
    const ast::Expr& e = arg.value;
    switch (e.kind) {
      case ast::ExprKind::kIntLit:
        return static_cast<double>(e.int_value) / 100.0;
      case ast::ExprKind::kFloatLit:
        return e.float_value;
      case ast::ExprKind::kStringLit:
        return ParseRustFloat(e.text);
      default:
        break;
    }
  }
  return std::nullopt;
}

std::optional<double> DeclaredConfidence(const ast::Function& fn) {
  const ast::Annotation* a = FindAnnotation(fn, "confidence");
  if (a == nullptr) return std::nullopt;
  return ConfidenceValue(*a);
}

namespace {

constexpr std::string_view kHumanPrefix = "human:";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

}  // namespace

bool HasHumanReview(const ast::Function& fn) {
  for (const ast::Annotation& a : fn.annotations) {
    if (a.name != "reviewed_by") continue;
    for (const ast::AnnotationArg& arg : a.args) {
      if (arg.named) {
        if (arg.key == "human") return true;
      } else if (arg.value.kind == ast::ExprKind::kStringLit &&
                 StartsWith(arg.value.text, kHumanPrefix)) {
        return true;
      }
    }
  }
  return false;
}

std::vector<HumanReviewer> HumanReviewers(const ast::Function& fn) {
  std::vector<HumanReviewer> out;
  for (const ast::Annotation& a : fn.annotations) {
    if (a.name != "reviewed_by") continue;
    for (const ast::AnnotationArg& arg : a.args) {
      if (arg.value.kind != ast::ExprKind::kStringLit) continue;
      if (arg.named && arg.key == "human") {
        out.push_back({std::string(arg.value.text), a.span});
      } else if (!arg.named && StartsWith(arg.value.text, kHumanPrefix)) {
        // Upstream strips every leading "human:" (trim_start_matches), not just one.
        std::string_view name = arg.value.text;
        while (StartsWith(name, kHumanPrefix)) name.remove_prefix(kHumanPrefix.size());
        out.push_back({std::string(name), a.span});
      }
    }
  }
  return out;
}

std::optional<double> ParseRustFloat(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool negative = false;
  std::string_view body = text;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body.empty() || body.front() == '+' || body.front() == '-') return std::nullopt;
  std::string lower;
  for (char c : body) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "inf" || lower == "infinity") {
    return negative ? -HUGE_VAL : HUGE_VAL;
  }
  if (lower == "nan") return std::nan("");
  // Digits, at most one point, at least one digit, then an optional exponent.
  double value = 0;
  const char* first = body.data();
  const char* last = body.data() + body.size();
  const std::from_chars_result r = std::from_chars(first, last, value, std::chars_format::general);
  if (r.ec == std::errc::result_out_of_range) {
    // Rust rounds to infinity or zero rather than failing.
    const bool has_exponent = body.find_first_of("eE") != std::string_view::npos;
    const bool small = has_exponent && body.find("e-") != std::string_view::npos;
    if (r.ptr != last) return std::nullopt;
    value = small ? 0.0 : HUGE_VAL;
  } else if (r.ec != std::errc() || r.ptr != last) {
    return std::nullopt;
  }
  return negative ? -value : value;
}

std::string RustDisplay(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  std::array<char, 400> buf{};
  const std::to_chars_result r =
      std::to_chars(buf.data(), buf.data() + buf.size(), value, std::chars_format::fixed);
  if (r.ec != std::errc()) return fmt::format("{}", value);
  return std::string(buf.data(), r.ptr);
}

std::string TwoDecimals(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  return fmt::format("{:.2f}", value);
}

}  // namespace trove::kodo::trust
