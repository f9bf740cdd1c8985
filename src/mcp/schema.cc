#include "mcp/schema.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

namespace trove::mcp {

namespace {

constexpr std::string_view kKnownKeywords[] = {"type",
                                               "properties",
                                               "required",
                                               "additionalProperties",
                                               "items",
                                               "prefixItems",
                                               "enum",
                                               "const",
                                               "minimum",
                                               "maximum",
                                               "exclusiveMinimum",
                                               "exclusiveMaximum",
                                               "multipleOf",
                                               "minLength",
                                               "maxLength",
                                               "pattern",
                                               "minItems",
                                               "maxItems",
                                               "uniqueItems",
                                               "minProperties",
                                               "maxProperties",
                                               "allOf",
                                               "anyOf",
                                               "oneOf",
                                               "not",
                                               "$ref",
                                               "$defs",
                                               "$schema",
                                               "$id",
                                               "$comment",
                                               "title",
                                               "description",
                                               "default",
                                               "examples",
                                               "deprecated",
                                               "format",
                                               "readOnly",
                                               "writeOnly",
                                               "contentMediaType",
                                               "contentEncoding",
                                               "enumNames"};

constexpr std::string_view kDialect2020 = "https://json-schema.org/draft/2020-12/schema";
constexpr std::string_view kDialect07 = "http://json-schema.org/draft-07/schema#";

bool IsKnownKeyword(std::string_view key) {
  return std::find(std::begin(kKnownKeywords), std::end(kKnownKeywords), key) !=
         std::end(kKnownKeywords);
}

bool IsIdentifier(std::string_view key) {
  if (key.empty()) return false;
  auto first = static_cast<unsigned char>(key[0]);
  if (!(std::isalpha(first) || key[0] == '_')) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || c == '_';
  });
}

std::string TypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float: {
      double d = v.get<double>();
      return (std::isfinite(d) && std::floor(d) == d) ? "integer" : "number";
    }
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "unknown";
  }
}

bool MatchesType(const Json& v, std::string_view type) {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") {
    if (v.is_number_integer() || v.is_number_unsigned()) return true;
    if (v.is_number_float()) {
      double d = v.get<double>();
      return std::isfinite(d) && std::floor(d) == d;
    }
    return false;
  }
  if (type == "number") return v.is_number();
  if (type == "string") return v.is_string();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  return false;
}

std::string FormatNumber(const Json& n) {
  if (n.is_number_float()) {
    double d = n.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 1e15) {
      return fmt::format("{}", static_cast<long long>(d));
    }
  }
  return Dump(n);
}

std::size_t Utf8Length(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// JSON equality where 1 and 1.0 are equal.
bool JsonEqual(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!JsonEqual(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !JsonEqual(it.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

// The keywords of one schema object, gathered in one pass over its members (an ordered_json
// lookup is a linear scan, and validation runs on every tool call).
struct Keywords {
  const Json* ref = nullptr;
  const Json* type = nullptr;
  const Json* enum_values = nullptr;
  const Json* const_value = nullptr;
  const Json* minimum = nullptr;
  const Json* maximum = nullptr;
  const Json* exclusive_minimum = nullptr;
  const Json* exclusive_maximum = nullptr;
  const Json* multiple_of = nullptr;
  const Json* min_length = nullptr;
  const Json* max_length = nullptr;
  const Json* pattern = nullptr;
  const Json* prefix_items = nullptr;
  const Json* items = nullptr;
  const Json* min_items = nullptr;
  const Json* max_items = nullptr;
  const Json* unique_items = nullptr;
  const Json* properties = nullptr;
  const Json* required = nullptr;
  const Json* additional = nullptr;
  const Json* min_properties = nullptr;
  const Json* max_properties = nullptr;
  const Json* all_of = nullptr;
  const Json* any_of = nullptr;
  const Json* one_of = nullptr;
  const Json* not_schema = nullptr;

  explicit Keywords(const Json& schema) {
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      const std::string& k = it.key();
      const Json* v = &it.value();
      switch (k.empty() ? '\0' : k[0]) {
        case '$':
          if (k == "$ref") ref = v;
          break;
        case 't':
          if (k == "type") type = v;
          break;
        case 'e':
          if (k == "enum")
            enum_values = v;
          else if (k == "exclusiveMinimum")
            exclusive_minimum = v;
          else if (k == "exclusiveMaximum")
            exclusive_maximum = v;
          break;
        case 'c':
          if (k == "const") const_value = v;
          break;
        case 'm':
          if (k == "minimum")
            minimum = v;
          else if (k == "maximum")
            maximum = v;
          else if (k == "multipleOf")
            multiple_of = v;
          else if (k == "minLength")
            min_length = v;
          else if (k == "maxLength")
            max_length = v;
          else if (k == "minItems")
            min_items = v;
          else if (k == "maxItems")
            max_items = v;
          else if (k == "minProperties")
            min_properties = v;
          else if (k == "maxProperties")
            max_properties = v;
          break;
        case 'p':
          if (k == "properties")
            properties = v;
          else if (k == "pattern")
            pattern = v;
          else if (k == "prefixItems")
            prefix_items = v;
          break;
        case 'i':
          if (k == "items") items = v;
          break;
        case 'u':
          if (k == "uniqueItems") unique_items = v;
          break;
        case 'r':
          if (k == "required") required = v;
          break;
        case 'a':
          if (k == "additionalProperties")
            additional = v;
          else if (k == "allOf")
            all_of = v;
          else if (k == "anyOf")
            any_of = v;
          break;
        case 'o':
          if (k == "oneOf") one_of = v;
          break;
        case 'n':
          if (k == "not") not_schema = v;
          break;
        default:
          break;
      }
    }
  }
};

// Returns the keyword's value when it is a number (nullptr otherwise).
const Json* Num(const Json* v) { return (v != nullptr && v->is_number()) ? v : nullptr; }
// Returns the keyword's value when it is a non-negative integer.
// (Schemas built in C++ hold signed integers, parsed ones unsigned: both count.)
const Json* Count(const Json* v) {
  if (v == nullptr) return nullptr;
  if (v->is_number_unsigned()) return v;
  if (v->is_number_integer() && v->get<std::int64_t>() >= 0) return v;
  return nullptr;
}

class Validator {
 public:
  explicit Validator(const Json& root) : root_(root) {}

  void Validate(const Json& schema, const Json& v, const std::string& path,
                std::vector<ValidationError>& out, int depth = 0) {
    if (depth > 64) {
      out.push_back({path, "schema nesting too deep"});
      return;
    }
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) out.push_back({path, "no value is allowed here"});
      return;
    }
    if (!schema.is_object()) return;
    const Keywords kw(schema);

    if (kw.ref != nullptr && kw.ref->is_string()) {
      const Json* target = Resolve(kw.ref->get<std::string>());
      if (target == nullptr) {
        out.push_back({path, "schema error: unresolvable $ref " + kw.ref->get<std::string>()});
      } else {
        Validate(*target, v, path, out, depth + 1);
      }
    }

    if (kw.type != nullptr) {
      bool ok = false;
      if (kw.type->is_string()) {
        ok = MatchesType(v, kw.type->get_ref<const std::string&>());
      } else if (kw.type->is_array()) {
        for (const auto& t : *kw.type) {
          if (t.is_string() && MatchesType(v, t.get_ref<const std::string&>())) ok = true;
        }
      }
      if (!ok) {
        std::string expected;
        if (kw.type->is_string()) {
          expected = kw.type->get<std::string>();
        } else if (kw.type->is_array()) {
          for (const auto& t : *kw.type) {
            if (!t.is_string()) continue;
            if (!expected.empty()) expected += " or ";
            expected += t.get<std::string>();
          }
        }
        out.push_back({path, fmt::format("expected {}, got {}", expected, TypeName(v))});
        return;  // further keywords would only repeat the type mismatch
      }
    }

    if (kw.enum_values != nullptr && kw.enum_values->is_array()) {
      const Json& e = *kw.enum_values;
      bool found = std::any_of(e.begin(), e.end(), [&](const Json& x) { return JsonEqual(x, v); });
      if (!found) {
        std::string allowed;
        for (const auto& x : e) {
          if (!allowed.empty()) allowed += ", ";
          allowed += QuoteForMessage(x);
        }
        out.push_back(
            {path, fmt::format("must be one of {}; got {}", allowed, QuoteForMessage(v))});
      }
    }
    if (kw.const_value != nullptr && !JsonEqual(*kw.const_value, v)) {
      out.push_back({path, fmt::format("must be {}; got {}", QuoteForMessage(*kw.const_value),
                                       QuoteForMessage(v))});
    }

    if (v.is_number()) ValidateNumber(kw, v, path, out);
    if (v.is_string()) ValidateString(kw, v, path, out);
    if (v.is_array()) ValidateArray(kw, v, path, out, depth);
    if (v.is_object()) ValidateObject(kw, v, path, out, depth);

    if (kw.all_of != nullptr && kw.all_of->is_array()) {
      for (const auto& sub : *kw.all_of) Validate(sub, v, path, out, depth + 1);
    }
    if (kw.any_of != nullptr && kw.any_of->is_array()) {
      bool matched = false;
      for (const auto& sub : *kw.any_of) {
        std::vector<ValidationError> scratch;
        Validate(sub, v, path, scratch, depth + 1);
        if (scratch.empty()) {
          matched = true;
          break;
        }
      }
      if (!matched) out.push_back({path, "must match at least one schema in anyOf"});
    }
    if (kw.one_of != nullptr && kw.one_of->is_array()) {
      int matches = 0;
      for (const auto& sub : *kw.one_of) {
        std::vector<ValidationError> scratch;
        Validate(sub, v, path, scratch, depth + 1);
        if (scratch.empty()) ++matches;
      }
      if (matches != 1) {
        out.push_back(
            {path, fmt::format("must match exactly one schema in oneOf; matched {}", matches)});
      }
    }
    if (kw.not_schema != nullptr) {
      std::vector<ValidationError> scratch;
      Validate(*kw.not_schema, v, path, scratch, depth + 1);
      if (scratch.empty()) out.push_back({path, "must not match the schema in not"});
    }
  }

 private:
  const Json* Resolve(const std::string& ref) {
    if (ref == "#") return &root_;
    if (ref.rfind("#/", 0) != 0) return nullptr;
    try {
      const Json& target = root_.at(Json::json_pointer(ref.substr(1)));
      return &target;
    } catch (const Json::exception&) {
      return nullptr;
    }
  }

  static void ValidateNumber(const Keywords& kw, const Json& v, const std::string& path,
                             std::vector<ValidationError>& out) {
    double d = v.get<double>();
    if (const Json* m = Num(kw.minimum); m && d < m->get<double>()) {
      out.push_back(
          {path, fmt::format("must be at least {}; got {}", FormatNumber(*m), FormatNumber(v))});
    }
    if (const Json* m = Num(kw.maximum); m && d > m->get<double>()) {
      out.push_back(
          {path, fmt::format("must be at most {}; got {}", FormatNumber(*m), FormatNumber(v))});
    }
    if (const Json* m = Num(kw.exclusive_minimum); m && d <= m->get<double>()) {
      out.push_back({path, fmt::format("must be greater than {}; got {}", FormatNumber(*m),
                                       FormatNumber(v))});
    }
    if (const Json* m = Num(kw.exclusive_maximum); m && d >= m->get<double>()) {
      out.push_back(
          {path, fmt::format("must be less than {}; got {}", FormatNumber(*m), FormatNumber(v))});
    }
    if (const Json* m = Num(kw.multiple_of); m && m->get<double>() > 0) {
      double q = d / m->get<double>();
      if (std::fabs(q - std::round(q)) > 1e-9) {
        out.push_back({path, fmt::format("must be a multiple of {}; got {}", FormatNumber(*m),
                                         FormatNumber(v))});
      }
    }
  }

  static void ValidateString(const Keywords& kw, const Json& v, const std::string& path,
                             std::vector<ValidationError>& out) {
    const auto& s = v.get_ref<const std::string&>();
    if (const Json* m = Count(kw.min_length)) {
      std::size_t len = Utf8Length(s);
      if (len < m->get<std::size_t>()) {
        out.push_back(
            {path, fmt::format("length must be at least {}; got {}", m->get<std::size_t>(), len)});
      }
    }
    if (const Json* m = Count(kw.max_length)) {
      std::size_t len = Utf8Length(s);
      if (len > m->get<std::size_t>()) {
        out.push_back(
            {path, fmt::format("length must be at most {}; got {}", m->get<std::size_t>(), len)});
      }
    }
    if (kw.pattern != nullptr && kw.pattern->is_string()) {
      try {
        std::regex re(kw.pattern->get<std::string>(), std::regex::ECMAScript);
        if (!std::regex_search(s, re)) {
          out.push_back({path, fmt::format("must match pattern {}; got {}",
                                           QuoteForMessage(*kw.pattern), QuoteForMessage(v))});
        }
      } catch (const std::regex_error&) {
        out.push_back({path, "schema error: invalid pattern"});
      }
    }
  }

  void ValidateArray(const Keywords& kw, const Json& v, const std::string& path,
                     std::vector<ValidationError>& out, int depth) {
    std::size_t prefix = 0;
    if (kw.prefix_items != nullptr && kw.prefix_items->is_array()) {
      prefix = std::min(kw.prefix_items->size(), v.size());
      for (std::size_t i = 0; i < prefix; ++i) {
        Validate((*kw.prefix_items)[i], v[i], path + "[" + std::to_string(i) + "]", out, depth + 1);
      }
    }
    if (kw.items != nullptr) {
      for (std::size_t i = prefix; i < v.size(); ++i) {
        Validate(*kw.items, v[i], path + "[" + std::to_string(i) + "]", out, depth + 1);
      }
    }
    if (const Json* m = Count(kw.min_items); m && v.size() < m->get<std::size_t>()) {
      out.push_back({path, fmt::format("must have at least {} items; got {}", m->get<std::size_t>(),
                                       v.size())});
    }
    if (const Json* m = Count(kw.max_items); m && v.size() > m->get<std::size_t>()) {
      out.push_back({path, fmt::format("must have at most {} items; got {}", m->get<std::size_t>(),
                                       v.size())});
    }
    if (kw.unique_items != nullptr && kw.unique_items->is_boolean() &&
        kw.unique_items->get<bool>()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        for (std::size_t j = i + 1; j < v.size(); ++j) {
          if (JsonEqual(v[i], v[j])) {
            out.push_back({path, fmt::format("items must be unique; [{}] repeats [{}]", j, i)});
            return;
          }
        }
      }
    }
  }

  void ValidateObject(const Keywords& kw, const Json& v, const std::string& path,
                      std::vector<ValidationError>& out, int depth) {
    const Json* props =
        (kw.properties != nullptr && kw.properties->is_object()) ? kw.properties : nullptr;
    if (kw.required != nullptr && kw.required->is_array()) {
      for (const auto& name : *kw.required) {
        if (!name.is_string()) continue;
        const auto& key = name.get_ref<const std::string&>();
        if (!v.contains(key)) {
          std::string p = path;
          AppendPathKey(p, key);
          out.push_back({std::move(p), "required property missing"});
        }
      }
    }
    const Json* additional = kw.additional;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const Json* sub = nullptr;
      if (props != nullptr) {
        auto ps = props->find(it.key());
        if (ps != props->end()) sub = &*ps;
      }
      if (sub == nullptr && additional == nullptr) continue;
      std::string p = path;
      AppendPathKey(p, it.key());
      if (sub != nullptr) {
        Validate(*sub, it.value(), p, out, depth + 1);
      } else if (additional->is_boolean()) {
        if (!additional->get<bool>()) {
          out.push_back({std::move(p), "unexpected property (additionalProperties is false)"});
        }
      } else {
        Validate(*additional, it.value(), p, out, depth + 1);
      }
    }
    if (const Json* m = Count(kw.min_properties); m && v.size() < m->get<std::size_t>()) {
      out.push_back({path, fmt::format("must have at least {} properties; got {}",
                                       m->get<std::size_t>(), v.size())});
    }
    if (const Json* m = Count(kw.max_properties); m && v.size() > m->get<std::size_t>()) {
      out.push_back({path, fmt::format("must have at most {} properties; got {}",
                                       m->get<std::size_t>(), v.size())});
    }
  }

  const Json& root_;
};

Status CheckSupportedAt(const Json& root, const Json& schema, const std::string& pointer,
                        int depth) {
  if (depth > 64) return Status::Unsupported(pointer + ": schema nesting too deep");
  if (schema.is_boolean()) return Status::Ok();
  if (!schema.is_object()) return Status::InvalidArgument(pointer + ": a schema must be an object");
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    const std::string& key = it.key();
    std::string child = pointer + "/" + key;
    if (!IsKnownKeyword(key)) {
      return Status::Unsupported(child + ": unsupported JSON Schema keyword");
    }
    const Json& val = it.value();
    if (key == "$schema") {
      if (!val.is_string() || (val != kDialect2020 && val != kDialect07)) {
        return Status::Unsupported(child + ": unsupported dialect");
      }
    } else if (key == "$ref") {
      if (!val.is_string() || val.get<std::string>().rfind("#", 0) != 0) {
        return Status::Unsupported(child + ": only local $ref is supported");
      }
      const std::string& ref = val.get_ref<const std::string&>();
      bool resolves = ref == "#";
      if (!resolves && ref.rfind("#/", 0) == 0) {
        try {
          resolves = root.contains(Json::json_pointer(ref.substr(1)));
        } catch (const Json::exception&) {
          resolves = false;
        }
      }
      if (!resolves) return Status::InvalidArgument(child + ": $ref " + ref + " does not resolve");
    } else if (key == "pattern") {
      if (!val.is_string()) return Status::InvalidArgument(child + ": must be a string");
      try {
        std::regex re(val.get<std::string>(), std::regex::ECMAScript);
      } catch (const std::regex_error&) {
        return Status::InvalidArgument(child + ": invalid regular expression");
      }
    } else if (key == "properties" || key == "$defs") {
      if (!val.is_object()) return Status::InvalidArgument(child + ": must be an object");
      for (auto p = val.begin(); p != val.end(); ++p) {
        RETURN_IF_ERROR(CheckSupportedAt(root, p.value(), child + "/" + p.key(), depth + 1));
      }
    } else if (key == "items" || key == "not" || key == "additionalProperties") {
      RETURN_IF_ERROR(CheckSupportedAt(root, val, child, depth + 1));
    } else if (key == "prefixItems" || key == "allOf" || key == "anyOf" || key == "oneOf") {
      if (!val.is_array()) return Status::InvalidArgument(child + ": must be an array");
      for (std::size_t i = 0; i < val.size(); ++i) {
        RETURN_IF_ERROR(CheckSupportedAt(root, val[i], child + "/" + std::to_string(i), depth + 1));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

void AppendPathKey(std::string& path, std::string_view key) {
  if (IsIdentifier(key)) {
    path += '.';
    path += key;
  } else {
    path += "['";
    for (char c : key) {
      if (c == '\'' || c == '\\') path += '\\';
      path += c;
    }
    path += "']";
  }
}

Status CheckSchemaSupported(const Json& schema) { return CheckSupportedAt(schema, schema, "#", 0); }

std::vector<ValidationError> ValidateAgainstSchema(const Json& schema, const Json& instance,
                                                   std::string_view root_path) {
  std::vector<ValidationError> errors;
  Validator(schema).Validate(schema, instance, std::string(root_path), errors);
  if (errors.size() < 2) return errors;
  std::stable_sort(
      errors.begin(), errors.end(),
      [](const ValidationError& a, const ValidationError& b) { return a.path < b.path; });
  return errors;
}

std::string FormatValidationErrors(const std::vector<ValidationError>& errors) {
  constexpr std::size_t kMaxLines = 20;
  std::string out;
  for (std::size_t i = 0; i < errors.size() && i < kMaxLines; ++i) {
    if (!out.empty()) out += '\n';
    out += errors[i].path;
    out += ": ";
    out += errors[i].message;
  }
  if (errors.size() > kMaxLines) out += fmt::format("\n... and {} more", errors.size() - kMaxLines);
  return out;
}

}  // namespace trove::mcp
