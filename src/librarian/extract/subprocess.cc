#include "librarian/extract/subprocess.h"

#include "base/process.h"

namespace trove::librarian::extract::internal {

Result<ProgramResult> RunProgram(const std::vector<std::string>& argv, std::int64_t timeout_micros,
                                 std::size_t max_output_bytes) {
  base::ProcessOptions options;
  options.timeout_micros = timeout_micros;
  options.max_output_bytes = max_output_bytes;
  options.capture_stderr = false;
  options.search_path = true;
  ASSIGN_OR_RETURN(base::ProcessResult run, base::RunProcess(argv, options));
  ProgramResult result;
  result.exit_code = run.exit_code;
  result.out = std::move(run.out);
  return result;
}

}  // namespace trove::librarian::extract::internal
