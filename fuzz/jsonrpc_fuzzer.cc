// libFuzzer target: JSON-RPC framing plus dispatch. Each input is split into lines, as the
// stdio transport frames them; every line is parsed and handed to a session of a server with
// a few tools, run inline. No input may crash, hang, or reach a CHECK.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/logging.h"
#include "base/thread_pool.h"
#include "mcp/describe.h"
#include "mcp/server.h"

namespace {

using namespace trove;

struct Args {
  std::string text;
  std::optional<std::int64_t> n;
  std::optional<std::vector<std::string>> tags;
};
inline auto DescribeFields(mcp::Tag<Args>) {
  return mcp::Fields(mcp::Field("text", &Args::text, "Text", mcp::MaxLength{64}),
                     mcp::Field("n", &Args::n, "A number", mcp::InRange(0, 10)),
                     mcp::Field("tags", &Args::tags, "Tags"));
}

class NullChannel final : public mcp::Channel {
 public:
  bool Send(const std::string& message, bool) override {
    bytes += message.size();
    return true;
  }
  std::size_t bytes = 0;
};

struct Fixture {
  Fixture() : logger(base::LogLevel::kOff), pool(0), server(Info(), Options(), pool, logger) {
    Status s =
        server.tools().Add<Args, Args>({.name = "echo", .description = "Echo"},
                                       [](const Args& a, mcp::CallContext& ctx) -> Result<Args> {
                                         ctx.ReportProgress(1, 2);
                                         ctx.Log(mcp::LogSeverity::kInfo, "fuzz", a.text);
                                         if (a.n && *a.n == 7) return Status::NotFound("seven");
                                         return a;
                                       });
    TROVE_CHECK(s.ok());
    s = server.resources().Add(
        {.uri = "test://r", .name = "r", .subscribable = true},
        [](const std::string& uri, const mcp::ResourceVars&,
           mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
          return std::vector<mcp::ResourceContents>{{uri, "text/plain", "x", std::nullopt}};
        });
    TROVE_CHECK(s.ok());
    s = server.prompts().Add(
        {.name = "p", .description = "P", .arguments = {{"a", "A", true}}},
        [](const std::map<std::string, std::string>& args, mcp::CallContext&) -> Result<mcp::Json> {
          return mcp::Json{{"messages", mcp::Json::array()}, {"description", args.at("a")}};
        });
    TROVE_CHECK(s.ok());
  }
  static mcp::ServerInfo Info() { return {.name = "fuzz", .version = "0"}; }
  static mcp::ServerOptions Options() {
    mcp::ServerOptions o;
    o.parse.max_message_bytes = 4096;
    o.max_in_flight = 4;
    o.validate_output = true;
    return o;
  }
  base::Logger logger;
  base::ThreadPool pool;
  mcp::Server server;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture* fixture = new Fixture();
  auto channel = std::make_shared<NullChannel>();
  auto session = fixture->server.NewSession("");
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // Start initialized half of the time, so dispatch past the lifecycle gate is reached.
  if (size > 0 && (data[0] & 1)) {
    mcp::ParsedMessage init = mcp::ParseMessage(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})",
        fixture->server.options().parse);
    session->Handle(std::move(*init.message), channel);
  }
  while (!input.empty()) {
    std::size_t nl = input.find('\n');
    std::string_view line = input.substr(0, nl);
    mcp::ParsedMessage parsed = mcp::ParseMessage(line, fixture->server.options().parse);
    if (parsed.message) {
      session->Handle(std::move(*parsed.message), channel);
    } else {
      channel->Send(mcp::SerializeError(parsed.error_id, parsed.error), true);
    }
    if (nl == std::string_view::npos) break;
    input.remove_prefix(nl + 1);
  }
  session->Close();
  return 0;
}
