// How an Oracle store target (a file path or a PostgreSQL URL; store.h IsStoreUrl) is shown.
#pragma once

#include <string>
#include <string_view>

namespace trove::warden::oracle {

// Returns `target` as messages, reports and logs name it: a URL with its password redacted
// (base::pg::RedactUrl), a path as is.
std::string StoreDisplayName(std::string_view target);

}  // namespace trove::warden::oracle
