// Escaping text for HTML and XML (SVG) documents that Trove writes by hand: `warden report
// --html` and `librarian_eval --svg`. Their text comes from untrusted places (function names
// from a hostile module, repository names), so every piece of text and every attribute value
// goes through EscapeMarkup, which leaves no character that could end a text node or an
// attribute, and no byte that would make the document ill-formed XML.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace trove::base {

// Returns `text` safe inside an HTML/XML text node and inside a single- or double-quoted
// attribute value: & < > " ' become entities; bytes that are not valid UTF-8 and control
// characters other than tab, newline and carriage return (which XML 1.0 forbids) become
// U+FFFD.
std::string EscapeMarkup(std::string_view text);

}  // namespace trove::base
