// ExitOnSigbus: a mapped module that shrinks while it is read ends `warden ingest` with
// exit 4 and a message naming the file (decision 0046), instead of a crash.
#include "warden/cli/cli_support.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

#include "base/env.h"
#include "base/testing/temp_dir.h"

namespace trove::warden::cli {
namespace {

// Reads every page of `bytes`, as the decode would.
int TouchEveryPage(std::span<const std::uint8_t> bytes) {
  int sum = 0;
  for (std::size_t i = 0; i < bytes.size(); i += 4096) sum += bytes[i];
  return sum;
}

TEST(ExitOnSigbusDeathTest, AModuleThatShrinksWhileMappedIsExit4) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  base::testing::TempDir dir("trove_sigbus_test");
  base::PosixEnv env;
  const std::string path = dir.Abs("module.wasm");
  ASSERT_TRUE(env.WriteFile(path, std::string(1 << 20, 'w')).ok());
  EXPECT_EXIT(
      {
        Result<base::MappedFile> mapped = base::MappedFile::Open(path);
        if (!mapped.ok()) std::_Exit(10);
        ExitOnSigbus on_sigbus(path);
        if (::truncate(path.c_str(), 4096) != 0) std::_Exit(11);
        std::_Exit(TouchEveryPage(mapped->bytes()) == 0 ? 12 : 13);  // not reached
      },
      ::testing::ExitedWithCode(kExitMalformed),
      "warden: error: malformed wasm: .*module.wasm changed while it was read");
}

// Once the guard is gone, the action before it is back.
TEST(ExitOnSigbusDeathTest, ThePreviousActionComesBack) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        struct sigaction before {};
        ::sigaction(SIGBUS, nullptr, &before);
        struct sigaction during {};
        {
          ExitOnSigbus on_sigbus("x.wasm");
          ::sigaction(SIGBUS, nullptr, &during);
        }
        struct sigaction after {};
        ::sigaction(SIGBUS, nullptr, &after);
        std::_Exit(during.sa_handler != before.sa_handler && after.sa_handler == before.sa_handler
                       ? 0
                       : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace trove::warden::cli
