// Native builds of Kōdo programs (`kodoc build FILE -o OUT`, docs/kodo.md §7.8,
// docs/decisions/0065-kodo-native-c.md): MIR → C (emit_c.h) → the system C compiler, linked
// with the runtime (runtime/kodo_rt.c, embedded in kodoc and written out beside the program).
//
// The compiler is `cc` from PATH, run without a shell (process.h) as
// `cc -O2 -o OUT.tmp PROGRAM.c kodo_rt.(c|o) -lm -lpthread`. The C files live in a fresh
// temporary directory that is removed afterwards; the executable is linked to a temporary name
// beside OUT and renamed to OUT only when the compiler succeeded, so a failed build leaves OUT
// as it was. The compiled runtime object may be cached (BuildOptions::cache_dir), keyed by a
// hash of the runtime source, the compiler's path and the flags.
//
// Thread safety: builds with different OUT paths may run concurrently.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "kodo/mir/mir.h"
#include "kodo/native/emit_c.h"

namespace trove::kodo::native {

struct BuildOptions {
  // The C compiler, looked up in PATH when it has no slash.
  std::string cc = "cc";
  // The C++ compiler for the runtime's C++ part (JSON, regex; ext_builtins.h), needed only by
  // programs that call those builtins.
  std::string cxx = "c++";
  // Optimisation and other flags for both the program and the runtime.
  std::vector<std::string> cflags = {"-O2"};
  // Where the compiled runtime object is kept between builds; empty: compile the runtime with
  // every build.
  std::string cache_dir;
  EmitOptions emit;
};

// Returns the default cache directory: $XDG_CACHE_HOME/trove-kodo or $HOME/.cache/trove-kodo,
// or empty when neither variable is set.
std::string DefaultCacheDir();

// Builds `program` into the executable `out_path`. Errors: Unsupported (a construct native
// builds lack, named), NotFound (no C compiler), Internal (the C compiler failed; the message
// carries its first lines of stderr), Io (temporary files, the rename).
Status BuildExecutable(const mir::Program& program, const std::string& out_path,
                       const BuildOptions& options = {});

}  // namespace trove::kodo::native
