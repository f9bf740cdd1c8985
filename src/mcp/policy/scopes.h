// Scopes and principals of the policy layer (docs/mcp.md §5.6, docs/librarian.md §8.3).
//
// A Scopes value is a bitmask over the five scopes: `read` (read resources, query), `write`
// (modify an index or KB), `execute` (run operations such as audits and exports), `network`
// (external connections) and `admin` (everything; implies the others). Every tool and resource
// declares the Scopes it needs, and Allowed(required, granted) is the one check.
// A Principal is the authenticated caller: a name and its granted scopes.
//
// Thread safety: values; free functions may be called from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::mcp::policy {

enum class Scope : std::uint8_t {
  kRead = 1 << 0,
  kWrite = 1 << 1,
  kExecute = 1 << 2,
  kNetwork = 1 << 3,
  kAdmin = 1 << 4,
};

// The scope names in canonical order, as they appear on the wire and in files.
inline constexpr std::string_view kScopeNames[] = {"read", "write", "execute", "network", "admin"};

class Scopes {
 public:
  constexpr Scopes() = default;
  constexpr Scopes(Scope scope) : bits_(static_cast<std::uint8_t>(scope)) {}  // NOLINT

  static constexpr Scopes None() { return Scopes(); }
  // Every scope, admin included.
  static constexpr Scopes All() { return FromBits(0x1f); }
  // REQUIRES: bits < 32; higher bits are dropped.
  static constexpr Scopes FromBits(std::uint8_t bits) {
    Scopes s;
    s.bits_ = bits & 0x1f;
    return s;
  }

  constexpr std::uint8_t bits() const { return bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  // Returns whether `scope` is in the set itself (admin is not expanded; see Allowed).
  constexpr bool Has(Scope scope) const { return (bits_ & static_cast<std::uint8_t>(scope)) != 0; }

  friend constexpr Scopes operator|(Scopes a, Scopes b) { return FromBits(a.bits_ | b.bits_); }
  friend constexpr Scopes operator&(Scopes a, Scopes b) { return FromBits(a.bits_ & b.bits_); }
  constexpr Scopes& operator|=(Scopes other) {
    bits_ |= other.bits_;
    return *this;
  }
  friend constexpr bool operator==(Scopes a, Scopes b) = default;

 private:
  std::uint8_t bits_ = 0;
};

constexpr Scopes operator|(Scope a, Scope b) { return Scopes(a) | Scopes(b); }

// Returns whether a caller granted `granted` may do what needs `required`: admin grants
// everything; otherwise every required scope must be granted. An empty `required` is always
// allowed.
constexpr bool Allowed(Scopes required, Scopes granted) {
  if (granted.Has(Scope::kAdmin)) return true;
  return (required.bits() & ~granted.bits()) == 0;
}

// Returns the scopes of `required` that `granted` lacks (none when Allowed), for messages and
// the `scope=` parameter of an insufficient_scope challenge.
Scopes Missing(Scopes required, Scopes granted);

enum class UnknownScopes {
  kReject,  // configuration: a typo must not pass silently
  kIgnore,  // tokens from an authorization server, which may carry scopes of other resources
};

// Parses a list of scope names separated by commas and/or whitespace ("read,write",
// "read write"). Duplicates are fine; an empty list gives None(). An unknown name is an
// InvalidArgument naming it, unless `unknown` is kIgnore.
Result<Scopes> ParseScopes(std::string_view text, UnknownScopes unknown = UnknownScopes::kReject);

// Returns the names in canonical order joined by `separator` ("read,write"); "" for None().
std::string FormatScopes(Scopes scopes, std::string_view separator = ",");

// Returns the names in canonical order (for the core's mcp::Principal::scopes).
std::vector<std::string> ScopeNames(Scopes scopes);

// The authenticated caller of a session.
struct Principal {
  std::string name;
  Scopes scopes;
  // At most 12 hex digits of the SHA-256 of the bearer token that authenticated the caller,
  // for the audit log; empty over stdio and in mode none. Never the token.
  std::string token_id;
};

// The default stdio principal: "local" with every scope.
Principal LocalPrincipal();

}  // namespace trove::mcp::policy
