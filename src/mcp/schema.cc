#include "mcp/schema.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include <fmt/core.h>

namespace trove::mcp {

namespace {

constexpr std::string_view kKnownKeywords[] = {
    "type", "properties", "required", "additionalProperties", "items", "prefixItems", "enum",
    "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "minProperties",
    "maxProperties", "allOf", "anyOf", "oneOf", "not", "$ref", "$defs", "$schema", "$id",
    "$comment", "title", "description", "default", "examples", "deprecated", "format",
    "readOnly", "writeOnly", "contentMediaType", "contentEncoding", "enumNames"};

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
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: {
      double d = v.get<double>();
      return (std::isfinite(d) && std::floor(d) == d) ? "integer" : "number";
    }
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    default: return "unknown";
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

    if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
      const Json* target = Resolve(ref->get<std::string>());
      if (target == nullptr) {
        out.push_back({path, "schema error: unresolvable $ref " + ref->get<std::string>()});
      } else {
        Validate(*target, v, path, out, depth + 1);
      }
    }

    if (auto type = schema.find("type"); type != schema.end()) {
      bool ok = false;
      std::string expected;
      if (type->is_string()) {
        ok = MatchesType(v, type->get<std::string>());
        expected = type->get<std::string>();
      } else if (type->is_array()) {
        for (const auto& t : *type) {
          if (!t.is_string()) continue;
          if (!expected.empty()) expected += " or ";
          expected += t.get<std::string>();
          ok = ok || MatchesType(v, t.get<std::string>());
        }
      }
      if (!ok) {
        out.push_back({path, fmt::format("expected {}, got {}", expected, TypeName(v))});
        return;  // further keywords would only repeat the type mismatch
      }
    }

    if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
      bool found = std::any_of(e->begin(), e->end(), [&](const Json& x) { return JsonEqual(x, v); });
      if (!found) {
        std::string allowed;
        for (const auto& x : *e) {
          if (!allowed.empty()) allowed += ", ";
          allowed += QuoteForMessage(x);
        }
        out.push_back({path, fmt::format("must be one of {}; got {}", allowed, QuoteForMessage(v))});
      }
    }
    if (auto c = schema.find("const"); c != schema.end() && !JsonEqual(*c, v)) {
      out.push_back({path, fmt::format("must be {}; got {}", QuoteForMessage(*c), QuoteForMessage(v))});
    }

    if (v.is_number()) ValidateNumber(schema, v, path, out);
    if (v.is_string()) ValidateString(schema, v, path, out);
    if (v.is_array()) ValidateArray(schema, v, path, out, depth);
    if (v.is_object()) ValidateObject(schema, v, path, out, depth);

    if (auto all = schema.find("allOf"); all != schema.end() && all->is_array()) {
      for (const auto& s : *all) Validate(s, v, path, out, depth + 1);
    }
    if (auto any = schema.find("anyOf"); any != schema.end() && any->is_array()) {
      bool matched = false;
      for (const auto& s : *any) {
        std::vector<ValidationError> scratch;
        Validate(s, v, path, scratch, depth + 1);
        if (scratch.empty()) {
          matched = true;
          break;
        }
      }
      if (!matched) out.push_back({path, "must match at least one schema in anyOf"});
    }
    if (auto one = schema.find("oneOf"); one != schema.end() && one->is_array()) {
      int matches = 0;
      for (const auto& s : *one) {
        std::vector<ValidationError> scratch;
        Validate(s, v, path, scratch, depth + 1);
        if (scratch.empty()) ++matches;
      }
      if (matches != 1) {
        out.push_back({path, fmt::format("must match exactly one schema in oneOf; matched {}",
                                         matches)});
      }
    }
    if (auto n = schema.find("not"); n != schema.end()) {
      std::vector<ValidationError> scratch;
      Validate(*n, v, path, scratch, depth + 1);
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

  static void ValidateNumber(const Json& schema, const Json& v, const std::string& path,
                             std::vector<ValidationError>& out) {
    double d = v.get<double>();
    auto num = [&](const char* key) -> const Json* {
      auto it = schema.find(key);
      return (it != schema.end() && it->is_number()) ? &*it : nullptr;
    };
    if (const Json* m = num("minimum"); m && d < m->get<double>()) {
      out.push_back({path, fmt::format("must be at least {}; got {}", FormatNumber(*m),
                                       FormatNumber(v))});
    }
    if (const Json* m = num("maximum"); m && d > m->get<double>()) {
      out.push_back({path, fmt::format("must be at most {}; got {}", FormatNumber(*m),
                                       FormatNumber(v))});
    }
    if (const Json* m = num("exclusiveMinimum"); m && d <= m->get<double>()) {
      out.push_back({path, fmt::format("must be greater than {}; got {}", FormatNumber(*m),
                                       FormatNumber(v))});
    }
    if (const Json* m = num("exclusiveMaximum"); m && d >= m->get<double>()) {
      out.push_back({path, fmt::format("must be less than {}; got {}", FormatNumber(*m),
                                       FormatNumber(v))});
    }
    if (const Json* m = num("multipleOf"); m && m->get<double>() > 0) {
      double q = d / m->get<double>();
      if (std::fabs(q - std::round(q)) > 1e-9) {
        out.push_back({path, fmt::format("must be a multiple of {}; got {}", FormatNumber(*m),
                                         FormatNumber(v))});
      }
    }
  }

  static void ValidateString(const Json& schema, const Json& v, const std::string& path,
                             std::vector<ValidationError>& out) {
    const auto& s = v.get_ref<const std::string&>();
    std::size_t len = 0;
    bool counted = false;
    auto length = [&] {
      if (!counted) {
        len = Utf8Length(s);
        counted = true;
      }
      return len;
    };
    if (auto m = schema.find("minLength"); m != schema.end() && m->is_number_unsigned() &&
                                           length() < m->get<std::size_t>()) {
      out.push_back({path, fmt::format("length must be at least {}; got {}",
                                       m->get<std::size_t>(), length())});
    }
    if (auto m = schema.find("maxLength"); m != schema.end() && m->is_number_unsigned() &&
                                           length() > m->get<std::size_t>()) {
      out.push_back({path, fmt::format("length must be at most {}; got {}",
                                       m->get<std::size_t>(), length())});
    }
    if (auto p = schema.find("pattern"); p != schema.end() && p->is_string()) {
      try {
        std::regex re(p->get<std::string>(), std::regex::ECMAScript);
        if (!std::regex_search(s, re)) {
          out.push_back({path, fmt::format("must match pattern {}; got {}", QuoteForMessage(*p),
                                           QuoteForMessage(v))});
        }
      } catch (const std::regex_error&) {
        out.push_back({path, "schema error: invalid pattern"});
      }
    }
  }

  void ValidateArray(const Json& schema, const Json& v, const std::string& path,
                     std::vector<ValidationError>& out, int depth) {
    std::size_t prefix = 0;
    if (auto p = schema.find("prefixItems"); p != schema.end() && p->is_array()) {
      prefix = std::min(p->size(), v.size());
      for (std::size_t i = 0; i < prefix; ++i) {
        Validate((*p)[i], v[i], path + "[" + std::to_string(i) + "]", out, depth + 1);
      }
    }
    if (auto items = schema.find("items"); items != schema.end()) {
      for (std::size_t i = prefix; i < v.size(); ++i) {
        Validate(*items, v[i], path + "[" + std::to_string(i) + "]", out, depth + 1);
      }
    }
    if (auto m = schema.find("minItems"); m != schema.end() && m->is_number_unsigned() &&
                                          v.size() < m->get<std::size_t>()) {
      out.push_back({path, fmt::format("must have at least {} items; got {}",
                                       m->get<std::size_t>(), v.size())});
    }
    if (auto m = schema.find("maxItems"); m != schema.end() && m->is_number_unsigned() &&
                                          v.size() > m->get<std::size_t>()) {
      out.push_back({path, fmt::format("must have at most {} items; got {}",
                                       m->get<std::size_t>(), v.size())});
    }
    if (auto u = schema.find("uniqueItems"); u != schema.end() && u->is_boolean() && u->get<bool>()) {
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

  void ValidateObject(const Json& schema, const Json& v, const std::string& path,
                      std::vector<ValidationError>& out, int depth) {
    auto props = schema.find("properties");
    const bool has_props = props != schema.end() && props->is_object();
    if (auto req = schema.find("required"); req != schema.end() && req->is_array()) {
      for (const auto& name : *req) {
        if (!name.is_string()) continue;
        const auto& key = name.get_ref<const std::string&>();
        if (!v.contains(key)) {
          std::string p = path;
          AppendPathKey(p, key);
          out.push_back({std::move(p), "required property missing"});
        }
      }
    }
    auto additional = schema.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string p = path;
      AppendPathKey(p, it.key());
      if (has_props) {
        auto ps = props->find(it.key());
        if (ps != props->end()) {
          Validate(*ps, it.value(), p, out, depth + 1);
          continue;
        }
      }
      if (additional == schema.end()) continue;
      if (additional->is_boolean()) {
        if (!additional->get<bool>()) {
          out.push_back({std::move(p), "unexpected property (additionalProperties is false)"});
        }
      } else {
        Validate(*additional, it.value(), p, out, depth + 1);
      }
    }
    if (auto m = schema.find("minProperties"); m != schema.end() && m->is_number_unsigned() &&
                                               v.size() < m->get<std::size_t>()) {
      out.push_back({path, fmt::format("must have at least {} properties; got {}",
                                       m->get<std::size_t>(), v.size())});
    }
    if (auto m = schema.find("maxProperties"); m != schema.end() && m->is_number_unsigned() &&
                                               v.size() > m->get<std::size_t>()) {
      out.push_back({path, fmt::format("must have at most {} properties; got {}",
                                       m->get<std::size_t>(), v.size())});
    }
  }

  const Json& root_;
};

Status CheckSupportedAt(const Json& schema, const std::string& pointer, int depth) {
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
        RETURN_IF_ERROR(CheckSupportedAt(p.value(), child + "/" + p.key(), depth + 1));
      }
    } else if (key == "items" || key == "not" || key == "additionalProperties") {
      RETURN_IF_ERROR(CheckSupportedAt(val, child, depth + 1));
    } else if (key == "prefixItems" || key == "allOf" || key == "anyOf" || key == "oneOf") {
      if (!val.is_array()) return Status::InvalidArgument(child + ": must be an array");
      for (std::size_t i = 0; i < val.size(); ++i) {
        RETURN_IF_ERROR(CheckSupportedAt(val[i], child + "/" + std::to_string(i), depth + 1));
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

Status CheckSchemaSupported(const Json& schema) { return CheckSupportedAt(schema, "#", 0); }

std::vector<ValidationError> ValidateAgainstSchema(const Json& schema, const Json& instance,
                                                   std::string_view root_path) {
  std::vector<ValidationError> errors;
  Validator(schema).Validate(schema, instance, std::string(root_path), errors);
  std::stable_sort(errors.begin(), errors.end(),
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
