// libFuzzer target: the WARDEN wasm reader. Each input is read as a module with a visitor
// that touches every reported value, under small limits so that deep or wide inputs cross
// them quickly. No input may crash, hang, or reach a CHECK; errors are ordinary Statuses.
#include <cstddef>
#include <cstdint>
#include <span>

#include "warden/wasm/reader.h"

namespace {

using namespace trove::warden::wasm;

class TouchingVisitor final : public ModuleVisitor {
 public:
  trove::Status OnInstruction(FuncIndex func, const Instruction& inst) override {
    sum_ += func + inst.index + inst.targets.size() + inst.catches.size() +
            GetOpcodeInfo(inst.opcode).text.size();
    return {};
  }
  trove::Status OnDataSegment(const DataSegment& segment) override {
    for (std::uint8_t b : segment.bytes) sum_ += b;
    return {};
  }
  trove::Status OnFunctionName(FuncIndex func, std::string_view name) override {
    sum_ += func + name.size();
    return {};
  }
  trove::Status OnCustomSection(std::string_view name, std::uint64_t offset,
                                std::span<const std::uint8_t> payload) override {
    sum_ += name.size() + offset + payload.size();
    return {};
  }
  std::uint64_t sum() const { return sum_; }

 private:
  std::uint64_t sum_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ReadOptions options;
  options.max_section_items = 10'000;
  options.max_locals = 1'000;
  options.max_br_table_targets = 1'000;
  options.max_nesting = 200;
  TouchingVisitor visitor;
  trove::Status status = ReadModule(std::span<const std::uint8_t>(data, size), visitor, options);
  if (!status.ok() && status.message().empty()) __builtin_trap();
  return 0;
}
