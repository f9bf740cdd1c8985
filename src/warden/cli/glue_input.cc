#include "warden/cli/glue_input.h"

#include <fmt/format.h>

#include "base/env.h"
#include "warden/glue/glue.h"

namespace trove::warden::cli {

Result<GlueInput> ReadGlue(base::Env& env, const std::string& path) {
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) {
    return std::move(text).status().WithContext(fmt::format("cannot read glue {}", path));
  }
  Result<glue::GlueFacts> facts = glue::ParseGlue(*text);
  if (!facts.ok()) return std::move(facts).status().WithContext(fmt::format("glue {}", path));
  GlueInput out;
  for (const glue::ExportBinding& e : facts->exports) {
    const std::string_view name = e.PreferredName();
    if (!name.empty()) out.bindings.exports[e.export_name] = std::string(name);
  }
  for (const glue::ImportBinding& i : facts->imports) {
    if (!i.js_name.empty()) out.bindings.imports[i.field] = i.js_name;
  }
  out.json = glue::GlueFactsToJson(*facts);
  if (std::optional<std::string> v = facts->EmscriptenVersion()) {
    out.emscripten_version = *v;
    out.emscripten_version_source = "glue";
  }
  return out;
}

}  // namespace trove::warden::cli
