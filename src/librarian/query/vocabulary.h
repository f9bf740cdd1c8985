// Query-time vocabulary: bridges the English of an intent ("Initializes the message buffer")
// and the words of code names (initMsgBuf). Three pieces, all pure:
//  - PorterStem: M. F. Porter's 1980 suffix-stripping algorithm, so that inflections meet
//    ("carried", "carries" -> "carri"; "credential", "credentials" -> "credenti");
//  - a table of general programming abbreviations ("initialize" -> init, "message" -> msg),
//    written from general knowledge of code, keyed by the stem of the English word so that
//    every inflection of it finds the abbreviations;
//  - CanonicalWord, the form in which an intent word and a name sub-word are compared: an
//    abbreviation becomes the stem of the English word it stands for, anything else its stem.
// Nothing here touches the index: the store keeps unstemmed words (spec §6.5), and the query
// engine uses these functions to add terms to its BM25 query and to match names
// (docs/decisions/0025-librarian-mrr.md).
//
// Thread safety: pure functions over constant tables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trove::librarian::query {

// Returns the Porter (1980) stem of `word`. Words shorter than three characters and words
// holding anything but lower-case ASCII letters are returned unchanged.
std::string PorterStem(std::string_view word);

// Returns the code abbreviations of the English word `word` (any inflection of a table
// entry, compared by stem): "initializes" -> {"init"}, "messages" -> {"msg"}; empty when the
// word has none. `word` is lower-case.
std::vector<std::string_view> Abbreviations(std::string_view word);

// Returns the form in which intent words and name sub-words are compared: for an
// abbreviation in the table the stem of the English word it stands for ("msg" -> "messag",
// "init" -> "initi"), else PorterStem(word). `word` is lower-case.
std::string CanonicalWord(std::string_view word);

// Returns the regular plural / third-person forms of a lower-case ASCII word of at least three
// letters that does not already end in "s": "credential" -> {"credentials"}, "carry" ->
// {"carries"}, "match" -> {"matches"}; empty otherwise. Index words are unstemmed, so an
// intent's singular meets a name's plural only through these.
std::vector<std::string> PluralForms(std::string_view word);

}  // namespace trove::librarian::query
