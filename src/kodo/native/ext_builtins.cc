#include "kodo/native/ext_builtins.h"

#include <string>

namespace trove::kodo::native {
namespace {

// The interpreter's JSON and regex builtins (kodo/interp/runtime.cc Table), name by name.
constexpr ExtBuiltin kExt[] = {
    {"json_parse", "kb_json_parse", 1, 'i'},
    {"json_new_object", "kb_json_new_object", 0, 'i'},
    {"json_free", "kb_json_free", 1, 0},
    {"json_stringify", "kb_json_stringify", 1, 0},
    {"json_get_string", "kb_json_get_string", 2, 0},
    {"json_get_int", "kb_json_get_int", 2, 'i'},
    {"json_get_bool", "kb_json_get_bool", 2, 'i'},
    {"json_get_float", "kb_json_get_float", 2, 'f'},
    {"json_get_array", "kb_json_get_array", 2, 0},
    {"json_get_object", "kb_json_get_object", 2, 'i'},
    {"json_set_string", "kb_json_set_string", 3, 0},
    {"json_set_int", "kb_json_set_int", 3, 0},
    {"json_set_bool", "kb_json_set_bool", 3, 0},
    {"json_set_float", "kb_json_set_float", 3, 0},
    {"regex_match", "kb_regex_match", 2, 'b'},
    {"regex_find", "kb_regex_find", 2, 0},
    {"regex_replace", "kb_regex_replace", 3, 0},
};

}  // namespace

std::span<const ExtBuiltin> ExtBuiltins() { return kExt; }

const ExtBuiltin* FindExtBuiltin(std::string_view name) {
  for (const ExtBuiltin& b : kExt) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

bool UsesExtBuiltins(const mir::Program& program) {
  for (const mir::Function& fn : program.functions) {
    for (const mir::BasicBlock& b : fn.blocks) {
      for (const mir::Inst& inst : b.insts) {
        if (inst.kind == mir::InstKind::kCall && program.Find(inst.callee) < 0 &&
            FindExtBuiltin(inst.callee) != nullptr) {
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace trove::kodo::native
