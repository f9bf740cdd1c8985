// Declaring a type once: a `DescribeFields(mcp::Tag<T>)` function, found by argument-dependent
// lookup, lists a plain aggregate's fields with their wire names, descriptions and
// constraints. From it the core derives FromJson (errors carry the JSON path), ToJson and a
// JSON Schema (draft 2020-12), built once per type (docs/conventions.md §9).
//
//   struct ListArgs { std::int64_t version_id = 0; std::optional<std::int32_t> limit; };
//   inline auto DescribeFields(mcp::Tag<ListArgs>) {
//     return mcp::Fields(mcp::Field("version_id", &ListArgs::version_id, "A version id"),
//                        mcp::Field("limit", &ListArgs::limit, "Page size", mcp::InRange(1,
//                        1000)));
//   }
//
// Supported member types: bool, integers, floating point, std::string, std::optional<T>,
// std::vector<T>, mcp::Json (any value), and described structs. A std::optional member, or one
// marked mcp::NotRequired(), is not listed in "required".
// Thread safety: SchemaFor<T>() is initialized once (a function-local static) and then read-only.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "base/status.h"
#include "mcp/json.h"
#include "mcp/schema.h"

namespace trove::mcp {

template <typename T>
struct Tag {};

// Constraints recorded on a field; rendered into its property schema.
struct FieldOptions {
  std::optional<double> minimum;
  std::optional<double> maximum;
  std::optional<std::size_t> min_length;
  std::optional<std::size_t> max_length;
  std::optional<std::size_t> min_items;
  std::optional<std::size_t> max_items;
  std::span<const std::string_view> one_of;
  std::string_view pattern;
  bool not_required = false;
  bool emit_null = false;
};

struct InRange {
  constexpr InRange(double min, double max) : lo(min), hi(max) {}
  double lo, hi;
  void Apply(FieldOptions& o) const {
    o.minimum = lo;
    o.maximum = hi;
  }
};
struct AtLeast {
  constexpr explicit AtLeast(double min) : lo(min) {}
  double lo;
  void Apply(FieldOptions& o) const { o.minimum = lo; }
};
struct AtMost {
  constexpr explicit AtMost(double max) : hi(max) {}
  double hi;
  void Apply(FieldOptions& o) const { o.maximum = hi; }
};
struct LengthRange {
  constexpr LengthRange(std::size_t min, std::size_t max) : lo(min), hi(max) {}
  std::size_t lo, hi;
  void Apply(FieldOptions& o) const {
    o.min_length = lo;
    o.max_length = hi;
  }
};
struct MaxLength {
  constexpr explicit MaxLength(std::size_t max) : hi(max) {}
  std::size_t hi;
  void Apply(FieldOptions& o) const { o.max_length = hi; }
};
struct ItemsRange {
  constexpr ItemsRange(std::size_t min, std::size_t max) : lo(min), hi(max) {}
  std::size_t lo, hi;
  void Apply(FieldOptions& o) const {
    o.min_items = lo;
    o.max_items = hi;
  }
};
// The values must outlive the description (use a static constexpr array).
struct OneOf {
  constexpr explicit OneOf(std::span<const std::string_view> allowed) : values(allowed) {}
  std::span<const std::string_view> values;
  void Apply(FieldOptions& o) const { o.one_of = values; }
};
struct Pattern {
  constexpr explicit Pattern(std::string_view re) : regex(re) {}
  std::string_view regex;
  void Apply(FieldOptions& o) const { o.pattern = regex; }
};
// The field has a C++ default and may be omitted on the wire.
struct NotRequired {
  void Apply(FieldOptions& o) const { o.not_required = true; }
};
// For a std::optional output field documented as "T or null": an empty value is written as
// null instead of being left out, and the field is listed in "required".
struct EmitNull {
  void Apply(FieldOptions& o) const { o.emit_null = true; }
};

template <typename S, typename M>
struct FieldDesc {
  std::string_view name;
  M S::*member;
  std::string_view description;
  FieldOptions options;
};

template <typename S, typename M, typename... C>
FieldDesc<S, M> Field(std::string_view name, M S::*member, std::string_view description,
                      C... constraints) {
  FieldDesc<S, M> f{name, member, description, {}};
  (constraints.Apply(f.options), ...);
  return f;
}

template <typename... F>
std::tuple<F...> Fields(F... fields) {
  return std::tuple<F...>(fields...);
}

template <typename T>
concept Described = requires {
  DescribeFields(Tag<T>{});
};

namespace internal {

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

template <typename T>
struct Unwrapped {
  using type = T;
};
template <typename T>
struct Unwrapped<std::optional<T>> {
  using type = T;
};

template <typename T>
Json SchemaOf();

template <typename T>
Json ObjectSchema() {
  Json props = Json::object();
  Json required = Json::array();
  std::apply(
      [&](const auto&... field) {
        (
            [&] {
              using M = std::remove_cvref_t<decltype(std::declval<T>().*(field.member))>;
              Json s = SchemaOf<M>();
              const FieldOptions& o = field.options;
              if (!field.description.empty()) s["description"] = field.description;
              if (o.minimum) s["minimum"] = *o.minimum;
              if (o.maximum) s["maximum"] = *o.maximum;
              if (o.min_length) s["minLength"] = *o.min_length;
              if (o.max_length) s["maxLength"] = *o.max_length;
              if (o.min_items) s["minItems"] = *o.min_items;
              if (o.max_items) s["maxItems"] = *o.max_items;
              if (!o.pattern.empty()) s["pattern"] = o.pattern;
              if (!o.one_of.empty()) {
                Json e = Json::array();
                for (auto v : o.one_of) e.push_back(v);
                s["enum"] = std::move(e);
              }
              // Integral bounds render as integers.
              if constexpr (std::is_integral_v<typename Unwrapped<M>::type>) {
                if (o.minimum) s["minimum"] = static_cast<std::int64_t>(*o.minimum);
                if (o.maximum) s["maximum"] = static_cast<std::int64_t>(*o.maximum);
              }
              props[std::string(field.name)] = std::move(s);
              if ((!IsOptional<M>::value || o.emit_null) && !o.not_required) {
                required.push_back(field.name);
              }
            }(),
            ...);
      },
      DescribeFields(Tag<T>{}));
  Json schema = {{"type", "object"}};
  if (!props.empty()) schema["properties"] = std::move(props);
  if (!required.empty()) schema["required"] = std::move(required);
  schema["additionalProperties"] = false;
  return schema;
}

template <typename T>
Json SchemaOf() {
  if constexpr (std::is_same_v<T, bool>) {
    return {{"type", "boolean"}};
  } else if constexpr (std::is_integral_v<T>) {
    return {{"type", "integer"}};
  } else if constexpr (std::is_floating_point_v<T>) {
    return {{"type", "number"}};
  } else if constexpr (std::is_same_v<T, std::string>) {
    return {{"type", "string"}};
  } else if constexpr (std::is_same_v<T, Json>) {
    return Json::object();
  } else if constexpr (IsOptional<T>::value) {
    // An empty optional is written as null (ToJson) and read from null or absence (FromJson),
    // so the schema admits null too.
    Json inner = SchemaOf<typename T::value_type>();
    auto type = inner.find("type");
    if (type != inner.end() && type->is_string()) {
      *type = Json::array({*type, "null"});
      return inner;
    }
    return {{"anyOf", Json::array({std::move(inner), {{"type", "null"}}})}};
  } else if constexpr (IsVector<T>::value) {
    return {{"type", "array"}, {"items", SchemaOf<typename T::value_type>()}};
  } else {
    static_assert(Described<T>, "type has no DescribeFields(mcp::Tag<T>)");
    return ObjectSchema<T>();
  }
}

template <typename T>
Status FromJsonInto(const Json& j, T& out, std::string& path);

template <typename T>
Status ObjectFromJson(const Json& j, T& out, std::string& path) {
  if (!j.is_object()) return Status::InvalidArgument(path + ": expected object");
  Status status;
  std::apply(
      [&](const auto&... field) {
        (
            [&] {
              if (!status.ok()) return;
              auto it = j.find(field.name);
              using M = std::remove_cvref_t<decltype(out.*(field.member))>;
              if (it == j.end() || (IsOptional<M>::value && it->is_null())) {
                if (!IsOptional<M>::value && !field.options.not_required) {
                  std::string p = path;
                  AppendPathKey(p, field.name);
                  status = Status::InvalidArgument(p + ": required property missing");
                }
                return;
              }
              std::size_t len = path.size();
              AppendPathKey(path, field.name);
              status = FromJsonInto(*it, out.*(field.member), path);
              path.resize(len);
            }(),
            ...);
      },
      DescribeFields(Tag<T>{}));
  return status;
}

template <typename T>
Status FromJsonInto(const Json& j, T& out, std::string& path) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) return Status::InvalidArgument(path + ": expected boolean");
    out = j.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    // is_number_integer() is also true for unsigned values: test unsigned first.
    if (j.is_number_unsigned()) {
      auto v = j.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        return Status::InvalidArgument(path + ": integer out of range");
      }
      out = static_cast<T>(v);
    } else if (j.is_number_integer()) {
      auto v = j.get<std::int64_t>();
      if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
          (v > 0 && static_cast<std::uint64_t>(v) > std::numeric_limits<T>::max())) {
        return Status::InvalidArgument(path + ": integer out of range");
      }
      out = static_cast<T>(v);
    } else if (j.is_number_float()) {
      double d = j.get<double>();
      if (!std::isfinite(d) || std::floor(d) != d ||
          d < static_cast<double>(std::numeric_limits<T>::min()) ||
          d > static_cast<double>(std::numeric_limits<T>::max())) {
        return Status::InvalidArgument(path + ": expected integer");
      }
      out = static_cast<T>(d);
    } else {
      return Status::InvalidArgument(path + ": expected integer");
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) return Status::InvalidArgument(path + ": expected number");
    out = j.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) return Status::InvalidArgument(path + ": expected string");
    out = j.get<std::string>();
  } else if constexpr (std::is_same_v<T, Json>) {
    out = j;
  } else if constexpr (IsOptional<T>::value) {
    typename T::value_type v{};
    RETURN_IF_ERROR(FromJsonInto(j, v, path));
    out = std::move(v);
  } else if constexpr (IsVector<T>::value) {
    if (!j.is_array()) return Status::InvalidArgument(path + ": expected array");
    out.clear();
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      std::size_t len = path.size();
      path += '[' + std::to_string(i) + ']';
      typename T::value_type v{};
      RETURN_IF_ERROR(FromJsonInto(j[i], v, path));
      out.push_back(std::move(v));
      path.resize(len);
    }
  } else {
    return ObjectFromJson(j, out, path);
  }
  return Status::Ok();
}

template <typename T>
Json ToJsonValue(const T& v) {
  if constexpr (std::is_same_v<T, bool> || std::is_arithmetic_v<T> ||
                std::is_same_v<T, std::string> || std::is_same_v<T, Json>) {
    return Json(v);
  } else if constexpr (IsOptional<T>::value) {
    return v ? ToJsonValue(*v) : Json(nullptr);
  } else if constexpr (IsVector<T>::value) {
    Json a = Json::array();
    for (const auto& x : v) a.push_back(ToJsonValue(x));
    return a;
  } else {
    Json o = Json::object();
    std::apply(
        [&](const auto&... field) {
          (
              [&] {
                using M = std::remove_cvref_t<decltype(v.*(field.member))>;
                if constexpr (IsOptional<M>::value) {
                  if (!(v.*(field.member)) && !field.options.emit_null) return;
                }
                o[std::string(field.name)] = ToJsonValue(v.*(field.member));
              }(),
              ...);
        },
        DescribeFields(Tag<T>{}));
    return o;
  }
}

}  // namespace internal

// Returns the JSON Schema of T, built once.
template <typename T>
const Json& SchemaFor() {
  static const Json schema = internal::SchemaOf<T>();
  return schema;
}

// Converts `j` to T; errors name the JSON path below `root_path`.
template <typename T>
Result<T> FromJson(const Json& j, std::string_view root_path = "arguments") {
  T out{};
  std::string path(root_path);
  RETURN_IF_ERROR(internal::FromJsonInto(j, out, path));
  return out;
}

template <typename T>
Json ToJson(const T& value) {
  return internal::ToJsonValue(value);
}

// A tool without arguments.
struct NoArgs {};
inline std::tuple<> DescribeFields(Tag<NoArgs>) { return {}; }

}  // namespace trove::mcp
