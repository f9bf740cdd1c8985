// libFuzzer target: WARDEN identity, the four fingerprints and the stable_id over arbitrary
// function bodies (warden_body_module.h wraps an input into a module). No input may crash,
// hang or reach a CHECK; and fingerprints are deterministic (docs/warden.md §5.5): the same
// bytes fingerprinted on one thread and on several give the same identity, else it traps.
#include <cstddef>
#include <cstdint>
#include <span>

#include "warden/identity/identity.h"
#include "warden_body_module.h"

using trove::warden::identity::ComputeModuleIdentity;
using trove::warden::identity::FunctionIdentity;
using trove::warden::identity::ModuleIdentity;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> module = trove::fuzz::ModuleFromFuzzInput(data, size);
  trove::warden::wasm::ReadOptions one;
  one.max_section_items = 10'000;
  one.max_locals = 1'000;
  one.max_br_table_targets = 1'000;
  one.max_nesting = 200;
  trove::Result<ModuleIdentity> a = ComputeModuleIdentity(module, one);
  if (!a.ok()) {
    if (a.status().message().empty()) __builtin_trap();
    return 0;
  }
  trove::warden::wasm::ReadOptions many = one;
  many.decode_threads = 2;
  trove::Result<ModuleIdentity> b = ComputeModuleIdentity(module, many);
  if (!b.ok() || b->functions.size() != a->functions.size()) __builtin_trap();
  for (std::size_t i = 0; i < a->functions.size(); ++i) {
    const FunctionIdentity& x = a->functions[i];
    const FunctionIdentity& y = b->functions[i];
    if (x.stable_id != y.stable_id || x.structural != y.structural || x.semantic != y.semantic ||
        x.minhash != y.minhash || x.exact != y.exact || x.histogram != y.histogram) {
      __builtin_trap();
    }
    (void)x.InstructionMnemonics();
  }
  return 0;
}
