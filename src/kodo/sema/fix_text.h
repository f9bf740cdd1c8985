// Internal: small source-text helpers the checker uses to place its fix patches where the
// result parses (issue 17): after an opening brace, before a closing one, over a separating
// comma, at the start of a statement's line. They read only the text; whatever they get wrong
// on unusual layouts is caught by the verification of every patch (verify_fixes.h), which
// withholds a patch whose result does not parse. See docs/decisions/0050-kodo-verified-fixes.md.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trove::kodo::sema::fixtext {

// Returns the offset just after the first `{` at or after `from`, skipping `//` comments;
// nullopt when there is none.
std::optional<std::uint32_t> AfterOpenBrace(std::string_view text, std::uint32_t from);

// Returns the leading blanks (spaces and tabs) of the line containing `offset`.
std::string LineIndent(std::string_view text, std::uint32_t offset);

// Returns the offset of the first non-blank character of the line containing `offset`.
std::uint32_t LineContentStart(std::string_view text, std::uint32_t offset);

// An insertion: `text` goes at `offset`.
struct Insertion {
  std::uint32_t offset = 0;
  std::string text;
};

// Returns the insertion that adds `elements` at the end of the braced list whose `}` ends at
// `end` (text[end - 1] == '}'): struct literal fields, match arms, meta entries, whose commas are
// optional (docs/kodo.md §4.2). When the `}` is on its own line each element gets a line, indented
// one level deeper than the brace, and ends with ","; otherwise they follow the last element on its
// line, after ", ". nullopt when text[end - 1] is not `}`.
std::optional<Insertion> LastInBraces(std::string_view text, std::uint32_t end,
                                      const std::vector<std::string>& elements);

// Returns the insertion that adds `item` (lines separated by '\n', without indentation) as the
// last item of the module spanning [module_start, module_end), indented one level deeper than
// the `module` line. nullopt when the module does not end with `}`.
std::optional<Insertion> LastModuleItem(std::string_view text, std::uint32_t module_start,
                                        std::uint32_t module_end, std::string_view item);

// Returns `end` moved over following blanks and one `,` (and the blanks after it), so that
// deleting [start, result) removes a list element with its separator.
std::uint32_t OverTrailingComma(std::string_view text, std::uint32_t end);

// Returns the offset of the `(` matching the `)` at text[end - 1], scanning back from there and
// not before `start`; nullopt when text[end - 1] is not `)` or no match is found.
std::optional<std::uint32_t> OpenParenOfTrailingArgs(std::string_view text, std::uint32_t start,
                                                     std::uint32_t end);

}  // namespace trove::kodo::sema::fixtext
