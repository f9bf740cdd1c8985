// ReadModule: one left-to-right pass over a wasm binary that reports everything it reads to a
// ModuleVisitor (module_visitor.h), after wabt's ReadBinary. The framing code alone checks the
// magic and version, section ids, sizes, order and duplicates; each section reader works in a
// ByteCursor bounded to its section. Every error carries the absolute byte offset in hex and
// what was being read. Corrupt or truncated input gives kMalformed, a GC-proposal construct
// kUnsupported ("unsupported feature: gc"), and a crossed ReadOptions bound
// kResourceExhausted. Hooks may already have been called when an error is returned, so a
// consumer that must write nothing on failure buffers until ReadModule returns OK.
// Thread safety: ReadModule keeps no state between calls; concurrent calls with separate
// visitors are safe. With ReadOptions::decode_threads > 1 it starts threads of its own for the
// code section and joins them before it returns.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "warden/wasm/module_visitor.h"

namespace trove::warden::wasm {

struct ReadOptions {
  // Largest input accepted, in bytes. Default 4 GiB.
  std::uint64_t max_module_bytes = std::uint64_t{4} << 30;
  // Most items in any one section (types, imports, functions, globals, segments, bodies, ...)
  // and in any name map. Default 1,000,000.
  std::uint32_t max_section_items = 1'000'000;
  // Most locals one function declares, summed over its local groups. Default 50,000.
  std::uint32_t max_locals = 50'000;
  // Most targets in one br_table, the default excluded. Default 100,000.
  std::uint32_t max_br_table_targets = 100'000;
  // Deepest block nesting in a body; the function's own block is depth 1. Default 10,000.
  std::uint32_t max_nesting = 10'000;
  // When false, function bodies are framed (OnFunctionBody) but their locals and
  // instructions are not decoded. Default true.
  bool decode_bodies = true;
  // Threads that decode function bodies, the calling one included, when the visitor allows
  // it (ModuleVisitor::ConcurrentBodies). The bodies are framed first, then decoded in
  // chunks of consecutive bodies (decode_chunk_bytes each) that free threads take in index
  // order. The result, and the error returned for a bad module, are the same as with one
  // thread: the error of the lowest-indexed bad body.
  // Default 1.
  std::uint32_t decode_threads = 1;
  // With decode_threads > 1: a chunk ends at the body that brings it to at least this many
  // body bytes (so a chunk holds at least one body). Default 256 KiB: ~130 chunks for a
  // 32 MB module, few enough that taking one costs nothing, small enough to share the end of
  // the section evenly.
  std::uint32_t decode_chunk_bytes = 256 * 1024;
  // Decode the common instructions on the reader's fast path (reader.cc) and the rest through
  // its general decoder. Both give the same instructions and errors; false sends every
  // instruction through the general decoder, for tests that compare the two. Default true.
  bool fast_decode = true;
};

// Reads `bytes` as a wasm module, reporting to `visitor`. Returns the first error, from the
// module or from a hook.
Status ReadModule(std::span<const std::uint8_t> bytes, ModuleVisitor& visitor,
                  const ReadOptions& options = {});

}  // namespace trove::warden::wasm
