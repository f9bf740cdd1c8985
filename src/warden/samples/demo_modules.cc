#include "warden/samples/demo_modules.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace trove::warden::samples {

namespace {

// Opcodes used below.
constexpr std::uint8_t kI32Add = 0x6a, kI32Sub = 0x6b, kI32Mul = 0x6c, kI32And = 0x71,
                       kI32Or = 0x72, kI32Xor = 0x73, kI32Shl = 0x74, kI32ShrU = 0x76,
                       kI32Eqz = 0x45, kI32Ne = 0x47, kI32LtU = 0x49, kI32Rotl = 0x77;
constexpr std::uint8_t kI32Load = 0x28, kI32Load8U = 0x2d, kI32Store = 0x36, kI32Store8 = 0x3a;

// The runtime's allocator keeps its heap pointer at this address and its free list at +4.
constexpr std::int32_t kHeapTop = 16;
// The application's string, at this address.
constexpr std::uint32_t kRecordHeaderAt = 256;

Function Fn(std::string key, Signature sig, std::vector<ValType> locals = {}) {
  Function f;
  f.key = std::move(key);
  f.sig = std::move(sig);
  f.locals = std::move(locals);
  return f;
}

// --- The runtime (named, as a corpus build with --profiling-funcs would be).

Function Strlen() {
  Function f = Fn("strlen", {{kI32}, {kI32}}, {kI32});
  f.body.Block().Loop();
  f.body.LocalGet(0).LocalGet(1).Op(kI32Add).Memory(kI32Load8U, 0, 0).Op(kI32Eqz).BrIf(1);
  f.body.LocalGet(1).I32Const(1).Op(kI32Add).LocalSet(1).Br(0).End().End();
  f.body.LocalGet(1);
  return f;
}

Function Memcpy() {
  Function f = Fn("memcpy", {{kI32, kI32, kI32}, {kI32}}, {kI32});
  f.body.Block().Loop();
  f.body.LocalGet(3).LocalGet(2).Op(kI32LtU).Op(kI32Eqz).BrIf(1);
  f.body.LocalGet(0).LocalGet(3).Op(kI32Add);
  f.body.LocalGet(1).LocalGet(3).Op(kI32Add).Memory(kI32Load8U, 0, 0);
  f.body.Memory(kI32Store8, 0, 0);
  f.body.LocalGet(3).I32Const(1).Op(kI32Add).LocalSet(3).Br(0).End().End();
  f.body.LocalGet(0);
  return f;
}

Function Memset() {
  Function f = Fn("memset", {{kI32, kI32, kI32}, {kI32}}, {kI32});
  f.body.Block().Loop();
  f.body.LocalGet(3).LocalGet(2).Op(kI32LtU).Op(kI32Eqz).BrIf(1);
  f.body.LocalGet(0).LocalGet(3).Op(kI32Add).LocalGet(1).Memory(kI32Store8, 0, 0);
  f.body.LocalGet(3).I32Const(1).Op(kI32Add).LocalSet(3).Br(0).End().End();
  f.body.LocalGet(0);
  return f;
}

Function Strcmp() {
  Function f = Fn("strcmp", {{kI32, kI32}, {kI32}}, {kI32, kI32});
  f.body.Block().Loop();
  f.body.LocalGet(0).Memory(kI32Load8U, 0, 0).LocalSet(2);
  f.body.LocalGet(1).Memory(kI32Load8U, 0, 0).LocalSet(3);
  f.body.LocalGet(2).LocalGet(3).Op(kI32Ne).BrIf(1);
  f.body.LocalGet(2).Op(kI32Eqz).BrIf(1);
  f.body.LocalGet(0).I32Const(1).Op(kI32Add).LocalSet(0);
  f.body.LocalGet(1).I32Const(1).Op(kI32Add).LocalSet(1).Br(0).End().End();
  f.body.LocalGet(2).LocalGet(3).Op(kI32Sub);
  return f;
}

Function Malloc() {
  // A bump allocator with 8-byte alignment.
  Function f = Fn("malloc", {{kI32}, {kI32}}, {kI32});
  f.body.I32Const(kHeapTop).Memory(kI32Load, 2, 0).LocalSet(1);
  f.body.I32Const(kHeapTop).LocalGet(1).LocalGet(0).Op(kI32Add).I32Const(7).Op(kI32Add);
  f.body.I32Const(-8).Op(kI32And).Memory(kI32Store, 2, 0);
  f.body.LocalGet(1);
  return f;
}

Function Free() {
  // Pushes the block on a free list.
  Function f = Fn("free", {{kI32}, {}});
  f.body.LocalGet(0).Op(kI32Eqz).If().Return().End();
  f.body.LocalGet(0).I32Const(kHeapTop).Memory(kI32Load, 2, 4).Memory(kI32Store, 2, 0);
  f.body.I32Const(kHeapTop).LocalGet(0).Memory(kI32Store, 2, 4);
  return f;
}

Function Calloc() {
  Function f = Fn("calloc", {{kI32, kI32}, {kI32}}, {kI32});
  f.body.LocalGet(0).LocalGet(1).Op(kI32Mul).LocalTee(2).Call("malloc");
  f.body.I32Const(0).LocalGet(2).Call("memset");
  return f;
}

Function Strdup() {
  Function f = Fn("strdup", {{kI32}, {kI32}}, {kI32});
  f.body.LocalGet(0).Call("strlen").I32Const(1).Op(kI32Add).LocalTee(1).Call("malloc");
  f.body.LocalGet(0).LocalGet(1).Call("memcpy");
  return f;
}

std::vector<Function> RuntimeFunctions() {
  return {Strlen(), Memcpy(), Memset(), Strcmp(), Malloc(), Free(), Calloc(), Strdup()};
}

// --- The application.

// `steps` arithmetic steps over locals 1..3 drawn from a fixed sequence from `seed`; the
// planted edit inserts one more step at `insert_at`.
void Steps(Body& b, std::uint32_t seed, int steps, int insert_at = -1) {
  std::uint32_t x = seed * 2654435761u + 12345u;
  auto next = [&x] {
    x = x * 1103515245u + 12345u;
    return (x >> 8) & 0xffff;
  };
  for (int i = 0; i < steps; ++i) {
    if (i == insert_at) b.LocalGet(2).LocalGet(3).Op(kI32Xor).I32Const(5).Op(kI32Rotl).LocalSet(2);
    const std::uint32_t kind = next() % 6;
    const auto c = static_cast<std::int32_t>(next() % 500);
    switch (kind) {
      case 0:
        b.LocalGet(1).I32Const(c).Op(kI32Add).LocalSet(2);
        break;
      case 1:
        b.LocalGet(2).LocalGet(3).Op(kI32Xor).LocalSet(1);
        break;
      case 2:
        b.LocalGet(3).I32Const(c).Op(kI32Mul).LocalSet(3);
        break;
      case 3:
        b.LocalGet(2).I32Const(c % 31).Op(kI32Shl).LocalGet(1).Op(kI32Or).LocalSet(3);
        break;
      case 4:
        b.LocalGet(1).LocalGet(2).Op(kI32LtU).If().LocalGet(2).LocalSet(1).End();
        break;
      default:
        b.LocalGet(3).I32Const(c % 31).Op(kI32ShrU).LocalGet(2).Op(kI32Sub).LocalSet(2);
        break;
    }
  }
}

Function ParseRecord(int version) {
  // Reads a record header: checks its first byte against the string's, then mixes its words.
  Function f = Fn("parse_record", {{kI32}, {kI32}}, {kI32, kI32, kI32});
  f.body.I32Const(static_cast<std::int32_t>(kRecordHeaderAt)).Call("strlen").LocalSet(1);
  f.body.LocalGet(0).Memory(kI32Load, 2, 0).LocalSet(2);
  f.body.LocalGet(0).Memory(kI32Load, 2, 4).LocalSet(3);
  Steps(f.body, 11, 14, version == 2 ? 7 : -1);
  f.body.LocalGet(1).LocalGet(2).Op(kI32Add).LocalGet(3).Op(kI32Xor);
  return f;
}

Function Checksum() {
  Function f = Fn("checksum", {{kI32, kI32}, {kI32}}, {kI32, kI32});
  f.body.Block().Loop();
  f.body.LocalGet(2).LocalGet(1).Op(kI32LtU).Op(kI32Eqz).BrIf(1);
  f.body.LocalGet(3).I32Const(5).Op(kI32Rotl).LocalGet(0).LocalGet(2).Op(kI32Add);
  f.body.Memory(kI32Load8U, 0, 0).Op(kI32Xor).LocalSet(3);
  f.body.LocalGet(2).I32Const(1).Op(kI32Add).LocalSet(2).Br(0).End().End();
  f.body.LocalGet(3);
  return f;
}

Function LogMessage() {
  Function f = Fn("log_message", {{kI32}, {}});
  f.body.LocalGet(0).Call("log");
  return f;
}

Function ConfigFlag() {
  Function f = Fn("config_flag", {{}, {kI32}});
  f.body.I32Const(64).Memory(kI32Load, 2, 0);
  return f;
}

Function Normalize() {
  Function f = Fn("normalize", {{kI32, kI32}, {kI32}}, {kI32, kI32});
  f.body.LocalGet(0).LocalSet(2).LocalGet(1).LocalSet(3);
  Steps(f.body, 23, 9);
  f.body.LocalGet(2).LocalGet(3).Op(kI32And);
  return f;
}

Function ScaleValues() {
  Function f = Fn("scale_values", {{kI32, kI32, kI32}, {}}, {kI32});
  f.body.Block().Loop();
  f.body.LocalGet(3).LocalGet(1).Op(kI32LtU).Op(kI32Eqz).BrIf(1);
  f.body.LocalGet(0).LocalGet(3).I32Const(2).Op(kI32Shl).Op(kI32Add).LocalTee(2);  // reuses p2
  f.body.LocalGet(2).Memory(kI32Load, 2, 0).I32Const(3).Op(kI32Mul).Memory(kI32Store, 2, 0);
  f.body.LocalGet(3).I32Const(1).Op(kI32Add).LocalSet(3).Br(0).End().End();
  return f;
}

Function CompressBlock() {
  Function f = Fn("compress_block", {{kI32, kI32}, {kI32}}, {kI32, kI32});
  f.body.LocalGet(0).LocalGet(1).Call("checksum").LocalSet(2);
  f.body.LocalGet(1).I32Const(2).Op(kI32ShrU).Call("malloc").LocalSet(3);
  f.body.LocalGet(3).LocalGet(0).LocalGet(1).I32Const(2).Op(kI32ShrU).Call("memcpy").Drop();
  f.body.LocalGet(3).LocalGet(2).Memory(kI32Store, 2, 0).LocalGet(3);
  return f;
}

// scale_values (v1) and compress_block (v2) are called by nothing, so that deleting one and
// adding the other changes no other function.
Function Process() {
  Function f = Fn("process", {{kI32, kI32}, {kI32}}, {kI32});
  f.body.LocalGet(0).Call("parse_record").LocalSet(2);
  f.body.LocalGet(0).LocalGet(1).Call("checksum").LocalGet(2).Call("normalize").LocalSet(2);
  f.body.LocalGet(0).Call("strdup").LocalTee(2).Call("log_message");
  f.body.LocalGet(2).Call("free").LocalGet(2);
  return f;
}

Function Main() {
  Function f = Fn("main", {{}, {kI32}}, {kI32});
  f.body.Call("config_flag").If().I32Const(1).I32Const(8).Call("calloc").LocalSet(0).End();
  f.body.LocalGet(0).I32Const(8).Call("process").Drop();
  f.body.LocalGet(0).I32Const(static_cast<std::int32_t>(kRecordHeaderAt)).Call("strcmp");
  return f;
}

}  // namespace

DemoPlan DemoModulesPlan() {
  DemoPlan plan;
  for (const Function& f : RuntimeFunctions()) plan.runtime.push_back(f.key);
  plan.exported = {"main", "process"};
  plan.application = {"main",        "process",     "parse_record", "checksum",
                      "log_message", "config_flag", "normalize",    "scale_values"};
  plan.modified = "parse_record";
  plan.added = "compress_block";
  plan.deleted = "scale_values";
  return plan;
}

Module DemoRuntime() {
  Module m;
  m.functions = RuntimeFunctions();
  for (Function& f : m.functions) {
    f.name = f.key;
    f.exports = {f.key};
  }
  return m;
}

Module DemoApplication(int version) {
  Module m;
  m.name_section = false;
  m.imports.push_back({.key = "log", .module = "env", .field = "log", .sig = {{kI32}, {}}});
  m.data.push_back({.address = kRecordHeaderAt, .bytes = std::string("record header\0", 14)});
  std::vector<Function> app;
  app.push_back(Main());
  app.push_back(Process());
  app.push_back(ParseRecord(version));
  app.push_back(Checksum());
  app.push_back(LogMessage());
  app.push_back(ConfigFlag());
  app.push_back(Normalize());
  if (version == 1) {
    app.push_back(ScaleValues());
  } else {
    app.push_back(CompressBlock());
  }
  app[0].exports = {"main"};
  app[1].exports = {"process"};
  std::vector<Function> runtime = RuntimeFunctions();
  if (version == 1) {
    // Linked as: application first, then the runtime.
    m.functions = std::move(app);
    for (Function& f : runtime) m.functions.push_back(std::move(f));
  } else {
    // The new build links the runtime first and orders both parts differently.
    std::reverse(runtime.begin(), runtime.end());
    for (Function& f : runtime) m.functions.push_back(std::move(f));
    std::reverse(app.begin(), app.end());
    for (Function& f : app) m.functions.push_back(std::move(f));
  }
  return m;
}

}  // namespace trove::warden::samples
