// libFuzzer target: the WARDEN pseudo-C lifter (export/lifter.h) over arbitrary function
// bodies (warden_body_module.h wraps an input into a module), in both dialects. No input may
// crash, hang or reach a CHECK; errors are ordinary Statuses, and a lifted module lifts to the
// same text again (the output is deterministic).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "warden/export/lifter.h"
#include "warden_body_module.h"

using trove::warden::exporter::Dialect;
using trove::warden::exporter::LiftModule;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> module = trove::fuzz::ModuleFromFuzzInput(data, size);
  const auto name_of = [](std::uint32_t f) {
    return f % 3 == 0 ? std::string() : "f" + std::to_string(f);
  };
  for (Dialect dialect : {Dialect::kPseudo, Dialect::kC}) {
    auto a = LiftModule(module, name_of, {.dialect = dialect});
    if (!a.ok()) {
      if (a.status().message().empty()) __builtin_trap();
      continue;
    }
    auto b = LiftModule(module, name_of, {.dialect = dialect});
    if (!b.ok() || *a != *b) __builtin_trap();
  }
  return 0;
}
