#include "base/hash.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <xxhash.h>

namespace trove::base {

namespace {

// Passing "" rather than a null data() keeps C APIs that dislike null pointers happy.
const char* NonNull(std::string_view data) { return data.empty() ? "" : data.data(); }

// The SHA-256 implementation, fetched once. Handing EVP_Digest the legacy EVP_sha256() makes
// OpenSSL 3 fetch the provider's implementation again on every call (a property-query lookup
// under a lock), which costs more than hashing a short input: WARDEN hashes four short inputs
// per function, some 90,000 calls for a large module. The fetched object is immutable and
// shared by all threads; it lives as long as the process.
const EVP_MD* Sha256Md() {
  static const EVP_MD* const md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched != nullptr ? fetched : EVP_sha256();
  }();
  return md;
}

}  // namespace

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest digest{};
  unsigned int size = 0;
  const int ok = EVP_Digest(NonNull(data), data.size(), digest.data(), &size, Sha256Md(), nullptr);
  TROVE_CHECK(ok == 1 && size == digest.size());
  return digest;
}

std::string Sha256Hex(std::string_view data) { return ToHex(Sha256(data)); }

std::uint64_t XxHash64(std::string_view data, std::uint64_t seed) {
  return XXH64(NonNull(data), data.size(), seed);
}

std::uint64_t XxHash3_64(std::string_view data) { return XXH3_64bits(NonNull(data), data.size()); }

bool ConstantTimeEqual(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  // CRYPTO_memcmp reads every byte whatever it finds, unlike memcmp.
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  return ConstantTimeEqual(std::span(reinterpret_cast<const std::uint8_t*>(a.data()), a.size()),
                           std::span(reinterpret_cast<const std::uint8_t*>(b.data()), b.size()));
}

}  // namespace trove::base
