// JSON Schema (draft 2020-12 subset) validation of tool arguments, and the formatting of
// validation failures as the model reads them (docs/mcp.md §4.3).
//
// Supported keywords: type (incl. arrays of types), properties, required,
// additionalProperties, items, prefixItems, enum, const, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, multipleOf, minLength, maxLength, pattern, minItems, maxItems,
// uniqueItems, minProperties, maxProperties, allOf, anyOf, oneOf, not, local $ref to
// "#/$defs/..."; annotations title, description, default, examples, deprecated, format,
// $schema, $id, $comment, $defs, readOnly, writeOnly, contentMediaType, contentEncoding.
// `default` is never injected. `integer` accepts any number with a zero fractional part.
// Thread safety: free functions over values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "mcp/json.h"

namespace trove::mcp {

struct ValidationError {
  std::string path;  // "arguments.limit", "arguments['max files']", "arguments.include[2]"
  std::string message;
};

// Returns OK when `schema` uses only supported keywords and dialects; otherwise an error
// naming the JSON pointer of the first unsupported keyword. Used at registration.
Status CheckSchemaSupported(const Json& schema);

// Validates `instance` against `schema` (whose root, for $ref, is `schema` itself).
// Returns the failures sorted by path; empty when valid.
std::vector<ValidationError> ValidateAgainstSchema(const Json& schema, const Json& instance,
                                                   std::string_view root_path = "arguments");

// Appends `.key` for identifier-like keys, `['key']` otherwise.
void AppendPathKey(std::string& path, std::string_view key);

// Formats failures: one "<path>: <reason>" line each, at most 20, then "... and N more".
std::string FormatValidationErrors(const std::vector<ValidationError>& errors);

}  // namespace trove::mcp
