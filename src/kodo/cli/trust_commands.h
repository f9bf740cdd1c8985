// Internal to kodo/cli: the trust pieces of the commands (kodo.toml loading, the compilation
// certificate), shared by commands.cc (`check`) and trust_commands.cc (`confidence-report`,
// `audit`). The commands themselves are declared in commands.h.
//
// Thread safety: each call uses only its arguments.
#pragma once

#include <optional>
#include <string>

#include "base/env.h"
#include "kodo/cli/commands.h"
#include "kodo/contracts/contracts.h"
#include "kodo/driver/front.h"
#include "kodo/trust/config.h"

namespace trove::kodo::cli::internal {

// Loads the kodo.toml beside `file` into `config` (left empty when there is none). On a corrupt
// or unreadable one, writes "error: MESSAGE" to out.err, sets exit 1 and returns false.
bool LoadTrust(base::Env& env, const std::string& file, std::optional<trust::TrustConfig>& config,
               CommandOutput& out);

// Returns the certificate path of `file` as upstream's `with_extension("ko.cert.json")`:
// "dir/a.ko" -> "dir/a.ko.cert.json", "dir/a" -> "dir/a.ko.cert.json".
std::string CertificatePath(const std::string& file);

// Writes the certificate of the checked program `c` (REQUIRES: c.ok()) beside `file`, chained to
// the one already there, and reports it in `out` (a failure to write is a warning, as upstream).
// `contract_mode` is the mode `check` verified the contracts in; the certificate records it.
void EmitCertificate(base::Env& env, const std::string& file, const driver::Compiled& c,
                     contracts::ContractMode contract_mode, bool json_errors, CommandOutput& out);

}  // namespace trove::kodo::cli::internal
