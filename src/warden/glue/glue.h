// ParseGlue: the facts an Emscripten JS glue file holds that the .wasm does not (spec
// docs/warden.md §4.4): the export-index map, the import bindings, the dynCall signatures, the
// pthread shape and Emscripten version hints.
//
// The scanner is linear: one JsLexer pass (js_lexer.h) to find the names of the import object
// and of export-assigning functions, then a second pass that extracts everything, each looking
// only at a bounded window of recent tokens. There are no regular expressions. Input up to
// kMaxGlueBytes is accepted in any encoding; it is never rejected for its contents, only
// scanned for what can be recognised, so truncated or garbage input gives fewer facts, not an
// error.
//
// Recognised export shapes (a binding pairs a JS identifier or Module["name"] key with an
// export key; any object may stand for `Module`, as minifiers rename it):
//   * Module["asm"]["k"], Module.asm.k, asm["k"]: `_f = Module["_f"] = Module["asm"]["k"]`;
//   * wasmExports["k"], wasmExports.k (Emscripten 3.1.4x and later);
//   * lazy self-rebinding wrappers: `function(){return(_f=Module["asm"]["k"]).apply(...)}`,
//     `(a0) => (_f = wasmExports["k"])(a0)`;
//   * batch assignment in an export-assigning function:
//     `function assignWasmExports(wasmExports) { _f = wasmExports["k"]; ... }`, and through
//     any exports object `e` (`e = instance.exports`, or the parameter of a function called
//     with one): `M._f = e.k`;
//   * createExportWrapper("k"[, ...]) (ASSERTIONS builds).
// Import bindings come from the object literal assigned to `wasmImports`, `asmLibraryArg`, or
// to the object passed to the instance under "env", "wasi_snapshot_preview1" or as the sole
// module "a" (`{a: X}`, minified builds).
// Thread safety: ParseGlue keeps no state between calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::warden::glue {

// Largest glue accepted: 256 MiB (§4.4).
inline constexpr std::size_t kMaxGlueBytes = std::size_t{256} << 20;

// How an export binding was written, strongest evidence first when several apply.
enum class ExportShape : std::uint8_t {
  kExportWrapper,  // createExportWrapper("k")
  kLazyWrapper,    // a wrapper that rebinds itself on its first call
  kBatchAssign,    // inside an export-assigning function, or through an exports object
  kModuleAsm,      // Module["asm"]["k"]
  kWasmExports,    // wasmExports["k"]
};

// Returns "export-wrapper", "lazy-wrapper", "batch-assign", "module-asm" or "wasm-exports".
std::string_view ExportShapeName(ExportShape shape);

// Everything bound to one wasm export.
struct ExportBinding {
  std::string export_name;               // the key in the wasm export section
  std::vector<std::string> js_names;     // JS identifiers bound to it, in input order
  std::vector<std::string> module_keys;  // Module["name"] / Module.name keys, in input order
  std::vector<ExportShape> shapes;       // sorted, unique
  std::size_t offset = 0;                // byte offset of the first binding's export key

  // Returns the name to seed from (§4.3): the first Module key, else the first JS identifier.
  std::string_view PreferredName() const;
};

// One property of the import object: a wasm import field and the JS function it is bound to.
struct ImportBinding {
  std::string field;
  std::string js_name;  // empty when the value is not a plain identifier (an inline function)
  std::size_t offset = 0;
};

// A version statement found in a comment or string literal.
struct VersionHint {
  std::string version;  // "3.1.30"
  std::string text;     // the statement as written: "Emscripten SDK version 3.1.30"
  std::string source;   // "comment" or "string"
  std::size_t offset = 0;
};

struct PthreadShape {
  // True when the glue runs pthreads: any of PThread, ENVIRONMENT_IS_PTHREAD,
  // PROXY_TO_PTHREAD, a pool size, or a shared memory request (`shared: true`).
  bool threads = false;
  // The markers found, sorted: "ENVIRONMENT_IS_PTHREAD", "PROXY_TO_PTHREAD", "PThread",
  // "PTHREAD_POOL_SIZE", "SharedArrayBuffer", "new Worker", "pthreadPoolSize",
  // "shared: true".
  std::vector<std::string> markers;
  std::optional<std::uint32_t> pool_size;  // `pthreadPoolSize = N` / `PTHREAD_POOL_SIZE = N`
};

struct GlueFacts {
  std::size_t size = 0;                         // input bytes
  std::vector<ExportBinding> exports;           // sorted by export_name (bytewise)
  std::string import_object;                    // JS name of the import object, if found
  std::vector<std::string> import_modules;      // the modules it is passed as, sorted
  std::vector<ImportBinding> imports;           // sorted by field (bytewise)
  std::vector<std::string> dyncall_signatures;  // "vii" for dynCall_vii; sorted, unique
  PthreadShape pthread;
  std::vector<VersionHint> version_hints;  // in input order, at most kMaxVersionHints

  static constexpr std::size_t kMaxVersionHints = 16;

  // Returns the binding of `export_name`, or null.
  const ExportBinding* FindExport(std::string_view export_name) const;
  // Returns the import binding of `field`, or null.
  const ImportBinding* FindImport(std::string_view field) const;
  // Returns the first version hint's version, if any.
  std::optional<std::string> EmscriptenVersion() const;
};

// Scans `js`. Fails only with kResourceExhausted when js is larger than kMaxGlueBytes.
Result<GlueFacts> ParseGlue(std::string_view js);

// Returns `facts` as compact JSON (module_versions.glue_json): object keys in a fixed order,
// arrays in the orders above, invalid UTF-8 replaced by U+FFFD; equal facts give equal bytes.
std::string GlueFactsToJson(const GlueFacts& facts);

}  // namespace trove::warden::glue
