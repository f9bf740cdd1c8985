#include "warden/ingest/ingest.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "base/env.h"
#include "base/hash.h"
#include "base/thread_pool.h"
#include "warden/identity/identity.h"
#include "warden/kb/kb.h"
#include "warden/wasm/instruction.h"
#include "warden/wasm/reader.h"

namespace trove::warden::ingest {

namespace {

std::string Hex(std::span<const std::uint8_t> bytes) { return base::ToHex(bytes); }

kb::FunctionRecord ImportRecord(const identity::ImportedFunction& import) {
  kb::FunctionRecord r;
  r.func_index = import.func_index;
  r.is_import = true;
  r.import_module = import.module;
  r.import_field = import.field;
  r.type_signature = import.type_signature;
  r.stable_id = import.stable_id;
  return r;
}

// Takes what it can from `f` (moved, not copied: the identity is not used afterwards).
kb::FunctionRecord DefinedRecord(identity::FunctionIdentity& f, std::uint64_t body_offset,
                                 std::uint64_t body_size) {
  kb::FunctionRecord r;
  r.func_index = f.func_index;
  r.type_signature = std::move(f.type_signature);
  r.stable_id = std::move(f.stable_id);
  r.id_tier = f.id_tier;
  r.norm_hash = Hex(f.base);
  r.exact_hash = Hex(f.exact);
  r.structural_hash = Hex(f.structural);
  std::copy(f.minhash.begin(), f.minhash.end(), r.minhash.begin());
  std::copy(f.histogram.begin(), f.histogram.end(), r.histogram.begin());
  r.call_outs = std::move(f.call_outs);
  r.defined_callees = std::move(f.defined_callees);
  r.instruction_count = f.instruction_count;
  r.body_offset = body_offset;
  r.body_size = body_size;
  r.raw_name = std::move(f.raw_name);
  r.export_names = std::move(f.export_names);
  r.call_targets = std::move(f.call_targets);
  r.referenced_strings = std::move(f.referenced_strings);
  r.opcodes = std::move(f.opcode_stream);
  return r;
}

// The ingest's progress on one scale of 3: [0, 1) read, [1, 2) fingerprint (functions
// decoded), [2, 3) store (function rows written), 3 done.
constexpr double kPhases = 3;

void Report(const IngestOptions& options, double done, double total, const std::string& what) {
  if (options.progress != nullptr) options.progress->Report(done, total, what);
}

// Counts the bodies decoded, on every decode thread, with one relaxed increment each, and
// reports at each whole percent of them: the increment that reaches a new percent reports,
// under a lock, and only if no higher count was reported before it, so the reports are
// monotonic and the last one is all of them.
class DecodeProgress {
 public:
  explicit DecodeProgress(const IngestOptions& options) : options_(options) {}
  void SetTotal(std::uint32_t total) { total_ = total; }  // before any body is decoded
  void OnDecoded() {
    const std::uint64_t n = decoded_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n > total_ || n * 100 / total_ == (n - 1) * 100 / total_) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (n <= reported_) return;
    reported_ = n;
    Report(options_, 1 + static_cast<double>(n) / static_cast<double>(total_), kPhases,
           fmt::format("fingerprint {}/{} functions", n, total_));
  }

 private:
  const IngestOptions& options_;
  std::uint64_t total_ = 0;
  std::atomic<std::uint64_t> decoded_{0};
  std::mutex mu_;
  std::uint64_t reported_ = 0;  // guarded by mu_
};

// Records each body's offset and size, which identity does not keep, and counts decoded
// bodies for `progress` when given.
class BodyLocations final : public wasm::ModuleVisitor {
 public:
  explicit BodyLocations(DecodeProgress* progress) : progress_(progress) {}
  bool ConcurrentBodies() const override { return true; }
  bool ReadsInstructions() const override { return false; }
  Status OnFunctionCount(std::uint32_t count) override {
    locations_.reserve(count);
    if (progress_ != nullptr) progress_->SetTotal(count);
    return {};
  }
  Status OnFunction(wasm::FuncIndex func, std::uint32_t /*type_index*/) override {
    if (first_defined_ == kNone) first_defined_ = func;
    locations_.emplace_back();
    return {};
  }
  Status OnFunctionBody(const wasm::FunctionBody& body) override {
    const std::size_t slot = body.func_index - first_defined_;
    if (first_defined_ == kNone || body.func_index < first_defined_ || slot >= locations_.size()) {
      return Status::Internal(fmt::format("ingest: body of unknown function {}", body.func_index));
    }
    locations_[slot] = {body.offset, body.size};  // distinct slots: safe across threads
    return {};
  }
  Status OnFunctionBodyEnd(wasm::FuncIndex /*func*/) override {
    if (progress_ != nullptr) progress_->OnDecoded();
    return {};
  }
  std::pair<std::uint64_t, std::uint64_t> At(std::size_t slot) const {
    return slot < locations_.size() ? locations_[slot] : std::pair<std::uint64_t, std::uint64_t>{};
  }

 private:
  static constexpr wasm::FuncIndex kNone = ~wasm::FuncIndex{0};
  DecodeProgress* const progress_;
  wasm::FuncIndex first_defined_ = kNone;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> locations_;
};

std::uint32_t DecodeThreads(std::uint32_t requested) {
  if (requested != 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return std::clamp<std::uint32_t>(hw == 0 ? 1 : hw, 1, 8);
}

}  // namespace

Result<PreparedVersion> PrepareVersion(std::span<const std::uint8_t> bytes,
                                       const std::string& wasm_path, const IngestOptions& options) {
  identity::IdentityBuilder identity(bytes);
  ModuleFactsVisitor module;
  std::optional<DecodeProgress> progress;
  if (options.progress != nullptr && options.progress->active()) progress.emplace(options);
  BodyLocations locations(progress ? &*progress : nullptr);
  FanOutVisitor all({&identity, &module, &locations});
  wasm::ReadOptions read;
  read.decode_threads = DecodeThreads(options.threads);
  // The module's SHA-256 needs only its bytes, so it is computed on a thread of its own while
  // the sections are read (~20 ms of ffmpeg-core's ingest that was serial before).
  std::string sha256;
  std::thread hasher([&sha256, bytes] {
    sha256 = base::ToHex(
        base::Sha256(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
  });
  Status read_status = wasm::ReadModule(bytes, all, read);
  hasher.join();
  RETURN_IF_ERROR(read_status);
  identity::ModuleIdentity ids = std::move(identity).Finish(read.decode_threads);

  PreparedVersion out;
  out.module = std::move(module.facts());
  kb::VersionRecord& v = out.version;
  v.label = options.label;
  v.wasm_path = wasm_path;
  v.sha256 = std::move(sha256);
  v.size = bytes.size();
  v.imported_count = static_cast<std::uint32_t>(ids.imports.size());
  v.defined_count = static_cast<std::uint32_t>(ids.functions.size());
  v.emscripten_version = options.emscripten_version;
  v.emscripten_version_source = options.emscripten_version_source;
  v.shared_memory = out.module.shared_memory;
  v.memory_count = out.module.memory_count;
  v.memory64 = out.module.memory64;
  v.features_json = FeaturesJson(out.module);
  v.producers_json = ProducersJson(out.module);
  v.glue_path = options.glue_path;
  v.glue_json = options.glue_json;

  if (options.seed) out.seeds = PlanSeeds(ids, options.glue);
  // Each record is built from its own import or identity into its own slot, on the decode
  // threads.
  const std::size_t imports = ids.imports.size();
  out.functions = base::ParallelArray<kb::FunctionRecord>::Build(
      imports + ids.functions.size(), read.decode_threads, 1024, [&](std::size_t i) {
        if (i < imports) return ImportRecord(ids.imports[i]);
        const auto [offset, size] = locations.At(i - imports);
        return DefinedRecord(ids.functions[i - imports], offset, size);
      });
  return out;
}

Result<PreparedVersion> ReadAndPrepare(base::Env& env, const std::string& wasm_path,
                                       const IngestOptions& options) {
  Report(options, 0, kPhases, "read");
  if (options.map_module) {
    Result<base::MappedFile> mapped = base::MappedFile::Open(wasm_path);
    if (mapped.ok()) {
      Report(options, 1, kPhases, "fingerprint");
      return PrepareVersion(mapped->bytes(), wasm_path, options);  // copies what it keeps
    }
    // Not a regular file (a pipe, a directory): read through the Env, as without the option.
    if (mapped.status().code() != base::StatusCode::kUnsupported) return mapped.status();
  }
  ASSIGN_OR_RETURN(std::string data, env.ReadFile(wasm_path));
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(data.data()),
                                            data.size());
  Report(options, 1, kPhases, "fingerprint");
  return PrepareVersion(bytes, wasm_path, options);
}

Result<IngestReport> StorePrepared(kb::Kb& kb, PreparedVersion prepared,
                                   const IngestOptions& options) {
  Report(options, 2, kPhases, "store");
  IngestReport report;
  report.sha256 = prepared.version.sha256;
  report.size = prepared.version.size;
  report.imported = prepared.version.imported_count;
  report.defined = prepared.version.defined_count;
  report.emscripten_version = prepared.version.emscripten_version;
  report.emscripten_version_source = prepared.version.emscripten_version_source;
  report.seeds_planned = prepared.seeds.size();
  kb::Kb::RowsProgress on_rows;
  if (options.progress != nullptr && options.progress->active()) {
    on_rows = [&options](std::size_t rows, std::size_t total) {
      Report(options, 2 + static_cast<double>(rows) / static_cast<double>(total), kPhases,
             fmt::format("store {}/{} rows", rows, total));
    };
  }
  ASSIGN_OR_RETURN(report.store, kb.StoreVersion(prepared.version, prepared.functions.span(),
                                                 prepared.seeds, on_rows));
  report.module = std::move(prepared.module);
  Report(options, kPhases, kPhases, "done");
  return report;
}

Result<IngestReport> IngestFile(base::Env& env, kb::Kb& kb, const std::string& wasm_path,
                                const IngestOptions& options) {
  ASSIGN_OR_RETURN(PreparedVersion prepared, ReadAndPrepare(env, wasm_path, options));
  return StorePrepared(kb, std::move(prepared), options);
}

}  // namespace trove::warden::ingest
