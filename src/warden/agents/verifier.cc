#include "warden/agents/verifier.h"

#include <fmt/core.h>

#include <cmath>
#include <optional>

namespace trove::warden::agents {

namespace {

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

// Returns the number of code points in `text`, or nullopt when it is not valid UTF-8
// (overlong forms, surrogates and values over U+10FFFF are invalid).
std::optional<std::size_t> CodePoints(std::string_view text) {
  std::size_t count = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    auto b = static_cast<unsigned char>(text[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (b < 0x80) {
      len = 1;
      cp = b;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2;
      cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3;
      cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4;
      cp = b & 0x07;
    } else {
      return std::nullopt;
    }
    if (i + len > text.size()) return std::nullopt;
    for (std::size_t k = 1; k < len; ++k) {
      auto c = static_cast<unsigned char>(text[i + k]);
      if ((c & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (c & 0x3F);
    }
    static constexpr std::uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return std::nullopt;
    }
    i += len;
    ++count;
  }
  return count;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool IsTypeEntryChar(char c) {
  if (IsIdentChar(c)) return true;
  switch (c) {
    case ' ':
    case '*':
    case '&':
    case ':':
    case '<':
    case '>':
    case '[':
    case ']':
      return true;
    default:
      return false;
  }
}

// Parses "(a, b, ...)" (the whole of `list`) into an entry count; "()" is 0.
Result<std::size_t> ParseList(std::string_view list, std::string_view what) {
  list = Trim(list);
  if (list.size() < 2 || list.front() != '(' || list.back() != ')') {
    return Status::InvalidArgument(fmt::format("{}: expected a parenthesised list", what));
  }
  std::string_view inner = Trim(list.substr(1, list.size() - 2));
  if (inner.empty()) return std::size_t{0};
  std::size_t count = 0;
  while (true) {
    std::size_t comma = inner.find(',');
    std::string_view entry = Trim(inner.substr(0, comma));
    if (entry.empty()) return Status::InvalidArgument(fmt::format("{}: empty entry", what));
    for (char c : entry) {
      if (!IsTypeEntryChar(c)) {
        return Status::InvalidArgument(fmt::format("{}: unexpected character in a type", what));
      }
    }
    ++count;
    if (comma == std::string_view::npos) break;
    inner = inner.substr(comma + 1);
  }
  return count;
}

void Fail(Verdict& verdict, std::string message) {
  verdict.ok = false;
  verdict.messages.push_back(std::move(message));
}

void CheckName(Verdict& verdict, std::string_view name) {
  if (!IsIdentifier(name)) {
    Fail(verdict, "name is not a valid identifier");
  }
  if (name.size() < kMinNameChars) {
    Fail(verdict, fmt::format("name is shorter than {} characters", kMinNameChars));
  }
  if (name.size() > kMaxNameChars) {
    Fail(verdict, fmt::format("name is longer than {} characters", kMaxNameChars));
  }
}

void CheckConfidence(Verdict& verdict, double confidence) {
  // NaN fails both comparisons, so it is outside [0, 1].
  if (!(confidence >= 0.0 && confidence <= 1.0)) {
    Fail(verdict, "confidence is not a number in [0, 1]");
  }
}

bool InSomeString(const FunctionFacts& facts, std::string_view literal) {
  for (const std::string& s : facts.referenced_strings) {
    if (s.find(literal) != std::string::npos) return true;
  }
  return false;
}

// Short, printable, never more than 60 bytes of a model's text in a message.
std::string Excerpt(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out;
  for (char c : text.substr(0, kMax)) {
    out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  if (text.size() > kMax) out += "...";
  return out;
}

}  // namespace

std::string Verdict::Reason() const {
  std::string out;
  for (const std::string& m : messages) {
    if (!out.empty()) out += "; ";
    out += m;
  }
  return out;
}

bool IsIdentifier(std::string_view name) {
  std::size_t i = 0;
  while (true) {
    if (i >= name.size() || !IsIdentStart(name[i])) return false;
    ++i;
    while (i < name.size() && IsIdentChar(name[i])) ++i;
    if (i == name.size()) return true;
    if (name.substr(i, 2) != "::") return false;
    i += 2;
  }
}

Result<SignatureArity> ParseSignatureArity(std::string_view signature) {
  std::size_t arrow = signature.find("->");
  if (arrow == std::string_view::npos) {
    return Status::InvalidArgument("type signature: missing '->'");
  }
  ASSIGN_OR_RETURN(std::size_t params, ParseList(signature.substr(0, arrow), "parameters"));
  std::string_view result = Trim(signature.substr(arrow + 2));
  if (result.empty()) return Status::InvalidArgument("results: missing");
  SignatureArity arity{.params = params};
  if (result.front() == '(') {
    ASSIGN_OR_RETURN(arity.results, ParseList(result, "results"));
  } else {
    // A single unparenthesised result: one type, e.g. "i32" or "char*".
    for (char c : result) {
      if (!IsTypeEntryChar(c)) {
        return Status::InvalidArgument("results: unexpected character in a type");
      }
    }
    arity.results = 1;
  }
  return arity;
}

Verdict CheckProposedSymbol(std::string_view name, double confidence) {
  Verdict verdict;
  CheckName(verdict, name);
  CheckConfidence(verdict, confidence);
  return verdict;
}

Verdict VerifyProposal(const FunctionFacts& facts, const Proposal& proposal) {
  Verdict verdict = CheckProposedSymbol(proposal.name, proposal.confidence);

  for (const std::string& cited : proposal.cited_strings) {
    bool found = false;
    for (const std::string& s : facts.referenced_strings) found = found || s == cited;
    if (!found) {
      Fail(verdict,
           fmt::format("cited string \"{}\" is not referenced by the function", Excerpt(cited)));
    }
  }

  std::optional<std::size_t> summary_chars = CodePoints(proposal.summary);
  if (!summary_chars) {
    Fail(verdict, "summary is not valid UTF-8");
  } else {
    if (*summary_chars > kMaxSummaryChars) {
      Fail(verdict, fmt::format("summary is longer than {} characters", kMaxSummaryChars));
    }
    std::string_view summary = proposal.summary;
    std::size_t open = summary.find('"');
    while (open != std::string_view::npos) {
      std::size_t close = summary.find('"', open + 1);
      if (close == std::string_view::npos) break;
      std::string_view literal = summary.substr(open + 1, close - open - 1);
      std::optional<std::size_t> chars = CodePoints(literal);
      if (chars && *chars >= kMinQuotedLiteralChars && !InSomeString(facts, literal)) {
        Fail(verdict, fmt::format("summary quotes \"{}\", which no referenced string contains",
                                  Excerpt(literal)));
      }
      open = summary.find('"', close + 1);
    }
  }

  if (proposal.type_signature) {
    Result<SignatureArity> refined = ParseSignatureArity(*proposal.type_signature);
    Result<SignatureArity> actual = ParseSignatureArity(facts.type_signature);
    if (!refined.ok()) {
      Fail(verdict, "type_signature does not parse: " + refined.status().message());
    } else if (!actual.ok()) {
      Fail(verdict, "type_signature cannot be checked: the function's signature does not parse");
    } else if (!(*refined == *actual)) {
      Fail(verdict,
           fmt::format("type_signature has {} parameters and {} results; the function has {} "
                       "and {}",
                       refined->params, refined->results, actual->params, actual->results));
    }
  }
  return verdict;
}

}  // namespace trove::warden::agents
