#include "base/hash.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <xxhash.h>

namespace trove::base {

namespace {

// Passing "" rather than a null data() keeps C APIs that dislike null pointers happy.
const char* NonNull(std::string_view data) { return data.empty() ? "" : data.data(); }

}  // namespace

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest digest{};
  unsigned int size = 0;
  const int ok =
      EVP_Digest(NonNull(data), data.size(), digest.data(), &size, EVP_sha256(), nullptr);
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
