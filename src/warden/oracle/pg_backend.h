// The PostgreSQL backend of the Oracle store (pg_backend.cc; docs/decisions/0083).
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "warden/oracle/backend.h"

namespace trove::warden::oracle {

// Connects to `url` (a libpq URI; sslmode, host=/socket, passfile... pass through) and opens
// the store in that database; `create` makes its tables when missing, else a database without
// them is kNotFound. A server that cannot be reached is kUnavailable; messages name the URL
// with its password redacted.
Result<std::unique_ptr<OracleBackend>> OpenPgBackend(const std::string& url, bool create);

}  // namespace trove::warden::oracle
