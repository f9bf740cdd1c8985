// warden_kb_fixture: a test-only tool that writes through paths the `warden` CLI does not
// offer yet (the Oracle's), using the library's own entry points, so the end-to-end tests can
// check that an Oracle name blocks an agent over MCP unless the agent is more confident.
//
//   warden_kb_fixture DB oracle STABLE_ID NAME CONFIDENCE
//
// Prints the gate's decision as `accepted|rejected <reason>`; exit 0, or 2 on bad usage and 3
// when the KB cannot be opened or the write fails.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/env.h"
#include "warden/kb/kb.h"

int main(int argc, char** argv) {
  using namespace trove;
  if (argc != 6 || std::string(argv[2]) != "oracle") {
    std::fputs("usage: warden_kb_fixture DB oracle STABLE_ID NAME CONFIDENCE\n", stderr);
    return 2;
  }
  base::PosixEnv env;
  Result<std::unique_ptr<warden::kb::Kb>> kb = warden::kb::Kb::Open(env, argv[1]);
  if (!kb.ok()) {
    std::fprintf(stderr, "warden_kb_fixture: %s\n", kb.status().message().c_str());
    return 3;
  }
  warden::kb::Proposal p;
  p.name = argv[4];
  p.confidence = std::strtod(argv[5], nullptr);
  p.details_json = R"({"fixture":"e2e"})";
  Result<warden::kb::Decision> d = (*kb)->OracleWrite("e2e", argv[3], std::move(p));
  if (!d.ok()) {
    std::fprintf(stderr, "warden_kb_fixture: %s\n", d.status().message().c_str());
    return 3;
  }
  std::printf("%s %s\n", d->accepted ? "accepted" : "rejected", d->reason.c_str());
  return 0;
}
