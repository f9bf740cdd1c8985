// libFuzzer target: the WARDEN JS-glue parser. Each input is scanned as glue and its facts
// serialised; no input may crash, hang or leave ParseGlue with an error (inputs are far below
// the size limit), and the JSON must be valid (invalid UTF-8 replaced).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "warden/glue/glue.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view js(reinterpret_cast<const char*>(data), size);
  trove::Result<trove::warden::glue::GlueFacts> facts = trove::warden::glue::ParseGlue(js);
  if (!facts.ok()) __builtin_trap();
  const std::string json = trove::warden::glue::GlueFactsToJson(*facts);
  if (!nlohmann::json::accept(json)) __builtin_trap();
  return 0;
}
