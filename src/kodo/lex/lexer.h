// The Kōdo lexer: turns one SourceBuffer into tokens and lexical errors (docs/kodo.md §4.1, §6.1).
//
// Skipped text (spaces, tabs, '\r', '\n', `//` line comments) produces no tokens unless
// LexOptions::keep_trivia is set; newlines are not significant, so there is no newline token.
// Kōdo has no block comments and no doc comments (§4.1).
//
// Errors. Upstream has one lexical code, E0001 "unexpected character", for every lexical error:
// a character no token matches, an integer literal outside int64, an unterminated string
// (E0002 is defined but never emitted, §6.1). Trove keeps that code and message and adds a
// `reason` so a later diagnostic can say more. Upstream stops at the first error, so a file has
// at most one lexical error (§4.1); that is the default here. With `recover` set, the lexer
// instead emits an Error token over the bad text and continues (for an editor or `kodoc parse`).
//
// Invalid UTF-8 (a decision: upstream reads files as Rust strings and never sees it): outside
// strings every non-ASCII character is already E0001 (§4.1: identifiers are ASCII). Inside a
// string or comment an invalid byte sequence is also E0001, with reason kInvalidUtf8 and the
// range of the one bad sequence, so every token's text is valid UTF-8.
//
// Thread safety: Lex is a pure function of its arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "kodo/lex/token.h"
#include "kodo/source/pages.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::lex {

struct LexOptions {
  // A source longer than this fails with kResourceExhausted before lexing. Default: 16 MiB.
  std::size_t max_source_bytes = std::size_t{16} << 20;
  // Producing more tokens than this (Eof and, with keep_trivia, trivia included) fails with
  // kResourceExhausted. Default: 4 Mi tokens.
  std::size_t max_tokens = std::size_t{4} << 20;
  // Continue after a lexical error (emitting an Error token) instead of stopping. Default: stop,
  // as upstream does.
  bool recover = false;
  // Emit Whitespace and Comment tokens, so that the tokens' texts concatenate to the source.
  bool keep_trivia = false;
};

// A lexical error. This is a minimal record until the Kōdo diagnostics engine (kodo/diag/,
// docs/conventions.md §10.2) exists; that engine will take over code, message and suggestion from
// its kinds table, and this struct will become the input to it.
struct LexError {
  enum class Reason : std::uint8_t {
    kUnexpectedCharacter,  // no token starts with this character
    kIntegerOverflow,      // an integer literal outside int64
    kUnterminatedString,   // a string or f-string without its closing quote
    kInvalidUtf8,          // an invalid UTF-8 byte sequence
  };
  std::string code;  // "E0001"
  // Upstream's template: "lexer error: unexpected character at Span { start: S, end: E }".
  std::string message;
  SourceRange range;
  std::string suggestion;  // empty when none
  Reason reason = Reason::kUnexpectedCharacter;
};

// The token array. Large ones (a 12 MB file has 120 MB of tokens) come from the page pool
// (kodo/source/pages.h), so that the next file's lexing reuses their pages.
using TokenVector = std::vector<Token, PageAllocator<Token>>;

struct LexResult {
  // Always ends with one Eof token (an empty range at the end of the text), also when lexing
  // stopped at an error.
  TokenVector tokens;
  std::vector<LexError> errors;
};

// Lexes `source`. Lexical errors are reported in the result; the Status is non-OK only when a
// bound of `options` is crossed (kResourceExhausted).
Result<LexResult> Lex(const SourceBuffer& source, const LexOptions& options = {});

}  // namespace trove::kodo::lex
