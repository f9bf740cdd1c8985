#include "mcp/serve.h"

#include <gtest/gtest.h>

#include "base/logging.h"
#include "base/thread_pool.h"

namespace trove::mcp {
namespace {

TEST(ServeTest, UnknownTransportIsABadOptionAndServesNothing) {
  base::Logger logger(base::LogLevel::kOff);
  base::ThreadPool workers(1);
  Server server(ServerInfo{.name = "t", .version = "0"}, ServerOptions{}, workers, logger);
  EXPECT_EQ(Serve(server, ServeOptions{.transport = "pigeon", .program = "t"}), 2);
  workers.Wait();
}

}  // namespace
}  // namespace trove::mcp
