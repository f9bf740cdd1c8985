#include "librarian/query/vocabulary.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "librarian/extract/identifier.h"
#include "librarian/store/store.h"

namespace trove::librarian::query {
namespace {

// The Porter stemmer, after the author's reference C implementation (tartarus.org/martin/
// PorterStemmer): b[0..k] is the word being stemmed, j marks the end of a stem found by Ends.
class Porter {
 public:
  explicit Porter(std::string_view w) : b_(w), k_(static_cast<int>(w.size()) - 1) {}

  std::string Run() {
    if (k_ <= 1) return b_;
    Step1ab();
    if (k_ > 0) {
      Step1c();
      Step2();
      Step3();
      Step4();
      Step5();
    }
    return b_.substr(0, static_cast<std::size_t>(k_ + 1));
  }

 private:
  bool Cons(int i) const {
    switch (b_[static_cast<std::size_t>(i)]) {
      case 'a':
      case 'e':
      case 'i':
      case 'o':
      case 'u':
        return false;
      case 'y':
        return i == 0 ? true : !Cons(i - 1);
      default:
        return true;
    }
  }
  // The number of consonant-vowel sequences in b[0..j].
  int M() const {
    int n = 0;
    int i = 0;
    for (;;) {
      if (i > j_) return n;
      if (!Cons(i)) break;
      ++i;
    }
    ++i;
    for (;;) {
      for (;;) {
        if (i > j_) return n;
        if (Cons(i)) break;
        ++i;
      }
      ++i;
      ++n;
      for (;;) {
        if (i > j_) return n;
        if (!Cons(i)) break;
        ++i;
      }
      ++i;
    }
  }
  bool VowelInStem() const {
    for (int i = 0; i <= j_; ++i) {
      if (!Cons(i)) return true;
    }
    return false;
  }
  bool DoubleC(int j) const {
    if (j < 1 || b_[static_cast<std::size_t>(j)] != b_[static_cast<std::size_t>(j - 1)]) {
      return false;
    }
    return Cons(j);
  }
  // consonant-vowel-consonant ending at i, the last consonant not w, x or y.
  bool Cvc(int i) const {
    if (i < 2 || !Cons(i) || Cons(i - 1) || !Cons(i - 2)) return false;
    const char ch = b_[static_cast<std::size_t>(i)];
    return ch != 'w' && ch != 'x' && ch != 'y';
  }
  bool Ends(std::string_view s) {
    const int len = static_cast<int>(s.size());
    if (len > k_ + 1) return false;
    if (std::string_view(b_).substr(static_cast<std::size_t>(k_ + 1 - len), s.size()) != s) {
      return false;
    }
    j_ = k_ - len;
    return true;
  }
  void SetTo(std::string_view s) {
    b_.replace(static_cast<std::size_t>(j_ + 1), static_cast<std::size_t>(k_ - j_), s);
    k_ = j_ + static_cast<int>(s.size());
    b_.resize(static_cast<std::size_t>(k_ + 1));
  }
  void R(std::string_view s) {
    if (M() > 0) SetTo(s);
  }
  char At(int i) const { return b_[static_cast<std::size_t>(i)]; }

  void Step1ab() {
    if (At(k_) == 's') {
      if (Ends("sses")) {
        k_ -= 2;
      } else if (Ends("ies")) {
        SetTo("i");
      } else if (At(k_ - 1) != 's') {
        --k_;
      }
    }
    if (Ends("eed")) {
      if (M() > 0) --k_;
    } else if ((Ends("ed") || Ends("ing")) && VowelInStem()) {
      k_ = j_;
      b_.resize(static_cast<std::size_t>(k_ + 1));
      if (Ends("at")) {
        SetTo("ate");
      } else if (Ends("bl")) {
        SetTo("ble");
      } else if (Ends("iz")) {
        SetTo("ize");
      } else if (DoubleC(k_)) {
        --k_;
        const char ch = At(k_);
        if (ch == 'l' || ch == 's' || ch == 'z') ++k_;
      } else {
        j_ = k_;
        if (M() == 1 && Cvc(k_)) {
          j_ = k_;
          SetTo("e");
        }
      }
    }
    b_.resize(static_cast<std::size_t>(k_ + 1));
  }
  void Step1c() {
    if (Ends("y") && VowelInStem()) b_[static_cast<std::size_t>(k_)] = 'i';
  }
  void Step2() {
    static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
        {"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"},   {"anci", "ance"},
        {"izer", "ize"},    {"bli", "ble"},     {"alli", "al"},     {"entli", "ent"},
        {"eli", "e"},       {"ousli", "ous"},   {"ization", "ize"}, {"ation", "ate"},
        {"ator", "ate"},    {"alism", "al"},    {"iveness", "ive"}, {"fulness", "ful"},
        {"ousness", "ous"}, {"aliti", "al"},    {"iviti", "ive"},   {"biliti", "ble"},
        {"logi", "log"},
    };
    for (const auto& [from, to] : kRules) {
      if (Ends(from)) {
        R(to);
        return;
      }
    }
  }
  void Step3() {
    static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
        {"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
        {"ical", "ic"},  {"ful", ""},   {"ness", ""},
    };
    for (const auto& [from, to] : kRules) {
      if (Ends(from)) {
        R(to);
        return;
      }
    }
  }
  void Step4() {
    static constexpr std::string_view kSuffixes[] = {
        "al",  "ance", "ence", "er",  "ic",  "able", "ible", "ant", "ement", "ment",
        "ent", "ion",  "ou",   "ism", "ate", "iti",  "ous",  "ive", "ize",
    };
    for (std::string_view s : kSuffixes) {
      if (!Ends(s)) continue;
      if (s == "ion" && !(j_ >= 0 && (At(j_) == 's' || At(j_) == 't'))) return;
      // "ement" is tried before "ment" and "ent": the first suffix that ends the word decides.
      if (M() > 1) k_ = j_;
      return;
    }
  }
  void Step5() {
    j_ = k_;
    if (At(k_) == 'e') {
      const int a = M();
      if (a > 1 || (a == 1 && !Cvc(k_ - 1))) --k_;
    }
    if (At(k_) == 'l' && DoubleC(k_)) {
      j_ = k_;
      if (M() > 1) --k_;
    }
  }

  std::string b_;
  int k_;
  int j_ = 0;
};

// English words of code and the abbreviations programmers write for them. General
// programming usage, not taken from any evaluation query (docs/decisions/0027-librarian-mrr.md).
struct Entry {
  std::string_view word;
  std::array<std::string_view, 3> abbreviations;
};
constexpr Entry kAbbreviations[] = {
    {"acknowledge", {"ack"}},
    {"address", {"addr"}},
    {"allocate", {"alloc"}},
    {"argument", {"arg", "args", "argv"}},
    {"array", {"arr"}},
    {"asynchronous", {"async"}},
    {"attribute", {"attr", "attrs"}},
    {"authenticate", {"auth"}},
    {"authentication", {"auth"}},
    {"authorization", {"auth"}},
    {"boolean", {"bool"}},
    {"buffer", {"buf", "buff"}},
    {"button", {"btn"}},
    {"calculate", {"calc"}},
    {"callback", {"cb"}},
    {"character", {"char", "chr", "ch"}},
    {"command", {"cmd"}},
    {"compare", {"cmp"}},
    {"configuration", {"config", "cfg", "conf"}},
    {"configure", {"config", "cfg"}},
    {"connection", {"conn"}},
    {"context", {"ctx"}},
    {"coordinate", {"coord"}},
    {"count", {"cnt"}},
    {"current", {"cur", "curr"}},
    {"database", {"db"}},
    {"debug", {"dbg"}},
    {"declaration", {"decl"}},
    {"decrement", {"dec"}},
    {"default", {"def", "dflt"}},
    {"define", {"def"}},
    {"definition", {"def"}},
    {"delete", {"del"}},
    {"description", {"desc"}},
    {"destination", {"dest", "dst"}},
    {"dictionary", {"dict"}},
    {"directory", {"dir"}},
    {"document", {"doc"}},
    {"element", {"elem", "el"}},
    {"environment", {"env"}},
    {"error", {"err"}},
    {"evaluate", {"eval"}},
    {"event", {"evt", "ev"}},
    {"exception", {"exc"}},
    {"execute", {"exec"}},
    {"expression", {"expr"}},
    {"extension", {"ext"}},
    {"file descriptor", {"fd"}},
    {"format", {"fmt"}},
    {"frequency", {"freq"}},
    {"function", {"func", "fn"}},
    {"generate", {"gen"}},
    {"header", {"hdr"}},
    {"identifier", {"id", "ident"}},
    {"image", {"img"}},
    {"implementation", {"impl"}},
    {"increment", {"inc"}},
    {"index", {"idx"}},
    {"information", {"info"}},
    {"initialize", {"init"}},
    {"integer", {"int"}},
    {"iterator", {"iter", "it"}},
    {"iterate", {"iter"}},
    {"language", {"lang"}},
    {"length", {"len"}},
    {"library", {"lib"}},
    {"local", {"loc"}},
    {"manager", {"mgr"}},
    {"maximum", {"max"}},
    {"memory", {"mem"}},
    {"message", {"msg"}},
    {"millisecond", {"ms", "msec"}},
    {"minimum", {"min"}},
    {"module", {"mod"}},
    {"number", {"num", "nr"}},
    {"object", {"obj"}},
    {"option", {"opt", "opts"}},
    {"package", {"pkg"}},
    {"parameter", {"param", "params"}},
    {"pointer", {"ptr"}},
    {"position", {"pos"}},
    {"previous", {"prev"}},
    {"process", {"proc"}},
    {"property", {"prop", "props"}},
    {"quantity", {"qty"}},
    {"random", {"rand"}},
    {"receive", {"recv"}},
    {"reference", {"ref"}},
    {"regular expression", {"regex", "re"}},
    {"repository", {"repo"}},
    {"request", {"req"}},
    {"response", {"res", "resp"}},
    {"result", {"res"}},
    {"separator", {"sep"}},
    {"sequence", {"seq"}},
    {"signature", {"sig"}},
    {"size", {"sz"}},
    {"source", {"src"}},
    {"specification", {"spec"}},
    {"statistic", {"stat", "stats"}},
    {"string", {"str"}},
    {"synchronize", {"sync"}},
    {"synchronous", {"sync"}},
    {"temporary", {"tmp", "temp"}},
    {"text", {"txt"}},
    {"timestamp", {"ts"}},
    {"utility", {"util", "utils"}},
    {"value", {"val"}},
    {"variable", {"var"}},
    {"vector", {"vec"}},
    {"version", {"ver"}},
    {"window", {"win"}},
};

// Abbreviation -> the stem of the first English word it stands for. An abbreviation that is
// itself an English word of the table (count) keeps its own meaning.
const std::unordered_map<std::string_view, std::string>& CanonicalTable() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, std::string>;
    for (const Entry& e : kAbbreviations) {
      if (e.word.find(' ') != std::string_view::npos) continue;  // multi-word: no single stem
      const std::string stem = PorterStem(e.word);
      for (std::string_view a : e.abbreviations) {
        if (!a.empty()) t->try_emplace(a, stem);
      }
    }
    for (const Entry& e : kAbbreviations) t->erase(e.word);
    return t;
  }();
  return *table;
}

bool LowerAscii(std::string_view w) {
  if (w.empty()) return false;
  for (char c : w) {
    if (c < 'a' || c > 'z') return false;
  }
  return true;
}

}  // namespace

std::string PorterStem(std::string_view word) {
  if (word.size() < 3 || !LowerAscii(word)) return std::string(word);
  return Porter(word).Run();
}

std::string CanonicalWord(std::string_view word) {
  const auto& table = CanonicalTable();
  if (auto it = table.find(word); it != table.end()) return it->second;
  // Each query compares the sub-words of a few hundred candidate names, and the names of one
  // repository recur from query to query: the stems are kept per thread (a pure function of
  // the word), dropped wholesale past a bound.
  constexpr std::size_t kMaxCachedStems = 1 << 16;
  thread_local std::unordered_map<std::string, std::string> stems;
  std::string key(word);
  if (auto it = stems.find(key); it != stems.end()) return it->second;
  if (stems.size() >= kMaxCachedStems) stems.clear();
  std::string stem = PorterStem(word);
  stems.emplace(std::move(key), stem);
  return stem;
}

NameWordMatch MatchNameWords(std::string_view name, std::string_view qualified,
                             const std::unordered_set<std::string>& intent_words) {
  NameWordMatch m;
  if (intent_words.empty()) return m;
  const double intent_count = static_cast<double>(intent_words.size());
  std::size_t content = 0;
  std::size_t hits = 0;
  std::unordered_set<std::string> carried;  // intent words the name carries
  for (const std::string& part : extract::SplitIdentifier(name)) {
    if (store::IsStopWord(part)) continue;
    ++content;
    std::string c = CanonicalWord(part);
    if (intent_words.count(c) != 0) {
      ++hits;
      carried.insert(std::move(c));
    }
  }
  if (content > 0) m.name_words = static_cast<double>(hits) / static_cast<double>(content);
  m.intent_words = static_cast<double>(carried.size()) / intent_count;
  if (qualified.size() > name.size() && qualified.ends_with(name)) {
    std::unordered_set<std::string> owner;
    for (const std::string& part :
         extract::SplitIdentifier(qualified.substr(0, qualified.size() - name.size()))) {
      if (store::IsStopWord(part)) continue;
      std::string c = CanonicalWord(part);
      if (intent_words.count(c) != 0 && carried.count(c) == 0) owner.insert(std::move(c));
    }
    m.owner_words = static_cast<double>(owner.size()) / intent_count;
  }
  return m;
}

}  // namespace trove::librarian::query
