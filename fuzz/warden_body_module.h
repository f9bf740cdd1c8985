// For the WARDEN fuzz targets that take function bodies (identity, lifter): turns a fuzz input
// into a module. The first byte picks the form:
//   even  the rest is one function body (locals and code, as in the code section) of a module
//         with one import, one memory, one global and one table, so that calls, loads,
//         globals and call_indirect in the body can all resolve; the body's type comes from
//         the first byte's upper bits (one of four signatures)
//   odd   the rest is a whole module
// Header-only; shared by the fuzz targets, never linked into Trove.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trove::fuzz {

inline void PutU32(std::vector<std::uint8_t>& out, std::uint64_t value) {
  do {
    std::uint8_t byte = value & 0x7f;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(byte);
  } while (value != 0);
}

inline void PutSection(std::vector<std::uint8_t>& out, std::uint8_t id,
                       const std::vector<std::uint8_t>& payload) {
  out.push_back(id);
  PutU32(out, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
}

inline std::vector<std::uint8_t> ModuleFromFuzzInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return {};
  const std::uint8_t mode = data[0];
  if (mode & 1) return std::vector<std::uint8_t>(data + 1, data + size);
  std::vector<std::uint8_t> m = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  // Types: 0 (i32, i32) -> i32, 1 () -> (), 2 (i64, f64) -> f32, 3 (i32) -> (i32, i64).
  PutSection(m, 1, {0x04, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x00, 0x60,
                    0x02, 0x7e, 0x7c, 0x01, 0x7d, 0x60, 0x01, 0x7f, 0x02, 0x7f, 0x7e});
  // Import env.f: type 0.
  PutSection(m, 2, {0x01, 0x03, 'e', 'n', 'v', 0x01, 'f', 0x00, 0x00});
  // One defined function of the chosen type.
  PutSection(m, 3, {0x01, static_cast<std::uint8_t>((mode >> 1) & 3)});
  // A table of 2 funcrefs, a memory of 1 page, a mutable i32 global = 0.
  PutSection(m, 4, {0x01, 0x70, 0x00, 0x02});
  PutSection(m, 5, {0x01, 0x00, 0x01});
  PutSection(m, 6, {0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b});
  std::vector<std::uint8_t> code = {0x01};
  PutU32(code, size - 1);
  code.insert(code.end(), data + 1, data + size);
  PutSection(m, 10, code);
  return m;
}

}  // namespace trove::fuzz
