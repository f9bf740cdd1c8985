// Reads `ingest --glue FILE` into what ingest needs: the bindings for seeding, the JSON kept in
// module_versions.glue_json, and the Emscripten version hint.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "warden/ingest/module_facts.h"

namespace trove::base {
class Env;
}

namespace trove::warden::cli {

struct GlueInput {
  ingest::GlueBindings bindings;
  std::string json;
  std::optional<std::string> emscripten_version;
  std::optional<std::string> emscripten_version_source;
};

// Errors: the file cannot be read (kIo/kNotFound), or the glue is malformed (kMalformed).
Result<GlueInput> ReadGlue(base::Env& env, const std::string& path);

}  // namespace trove::warden::cli
