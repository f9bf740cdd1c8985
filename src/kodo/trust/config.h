// The `[trust]` table of `kodo.toml` (docs/kodo.md §7.5, §2.1):
// the names of known AI agents, which may not claim a human review (E0263), and the allowlist
// of human reviewers (E0264).
//
// Where it is found: `kodo.toml` in the directory of the checked source file, and nowhere
// else (upstream's `load_trust_config` looks only at the file's parent directory). A file that
// only has `[trust]` is fine; other tables (`[deps]`, `module`, `version`) are ignored here.
//
// Unlike upstream, a `kodo.toml` that exists but cannot be read as TOML, or whose `[trust]`
// arrays hold something other than strings, is an error that names the file, line and column:
// upstream silently drops such a file, and with it every forgery check, so a typo in the trust
// configuration would switch the checks off without a word (docs/decisions/0060-kodo-trust.md).
// A missing `kodo.toml` is normal (no trust configuration), as upstream.
//
// The MCP tools never read `kodo.toml` (docs/kodo.md §3.3): only the CLI does.
//
// Thread safety: pure functions; LoadTrustConfigBeside reads through the given Env.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace trove::kodo::trust {

struct TrustConfig {
  std::vector<std::string> known_agents;     // [trust].known_agents
  std::vector<std::string> human_reviewers;  // [trust].human_reviewers
  // Whether the reviewer checks (E0263/E0264) run: at least one list is non-empty.
  bool active() const { return !known_agents.empty() || !human_reviewers.empty(); }
};

// Parses the text of a `kodo.toml` named `path` (for messages). A file without a `[trust]`
// table gives an empty config. Errors (kMalformed): "PATH:LINE:COL: REASON" for TOML syntax,
// "PATH: trust.known_agents: must be an array of strings" (and the like) for wrong types.
Result<TrustConfig> ParseTrustConfig(std::string_view toml_text, std::string_view path);

// Returns the path of the `kodo.toml` beside `source_path` ("dir/kodo.toml", or "kodo.toml" for
// a bare file name).
std::string TrustConfigPathFor(std::string_view source_path);

// Reads the `kodo.toml` beside `source_path`. nullopt when there is none; an error when it
// exists but cannot be read or parsed.
Result<std::optional<TrustConfig>> LoadTrustConfigBeside(base::Env& env,
                                                         std::string_view source_path);

}  // namespace trove::kodo::trust
