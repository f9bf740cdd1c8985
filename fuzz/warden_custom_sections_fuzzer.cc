// libFuzzer target: the producers and target_features parsers (wasm/custom_sections.h). Each
// input is parsed as both; no input may crash, hang or allocate past its size's worth, and a
// successful parse is summarised (ProducersSummary) as the CLI shows it.
#include <cstddef>
#include <cstdint>
#include <span>

#include "warden/wasm/custom_sections.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> payload(data, size);
  auto producers = trove::warden::wasm::ParseProducers(payload, 0x1000);
  if (producers.ok()) {
    std::size_t values = 0;
    for (const auto& field : *producers) values += field.values.size();
    // Every field and value takes at least two bytes.
    if (producers->size() * 2 > size || values * 2 > size) __builtin_trap();
    (void)trove::warden::wasm::ProducersSummary(*producers);
  } else if (producers.status().message().empty()) {
    __builtin_trap();
  }
  auto features = trove::warden::wasm::ParseTargetFeatures(payload, 0x1000);
  if (features.ok()) {
    for (const std::string& f : *features) {
      if (f.empty() || (f[0] != '+' && f[0] != '-' && f[0] != '=')) __builtin_trap();
    }
  } else if (features.status().message().empty()) {
    __builtin_trap();
  }
  return 0;
}
