#include "warden/glue/glue.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace trove::warden::glue {
namespace {

GlueFacts Parse(std::string_view js) {
  Result<GlueFacts> facts = ParseGlue(js);
  EXPECT_TRUE(facts.ok()) << facts.status().ToString();
  return facts.ok() ? std::move(facts).value() : GlueFacts{};
}

using Strings = std::vector<std::string>;

// Expects exactly one binding of `export_name`, with these names and this one shape.
void ExpectExport(const GlueFacts& facts, std::string_view export_name, const Strings& js,
                  const Strings& module_keys, ExportShape shape) {
  const ExportBinding* b = facts.FindExport(export_name);
  ASSERT_NE(b, nullptr) << export_name;
  EXPECT_EQ(b->js_names, js) << export_name;
  EXPECT_EQ(b->module_keys, module_keys) << export_name;
  EXPECT_EQ(b->shapes, std::vector<ExportShape>{shape}) << export_name;
}

TEST(GlueExportsTest, ModuleAsmLazyWrapper) {
  // Emscripten 3.1.x at -O2: each export rebinds itself on its first call.
  const GlueFacts f =
      Parse(R"(var _malloc=Module["_malloc"]=function(){return(_malloc=Module["_malloc"]=)"
            R"(Module["asm"]["ta"]).apply(null,arguments)};)"
            R"(var ___errno_location=function(){return(___errno_location=Module["asm"]["va"]))"
            R"(.apply(null,arguments)};)");
  ExpectExport(f, "ta", {"_malloc"}, {"_malloc"}, ExportShape::kLazyWrapper);
  ExpectExport(f, "va", {"___errno_location"}, {}, ExportShape::kLazyWrapper);
  EXPECT_EQ(f.FindExport("ta")->PreferredName(), "_malloc");
  EXPECT_EQ(f.exports.size(), 2u);
}

TEST(GlueExportsTest, ModuleAsmPlainAssignments) {
  const GlueFacts f = Parse(R"(
    function receiveInstance(instance, module) {
      var exports = instance.exports;
      Module['asm'] = exports;
      wasmMemory = Module['asm']['memory'];
      wasmTable = Module.asm.__indirect_function_table;
      addOnInit(Module['asm']['__wasm_call_ctors']);
    }
    var _old = Module["_old"] = asm["_old"];
  )");
  ExpectExport(f, "memory", {"wasmMemory"}, {}, ExportShape::kModuleAsm);
  ExpectExport(f, "__indirect_function_table", {"wasmTable"}, {}, ExportShape::kModuleAsm);
  ExpectExport(f, "_old", {"_old"}, {"_old"}, ExportShape::kModuleAsm);
  // A reference that binds nothing is no binding.
  EXPECT_EQ(f.FindExport("__wasm_call_ctors"), nullptr);
}

TEST(GlueExportsTest, MinifiedAsmMember) {
  // sql.js 1.8.0: `e` is Module, `e.asm` the exports.
  const GlueFacts f = Parse(
      "e._sqlite3_free=function(){return(e._sqlite3_free=e.asm.K).apply(null,arguments)};"
      "var Vc=e.___errno_location=function(){return(Vc=e.___errno_location=e.asm.Q).apply(null,"
      "arguments)};function a(f){e.asm=f.exports;Ja=e.asm.I;}");
  ExpectExport(f, "K", {}, {"_sqlite3_free"}, ExportShape::kLazyWrapper);
  ExpectExport(f, "Q", {"Vc"}, {"___errno_location"}, ExportShape::kLazyWrapper);
  ExpectExport(f, "I", {"Ja"}, {}, ExportShape::kModuleAsm);
}

TEST(GlueExportsTest, WasmExportsArrowWrapper) {
  // Emscripten 3.1.4x+.
  const GlueFacts f = Parse(
      "var _malloc = Module['_malloc'] = (a0) => (_malloc = Module['_malloc'] = "
      "wasmExports['malloc'])(a0);\n"
      "var _free = (a0) => (_free = wasmExports.free)(a0);\n"
      "var stackSave = wasmExports['stackSave'];\n");
  ExpectExport(f, "malloc", {"_malloc"}, {"_malloc"}, ExportShape::kLazyWrapper);
  ExpectExport(f, "free", {"_free"}, {}, ExportShape::kLazyWrapper);
  ExpectExport(f, "stackSave", {"stackSave"}, {}, ExportShape::kWasmExports);
}

TEST(GlueExportsTest, AssignWasmExportsBatch) {
  // Emscripten 4.x: one function assigns every export, called with the exports object.
  const GlueFacts f = Parse(R"(
    function assignWasmExports(wasmExports) {
      assert(typeof wasmExports['sqlite3_free'] !== 'undefined', 'missing Wasm export');
      _sqlite3_free = Module['_sqlite3_free'] = wasmExports['sqlite3_free'];
      _malloc = Module['_malloc'] = createExportWrapper('malloc', wasmExports['malloc'], 1);
      __emscripten_stack_restore = wasmExports['_emscripten_stack_restore'];
    }
    function receiveInstance(instance) {
      wasmExports = instance.exports;
      assignWasmExports(wasmExports);
    }
  )");
  ExpectExport(f, "sqlite3_free", {"_sqlite3_free"}, {"_sqlite3_free"}, ExportShape::kBatchAssign);
  ExpectExport(f, "malloc", {"_malloc"}, {"_malloc"}, ExportShape::kExportWrapper);
  ExpectExport(f, "_emscripten_stack_restore", {"__emscripten_stack_restore"}, {},
               ExportShape::kBatchAssign);
  EXPECT_EQ(f.exports.size(), 3u);
}

TEST(GlueExportsTest, MinifiedBatchThroughExportsObject) {
  // sql.js 1.16.0: `c` is the exports object inside receiveInstance; `k` is Module.
  const GlueFacts f = Parse(
      "(async function(){function a(c){c=gd=c.exports;k._sqlite3_free=c.R;"
      "da=k._malloc=c.Ia;Ga=c.O;return gd}var b={a:ed};})();"
      "function other(c){return c.R}x=c.S;");
  ExpectExport(f, "R", {}, {"_sqlite3_free"}, ExportShape::kBatchAssign);
  ExpectExport(f, "Ia", {"da"}, {"_malloc"}, ExportShape::kBatchAssign);
  ExpectExport(f, "O", {"Ga"}, {}, ExportShape::kBatchAssign);
  // `c` is an exports object only inside that function.
  EXPECT_EQ(f.FindExport("S"), nullptr);
  EXPECT_EQ(f.exports.size(), 3u);
}

TEST(GlueExportsTest, MinifiedAssignFunctionCalledWithExports) {
  // A minified assignWasmExports: found because it is called with the exports object, even
  // when defined before the call.
  const GlueFacts f =
      Parse("function Xb(a){k._foo=a.b;Zc=a.c}function rI(d){d=d.exports;Xb(d);return d}");
  ExpectExport(f, "b", {}, {"_foo"}, ExportShape::kBatchAssign);
  ExpectExport(f, "c", {"Zc"}, {}, ExportShape::kBatchAssign);
}

TEST(GlueExportsTest, CreateExportWrapper) {
  // 3.1.6 at -O0 (ASSERTIONS).
  const GlueFacts f = Parse(
      "var _app_strlen = Module[\"_app_strlen\"] = createExportWrapper(\"app_strlen\");\n"
      "var _f = Module['_f'] = createExportWrapper('f', 2);\n"
      "function createExportWrapper(name, fixedasm) { return function() { "
      "var asm = fixedasm; if (!asm) asm = Module['asm']; return asm[name].apply(null, "
      "arguments); }; }\n");
  ExpectExport(f, "app_strlen", {"_app_strlen"}, {"_app_strlen"}, ExportShape::kExportWrapper);
  ExpectExport(f, "f", {"_f"}, {"_f"}, ExportShape::kExportWrapper);
  EXPECT_EQ(f.exports.size(), 2u);
}

TEST(GlueExportsTest, ReadsAreNotBindings) {
  const GlueFacts f = Parse(
      "x = Module['asm']['f'](1); y = wasmExports['g'].bind(null); z = wasmExports[name];"
      "w = wasmExports['h']['i']; v = typeof wasmExports['j']; Module['asm']['k'] = 1;"
      "u = wasmExports['l'] + 1; t = 'wasmExports[\"m\"]';");
  for (std::string_view key : {"f", "g", "h", "i", "j", "k", "m"}) {
    EXPECT_EQ(f.FindExport(key), nullptr) << key;
  }
  // `u = wasmExports['l'] + 1` reads the export itself before adding; it counts.
  EXPECT_NE(f.FindExport("l"), nullptr);
}

TEST(GlueImportsTest, NamedImportObject) {
  const GlueFacts f = Parse(R"(
    var asmLibraryArg = {
      "__assert_fail": ___assert_fail,
      "emscripten_memcpy_big": _emscripten_memcpy_big,
      /** @export */ fd_write: _fd_write,
      "a": wasmMemory,
      shorthand,
      "inline": function(x) { return {a: x, b: [x, x]}; },
    };
    function createWasm() {
      var info = { 'env': asmLibraryArg, 'wasi_snapshot_preview1': asmLibraryArg };
    }
  )");
  EXPECT_EQ(f.import_object, "asmLibraryArg");
  EXPECT_EQ(f.import_modules, (Strings{"env", "wasi_snapshot_preview1"}));
  ASSERT_EQ(f.imports.size(), 6u);
  EXPECT_EQ(f.FindImport("__assert_fail")->js_name, "___assert_fail");
  EXPECT_EQ(f.FindImport("fd_write")->js_name, "_fd_write");
  EXPECT_EQ(f.FindImport("a")->js_name, "wasmMemory");
  EXPECT_EQ(f.FindImport("shorthand")->js_name, "shorthand");
  EXPECT_EQ(f.FindImport("inline")->js_name, "");
  EXPECT_EQ(f.FindImport("emscripten_memcpy_big")->js_name, "_emscripten_memcpy_big");
  // Sorted by field.
  for (std::size_t i = 1; i < f.imports.size(); ++i) {
    EXPECT_LT(f.imports[i - 1].field, f.imports[i].field);
  }
}

TEST(GlueImportsTest, MinifiedImportObjectFoundThroughItsUse) {
  // sql.js 1.8.0: the object is defined before it is passed as module "a".
  const GlueFacts f = Parse(
      "var Wc={a:function(a,b){E(a,b)},h:function(a){return a},b:Zb};"
      "var q={a:1,b:2,c:3,d:4};"
      "function bb(){var d={a:Wc};WebAssembly.instantiate(h,d)}");
  EXPECT_EQ(f.import_object, "Wc");
  EXPECT_EQ(f.import_modules, Strings{"a"});
  ASSERT_EQ(f.imports.size(), 3u);
  EXPECT_EQ(f.FindImport("a")->js_name, "");
  EXPECT_EQ(f.FindImport("b")->js_name, "Zb");
}

TEST(GlueImportsTest, WasmImportsByName) {
  const GlueFacts f = Parse("var wasmImports={b:___assert_fail,f:___cxa_throw};");
  EXPECT_EQ(f.import_object, "wasmImports");
  EXPECT_TRUE(f.import_modules.empty());
  EXPECT_EQ(f.imports.size(), 2u);
  // Truncated inside the literal: what was read is kept.
  const GlueFacts t = Parse("var wasmImports={b:___assert_fail,f:___cxa_thr");
  EXPECT_EQ(t.imports.size(), 1u);
}

TEST(GlueFactsTest, DynCallSignatures) {
  const GlueFacts f = Parse(
      "var dynCall_jiji = Module['dynCall_jiji'] = createExportWrapper('dynCall_jiji');"
      "function dynCall_vi(p, a){} x = 'dynCall_viid'; y = dynCall_; z = dynCall_xyz;"
      "w = 'dynCall_' + sig;");
  EXPECT_EQ(f.dyncall_signatures, (Strings{"jiji", "vi", "viid"}));
}

TEST(GlueFactsTest, PthreadShape) {
  const GlueFacts none = Parse("if (x instanceof SharedArrayBuffer) {}");
  EXPECT_FALSE(none.pthread.threads);
  EXPECT_EQ(none.pthread.markers, Strings{"SharedArrayBuffer"});

  const GlueFacts threaded = Parse(
      "var ENVIRONMENT_IS_PTHREAD = Module['ENVIRONMENT_IS_PTHREAD'] || false;"
      "var PThread = {initMainThread: function() { var pthreadPoolSize = 4;"
      "  for (var i = 0; i < pthreadPoolSize; ++i) PThread.allocateUnusedWorker(); },"
      "  allocateUnusedWorker: function() { this.w.push(new Worker(pthreadMainJs)); }};"
      "wasmMemory = new WebAssembly.Memory({'initial': 256, 'maximum': 32768, 'shared': true});");
  EXPECT_TRUE(threaded.pthread.threads);
  EXPECT_EQ(threaded.pthread.markers, (Strings{"ENVIRONMENT_IS_PTHREAD", "PThread", "new Worker",
                                               "pthreadPoolSize", "shared: true"}));
  EXPECT_EQ(threaded.pthread.pool_size, std::optional<std::uint32_t>(4));

  // Minified: only the memory descriptor survives renaming.
  const GlueFacts minified =
      Parse("n=new WebAssembly.Memory({initial:256,maximum:32768,shared:!0})");
  EXPECT_TRUE(minified.pthread.threads);
  EXPECT_EQ(minified.pthread.markers, Strings{"shared: true"});
  EXPECT_TRUE(Parse("Module['PTHREAD_POOL_SIZE'] = 8;").pthread.threads);
  EXPECT_TRUE(Parse("if (PROXY_TO_PTHREAD) {}").pthread.threads);
}

TEST(GlueFactsTest, VersionHints) {
  const GlueFacts f = Parse(
      "/*\n** This code was built with Emscripten SDK version 3.1.30\n*/\n"
      "// Emscripten SDK: 5.0.5\n"
      "var s = 'compiled by emscripten 3.1.6';\n"
      "// emscripten is great; Emscripten SDK version 3\n");
  ASSERT_EQ(f.version_hints.size(), 3u);
  EXPECT_EQ(f.version_hints[0].version, "3.1.30");
  EXPECT_EQ(f.version_hints[0].text, "Emscripten SDK version 3.1.30");
  EXPECT_EQ(f.version_hints[0].source, "comment");
  EXPECT_EQ(f.version_hints[1].version, "5.0.5");
  EXPECT_EQ(f.version_hints[1].text, "Emscripten SDK: 5.0.5");
  EXPECT_EQ(f.version_hints[2].version, "3.1.6");
  EXPECT_EQ(f.version_hints[2].source, "string");
  EXPECT_EQ(f.EmscriptenVersion(), std::optional<std::string>("3.1.30"));
  // The offset points at the statement.
  const std::string js = "x; // Emscripten SDK: 5.0.5";
  EXPECT_EQ(Parse(js).version_hints.at(0).offset, js.find("Emscripten"));
}

TEST(GlueJsonTest, FixedShape) {
  const GlueFacts f = Parse(
      "// Emscripten SDK: 5.0.5\nvar wasmImports={b:_b};var info={'a':wasmImports};"
      "var _f=Module['_f']=function(){return(_f=Module['_f']=Module['asm']['c']).apply(null,"
      "arguments)};var dynCall_vi=1;");
  EXPECT_EQ(
      GlueFactsToJson(f),
      R"({"format":"warden-glue-1","bytes":)" + std::to_string(f.size) +
          R"(,"emscripten_version":"5.0.5","exports":[{"export":"c","name":"_f","js":["_f"],)"
          R"("module_keys":["_f"],"shapes":["lazy-wrapper"],"offset":)" +
          std::to_string(f.exports.at(0).offset) +
          R"(}],"import_object":"wasmImports","import_modules":["a"],"imports":[{"field":"b",)"
          R"("js":"_b","offset":)" +
          std::to_string(f.imports.at(0).offset) +
          R"(}],"dyncall_signatures":["vi"],"pthread":{"threads":false,"markers":[],)"
          R"("pool_size":null},"version_hints":[{"version":"5.0.5","text":"Emscripten SDK: )"
          R"(5.0.5","source":"comment","offset":3}]})");
  const GlueFacts empty = Parse("");
  EXPECT_EQ(GlueFactsToJson(empty),
            R"({"format":"warden-glue-1","bytes":0,"emscripten_version":null,"exports":[],)"
            R"("import_object":null,"import_modules":[],"imports":[],"dyncall_signatures":[],)"
            R"("pthread":{"threads":false,"markers":[],"pool_size":null},"version_hints":[]})");
}

TEST(GlueJsonTest, InvalidUtf8IsReplaced) {
  const GlueFacts f = Parse("var _\xff\xfe=Module['_\xff']=wasmExports['k\xc3'];");
  const std::string json = GlueFactsToJson(f);
  EXPECT_TRUE(nlohmann::json::accept(json));
  EXPECT_NE(json.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

TEST(GlueAdversarialTest, TruncatedAndUnterminated) {
  const std::string glue =
      "/* Emscripten SDK: 5.0.5 */ var wasmImports = {a: _a, b: function() { return '}' }};"
      "var _m = Module['_m'] = (a0) => (_m = Module['_m'] = wasmExports['m'])(a0);"
      "var s = `tpl ${ {x: '`'} } end`; var r = /[/'\"]/g; var PThread = {};";
  // Every prefix parses; facts only grow with the prefix, up to the whole.
  std::size_t last_exports = 0;
  for (std::size_t n = 0; n <= glue.size(); ++n) {
    Result<GlueFacts> f = ParseGlue(std::string_view(glue).substr(0, n));
    ASSERT_TRUE(f.ok()) << n;
    ASSERT_GE(f->exports.size(), last_exports) << n;
    last_exports = f->exports.size();
    EXPECT_TRUE(nlohmann::json::accept(GlueFactsToJson(*f))) << n;
  }
  const GlueFacts whole = Parse(glue);
  EXPECT_EQ(whole.FindImport("b")->js_name, "");
  EXPECT_EQ(whole.imports.size(), 2u);
  EXPECT_NE(whole.FindExport("m"), nullptr);
  EXPECT_TRUE(whole.pthread.threads);

  // An unterminated comment, string or template swallows what follows, without error.
  for (std::string_view open : {"/* ", "` ${ `", "'"}) {
    const GlueFacts f = Parse(std::string(open) + "\nvar _x = Module['_x'] = wasmExports['x'];");
    EXPECT_LE(f.exports.size(), 1u);
  }
}

TEST(GlueAdversarialTest, RandomBytes) {
  std::mt19937 rng(7);
  const std::string alphabet = "{}()[];,.=:'\"`$/\\*!?<> \nabxyzAsmwExports_09\xff\x80";
  for (int round = 0; round < 200; ++round) {
    std::string js(static_cast<std::size_t>(rng() % 4096), ' ');
    for (char& c : js) {
      c = round % 2 ? static_cast<char>(rng() & 0xff) : alphabet[rng() % alphabet.size()];
    }
    Result<GlueFacts> f = ParseGlue(js);
    ASSERT_TRUE(f.ok());
    EXPECT_TRUE(nlohmann::json::accept(GlueFactsToJson(*f)));
  }
}

TEST(GlueAdversarialTest, LargeInputIsLinear) {
  // 256 KiB of deeply nested, repetitive, pattern-like text (no backtracking to blow up).
  std::string js;
  while (js.size() < (256u << 10)) {
    js += "a=b=c=d=e=f=g=h=Module['asm']['x'](((([[[{{{`${`${";
    js += "function assignWasmExports(c){c=c.exports;";
  }
  Result<GlueFacts> f = ParseGlue(js);
  ASSERT_TRUE(f.ok());
}

TEST(GlueAdversarialTest, SizeLimit) {
  // A view larger than the limit is refused before any byte is read.
  const char byte = ' ';
  const std::string_view huge(&byte, kMaxGlueBytes + 1);
  Result<GlueFacts> f = ParseGlue(huge);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), base::StatusCode::kResourceExhausted);
  EXPECT_NE(f.status().message().find("268435456"), std::string::npos);
}

}  // namespace
}  // namespace trove::warden::glue
