// Hashing, hex, Base64, random tokens and constant-time comparison.
//
// SHA-256 is for content identity and anything an adversary might choose (OpenSSL EVP);
// XXH64 and XXH3 are fast non-cryptographic hashes for tables and fingerprints (libxxhash);
// never use them where collisions could be forced on purpose. RandomHex draws from OpenSSL's
// CSPRNG, for session ids and tokens. Compare secrets with ConstantTimeEqual, never with ==.
// Thread safety: every function may be called from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace trove::base {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Returns the SHA-256 digest of `data`.
Sha256Digest Sha256(std::string_view data);

// Returns the SHA-256 digest of `data` as 64 lower-case hex digits.
std::string Sha256Hex(std::string_view data);

// Returns the XXH64 hash of `data` with `seed`. Stable across runs and machines.
std::uint64_t XxHash64(std::string_view data, std::uint64_t seed = 0);

// Returns the 64-bit XXH3 hash of `data` (seed 0). Stable across runs and machines.
std::uint64_t XxHash3_64(std::string_view data);

// Returns `bytes` as lower-case hex, two digits per byte.
std::string ToHex(std::span<const std::uint8_t> bytes);
std::string ToHex(std::string_view bytes);

// Returns whether `a` and `b` hold the same bytes, taking time that depends only on their
// sizes, never on where they first differ. Sizes are not secret: different sizes give false.
bool ConstantTimeEqual(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);
bool ConstantTimeEqual(std::string_view a, std::string_view b);

// Returns `bytes` random bytes from the CSPRNG as 2 * `bytes` lower-case hex digits.
// Aborts if the CSPRNG fails, as nothing safe can go on without it.
std::string RandomHex(std::size_t bytes);

// Base64 with the standard alphabet (RFC 4648 section 4) and '=' padding.
std::string Base64Encode(std::string_view data);
// Decodes padded standard Base64. Rejects, with the offset, a length that is not a multiple
// of 4, a character outside the alphabet (whitespace included), misplaced padding and
// non-zero unused bits, so that each byte string has exactly one accepted encoding.
Result<std::string> Base64Decode(std::string_view text);

// Base64 with the URL-safe alphabet ('-' and '_', RFC 4648 section 5) and no padding.
std::string Base64UrlEncode(std::string_view data);
// Decodes unpadded URL-safe Base64, as strictly as Base64Decode; '=' is rejected.
Result<std::string> Base64UrlDecode(std::string_view text);

}  // namespace trove::base
