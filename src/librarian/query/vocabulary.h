// Query-time vocabulary: bridges the English of an intent ("Initializes the message buffer")
// and the words of code names (initMsgBuf). Three pieces, all pure:
//  - PorterStem: M. F. Porter's 1980 suffix-stripping algorithm, so that inflections meet
//    ("carried", "carries" -> "carri"; "credential", "credentials" -> "credenti");
//  - a table of general programming abbreviations ("initialize" -> init, "message" -> msg),
//    written from general knowledge of code, not from any evaluation query;
//  - CanonicalWord, the form in which an intent word and a name sub-word are compared: an
//    abbreviation becomes the stem of the English word it stands for, anything else its stem;
//  - MatchNameWords, the name-match signals of a ranking candidate.
// Nothing here touches the index: the store keeps unstemmed words (docs/librarian.md §6.8). The
// query engine matches names with these functions; adding the abbreviations and plural forms to
// the BM25 query was measured and lowered the dev split's function MRR, so it does not
// (docs/decisions/0027-librarian-mrr.md).
//
// Thread safety: pure functions over constant tables.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace trove::librarian::query {

// Calls fn with each maximal run of word characters in text, in order: ASCII letters, digits
// and '_', and, when kNonAsciiIsWord, any byte of a non-ASCII character (the query engine's
// intents); the learned models (assoc.h, semvec.h) split their corpus at non-ASCII bytes.
template <bool kNonAsciiIsWord = true, typename Fn>
void ForEachWordRun(std::string_view text, Fn&& fn) {
  auto word_char = [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return std::isalnum(u) != 0 || c == '_' || (kNonAsciiIsWord && u >= 0x80);
  };
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !word_char(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && word_char(text[i])) ++i;
    if (i == start) break;
    fn(text.substr(start, i - start));
  }
}

// Returns the Porter (1980) stem of `word`. Words shorter than three characters and words
// holding anything but lower-case ASCII letters are returned unchanged.
std::string PorterStem(std::string_view word);

// Returns the form in which intent words and name sub-words are compared: for an
// abbreviation in the table the stem of the English word it stands for ("msg" -> "messag",
// "init" -> "initi"), else PorterStem(word). `word` is lower-case.
std::string CanonicalWord(std::string_view word);

// How the words of a target's name meet the intent's words, compared as CanonicalWord forms;
// stop words (store::IsStopWord) are left out on both sides. Each share is in [0, 1].
struct NameWordMatch {
  // Share of the name's content sub-words found among the intent's: "onClose" for "Handle
  // socket close" is 1 ("on" is a stop word); 0 when the name has no content sub-word.
  double name_words = 0;
  // Share of the intent's content words that the name carries: "getMode" for "Gets the
  // current mode" is 2/3 (get, mode of get, current, mode).
  double intent_words = 0;
  // Share of the intent's content words, not already in the name, that the owner carries (the
  // qualified name's part before the name: "Socks5Client" of "Socks5Client.onData").
  double owner_words = 0;
};

// Returns the match of `name` (owner taken from `qualified` when it ends with `name`) against
// `intent_words`, the CanonicalWord forms of the intent's content words.
NameWordMatch MatchNameWords(std::string_view name, std::string_view qualified,
                             const std::unordered_set<std::string>& intent_words);

}  // namespace trove::librarian::query
