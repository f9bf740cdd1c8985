// One process of the PostgreSQL soak (soak_test.cc): opens its own connection to the KB and
// writes names through the library's write paths for a while, as a human or as agents.
//
//   warden_kb_pg_soak_worker URL WORKER SECONDS OUT
//
// WORKER 0 and 4 are humans (HumanSetName, HumanClear); the others agents (AgentPropose,
// McpPropose, OracleWrite, DiffCarry). Every call carries a tag ("w<WORKER>.<n>") in its
// details_json, or in the summary for McpPropose, whose details are fixed. For every call that
// returned OK the worker writes "TAG ACCEPTED RULE" to OUT, and "FAIL TAG message" for a call
// that failed; exit 0 when it ran to the end. The stable_ids are those of the KB's newest
// version.
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "base/env.h"
#include "warden/kb/kb.h"

namespace {

using trove::Result;
using trove::warden::kb::Decision;
using trove::warden::kb::HumanChannel;
using trove::warden::kb::Kb;

int Run(const std::string& url, int worker, double seconds, const std::string& out_path) {
  trove::base::PosixEnv env;
  auto kb = Kb::Open(env, url);
  if (!kb.ok()) {
    std::fprintf(stderr, "soak worker %d: %s\n", worker, kb.status().ToString().c_str());
    return 2;
  }
  auto version = (*kb)->ResolveVersion(std::nullopt);
  if (!version.ok()) return 2;
  auto functions = (*kb)->ListFunctions({.version_id = *version});
  if (!functions.ok() || functions->functions.empty()) return 2;
  std::vector<std::string> ids;
  for (const auto& f : functions->functions) ids.push_back(f.stable_id);
  std::FILE* out = std::fopen(out_path.c_str(), "w");
  if (out == nullptr) return 2;

  const bool human = worker % 4 == 0;
  std::mt19937_64 rng(0x50a4 + static_cast<std::uint64_t>(worker));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1e3));
  for (int n = 0; std::chrono::steady_clock::now() < deadline; ++n) {
    const std::string tag = fmt::format("w{}.{}", worker, n);
    const std::string details = fmt::format(R"({{"soak":"{}"}})", tag);
    // Skewed towards the first ids, so that writers meet on the same symbols.
    const std::size_t pick = rng() % ids.size();
    const std::string& id = ids[rng() % 2 == 0 ? pick % 8 : pick];
    const std::string name = fmt::format("name{}", rng() % 6);
    const double confidence = static_cast<double>(rng() % 1001) / 1000.0;
    Result<Decision> d = trove::Status::Internal("unset");
    if (human) {
      if (rng() % 5 == 0) {
        d = (*kb)->HumanClear(HumanChannel::kCli, id, details);
      } else {
        d = (*kb)->HumanSetName(rng() % 2 == 0 ? HumanChannel::kCli : HumanChannel::kLib, id,
                                "human_" + name, std::nullopt, details);
      }
    } else {
      switch (rng() % 4) {
        case 0:
          d = (*kb)->AgentPropose(
              "offline", id, {.name = name, .confidence = confidence, .details_json = details});
          break;
        case 1:
          d = (*kb)->McpPropose(id, name, tag, confidence);
          break;
        case 2:
          d = (*kb)->OracleWrite("fuzzy", id,
                                 {.name = name, .confidence = confidence, .details_json = details});
          break;
        default:
          d = (*kb)->DiffCarry("v0", "v1", id,
                               {.name = name, .confidence = confidence, .details_json = details});
          break;
      }
    }
    if (d.ok()) {
      std::fprintf(out, "%s %d %d\n", tag.c_str(), d->accepted ? 1 : 0, d->rule);
    } else {
      std::fprintf(out, "FAIL %s %s\n", tag.c_str(), d.status().ToString().c_str());
    }
  }
  return std::fclose(out) == 0 ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: warden_kb_pg_soak_worker URL WORKER SECONDS OUT\n");
    return 2;
  }
  return Run(argv[1], std::atoi(argv[2]), std::atof(argv[3]), argv[4]);
}
