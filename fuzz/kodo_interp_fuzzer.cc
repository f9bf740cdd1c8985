// Fuzzes the Kōdo interpreter end to end (docs/conventions.md §11, docs/kodo.md §4.9): every input
// the front end accepts is lowered to MIR and run with a step limit, a memory limit, a small frame
// limit and no host I/O. Any program must end without reaching a CHECK, a crash, a host stack
// overflow or a hang, and:
//   the run stops within the step limit (plus the one step that crossed it);
//   a run that crossed a limit exits 124; a program without `main` exits 1;
//   the runtime's messages on stderr end with a newline.
// Seeds: the parser fuzzer's corpus and the expected-stdout programs of testdata/kodo/run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "kodo/driver/front.h"
#include "kodo/interp/interp.h"
#include "kodo/mir/lower.h"

namespace {

constexpr std::uint64_t kMaxSteps = 20000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  trove::Result<trove::kodo::driver::Compiled> compiled =
      trove::kodo::driver::CompileSource(std::move(text), "fuzz.ko");
  if (!compiled.ok() || !compiled->ok() || !compiled->module) return 0;
  trove::Result<trove::kodo::mir::Program> program = trove::kodo::mir::Lower(*compiled->module);
  if (!program.ok()) return 0;

  trove::kodo::interp::RunOptions options;
  options.max_steps = kMaxSteps;
  options.max_memory_bytes = 32u << 20;
  options.max_frames = 2000;
  options.allow_host_io = false;
  const trove::kodo::interp::RunResult r = trove::kodo::interp::Run(*program, options);
  TROVE_CHECK(r.steps <= kMaxSteps + 1);
  if (r.steps > kMaxSteps) TROVE_CHECK(r.exit_code == trove::kodo::interp::kExitLimit);
  if (program->Find("main") < 0) TROVE_CHECK(r.exit_code == 1);
  TROVE_CHECK(r.err.empty() || r.err.back() == '\n');
  return 0;
}
