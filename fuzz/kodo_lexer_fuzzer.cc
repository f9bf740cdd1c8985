// Fuzzes the Kōdo lexer (docs/conventions.md §11). Any input must lex without reaching a CHECK,
// and: with trivia kept and recovery on, the tokens tile the source exactly (their texts
// concatenate to the input); every range, f-string part range and line/column lookup stays in
// bounds; without recovery there is at most one error and no token after it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "kodo/lex/lexer.h"
#include "kodo/source/source_buffer.h"

namespace {

using trove::kodo::SourceBuffer;
using trove::kodo::SourceRange;
using trove::kodo::lex::Lex;
using trove::kodo::lex::LexOptions;
using trove::kodo::lex::LexResult;
using trove::kodo::lex::Token;
using trove::kodo::lex::TokenKind;

void CheckRange(const SourceBuffer& source, const SourceRange& range) {
  TROVE_CHECK(range.file == source.id());
  TROVE_CHECK(range.begin <= range.end && range.end <= source.size());
  const auto begin = source.Locate(range.begin);
  const auto end = source.Locate(range.end);
  TROVE_CHECK(begin.line >= 1 && begin.column >= 1 && begin.line <= end.line);
}

void CheckTokens(const SourceBuffer& source, const LexResult& result) {
  TROVE_CHECK(!result.tokens.empty() && result.tokens.back().kind == TokenKind::kEof);
  for (const Token& token : result.tokens) {
    CheckRange(source, token.range);
    if (token.kind == TokenKind::kFStringLit) {
      for (const auto& part : token.fstring_value().parts) {
        CheckRange(source, part.range);
        TROVE_CHECK(part.range.begin >= token.range.begin && part.range.end <= token.range.end);
      }
    }
  }
  for (const auto& error : result.errors) CheckRange(source, error.range);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  trove::Result<SourceBuffer> source = SourceBuffer::Create(3, "fuzz.ko", std::move(text));
  TROVE_CHECK(source.ok());

  LexOptions full;
  full.keep_trivia = true;
  full.recover = true;
  trove::Result<LexResult> tiled = Lex(*source, full);
  TROVE_CHECK(tiled.ok());
  CheckTokens(*source, *tiled);
  std::uint32_t at = 0;
  for (const Token& token : tiled->tokens) {
    TROVE_CHECK(token.range.begin == at);
    at = token.range.end;
  }
  TROVE_CHECK(at == source->size());

  trove::Result<LexResult> strict = Lex(*source);
  TROVE_CHECK(strict.ok());
  CheckTokens(*source, *strict);
  TROVE_CHECK(strict->errors.size() <= 1);
  if (!strict->errors.empty()) {
    for (std::size_t i = 0; i + 1 < strict->tokens.size(); ++i) {
      TROVE_CHECK(strict->tokens[i].range.end <= strict->errors[0].range.begin);
    }
  }
  return 0;
}
