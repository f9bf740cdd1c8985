// The modules of `warden demo` (docs/warden.md §10.3), written by the samples writer: a named
// runtime (string, memory and allocation routines) that serves as the Oracle corpus, and two
// versions of a stripped application linked with that runtime.
//
//   runtime   strlen memcpy memset strcmp malloc free calloc strdup, named, each exported
//   app v1    the runtime functions (stripped) + the application: main and process exported,
//             parse_record (references a string), checksum, log_message (forwards env.log),
//             config_flag (one load), normalize, scale_values
//   app v2    the same functions in another order, parse_record modified (one step
//             inserted), scale_values deleted, compress_block added
//
// DemoPlan says which key is which, so the demo derives what it expects (coverage per step,
// the diff's classes) from the description rather than from figures written down elsewhere.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "warden/samples/samples.h"

namespace trove::warden::samples {

struct DemoPlan {
  std::vector<std::string> runtime;      // keys (= names) of the runtime functions
  std::vector<std::string> exported;     // application keys exported (export names = keys)
  std::vector<std::string> application;  // every application key of v1, exported ones included
  std::string modified;                  // in v1 and v2, body changed
  std::string added;                     // only in v2
  std::string deleted;                   // only in v1
};

DemoPlan DemoModulesPlan();

// The runtime: every function named and exported under its key.
Module DemoRuntime();
// The application, stripped (no name section). `version` is 1 or 2.
Module DemoApplication(int version);

}  // namespace trove::warden::samples
