// Function identity for WARDEN (docs/warden.md §5): for every defined function of a module,
// the normalised token stream of its body (scheme `w1`, §5.2), the stable_id derived from it
// (with the uniqueness tiers of §5.2), the four fingerprints of §5.3 (structural, semantic,
// MinHash, exact) and the FunctionFacts fields of §7.1 that come straight from the module.
//
// IdentityBuilder is a ModuleVisitor, so it can run beside other visitors over one read;
// ComputeModuleIdentity runs it alone over one ReadModule pass.
//
// Determinism (§5.5): every output depends only on the module bytes; nothing here reads a
// clock, a random source, a hash seed of the standard library or the iteration order of an
// unordered container.
// Thread safety: an IdentityBuilder belongs to the one thread running ReadModule, except that
// bodies of different functions may be visited concurrently (ConcurrentBodies). The free
// functions may be called from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/hash.h"
#include "base/status.h"
#include "warden/wasm/module_visitor.h"
#include "warden/wasm/reader.h"

namespace trove::warden::identity {

// The prefix of every stable_id of a defined function under the current normalisation. Any
// change to normalisation, encoding or hash inputs needs a new scheme and a new prefix (§5.2).
inline constexpr std::string_view kSchemePrefix = "w1:";
// The `<indirect>` entry of FunctionFacts.call_targets (§7.1).
inline constexpr std::string_view kIndirectTarget = "<indirect>";
// MinHash values per function (§5.3: 32 values over instruction 4-grams).
inline constexpr std::size_t kMinHashSize = 32;
// Instructions per MinHash shingle.
inline constexpr std::size_t kGramSize = 4;
// Limits of the string resolver (§7.1).
inline constexpr std::size_t kMaxStringScanBytes = 4096;
inline constexpr std::size_t kMinStringChars = 4;
inline constexpr std::size_t kMaxStringChars = 200;

// The 21 opcode classes of the semantic fingerprint (§5.3), in histogram order.
enum class OpClass : std::uint8_t {
  kControl,
  kCall,
  kParametric,
  kLocal,
  kGlobal,
  kLoad,
  kStore,
  kMemoryOther,
  kConst,
  kIntCompare,
  kIntArith,
  kBitwise,
  kFloatCompare,
  kFloatArith,
  kConversion,
  kSimd,
  kAtomic,
  kBulk,
  kReference,
  kTable,
  kException,
};
inline constexpr std::size_t kOpClassCount = 21;

using Hash128 = std::array<std::uint8_t, 16>;
using Histogram = std::array<std::uint32_t, kOpClassCount>;
using MinHash = std::array<std::uint64_t, kMinHashSize>;

// Returns the class of `opcode` in the semantic histogram.
OpClass ClassifyOpcode(wasm::Opcode opcode);

// Returns the signature text of `type`: "(i32, i64) -> f32"; no result is "()", several are
// parenthesised: "(i32) -> (i32, i64)".
std::string SignatureText(const wasm::FuncType& type);

// Returns the text-format name of a value type ("i32", "funcref", ...).
std::string_view ValTypeName(wasm::ValType type);

// Returns the first 16 bytes of SHA-256 over `data`, the one primitive of every non-exact
// hash (§5.3, Decision).
Hash128 Sha256Prefix(std::string_view data);

// Returns the FNV-1a 64 hash of `data` (§5.3, the MinHash token hash).
std::uint64_t Fnv1a64(std::string_view data);

// Returns the 32 MinHash seeds: the first 32 outputs of splitmix64 started from
// kMinHashSeedState (§5.3).
inline constexpr std::uint64_t kMinHashSeedState = 0x57415244454e3031;  // "WARDEN01"
std::array<std::uint64_t, kMinHashSize> MinHashSeeds();

// Returns the MinHash of a token stream, each token given as its canonical encoding.
// Fewer than four tokens form one gram; no token at all forms one empty gram.
MinHash ComputeMinHash(std::span<const std::string> tokens);
// The same from the tokens' Fnv1a64 hashes.
MinHash ComputeMinHashOfTokenHashes(std::span<const std::uint64_t> token_hashes);
// The same, with `grams` as scratch space (its capacity is kept for the next call).
MinHash ComputeMinHashOfTokenHashes(std::span<const std::uint64_t> token_hashes,
                                    std::vector<std::uint64_t>& grams);

namespace internal {
// The implementations of the MinHash fold this CPU can run ("generic", "avx2", "avx512"), and
// ComputeMinHashOfTokenHashes with one of them (nullopt if not available); for tests.
std::vector<std::string_view> MinHashFolds();
std::optional<MinHash> ComputeMinHashWithFold(std::string_view fold,
                                              std::span<const std::uint64_t> token_hashes);
}  // namespace internal

// An imported function: its index, "import:<module>.<field>" identity and signature.
struct ImportedFunction {
  wasm::FuncIndex func_index = 0;
  std::string module;
  std::string field;
  std::string stable_id;  // "import:<module>.<field>"
  std::string type_signature;
};

// Everything identity knows about one defined function.
struct FunctionIdentity {
  // --- FunctionFacts (§7.1) ---
  wasm::FuncIndex func_index = 0;
  // The final stable_id: "w1:" + hex(base) when the base is unique in the module, else the
  // extended id of the tier that separated it (see id_tier).
  std::string stable_id;
  std::string type_signature;
  // Direct import call targets ("module.field") and `<indirect>`, deduplicated, in order of
  // first occurrence.
  std::vector<std::string> call_targets;
  // Strings referenced through decoded i32/i64 constants (§7.1), into memory 0 only: active
  // segments with a constant offset, and passive ones the start function (or a function it
  // calls directly) copies with a constant memory.init. See IdentityBuilder::OnDataSegment.
  std::vector<std::string> referenced_strings;
  std::optional<std::string> raw_name;  // from the name section
  // Decoded opcodes in order, the body's final `end` excluded (§4.2), as the stored opcode
  // stream (wasm::AppendOpcodeStream: each opcode's binary encoding) rather than strings;
  // InstructionMnemonics() gives the text.
  std::string opcode_stream;
  bool is_exported = false;

  // --- more facts ---
  std::vector<std::string> export_names;  // in export-section order
  std::uint32_t instruction_count = 0;    // the body's final `end` excluded (§4.2)
  // Direct calls (call, return_call) to defined functions, in call order, repeats kept.
  std::vector<wasm::FuncIndex> defined_callees;

  // --- identity (§5.2) ---
  // Normalised tokens hashed, the body's final `end` included (the encodings themselves are
  // hashed on the fly and not kept).
  std::uint32_t token_count = 0;
  // First 16 bytes of SHA-256 over signature, locals and token stream.
  Hash128 base{};
  // 0: the base alone; 1: base + callee bases; 2: + exact hash; 3: + ordinal (§5.2).
  int id_tier = 0;

  // --- fingerprints (§5.3) ---
  Hash128 structural{};
  Histogram histogram{};               // opcode classes, the final `end` excluded
  std::vector<std::string> call_outs;  // sorted set of imports called, "module.field"
  Hash128 semantic{};                  // hash of histogram, call_outs and type_signature
  MinHash minhash{};
  base::Sha256Digest exact{};  // SHA-256 of the raw body bytes (locals and instructions)

  // Returns "w1:" + hex(base), the tier-0 id whatever id_tier is.
  std::string BaseId() const;
  // Returns the FunctionFacts `instruction_mnemonics` (§7.1): the text of each opcode.
  std::vector<std::string_view> InstructionMnemonics() const;
};

struct ModuleIdentity {
  std::vector<ImportedFunction> imports;    // imported functions, in index order
  std::vector<FunctionIdentity> functions;  // defined functions, in index order
};

// IdentityBuilder: the ModuleVisitor that fills a ModuleIdentity.
class IdentityBuilder final : public wasm::ModuleVisitor {
 public:
  // `module_bytes` are the bytes given to ReadModule and must outlive this object.
  explicit IdentityBuilder(std::span<const std::uint8_t> module_bytes);

  // Returns the identity of the module: resolves referenced strings and assigns stable ids,
  // on up to `threads` threads (the calling one included); the result does not depend on
  // `threads`.
  // REQUIRES: ReadModule over module_bytes with this visitor returned OK.
  ModuleIdentity Finish(std::uint32_t threads = 1) &&;

  // Bodies of different functions may be read on several threads (ReadOptions::
  // decode_threads): each keeps its state in its own slot.
  bool ConcurrentBodies() const override { return true; }
  Status OnType(std::uint32_t index, const wasm::FuncType& type) override;
  Status OnImport(const wasm::Import& import) override;
  Status OnFunctionCount(std::uint32_t count) override;
  Status OnFunction(wasm::FuncIndex func, std::uint32_t type_index) override;
  Status OnExport(const wasm::Export& export_) override;
  Status OnFunctionBody(const wasm::FunctionBody& body) override;
  Status OnInstruction(wasm::FuncIndex func, const wasm::Instruction& inst) override;
  Status OnInstructions(wasm::FuncIndex func, std::span<const wasm::Instruction> insts) override;
  Status OnFunctionBodyEnd(wasm::FuncIndex func) override;
  Status OnDataSegment(const wasm::DataSegment& segment) override;
  Status OnFunctionName(wasm::FuncIndex func, std::string_view name) override;
  Status OnStart(wasm::FuncIndex func) override;

 private:
  struct Segment {
    std::uint64_t address = 0;
    std::span<const std::uint8_t> bytes;
  };
  // Per-body state between OnFunctionBody and OnFunctionBodyEnd. Bodies are recycled
  // (AcquireBody, ReleaseBody) so that their buffers keep their capacity from one function
  // to the next instead of being allocated, grown and freed for each of them.
  struct Body {
    std::size_t slot = 0;  // index into functions_
    // The hash input of the base, in encoded[0, encoded_size): the encoded signature and
    // locals, the token count (patched at the end, at count_at), then each token
    // length-prefixed. The bytes after encoded_size are scratch that is never hashed: the
    // buffer keeps room there so that a token is copied in with one fixed-size copy (no
    // per-token append), and keeps its capacity from one body to the next. It is left
    // uninitialised (not a std::string, whose resize zero-filled the whole room), so only the
    // bytes written are ever touched.
    std::unique_ptr<char[]> encoded;
    std::size_t encoded_capacity = 0;
    std::size_t encoded_size = 0;
    std::size_t count_at = 0;
    std::string token;  // scratch for a token with variable-size operands
    // The FNV-1a hash of each token, in token_hashes[0, token_count). Uninitialised like
    // `encoded`, and sized from the body (a token takes at least one body byte).
    std::unique_ptr<std::uint64_t[]> token_hashes;
    std::size_t token_hashes_capacity = 0;
    std::size_t token_count = 0;
    std::vector<std::uint64_t> grams;  // MinHash scratch
    // The opcode stream (wasm::AppendOpcodeStream) of the tokens so far, in
    // opcode_stream[0, opcode_stream_size); the last opcode took last_opcode_size bytes. An
    // opcode's stream encoding is never longer than its encoding in the body.
    std::unique_ptr<char[]> opcode_stream;
    std::size_t opcode_stream_capacity = 0;
    std::size_t opcode_stream_size = 0;
    std::size_t last_opcode_size = 0;
    wasm::Opcode last_opcode = wasm::Opcode::kUnreachable;
    Histogram histogram{};  // of every token's opcode, the last one included
    // The structural skeleton: the 5 opcode bytes of each skeleton token, in
    // skeleton[0, skeleton_size), with 8 bytes of room kept after them.
    std::unique_ptr<char[]> skeleton;
    std::size_t skeleton_capacity = 0;
    std::size_t skeleton_size = 0;
    // The run of i32/i64.const values just before this point: the last min(3, count) of them,
    // recent_consts[(recent_count - 1) % 3] the newest.
    std::array<std::uint64_t, 3> recent_consts{};
    std::size_t recent_count = 0;
    // The body's i32/i64 constants in order, each as an unsigned LEB128; copied to
    // constants_ at the end.
    std::string constants;
    std::string scratch;  // the locals and the semantic hash input, built before hashing
  };

  // Returns the state of func's body while it is being read, or null.
  Body* BodyOf(wasm::FuncIndex func) const;
  // Returns a cleared Body (any thread).
  Body* AcquireBody();
  // Appends `size` bytes to body.encoded; `expect` (if larger) is room to make for what is
  // still to come.
  static void AppendEncoded(Body& body, const char* bytes, std::size_t size, std::size_t expect);
  // Makes room for `room` more bytes in body.encoded.
  static void Reserve(Body& body, std::size_t room);
  // Room kept free in body.encoded per fixed-size token (see OnInstructions): at least its
  // largest encoding (26 bytes) and the 16-byte head copy.
  static constexpr std::size_t kFixedTokenRoom = 32;
  // Makes room for `tokens` more token hashes and `stream_bytes` more opcode stream bytes.
  static void ReserveTokens(Body& body, std::size_t tokens, std::size_t stream_bytes);
  // Makes room for one more skeleton token.
  static void ReserveSkeleton(Body& body);
  // What OnInstructions needs of each opcode (identity.cc), and the table of them by Opcode.
  struct OpFacts;
  static const OpFacts* OpFactsTable();
  void ReleaseBody(Body* body);
  Result<std::string_view> TypeSignature(std::uint32_t type_index) const;
  // Append the canonical encoding of a token or a block type to `out`.
  Status EncodeToken(std::string& out, const wasm::Instruction& inst) const;
  Status EncodeBlockType(std::string& out, const wasm::BlockType& type, std::uint64_t offset) const;
  std::string EncodeTag(std::uint32_t tag) const;
  const ImportedFunction* ImportedFunctionAt(wasm::FuncIndex func) const;
  void AddInitializedSegments();
  // Builds pieces_ from segments_ (as they are when they are in address order without
  // overlap, else PaintSegments), then page_first_ (IndexPages).
  void IndexSegments();
  void PaintSegments();
  void IndexPages();
  // Returns the segment written last that holds `address`, or null.
  const Segment* SegmentAt(std::uint64_t address) const;
  // Resolves the referenced strings of `function` from its constants (Body::constants).
  void ResolveStrings(FunctionIdentity& function, std::string_view constants) const;
  static void AssignStableIds(std::vector<FunctionIdentity>& functions,
                              std::uint32_t imported_count, std::uint32_t threads);
  // Assigns the ids of one group of functions sharing a base (positions in `functions`, in
  // index order), reading the bases of their callees.
  static void AssignGroupStableIds(std::vector<FunctionIdentity>& functions,
                                   std::uint32_t imported_count,
                                   std::span<const std::size_t> group);

  const std::span<const std::uint8_t> module_bytes_;
  std::vector<wasm::FuncType> types_;
  std::vector<std::string> type_signatures_;  // SignatureText of each type
  std::vector<ImportedFunction> imports_;
  std::vector<std::string> import_targets_;             // "module.field" of each of imports_
  std::map<std::uint32_t, std::string> imported_tags_;  // tag index -> "module.field"
  std::map<wasm::FuncIndex, std::string> names_;        // name section, first name wins
  std::map<wasm::FuncIndex, std::vector<std::string>> export_names_;
  std::uint32_t imported_function_count_ = 0;
  std::vector<FunctionIdentity> functions_;  // defined, by index - imports
  std::vector<std::string> constants_;       // per defined function: Body::constants
  // A `memory.init` of memory 0 whose destination, source and size are the three constants
  // right before it.
  struct MemoryInit {
    std::uint32_t segment = 0;
    std::uint64_t address = 0;
    std::uint64_t source = 0;
    std::uint64_t size = 0;
  };
  std::vector<std::vector<MemoryInit>> memory_inits_;  // per defined function
  std::vector<Segment> segments_;  // memory 0 bytes with a known address, in write order
  // Disjoint address ranges [start, end) sorted by start, each naming the segment written last
  // over it: one binary search per constant instead of a scan of every segment.
  struct Piece {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::size_t segment = 0;  // index into segments_
  };
  std::vector<Piece> pieces_;
  // For each kPageBytes-aligned page of [pieces_.front().start, pieces_.back().end), the first
  // piece that ends after the page's start: SegmentAt looks at a piece or two from there
  // instead of a binary search over every piece (28,951 in ffmpeg-core).
  static constexpr unsigned kPageShift = 8;
  std::vector<std::uint32_t> page_first_;
  std::uint64_t pages_start_ = 0;
  std::map<std::uint32_t, std::span<const std::uint8_t>> passive_;  // passive segments
  std::optional<wasm::FuncIndex> start_;
  std::vector<Body*> bodies_;  // per defined function, while its body is read
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Body>> pool_;  // every Body made; GUARDED_BY(pool_mu_)
  std::vector<Body*> free_bodies_;           // those not in use; GUARDED_BY(pool_mu_)
};

// Reads `bytes` once and returns the identity of every function.
Result<ModuleIdentity> ComputeModuleIdentity(std::span<const std::uint8_t> bytes,
                                             const wasm::ReadOptions& options = {});

}  // namespace trove::warden::identity
