#include "warden/identity/identity.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <utility>

#include "base/memory.h"
#include "base/thread_pool.h"

namespace trove::warden::identity {
namespace {

using wasm::ImmKind;
using wasm::Opcode;

// --- The canonical encoding (scheme w1) ---
// Every integer is fixed-width little-endian; a string is its byte length (u32) and bytes; a
// value type is its binary type byte. A token is the opcode as it appears on the wire (u8
// prefix, 0 for one-byte opcodes, then the code as u32), then its normalised operands as
// listed in EncodeToken. The opcode is encoded from the wire prefix and code rather than
// the Opcode enumerator so that reordering instructions.def cannot change an id.

void PutU8(std::string& out, std::uint8_t v) { out.push_back(static_cast<char>(v)); }
// Little-endian, whatever the host order; one append per value.
void PutU32(std::string& out, std::uint32_t v) {
  const char bytes[4] = {static_cast<char>(v), static_cast<char>(v >> 8),
                         static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  out.append(bytes, 4);
}
void PutU64(std::string& out, std::uint64_t v) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(v >> (8 * i));
  out.append(bytes, 8);
}
void PutStr(std::string& out, std::string_view s) {
  PutU32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}
void PutBytes(std::string& out, std::span<const std::uint8_t> bytes) {
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}
void PutOpcode(std::string& out, Opcode opcode) {
  const wasm::OpcodeInfo& info = wasm::GetOpcodeInfo(opcode);
  PutU8(out, info.prefix);
  PutU32(out, info.code);
}
void PutMemArg(std::string& out, const wasm::MemArg& memarg) {
  PutU32(out, memarg.align_log2);
  PutU32(out, memarg.memory);
  PutU64(out, memarg.offset);
}

std::string_view AsChars(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The splitmix64 finaliser, the one fixed 64-bit mixer of the MinHash (docs/warden.md §5.3).
constexpr std::uint64_t Mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}
// A gram's hash starts here (not at 0, a fixed point of Mix64), then folds in each token
// hash in order: g = Mix64(g ^ h). Order-sensitive, so "a b c d" and "d c b a" differ.
constexpr std::uint64_t kGramInit = 0x9e3779b97f4a7c15ULL;

// Returns whether the instruction belongs to the structural skeleton (docs/warden.md §5.3 item 1).
bool IsSkeleton(Opcode op) {
  switch (op) {
    case Opcode::kBlock:
    case Opcode::kLoop:
    case Opcode::kIf:
    case Opcode::kElse:
    case Opcode::kEnd:
    case Opcode::kBr:
    case Opcode::kBrIf:
    case Opcode::kBrTable:
    case Opcode::kReturn:
    case Opcode::kUnreachable:
    case Opcode::kTry:
    case Opcode::kCatch:
    case Opcode::kCatchAll:
    case Opcode::kDelegate:
    case Opcode::kThrow:
    case Opcode::kRethrow:
    case Opcode::kThrowRef:
    case Opcode::kTryTable:
    case Opcode::kCall:
    case Opcode::kCallIndirect:
    case Opcode::kReturnCall:
    case Opcode::kReturnCallIndirect:
      return true;
    default:
      return false;
  }
}

bool IsDirectCall(Opcode op) { return op == Opcode::kCall || op == Opcode::kReturnCall; }
bool IsIndirectCall(Opcode op) {
  return op == Opcode::kCallIndirect || op == Opcode::kReturnCallIndirect;
}

// Decodes one UTF-8 code point at `s[i]`; returns it and advances `i`, or nullopt when the
// sequence is invalid (overlong, surrogate, above U+10FFFF or truncated).
std::optional<std::uint32_t> NextCodePoint(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<std::uint8_t>(s[i]);
  int len = 0;
  std::uint32_t cp = 0;
  if (b0 < 0x80) {
    ++i;
    return b0;
  } else if ((b0 & 0xe0) == 0xc0) {
    len = 2;
    cp = b0 & 0x1f;
  } else if ((b0 & 0xf0) == 0xe0) {
    len = 3;
    cp = b0 & 0x0f;
  } else if ((b0 & 0xf8) == 0xf0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return std::nullopt;
  }
  if (i + len > s.size()) return std::nullopt;
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<std::uint8_t>(s[i + k]);
    if ((b & 0xc0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (b & 0x3f);
  }
  constexpr std::uint32_t kMinForLen[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLen[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    return std::nullopt;
  }
  i += len;
  return cp;
}

// Decision (docs/warden.md §7.1 says "printable" without a definition): every code point except the
// C0 controls other than tab, line feed and carriage return, DEL and the C1 controls.
bool IsPrintable(std::uint32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return true;
  if (cp < 0x20 || cp == 0x7f) return false;
  return !(cp >= 0x80 && cp < 0xa0);
}

// Returns the string a constant points to, or nullopt (docs/warden.md §7.1): valid UTF-8 of at
// least kMinStringChars printable characters before a NUL found within kMaxStringScanBytes, cut
// at kMaxStringChars characters.
std::optional<std::string> StringAt(std::span<const std::uint8_t> bytes, std::size_t start) {
  const std::size_t limit = std::min(bytes.size() - start, kMaxStringScanBytes);
  const std::string_view window = AsChars(bytes.subspan(start, limit));
  const std::size_t nul = window.find('\0');
  if (nul == std::string_view::npos) return std::nullopt;
  const std::string_view text = window.substr(0, nul);
  std::size_t i = 0;
  std::size_t chars = 0;
  std::size_t cut = 0;
  while (i < text.size()) {
    const std::optional<std::uint32_t> cp = NextCodePoint(text, i);
    if (!cp || !IsPrintable(*cp)) return std::nullopt;
    ++chars;
    if (chars == kMaxStringChars) cut = i;
  }
  if (chars < kMinStringChars) return std::nullopt;
  return std::string(chars > kMaxStringChars ? text.substr(0, cut) : text);
}

// The first 8 bytes of `bytes` as a big-endian number, so that numbers compare as the bytes do.
std::uint64_t BigEndianWord(const std::uint8_t* bytes) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes, 8);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}

// a < b as std::array compares them (bytewise), in two word compares instead of a memcmp call.
bool HashLess(const Hash128& a, const Hash128& b) {
  const std::uint64_t a0 = BigEndianWord(a.data());
  const std::uint64_t b0 = BigEndianWord(b.data());
  if (a0 != b0) return a0 < b0;
  return BigEndianWord(a.data() + 8) < BigEndianWord(b.data() + 8);
}

std::string ExtendedId(const FunctionIdentity& f, int tier, const Hash128& key) {
  // Decision (docs/warden.md §5.2 names the tiers but not the spelling of an extended id): the base
  // id, then
  // "/t<tier>:" and the first 8 bytes of the tier's key in hex. Keeping the base visible
  // lets a reader (and similarity) see the shared base without a lookup.
  return fmt::format("{}/t{}:{}", f.BaseId(), tier,
                     base::ToHex(std::span<const std::uint8_t>(key.data(), 8)));
}

}  // namespace

// --- Free functions ---

OpClass ClassifyOpcode(Opcode opcode) {
  const wasm::OpcodeInfo& info = wasm::GetOpcodeInfo(opcode);
  const std::uint32_t c = info.code;
  switch (info.prefix) {
    case 0xfd:
      return OpClass::kSimd;
    case 0xfe:
      return OpClass::kAtomic;
    case 0xfc:
      if (c <= 0x07) return OpClass::kConversion;  // iNN.trunc_sat_fMM_*
      if (c <= 0x0e) return OpClass::kBulk;        // memory.init ... table.copy, elem.drop
      return OpClass::kTable;                      // table.grow, table.size, table.fill
    default:
      break;
  }
  switch (opcode) {
    case Opcode::kCall:
    case Opcode::kCallIndirect:
    case Opcode::kReturnCall:
    case Opcode::kReturnCallIndirect:
      return OpClass::kCall;
    case Opcode::kTry:
    case Opcode::kCatch:
    case Opcode::kThrow:
    case Opcode::kRethrow:
    case Opcode::kThrowRef:
    case Opcode::kDelegate:
    case Opcode::kCatchAll:
    case Opcode::kTryTable:
      return OpClass::kException;
    case Opcode::kDrop:
    case Opcode::kSelect:
    case Opcode::kSelectT:
      return OpClass::kParametric;
    case Opcode::kLocalGet:
    case Opcode::kLocalSet:
    case Opcode::kLocalTee:
      return OpClass::kLocal;
    case Opcode::kGlobalGet:
    case Opcode::kGlobalSet:
      return OpClass::kGlobal;
    case Opcode::kTableGet:
    case Opcode::kTableSet:
      return OpClass::kTable;
    case Opcode::kMemorySize:
    case Opcode::kMemoryGrow:
      return OpClass::kMemoryOther;
    case Opcode::kRefNull:
    case Opcode::kRefIsNull:
    case Opcode::kRefFunc:
      return OpClass::kReference;
    default:
      break;
  }
  if (c <= 0x0f) return OpClass::kControl;  // unreachable ... return, exceptions handled above
  if (c >= 0x28 && c <= 0x35) return OpClass::kLoad;
  if (c >= 0x36 && c <= 0x3e) return OpClass::kStore;
  if (c >= 0x41 && c <= 0x44) return OpClass::kConst;
  if (c >= 0x45 && c <= 0x5a) return OpClass::kIntCompare;
  if (c >= 0x5b && c <= 0x66) return OpClass::kFloatCompare;
  // Decision: clz, ctz and popcnt count bits, so they are bitwise, with and/or/xor, shifts
  // and rotates; add, sub, mul, div and rem are int-arith.
  if ((c >= 0x67 && c <= 0x69) || (c >= 0x79 && c <= 0x7b)) return OpClass::kBitwise;
  if ((c >= 0x6a && c <= 0x70) || (c >= 0x7c && c <= 0x82)) return OpClass::kIntArith;
  if ((c >= 0x71 && c <= 0x78) || (c >= 0x83 && c <= 0x8a)) return OpClass::kBitwise;
  if (c >= 0x8b && c <= 0xa6) return OpClass::kFloatArith;
  if (c >= 0xa7 && c <= 0xc4) return OpClass::kConversion;  // wrap ... extend32_s
  return OpClass::kControl;
}

namespace {

// What the token hot path needs of each opcode, computed once (OpFactsOf).
enum OpFlag : std::uint8_t {
  kSkeletonOp = 1,      // in the structural skeleton (IsSkeleton)
  kDirectCallOp = 2,    // call, return_call
  kIndirectCallOp = 4,  // call_indirect, return_call_indirect
  kI32ConstOp = 8,
  kI64ConstOp = 16,
  kMemoryInitOp = 32,
};

}  // namespace

struct IdentityBuilder::OpFacts {
  // The start of every token of the opcode as it goes into the hash input: its length (u32,
  // filled in when token_size is known), then the opcode's wire encoding (prefix byte, code
  // as u32); zero after. Written with one 16-byte copy, the operands over the zeros.
  std::array<char, 16> head{};
  // The FNV-1a state after the 5 opcode bytes: a token's hash continues from there over its
  // operands (FNV-1a is a left fold, so the value is that of hashing the whole token).
  std::uint64_t fnv = 0;
  // The opcode's bytes in the stored opcode stream (wasm::AppendOpcodeStream), zero after.
  std::array<char, 8> stream{};
  std::uint8_t stream_size = 0;
  // 4 + the token's bytes when they do not depend on the operands' values, else 0.
  std::uint8_t token_size = 0;
  ImmKind imm = ImmKind::kNone;
  OpClass op_class = OpClass::kControl;
  std::uint8_t flags = 0;
};

const IdentityBuilder::OpFacts* IdentityBuilder::OpFactsTable() {
  static const auto table = [] {
    std::array<IdentityBuilder::OpFacts, std::size(wasm::kOpcodeTable)> t{};
    for (std::size_t i = 0; i < t.size(); ++i) {
      const auto op = static_cast<Opcode>(i);
      const wasm::OpcodeInfo& info = wasm::GetOpcodeInfo(op);
      IdentityBuilder::OpFacts& f = t[i];
      std::string bytes;
      PutOpcode(bytes, op);
      std::copy_n(bytes.begin(), 5, f.head.begin() + 4);
      f.fnv = Fnv1a64(bytes);
      std::string stream;
      wasm::AppendOpcodeStream(stream, {op});
      std::copy_n(stream.begin(), std::min(stream.size(), f.stream.size()), f.stream.begin());
      f.stream_size = static_cast<std::uint8_t>(stream.size());
      f.imm = info.imm;
      f.op_class = ClassifyOpcode(op);
      std::size_t operands = 0;  // fixed operand bytes, as EncodeToken writes them
      bool fixed = true;
      switch (info.imm) {
        case ImmKind::kNone:
        case ImmKind::kZeroByte:
        case ImmKind::kI32:
        case ImmKind::kI64:
        case ImmKind::kF32:
        case ImmKind::kF64:
        case ImmKind::kV128:
        case ImmKind::kData:
        case ImmKind::kElem:
          break;
        case ImmKind::kLabel:
        case ImmKind::kLocal:
        case ImmKind::kGlobal:
        case ImmKind::kTable:
        case ImmKind::kMemory:
        case ImmKind::kTableInit:
        case ImmKind::kMemInit:
          operands = 4;
          break;
        case ImmKind::kMemArg:
          operands = 16;
          break;
        case ImmKind::kMemArgLane:
          operands = 17;
          break;
        case ImmKind::kLane:
          operands = 1;
          break;
        case ImmKind::kTableCopy:
        case ImmKind::kMemCopy:
          operands = 8;
          break;
        case ImmKind::kFunc:  // 0 for a masked target (an import's is variable)
          operands = 1;
          break;
        default:  // block types (their size varies) and the variable kinds
          fixed = false;
          break;
      }
      if (fixed) {
        f.token_size = static_cast<std::uint8_t>(4 + 5 + operands);
        std::string length;
        PutU32(length, static_cast<std::uint32_t>(5 + operands));
        std::copy_n(length.begin(), 4, f.head.begin());
      }
      if (IsSkeleton(op)) f.flags |= kSkeletonOp;
      if (IsDirectCall(op)) f.flags |= kDirectCallOp;
      if (IsIndirectCall(op)) f.flags |= kIndirectCallOp;
      if (op == Opcode::kI32Const) f.flags |= kI32ConstOp;
      if (op == Opcode::kI64Const) f.flags |= kI64ConstOp;
      if (op == Opcode::kMemoryInit) f.flags |= kMemoryInitOp;
    }
    return t;
  }();
  return table.data();
}

namespace {

// The FNV-1a prime and its powers: hashing a zero byte only multiplies by the prime.
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;
constexpr std::uint64_t kFnvPrime4 = kFnvPrime * kFnvPrime * kFnvPrime * kFnvPrime;
constexpr std::uint64_t kFnvPrime8 = kFnvPrime4 * kFnvPrime4;

// FNV-1a continued over the bytes of a value, little-endian, as a token holds it: a value
// below 256 is one byte and then zeros.
inline std::uint64_t FnvU8(std::uint64_t h, std::uint8_t v) { return (h ^ v) * kFnvPrime; }
inline std::uint64_t FnvU32(std::uint64_t h, std::uint32_t v) {
  if (v < 256) return (h ^ v) * kFnvPrime4;
  for (int k = 0; k < 4; ++k) h = (h ^ ((v >> (8 * k)) & 0xff)) * kFnvPrime;
  return h;
}
inline std::uint64_t FnvU64(std::uint64_t h, std::uint64_t v) {
  if (v < 256) return (h ^ v) * kFnvPrime8;
  for (int k = 0; k < 8; ++k) h = (h ^ ((v >> (8 * k)) & 0xff)) * kFnvPrime;
  return h;
}

// Little-endian stores into the hash input, whatever the host order.
inline void StoreU32(char* at, std::uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(at, &v, 4);
  } else {
    for (int k = 0; k < 4; ++k) at[k] = static_cast<char>(v >> (8 * k));
  }
}
// Unsigned LEB128, the form in which a function's constants wait for Finish: most are small,
// so this takes a third of the memory of 8 bytes each.
void PutLeb128(std::string& out, std::uint64_t v) {
  char bytes[10];
  std::size_t n = 0;
  do {
    bytes[n++] = static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    v >>= 7;
  } while (v != 0);
  out.append(bytes, n);
}
// Reads the LEB128 at text[at] that PutLeb128 wrote, and moves `at` past it.
std::uint64_t NextLeb128(std::string_view text, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; at < text.size(); shift += 7) {
    const auto byte = static_cast<std::uint8_t>(text[at++]);
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  return v;
}

inline void StoreU64(char* at, std::uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(at, &v, 8);
  } else {
    for (int k = 0; k < 8; ++k) at[k] = static_cast<char>(v >> (8 * k));
  }
}

}  // namespace

std::string_view ValTypeName(wasm::ValType type) {
  switch (type) {
    case wasm::ValType::kI32:
      return "i32";
    case wasm::ValType::kI64:
      return "i64";
    case wasm::ValType::kF32:
      return "f32";
    case wasm::ValType::kF64:
      return "f64";
    case wasm::ValType::kV128:
      return "v128";
    case wasm::ValType::kFuncRef:
      return "funcref";
    case wasm::ValType::kExternRef:
      return "externref";
    case wasm::ValType::kExnRef:
      return "exnref";
  }
  return "?";
}

std::string SignatureText(const wasm::FuncType& type) {
  auto list = [](const std::vector<wasm::ValType>& types) {
    std::string out = "(";
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (i != 0) out += ", ";
      out += ValTypeName(types[i]);
    }
    return out + ")";
  };
  const std::string results =
      type.results.size() == 1 ? std::string(ValTypeName(type.results[0])) : list(type.results);
  return list(type.params) + " -> " + results;
}

Hash128 Sha256Prefix(std::string_view data) {
  const base::Sha256Digest digest = base::Sha256(data);
  Hash128 out;
  std::copy_n(digest.begin(), out.size(), out.begin());
  return out;
}

std::uint64_t Fnv1a64(std::string_view data) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char ch : data) {
    h ^= static_cast<std::uint8_t>(ch);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::array<std::uint64_t, kMinHashSize> MinHashSeeds() {
  std::array<std::uint64_t, kMinHashSize> seeds{};
  std::uint64_t state = kMinHashSeedState;
  for (std::uint64_t& seed : seeds) {
    state += 0x9e3779b97f4a7c15ULL;  // splitmix64: advance, then finalise
    seed = Mix64(state);
  }
  return seeds;
}

MinHash ComputeMinHash(std::span<const std::string> tokens) {
  std::vector<std::uint64_t> token_hashes;
  token_hashes.reserve(tokens.size());
  for (const std::string& token : tokens) token_hashes.push_back(Fnv1a64(token));
  return ComputeMinHashOfTokenHashes(token_hashes);
}

namespace {

// out[i] = min over grams of Mix64(g ^ seeds[i]). Mix64's first step, x ^= x >> 30, is
// linear over xor, so with x = g ^ s it is (g ^ g >> 30) ^ (s ^ s >> 30): the fold takes the
// seeds in that form (`mixed_seeds`, MixedSeeds()) and mixes each gram once, not once per
// seed. The plain loop is written with GNU vector types (8 lanes of u64), so the 32
// independent lanes become 4 vector chains; the build stays generic x86-64, so it is also
// compiled for AVX2, and an AVX-512 version (DQ has the 64-bit multiply) keeps the 32 lanes
// and their minima in registers. The CPU picks one at run time. (target_clones would pick by
// CPU model for AVX-512, which misses AMD parts.)
using U64x8 = std::uint64_t __attribute__((vector_size(64)));

// The seeds with Mix64's first step applied.
const std::uint64_t* MixedSeeds() {
  static const std::array<std::uint64_t, kMinHashSize> mixed = [] {
    std::array<std::uint64_t, kMinHashSize> out = MinHashSeeds();
    for (std::uint64_t& s : out) s ^= s >> 30;
    return out;
  }();
  return mixed.data();
}

#define TROVE_FOLD_GRAMS_BODY                                                        \
  static_assert(kMinHashSize == 32);                                                 \
  U64x8 seed[4];                                                                     \
  U64x8 best[4];                                                                     \
  std::memcpy(seed, mixed_seeds, sizeof(seed));                                      \
  std::memcpy(best, out, sizeof(best));                                              \
  for (std::size_t g = 0; g < count; ++g) {                                          \
    const std::uint64_t gram = grams[g] ^ (grams[g] >> 30);                          \
    for (int k = 0; k < 4; ++k) {                                                    \
      U64x8 x = seed[k] ^ gram;                                                      \
      x *= 0xbf58476d1ce4e5b9ULL;                                                    \
      x ^= x >> 27;                                                                  \
      x *= 0x94d049bb133111ebULL;                                                    \
      x ^= x >> 31;                                                                  \
      const U64x8 less = reinterpret_cast<U64x8>(x < best[k]); /* ones where less */ \
      best[k] = (x & less) | (best[k] & ~less);                                      \
    }                                                                                \
  }                                                                                  \
  std::memcpy(out, best, sizeof(best));

using FoldFn = void (*)(const std::uint64_t*, std::size_t, const std::uint64_t*, std::uint64_t*);

void FoldGramsGeneric(const std::uint64_t* grams, std::size_t count,
                      const std::uint64_t* mixed_seeds, std::uint64_t* out) {
  TROVE_FOLD_GRAMS_BODY
}

#if defined(__x86_64__)
// The same as FoldGramsGeneric with the four chains spelled out: g++ kept the loop's seed
// and minimum arrays on the stack (a store and a reload per chain per gram) and took a compare
// and two blends for each minimum; named vectors stay in registers and give vpminuq.
__attribute__((target("avx512f,avx512dq"))) void FoldGramsAvx512(const std::uint64_t* grams,
                                                                 std::size_t count,
                                                                 const std::uint64_t* mixed_seeds,
                                                                 std::uint64_t* out) {
  static_assert(kMinHashSize == 32);
  U64x8 s0, s1, s2, s3, b0, b1, b2, b3;
  std::memcpy(&s0, mixed_seeds, sizeof(U64x8));
  std::memcpy(&s1, mixed_seeds + 8, sizeof(U64x8));
  std::memcpy(&s2, mixed_seeds + 16, sizeof(U64x8));
  std::memcpy(&s3, mixed_seeds + 24, sizeof(U64x8));
  std::memcpy(&b0, out, sizeof(U64x8));
  std::memcpy(&b1, out + 8, sizeof(U64x8));
  std::memcpy(&b2, out + 16, sizeof(U64x8));
  std::memcpy(&b3, out + 24, sizeof(U64x8));
  // One chain: the rest of Mix64 of (gram ^ seed) in 8 lanes, then the lanes' minima.
#define TROVE_FOLD_CHAIN(best, seed) \
  {                                  \
    U64x8 x = gram ^ seed;           \
    x *= 0xbf58476d1ce4e5b9ULL;      \
    x ^= x >> 27;                    \
    x *= 0x94d049bb133111ebULL;      \
    x ^= x >> 31;                    \
    best = x < best ? x : best;      \
  }
  for (std::size_t g = 0; g < count; ++g) {
    const std::uint64_t gram = grams[g] ^ (grams[g] >> 30);
    TROVE_FOLD_CHAIN(b0, s0)
    TROVE_FOLD_CHAIN(b1, s1)
    TROVE_FOLD_CHAIN(b2, s2)
    TROVE_FOLD_CHAIN(b3, s3)
  }
#undef TROVE_FOLD_CHAIN
  std::memcpy(out, &b0, sizeof(U64x8));
  std::memcpy(out + 8, &b1, sizeof(U64x8));
  std::memcpy(out + 16, &b2, sizeof(U64x8));
  std::memcpy(out + 24, &b3, sizeof(U64x8));
}

__attribute__((target("avx2"))) void FoldGramsAvx2(const std::uint64_t* grams, std::size_t count,
                                                   const std::uint64_t* mixed_seeds,
                                                   std::uint64_t* out){TROVE_FOLD_GRAMS_BODY}
#endif

#undef TROVE_FOLD_GRAMS_BODY

FoldFn SelectFoldGrams() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
    return FoldGramsAvx512;
  }
  if (__builtin_cpu_supports("avx2")) return FoldGramsAvx2;
#endif
  return FoldGramsGeneric;
}

FoldFn& ChosenFold() {
  static FoldFn fold = SelectFoldGrams();
  return fold;
}

void FoldGrams(const std::uint64_t* grams, std::size_t count, std::uint64_t* out) {
  ChosenFold()(grams, count, MixedSeeds(), out);
}

// The folds this CPU can run, by name.
std::vector<std::pair<std::string_view, FoldFn>> AvailableFolds() {
  std::vector<std::pair<std::string_view, FoldFn>> out = {{"generic", FoldGramsGeneric}};
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) out.emplace_back("avx2", FoldGramsAvx2);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
    out.emplace_back("avx512", FoldGramsAvx512);
  }
#endif
  return out;
}

// out[i] = the gram hash of tokens i..i+3 (kGramInit, then g = Mix64(g ^ h) per token), for
// `count` grams. The AVX-512 version computes 8 neighbouring grams per step, one lane each;
// the plain loop is the definition, and finishes what does not fill 8 lanes.
using MakeGramsFn = void (*)(const std::uint64_t*, std::size_t, std::uint64_t*);

void MakeGramsGeneric(const std::uint64_t* hashes, std::size_t count, std::uint64_t* out) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t g = kGramInit;
    for (std::size_t k = 0; k < kGramSize; ++k) g = Mix64(g ^ hashes[i + k]);
    out[i] = g;
  }
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512dq,avx512vl"))) void MakeGramsAvx512(
    const std::uint64_t* hashes, std::size_t count, std::uint64_t* out) {
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    U64x8 g = U64x8{} + kGramInit;
    for (std::size_t k = 0; k < kGramSize; ++k) {
      U64x8 h;
      std::memcpy(&h, hashes + i + k, sizeof(h));
      g ^= h;
      g ^= g >> 30;
      g *= 0xbf58476d1ce4e5b9ULL;
      g ^= g >> 27;
      g *= 0x94d049bb133111ebULL;
      g ^= g >> 31;
    }
    std::memcpy(out + i, &g, sizeof(g));
  }
  MakeGramsGeneric(hashes + i, count - i, out + i);
}
#endif

MakeGramsFn SelectMakeGrams() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    return MakeGramsAvx512;
  }
#endif
  // Without a 64-bit vector multiply (AVX2 has none) the scalar loop is as fast.
  return MakeGramsGeneric;
}

void MakeGrams(const std::uint64_t* hashes, std::size_t count, std::uint64_t* out) {
  static const MakeGramsFn make = SelectMakeGrams();
  make(hashes, count, out);
}

// The grams of a token stream: one per 4 consecutive tokens, or one of all of them when
// there are fewer than four (none at all form one empty gram).
std::size_t GramCount(std::size_t tokens) {
  return tokens < kGramSize ? 1 : tokens - kGramSize + 1;
}
void MakeAllGrams(std::span<const std::uint64_t> token_hashes, std::uint64_t* out) {
  if (token_hashes.size() < kGramSize) {
    std::uint64_t g = kGramInit;
    for (std::uint64_t h : token_hashes) g = Mix64(g ^ h);
    out[0] = g;
  } else {
    MakeGrams(token_hashes.data(), GramCount(token_hashes.size()), out);
  }
}

}  // namespace

MinHash ComputeMinHashOfTokenHashes(std::span<const std::uint64_t> token_hashes) {
  std::vector<std::uint64_t> grams;
  return ComputeMinHashOfTokenHashes(token_hashes, grams);
}

MinHash ComputeMinHashOfTokenHashes(std::span<const std::uint64_t> token_hashes,
                                    std::vector<std::uint64_t>& grams) {
  // `grams` only grows (a resize from empty would zero-fill it on every call).
  const std::size_t count = GramCount(token_hashes.size());
  if (grams.size() < count) grams.resize(count);
  MakeAllGrams(token_hashes, grams.data());
  MinHash out;
  out.fill(std::numeric_limits<std::uint64_t>::max());
  FoldGrams(grams.data(), count, out.data());
  return out;
}

namespace internal {

std::vector<std::string_view> MinHashFolds() {
  std::vector<std::string_view> out;
  for (const auto& [name, fold] : AvailableFolds()) out.push_back(name);
  return out;
}

std::optional<MinHash> ComputeMinHashWithFold(std::string_view fold,
                                              std::span<const std::uint64_t> token_hashes) {
  for (const auto& [name, fn] : AvailableFolds()) {
    if (name != fold) continue;
    std::vector<std::uint64_t> grams(GramCount(token_hashes.size()));
    MakeAllGrams(token_hashes, grams.data());
    MinHash out;
    out.fill(std::numeric_limits<std::uint64_t>::max());
    fn(grams.data(), grams.size(), MixedSeeds(), out.data());
    return out;
  }
  return std::nullopt;
}

}  // namespace internal

std::string FunctionIdentity::BaseId() const {
  return std::string(kSchemePrefix) + base::ToHex(std::span<const std::uint8_t>(base));
}

std::vector<std::string_view> FunctionIdentity::InstructionMnemonics() const {
  std::vector<std::string_view> out;
  // The stream was written by AppendOpcodeStream from decoded opcodes, so it decodes.
  std::optional<std::vector<std::string_view>> decoded = wasm::DecodeOpcodeStream(opcode_stream);
  if (decoded) out = std::move(*decoded);
  return out;
}

// --- IdentityBuilder ---

IdentityBuilder::IdentityBuilder(std::span<const std::uint8_t> module_bytes)
    : module_bytes_(module_bytes) {}

Result<std::string_view> IdentityBuilder::TypeSignature(std::uint32_t type_index) const {
  if (type_index >= type_signatures_.size()) {
    return Status::Malformed(
        fmt::format("type index {} out of range ({} types)", type_index, types_.size()));
  }
  return std::string_view(type_signatures_[type_index]);
}

const ImportedFunction* IdentityBuilder::ImportedFunctionAt(wasm::FuncIndex func) const {
  return func < imports_.size() ? &imports_[func] : nullptr;
}

Status IdentityBuilder::OnType(std::uint32_t index, const wasm::FuncType& type) {
  if (index != types_.size()) return Status::Internal("identity: types out of order");
  types_.push_back(type);
  type_signatures_.push_back(SignatureText(type));
  return {};
}

Status IdentityBuilder::OnImport(const wasm::Import& import) {
  const std::string name = fmt::format("{}.{}", import.module, import.field);
  if (import.kind == wasm::ExternalKind::kTag) {
    imported_tags_[import.index] = name;
  } else if (import.kind == wasm::ExternalKind::kFunction) {
    // The Import has no offset of its own; the reader's section context locates the error.
    Result<std::string_view> signature = TypeSignature(import.type_index);
    if (!signature.ok()) {
      return std::move(signature).status().WithContext(fmt::format("import {}", name));
    }
    imports_.push_back({.func_index = import.index,
                        .module = std::string(import.module),
                        .field = std::string(import.field),
                        .stable_id = "import:" + name,
                        .type_signature = std::string(*signature)});
    import_targets_.push_back(name);
    imported_function_count_ = static_cast<std::uint32_t>(imports_.size());
  }
  return {};
}

Status IdentityBuilder::OnFunctionCount(std::uint32_t count) {
  // Each defined function takes at least 4 module bytes (a type index, and a body size, a
  // local group count and `end`), so a count beyond that is not believed: a corrupt count
  // reserves no more than a valid module of this size would use.
  const std::size_t n = std::min<std::size_t>(count, module_bytes_.size() / 4);
  // FunctionIdentity is ~700 bytes: 15 MB for ffmpeg-core, written once per function.
  base::ReserveWithHugePages(functions_, n);
  bodies_.reserve(n);
  constants_.reserve(n);
  memory_inits_.reserve(n);
  return {};
}

Status IdentityBuilder::OnFunction(wasm::FuncIndex func, std::uint32_t type_index) {
  if (func != imported_function_count_ + functions_.size()) {
    return Status::Internal(fmt::format("identity: function {} out of order", func));
  }
  FunctionIdentity f;
  f.func_index = func;
  Result<std::string_view> signature = TypeSignature(type_index);
  if (!signature.ok()) {
    return std::move(signature).status().WithContext(fmt::format("function {}", func));
  }
  f.type_signature = std::string(*signature);
  functions_.push_back(std::move(f));
  bodies_.emplace_back();
  constants_.emplace_back();
  memory_inits_.emplace_back();
  return {};
}

Status IdentityBuilder::OnExport(const wasm::Export& export_) {
  if (export_.kind == wasm::ExternalKind::kFunction) {
    export_names_[export_.index].emplace_back(export_.name);
  }
  return {};
}

Status IdentityBuilder::OnStart(wasm::FuncIndex func) {
  start_ = func;
  return {};
}

Status IdentityBuilder::OnFunctionName(wasm::FuncIndex func, std::string_view name) {
  names_.emplace(func, std::string(name));
  return {};
}

Status IdentityBuilder::OnDataSegment(const wasm::DataSegment& segment) {
  // Decision: active segments of memory 0 whose offset is one i32.const or i64.const have a
  // known address; passive segments get one in Finish when the init code copies them with
  // constant operands. Other memories are not followed (docs/warden.md §4.2): without a data-flow
  // pass a constant's memory is unknown, and docs/warden.md §4.2 sends such constants to memory 0.
  if (segment.mode == wasm::SegmentMode::kPassive) {
    passive_[segment.index] = segment.bytes;
    return {};
  }
  if (segment.mode != wasm::SegmentMode::kActive || segment.memory != 0 ||
      segment.offset.size() != 1) {
    return {};
  }
  const wasm::Instruction& init = segment.offset[0];
  if (init.opcode == Opcode::kI32Const) {
    segments_.push_back({static_cast<std::uint32_t>(init.i64), segment.bytes});
  } else if (init.opcode == Opcode::kI64Const) {
    segments_.push_back({static_cast<std::uint64_t>(init.i64), segment.bytes});
  }
  return {};
}

Status IdentityBuilder::OnFunctionBody(const wasm::FunctionBody& body) {
  const std::size_t slot = body.func_index - imported_function_count_;
  if (body.func_index < imported_function_count_ || slot >= functions_.size()) {
    return Status::Internal(fmt::format("identity: body of unknown function {}", body.func_index));
  }
  if (body.offset > module_bytes_.size() || body.size > module_bytes_.size() - body.offset) {
    return Status::InvalidArgument(fmt::format(
        "{:#x}: function body lies outside the module bytes given to identity", body.offset));
  }
  FunctionIdentity& f = functions_[slot];
  f.exact = base::Sha256(AsChars(module_bytes_.subspan(body.offset, body.size)));

  f.token_count = 0;
  f.opcode_stream.clear();
  Body* state = AcquireBody();
  state->slot = slot;
  // The hash input starts with the signature text and the local declarations as declared
  // (docs/warden.md §5.2), then the token count and each token, length-prefixed (see
  // OnFunctionBodyEnd).
  std::string& locals = state->scratch;
  locals.clear();
  PutStr(locals, f.type_signature);
  PutU32(locals, static_cast<std::uint32_t>(body.locals.size()));
  for (const wasm::LocalDecl& decl : body.locals) {
    PutU32(locals, decl.count);
    PutU8(locals, static_cast<std::uint8_t>(decl.type));
  }
  // A one-byte instruction encodes to 9 bytes, length included; an instruction takes at least
  // a body byte. One sizing up front instead of growing the buffers as tokens come: the
  // sizes and capacities stay with the recycled Body.
  state->token_count = 0;
  state->opcode_stream_size = 0;
  state->last_opcode_size = 0;
  state->histogram = {};
  state->recent_count = 0;
  // At most one token per body byte, and an opcode's stream encoding is never longer than
  // its encoding in the body.
  ReserveTokens(*state, body.size, body.size + 8);
  state->encoded_size = 0;
  AppendEncoded(*state, locals.data(), locals.size(), locals.size() + 4 + 10 * body.size);
  state->count_at = state->encoded_size;
  AppendEncoded(*state, "\0\0\0\0", 4, 0);  // the token count, patched in OnFunctionBodyEnd
  bodies_[slot] = state;
  return {};
}

IdentityBuilder::Body* IdentityBuilder::AcquireBody() {
  std::lock_guard<std::mutex> lock(pool_mu_);
  if (free_bodies_.empty()) {
    pool_.push_back(std::make_unique<Body>());
    return pool_.back().get();
  }
  Body* body = free_bodies_.back();
  free_bodies_.pop_back();
  return body;
}

void IdentityBuilder::AppendEncoded(Body& body, const char* bytes, std::size_t size,
                                    std::size_t expect) {
  Reserve(body, std::max(size, expect));
  std::memcpy(body.encoded.get() + body.encoded_size, bytes, size);
  body.encoded_size += size;
}

void IdentityBuilder::Reserve(Body& body, std::size_t room) {
  if (body.encoded_capacity - body.encoded_size < room) {
    const std::size_t capacity = std::max(2 * body.encoded_capacity, body.encoded_size + room);
    std::unique_ptr<char[]> grown = std::make_unique_for_overwrite<char[]>(capacity);
    if (body.encoded_size != 0) std::memcpy(grown.get(), body.encoded.get(), body.encoded_size);
    body.encoded = std::move(grown);
    body.encoded_capacity = capacity;
  }
}

void IdentityBuilder::ReserveTokens(Body& body, std::size_t tokens, std::size_t stream_bytes) {
  if (body.token_hashes_capacity - body.token_count < tokens) {
    const std::size_t capacity =
        std::max(2 * body.token_hashes_capacity, body.token_count + tokens);
    auto grown = std::make_unique_for_overwrite<std::uint64_t[]>(capacity);
    if (body.token_count != 0) {
      std::memcpy(grown.get(), body.token_hashes.get(), body.token_count * sizeof(std::uint64_t));
    }
    body.token_hashes = std::move(grown);
    body.token_hashes_capacity = capacity;
  }
  if (body.opcode_stream_capacity - body.opcode_stream_size < stream_bytes) {
    const std::size_t capacity =
        std::max(2 * body.opcode_stream_capacity, body.opcode_stream_size + stream_bytes);
    auto grown = std::make_unique_for_overwrite<char[]>(capacity);
    if (body.opcode_stream_size != 0) {
      std::memcpy(grown.get(), body.opcode_stream.get(), body.opcode_stream_size);
    }
    body.opcode_stream = std::move(grown);
    body.opcode_stream_capacity = capacity;
  }
}

void IdentityBuilder::ReleaseBody(Body* body) {
  body->encoded_size = 0;
  body->token_count = 0;
  body->opcode_stream_size = 0;
  body->skeleton_size = 0;
  body->recent_count = 0;
  body->constants.clear();
  std::lock_guard<std::mutex> lock(pool_mu_);
  free_bodies_.push_back(body);
}

Status IdentityBuilder::EncodeBlockType(std::string& out, const wasm::BlockType& type,
                                        std::uint64_t offset) const {
  switch (type.kind) {
    case wasm::BlockType::Kind::kEmpty:
      PutU8(out, 0);
      break;
    case wasm::BlockType::Kind::kValue:
      PutU8(out, 1);
      PutU8(out, static_cast<std::uint8_t>(type.value));
      break;
    case wasm::BlockType::Kind::kTypeIndex: {
      Result<std::string_view> sig = TypeSignature(type.type_index);
      if (!sig.ok()) return std::move(sig).status().WithContext(fmt::format("{:#x}", offset));
      PutU8(out, 2);
      PutStr(out, *sig);
      break;
    }
  }
  return {};
}

std::string IdentityBuilder::EncodeTag(std::uint32_t tag) const {
  std::string out;
  if (auto it = imported_tags_.find(tag); it != imported_tags_.end()) {
    PutU8(out, 1);
    PutStr(out, "import:" + it->second);
  } else {
    PutU8(out, 0);
    PutU32(out, tag);
  }
  return out;
}

Status IdentityBuilder::EncodeToken(std::string& out, const wasm::Instruction& inst) const {
  // Operands per docs/warden.md §5.2: signatures replace type indices; direct calls to imports
  // become
  // "import:<module>.<field>"; calls to defined functions, constants, ref.func and data and
  // element segment indices are masked (encoded as nothing, or a 0 tag byte where an
  // alternative exists); everything else is kept.
  PutOpcode(out, inst.opcode);
  switch (wasm::GetOpcodeInfo(inst.opcode).imm) {
    case ImmKind::kNone:
    case ImmKind::kZeroByte:
    case ImmKind::kI32:
    case ImmKind::kI64:
    case ImmKind::kF32:
    case ImmKind::kF64:
    case ImmKind::kV128:
    case ImmKind::kData:
    case ImmKind::kElem:
      break;
    case ImmKind::kBlockType: {
      RETURN_IF_ERROR(EncodeBlockType(out, inst.block_type, inst.offset));
      break;
    }
    case ImmKind::kLabel:
    case ImmKind::kLocal:
    case ImmKind::kGlobal:
    case ImmKind::kTable:
    case ImmKind::kMemory:
      PutU32(out, inst.index);
      break;
    case ImmKind::kBrTable:
      PutU32(out, static_cast<std::uint32_t>(inst.targets.size()));
      for (std::uint32_t t : inst.targets) PutU32(out, t);
      PutU32(out, inst.index);
      break;
    case ImmKind::kFunc: {
      const ImportedFunction* import =
          IsDirectCall(inst.opcode) ? ImportedFunctionAt(inst.index) : nullptr;
      if (import != nullptr) {
        PutU8(out, 1);
        PutStr(out, import->stable_id);
      } else {
        PutU8(out, 0);  // a defined callee or a ref.func target: masked
      }
      break;
    }
    case ImmKind::kCallIndirect: {
      Result<std::string_view> sig = TypeSignature(inst.index);
      if (!sig.ok()) {
        return std::move(sig).status().WithContext(
            fmt::format("{:#x}: call_indirect", inst.offset));
      }
      PutStr(out, *sig);
      PutU32(out, inst.index2);  // the table
      break;
    }
    case ImmKind::kMemArg:
      PutMemArg(out, inst.memarg);
      break;
    case ImmKind::kMemArgLane:
      PutMemArg(out, inst.memarg);
      PutU8(out, inst.lane);
      break;
    case ImmKind::kLane:
      PutU8(out, inst.lane);
      break;
    case ImmKind::kShuffle:
      PutBytes(out, inst.bytes);
      break;
    case ImmKind::kSelectT:
    case ImmKind::kHeapType:
      PutU32(out, static_cast<std::uint32_t>(inst.types.size()));
      for (wasm::ValType t : inst.types) PutU8(out, static_cast<std::uint8_t>(t));
      break;
    case ImmKind::kTableCopy:
    case ImmKind::kMemCopy:
      PutU32(out, inst.index);
      PutU32(out, inst.index2);
      break;
    case ImmKind::kTableInit:
    case ImmKind::kMemInit:
      PutU32(out, inst.index2);  // the table or memory; the segment index is masked
      break;
    case ImmKind::kTag:
      out += EncodeTag(inst.index);
      break;
    case ImmKind::kTryTable: {
      RETURN_IF_ERROR(EncodeBlockType(out, inst.block_type, inst.offset));
      PutU32(out, static_cast<std::uint32_t>(inst.catches.size()));
      for (const wasm::CatchClause& clause : inst.catches) {
        PutU8(out, clause.kind);
        if (clause.kind == 0 || clause.kind == 1) out += EncodeTag(clause.tag);
        PutU32(out, clause.label);
      }
      break;
    }
  }
  return {};
}

IdentityBuilder::Body* IdentityBuilder::BodyOf(wasm::FuncIndex func) const {
  if (func < imported_function_count_) return nullptr;
  const std::size_t slot = func - imported_function_count_;
  return slot < bodies_.size() ? bodies_[slot] : nullptr;
}

void IdentityBuilder::ReserveSkeleton(Body& body) {
  const std::size_t capacity = std::max<std::size_t>(2 * body.skeleton_capacity, 256);
  auto grown = std::make_unique_for_overwrite<char[]>(capacity);
  if (body.skeleton_size != 0) std::memcpy(grown.get(), body.skeleton.get(), body.skeleton_size);
  body.skeleton = std::move(grown);
  body.skeleton_capacity = capacity;
}

Status IdentityBuilder::OnInstruction(wasm::FuncIndex func, const wasm::Instruction& inst) {
  return OnInstructions(func, std::span<const wasm::Instruction>(&inst, 1));
}

Status IdentityBuilder::OnInstructions(wasm::FuncIndex func,
                                       std::span<const wasm::Instruction> insts) {
  Body* const state = BodyOf(func);
  if (state == nullptr) return {};
  const OpFacts* const ops = OpFactsTable();
  // Room for the whole run up front: a token hash and at most 6 stream bytes (plus the 8
  // copied) per instruction, and kFixedTokenRoom of hash input per fixed-size token (a
  // variable-size one makes its own room, and the room for the rest again after it).
  ReserveTokens(*state, insts.size(), 6 * insts.size() + 8);
  Reserve(*state, kFixedTokenRoom * insts.size());
  // The buffers' cursors live in locals for the run: stores through the char pointers could
  // alias the Body's fields, which would otherwise be reloaded after every store.
  char* encoded = state->encoded.get() + state->encoded_size;
  std::uint64_t* hashes = state->token_hashes.get() + state->token_count;
  char* stream = state->opcode_stream.get() + state->opcode_stream_size;
  std::size_t last_opcode_size = state->last_opcode_size;
  std::size_t recent_count = state->recent_count;
  auto store_cursors = [&] {
    state->encoded_size = static_cast<std::size_t>(encoded - state->encoded.get());
    state->token_count = static_cast<std::size_t>(hashes - state->token_hashes.get());
    state->opcode_stream_size = static_cast<std::size_t>(stream - state->opcode_stream.get());
    state->last_opcode_size = last_opcode_size;
    state->recent_count = recent_count;
  };

  for (std::size_t i = 0; i < insts.size(); ++i) {
    const wasm::Instruction& inst = insts[i];
    const OpFacts& op = ops[static_cast<std::size_t>(inst.opcode)];
    // Each token goes into the hash input length-prefixed. The tokens of nearly every
    // instruction have fixed-size operands: they are written in place (the opcode's head with
    // one 16-byte copy, then the operands, exactly as EncodeToken writes them) and hashed from
    // the opcode's precomputed FNV state. The others (imported call targets, type signatures,
    // br_table, select t, ref.null, tags, try_table, shuffle) go through EncodeToken.
    std::memcpy(encoded, op.head.data(), op.head.size());  // length (if fixed), opcode, zeros
    std::size_t size = op.token_size;
    std::uint64_t h = op.fnv;
    switch (op.imm) {
      case ImmKind::kLabel:
      case ImmKind::kLocal:
      case ImmKind::kGlobal:
      case ImmKind::kTable:
      case ImmKind::kMemory:
        StoreU32(encoded + 9, inst.index);
        h = FnvU32(h, inst.index);
        break;
      case ImmKind::kTableInit:
      case ImmKind::kMemInit:
        StoreU32(encoded + 9, inst.index2);  // the table or memory; the segment is masked
        h = FnvU32(h, inst.index2);
        break;
      case ImmKind::kMemArg:
      case ImmKind::kMemArgLane:
        StoreU32(encoded + 9, inst.memarg.align_log2);
        StoreU32(encoded + 13, inst.memarg.memory);
        StoreU64(encoded + 17, inst.memarg.offset);
        h = FnvU64(FnvU32(FnvU32(h, inst.memarg.align_log2), inst.memarg.memory),
                   inst.memarg.offset);
        if (op.imm == ImmKind::kMemArgLane) {
          encoded[25] = static_cast<char>(inst.lane);
          h = FnvU8(h, inst.lane);
        }
        break;
      case ImmKind::kLane:
        encoded[9] = static_cast<char>(inst.lane);
        h = FnvU8(h, inst.lane);
        break;
      case ImmKind::kTableCopy:
      case ImmKind::kMemCopy:
        StoreU32(encoded + 9, inst.index);
        StoreU32(encoded + 13, inst.index2);
        h = FnvU32(FnvU32(h, inst.index), inst.index2);
        break;
      case ImmKind::kFunc:
        if ((op.flags & kDirectCallOp) != 0 && ImportedFunctionAt(inst.index) != nullptr) {
          size = 0;  // an imported target is named: variable
        } else {
          h = FnvU8(h, 0);  // a defined callee or a ref.func target: masked (the head's 0)
        }
        break;
      case ImmKind::kBlockType:
        if (inst.block_type.kind == wasm::BlockType::Kind::kEmpty) {
          size = 4 + 5 + 1;  // tag 0 (the head's zero)
          h = FnvU8(h, 0);
        } else if (inst.block_type.kind == wasm::BlockType::Kind::kValue) {
          size = 4 + 5 + 2;
          encoded[9] = 1;
          encoded[10] = static_cast<char>(inst.block_type.value);
          h = FnvU8(FnvU8(h, 1), static_cast<std::uint8_t>(inst.block_type.value));
        }
        if (size != 0) StoreU32(encoded, static_cast<std::uint32_t>(size - 4));
        break;
      default:  // no operands in the token (the head's length is set), or variable (size 0)
        break;
    }
    if (size != 0) {
      encoded += size;
    } else {
      store_cursors();
      std::string& scratch = state->token;
      scratch.clear();
      PutU32(scratch, 0);
      RETURN_IF_ERROR(EncodeToken(scratch, inst));
      const std::size_t length = scratch.size() - 4;
      for (std::size_t k = 0; k < 4; ++k) scratch[k] = static_cast<char>(length >> (8 * k));
      h = Fnv1a64(std::string_view(scratch).substr(4));
      AppendEncoded(*state, scratch.data(), scratch.size(), 0);
      Reserve(*state, kFixedTokenRoom * (insts.size() - i));
      encoded = state->encoded.get() + state->encoded_size;
    }
    *hashes++ = h;
    std::memcpy(stream, op.stream.data(), op.stream.size());
    stream += op.stream_size;
    last_opcode_size = op.stream_size;
    ++state->histogram[static_cast<std::size_t>(op.op_class)];
    if (op.flags == 0) {
      recent_count = 0;  // not a constant: the run of constants ends
      continue;
    }

    if ((op.flags & kSkeletonOp) != 0) {
      if (state->skeleton_capacity - state->skeleton_size < 8) ReserveSkeleton(*state);
      std::memcpy(state->skeleton.get() + state->skeleton_size, op.head.data() + 4, 8);
      state->skeleton_size += 5;
    }
    FunctionIdentity& f = functions_[state->slot];
    if ((op.flags & kDirectCallOp) != 0) {
      if (ImportedFunctionAt(inst.index) != nullptr) {
        const std::string& target = import_targets_[inst.index];
        if (std::find(f.call_targets.begin(), f.call_targets.end(), target) ==
            f.call_targets.end()) {
          f.call_targets.push_back(target);
        }
      } else {
        f.defined_callees.push_back(inst.index);
      }
    } else if ((op.flags & kIndirectCallOp) != 0) {
      if (std::find(f.call_targets.begin(), f.call_targets.end(), kIndirectTarget) ==
          f.call_targets.end()) {
        f.call_targets.emplace_back(kIndirectTarget);
      }
    } else if ((op.flags & kI32ConstOp) != 0) {
      PutLeb128(state->constants, static_cast<std::uint32_t>(inst.i64));
    } else if ((op.flags & kI64ConstOp) != 0 && inst.i64 >= 0) {
      PutLeb128(state->constants, static_cast<std::uint64_t>(inst.i64));  // memory64
    }

    // The ring of recent constants: the newest at (recent_count - 1) % 3.
    const std::size_t n = recent_count;
    if ((op.flags & kMemoryInitOp) != 0 && inst.index2 == 0 && n >= 3) {
      memory_inits_[state->slot].push_back({.segment = inst.index,
                                            .address = state->recent_consts[(n - 3) % 3],
                                            .source = state->recent_consts[(n - 2) % 3],
                                            .size = state->recent_consts[(n - 1) % 3]});
    }
    if ((op.flags & (kI32ConstOp | kI64ConstOp)) != 0) {
      state->recent_consts[n % 3] = (op.flags & kI32ConstOp) != 0
                                        ? static_cast<std::uint32_t>(inst.i64)
                                        : static_cast<std::uint64_t>(inst.i64);
      recent_count = n + 1;
    } else {
      recent_count = 0;
    }
  }
  if (!insts.empty()) state->last_opcode = insts.back().opcode;
  store_cursors();
  return {};
}

Status IdentityBuilder::OnFunctionBodyEnd(wasm::FuncIndex func) {
  Body* state = BodyOf(func);
  if (state == nullptr) return {};
  FunctionIdentity& f = functions_[state->slot];
  // The reader reports the final `end` too. It stays in the token stream (so every stream
  // has at least one token) and in the skeleton, but not in the instruction count, the
  // mnemonics or the histogram (docs/warden.md §4.2: the count excludes only the final `end`).
  const std::size_t tokens = state->token_count;
  f.histogram = state->histogram;
  std::size_t stream_size = state->opcode_stream_size;
  if (tokens != 0) {
    const OpFacts& last = OpFactsTable()[static_cast<std::size_t>(state->last_opcode)];
    --f.histogram[static_cast<std::size_t>(last.op_class)];
    stream_size -= state->last_opcode_size;
  }
  f.instruction_count = static_cast<std::uint32_t>(tokens == 0 ? 0 : tokens - 1);
  // The stream as the KB stores it, at its exact size.
  f.opcode_stream.assign(state->opcode_stream.get(), stream_size);

  f.token_count = static_cast<std::uint32_t>(tokens);
  for (std::size_t k = 0; k < 4; ++k) {
    state->encoded[state->count_at + k] = static_cast<char>(f.token_count >> (8 * k));
  }
  f.base = Sha256Prefix(std::string_view(state->encoded.get(), state->encoded_size));

  f.structural = Sha256Prefix(std::string_view(state->skeleton.get(), state->skeleton_size));
  std::set<std::string> call_outs;
  for (const std::string& target : f.call_targets) {
    if (target != kIndirectTarget) call_outs.insert(target);
  }
  f.call_outs.assign(call_outs.begin(), call_outs.end());
  std::string& semantic = state->scratch;
  semantic.clear();
  PutStr(semantic, f.type_signature);
  for (std::uint32_t count : f.histogram) PutU32(semantic, count);
  PutU32(semantic, static_cast<std::uint32_t>(f.call_outs.size()));
  for (const std::string& c : f.call_outs) PutStr(semantic, c);
  f.semantic = Sha256Prefix(semantic);
  f.minhash = ComputeMinHashOfTokenHashes(
      std::span<const std::uint64_t>(state->token_hashes.get(), tokens), state->grams);
  constants_[state->slot] = state->constants;  // exact size; none allocated if short
  bodies_[state->slot] = nullptr;
  ReleaseBody(state);
  return {};
}

void IdentityBuilder::IndexSegments() {
  pieces_.clear();
  // Emscripten writes its segments in address order without overlap: then they are the
  // pieces as they are, and the painting below (a std::map) is not needed.
  bool ordered = true;
  for (std::size_t i = 0; i < segments_.size() && ordered; ++i) {
    const Segment& s = segments_[i];
    if (s.bytes.empty()) continue;  // as the painting skips it
    const std::uint64_t end = s.address + s.bytes.size();
    ordered = end > s.address && (pieces_.empty() || pieces_.back().end <= s.address);
    if (ordered) pieces_.push_back(Piece{s.address, end, i});
  }
  if (!ordered) PaintSegments();
  IndexPages();
}

void IdentityBuilder::IndexPages() {
  page_first_.clear();
  if (pieces_.empty()) return;
  pages_start_ = pieces_.front().start >> kPageShift << kPageShift;
  const std::uint64_t span = pieces_.back().end - pages_start_;
  // A sparse layout (a few bytes at each end of a huge range) would make the table large:
  // then SegmentAt keeps its binary search.
  if ((span >> kPageShift) > 16 * pieces_.size() + 4096) return;
  page_first_.resize(static_cast<std::size_t>((span + (1u << kPageShift) - 1) >> kPageShift));
  std::size_t piece = 0;
  for (std::size_t page = 0; page < page_first_.size(); ++page) {
    const std::uint64_t page_start = pages_start_ + (std::uint64_t{page} << kPageShift);
    while (piece < pieces_.size() && pieces_[piece].end <= page_start) ++piece;
    page_first_[page] = static_cast<std::uint32_t>(piece);
  }
}

void IdentityBuilder::PaintSegments() {
  // Paints each segment over the ones written before it, in write order.
  std::map<std::uint64_t, Piece> painted;  // keyed by start
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const Segment& s = segments_[i];
    if (s.bytes.empty()) continue;
    const std::uint64_t start = s.address;
    const std::uint64_t end = s.address + s.bytes.size();
    if (end < start) continue;  // wraps: no constant can address it
    // Split a piece that begins before `start` and reaches into the new range.
    auto it = painted.lower_bound(start);
    if (it != painted.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > start) {
        Piece tail = prev->second;
        prev->second.end = start;
        if (tail.end > end) {
          tail.start = end;
          painted[end] = tail;
        }
      }
    }
    // Remove or trim the pieces that begin inside the new range.
    it = painted.lower_bound(start);
    while (it != painted.end() && it->first < end) {
      Piece piece = it->second;
      it = painted.erase(it);
      if (piece.end > end) {
        piece.start = end;
        painted[end] = piece;
        break;
      }
    }
    painted[start] = Piece{start, end, i};
  }
  pieces_.clear();
  pieces_.reserve(painted.size());
  for (const auto& entry : painted) pieces_.push_back(entry.second);
}

const IdentityBuilder::Segment* IdentityBuilder::SegmentAt(std::uint64_t address) const {
  if (!page_first_.empty()) {
    if (address < pages_start_) return nullptr;
    const std::uint64_t page = (address - pages_start_) >> kPageShift;
    if (page >= page_first_.size()) return nullptr;
    for (std::size_t i = page_first_[page]; i < pieces_.size(); ++i) {
      const Piece& p = pieces_[i];
      if (address < p.start) return nullptr;
      if (address < p.end) return &segments_[p.segment];
    }
    return nullptr;
  }
  auto it = std::upper_bound(pieces_.begin(), pieces_.end(), address,
                             [](std::uint64_t a, const Piece& p) { return a < p.start; });
  if (it == pieces_.begin()) return nullptr;
  --it;
  return address < it->end ? &segments_[it->segment] : nullptr;
}

void IdentityBuilder::ResolveStrings(FunctionIdentity& function, std::string_view constants) const {
  for (std::size_t pos = 0; pos < constants.size();) {
    const std::uint64_t c = NextLeb128(constants, pos);
    // Decision: when active segments overlap, the last one written wins, as at instantiation.
    const Segment* found = SegmentAt(c);
    if (found == nullptr) continue;
    const std::size_t at = c - found->address;
    // Decision: a string lies within one segment; the byte before a string start is read
    // from the same segment.
    if (at != 0 && found->bytes[at - 1] != 0) continue;
    std::optional<std::string> text = StringAt(found->bytes, at);
    if (!text) continue;
    if (std::find(function.referenced_strings.begin(), function.referenced_strings.end(), *text) ==
        function.referenced_strings.end()) {
      function.referenced_strings.push_back(std::move(*text));
    }
  }
}

void IdentityBuilder::AssignStableIds(std::vector<FunctionIdentity>& functions,
                                      std::uint32_t imported_count, std::uint32_t threads) {
  // Functions grouped by base, each group in index order (a stable sort of the indices).
  // Groups are independent: each writes only its own functions' ids and reads only bases,
  // which no group writes, so they may be separated on several threads in any order.
  std::vector<std::size_t> order(functions.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&functions](std::size_t a, std::size_t b) {
    return HashLess(functions[a].base, functions[b].base);
  });
  std::vector<std::size_t> group_starts;  // positions in `order` where a new base begins
  for (std::size_t p = 0; p < order.size(); ++p) {
    if (p == 0 || functions[order[p]].base != functions[order[p - 1]].base) {
      group_starts.push_back(p);
    }
  }
  group_starts.push_back(order.size());
  base::ParallelChunks(
      group_starts.size() - 1, threads, 512, [&](std::size_t begin, std::size_t end) {
        for (std::size_t g = begin; g < end; ++g) {
          AssignGroupStableIds(functions, imported_count,
                               std::span<const std::size_t>(order).subspan(
                                   group_starts[g], group_starts[g + 1] - group_starts[g]));
        }
      });
}

void IdentityBuilder::AssignGroupStableIds(std::vector<FunctionIdentity>& functions,
                                           std::uint32_t imported_count,
                                           std::span<const std::size_t> group) {
  const Hash128 base = functions[group[0]].base;
  if (group.size() == 1) {
    functions[group[0]].stable_id = functions[group[0]].BaseId();
    functions[group[0]].id_tier = 0;
    return;
  }
  // Tier keys, each hashing the previous one, so a function separated at tier k has an id
  // that depends only on its own inputs up to tier k (docs/warden.md §5.2).
  std::vector<Hash128> key(group.size());
  std::vector<std::size_t> left(group.size());  // positions in `group` still tied
  for (std::size_t p = 0; p < group.size(); ++p) left[p] = p;

  // Assigns tier `tier` to every function in `left` whose key is unique among `left`,
  // then keeps the rest.
  auto separate = [&](int tier) {
    std::map<Hash128, int> counts;
    for (std::size_t p : left) ++counts[key[p]];
    std::vector<std::size_t> still;
    for (std::size_t p : left) {
      FunctionIdentity& f = functions[group[p]];
      if (counts[key[p]] == 1) {
        f.id_tier = tier;
        f.stable_id = ExtendedId(f, tier, key[p]);
      } else {
        still.push_back(p);
      }
    }
    left = std::move(still);
  };

  // Tier 1: the base with the bases of the direct defined callees in call order.
  // Decision: every call site counts, repeats included; a callee index outside the module
  // (only in an invalid module) contributes a zero base.
  for (std::size_t p : left) {
    const FunctionIdentity& f = functions[group[p]];
    std::string input(base.begin(), base.end());
    PutU32(input, static_cast<std::uint32_t>(f.defined_callees.size()));
    for (wasm::FuncIndex callee : f.defined_callees) {
      Hash128 callee_base{};
      const std::size_t slot = callee - imported_count;
      if (callee >= imported_count && slot < functions.size()) {
        callee_base = functions[slot].base;
      }
      input.append(callee_base.begin(), callee_base.end());
    }
    key[p] = Sha256Prefix(input);
  }
  separate(1);
  // Tier 2: adds the exact hash.
  for (std::size_t p : left) {
    const FunctionIdentity& f = functions[group[p]];
    std::string input(key[p].begin(), key[p].end());
    input.append(f.exact.begin(), f.exact.end());
    key[p] = Sha256Prefix(input);
  }
  separate(2);
  // Tier 3: adds the ordinal among the still-identical functions, in index order (`group`
  // is in index order).
  std::map<Hash128, std::uint32_t> ordinals;
  for (std::size_t p : left) {
    std::string input(key[p].begin(), key[p].end());
    PutU32(input, ordinals[key[p]]++);
    key[p] = Sha256Prefix(input);
  }
  separate(3);
}

void IdentityBuilder::AddInitializedSegments() {
  // docs/warden.md §7.1: a passive segment has a known address when "the start/init function"
  // copies it with a constant memory.init. Decision: the init code is the start function and the
  // defined functions it calls directly (Emscripten's start function may be
  // __wasm_init_memory itself or call it); only the pattern `i32.const dest; i32.const src;
  // i32.const size; memory.init seg 0` is recognised, and a copy running past its segment
  // is ignored.
  if (!start_ || *start_ < imported_function_count_) return;
  std::vector<std::size_t> init_slots = {*start_ - imported_function_count_};
  if (init_slots[0] >= functions_.size()) return;
  for (wasm::FuncIndex callee : functions_[init_slots[0]].defined_callees) {
    const std::size_t slot = callee - imported_function_count_;
    if (callee >= imported_function_count_ && slot < functions_.size() &&
        std::find(init_slots.begin(), init_slots.end(), slot) == init_slots.end()) {
      init_slots.push_back(slot);
    }
  }
  for (std::size_t slot : init_slots) {
    for (const MemoryInit& init : memory_inits_[slot]) {
      auto it = passive_.find(init.segment);
      if (it == passive_.end()) continue;
      const std::span<const std::uint8_t> bytes = it->second;
      if (init.source > bytes.size() || init.size > bytes.size() - init.source) continue;
      segments_.push_back({init.address, bytes.subspan(init.source, init.size)});
    }
  }
}

ModuleIdentity IdentityBuilder::Finish(std::uint32_t threads) && {
  AddInitializedSegments();
  IndexSegments();
  // Each function reads only the (now fixed) names, exports and segments and writes only
  // itself, so the functions are split among the threads.
  base::ParallelChunks(
      functions_.size(), threads, 1024, [this](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          FunctionIdentity& f = functions_[i];
          if (auto it = names_.find(f.func_index); it != names_.end()) f.raw_name = it->second;
          if (auto it = export_names_.find(f.func_index); it != export_names_.end()) {
            f.export_names = it->second;
            f.is_exported = true;
          }
          ResolveStrings(f, constants_[i]);
        }
      });
  AssignStableIds(functions_, imported_function_count_, threads);
  return {.imports = std::move(imports_), .functions = std::move(functions_)};
}

Result<ModuleIdentity> ComputeModuleIdentity(std::span<const std::uint8_t> bytes,
                                             const wasm::ReadOptions& options) {
  IdentityBuilder builder(bytes);
  RETURN_IF_ERROR(wasm::ReadModule(bytes, builder, options));
  return std::move(builder).Finish();
}

}  // namespace trove::warden::identity
