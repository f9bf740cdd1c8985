// RandomHex (declared in hash.h), from the kernel's CSPRNG through getrandom(2): no libcrypto
// needed, so a stdio server that only makes error references stays small.
#include <sys/random.h>

#include <cerrno>
#include <vector>

#include "base/hash.h"

namespace trove::base {

std::string RandomHex(std::size_t bytes) {
  std::vector<std::uint8_t> buf(bytes);
  for (std::size_t done = 0; done < bytes;) {
    ssize_t n = ::getrandom(buf.data() + done, bytes - done, 0);
    if (n < 0) {
      TROVE_CHECK(errno == EINTR);
      continue;
    }
    done += static_cast<std::size_t>(n);
  }
  return ToHex(buf);
}

}  // namespace trove::base
