#include "kodo/native/process.h"

namespace trove::kodo::native {

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv) {
  return base::RunProcess(argv);
}

}  // namespace trove::kodo::native
