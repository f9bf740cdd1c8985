#include "warden/pass/kb_agent_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "warden/agents/backend.h"
#include "warden/agents/pipeline.h"
#include "warden/ingest/ingest.h"
#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::pass {
namespace {

using base::testing::TempDir;
using ::testing::HasSubstr;
using wasm::testing::Bytes;
using wasm::testing::Cat;
using wasm::testing::Module;
using wasm::testing::Name;
using wasm::testing::Section;
using wasm::testing::Sized;
using wasm::testing::U;

// Imports env.puts (0); 1 references "disk full" and calls 2; 2 forwards to the import;
// 3 returns a constant. No names at all.
Bytes Stripped() {
  const Bytes types = Cat({U(2), {0x60, 0x00, 0x00}, {0x60, 0x00, 0x01, 0x7f}});
  const Bytes imports = Cat({U(1), Name("env"), Name("puts"), {0x00, 0x00}});
  const Bytes functions = Cat({U(3), U(0), U(0), U(1)});
  const Bytes memory = {0x01, 0x00, 0x01};
  const Bytes code = Cat({U(3), Sized({0x00, 0x41, 0x80, 0x08, 0x1a, 0x10, 0x02, 0x0b}),
                          Sized({0x00, 0x10, 0x00, 0x0b}), Sized({0x00, 0x41, 0x07, 0x0b})});
  const std::string text("disk full\0", 10);
  const Bytes data =
      Cat({U(1), {0x00, 0x41, 0x80, 0x08, 0x0b}, Sized(Bytes(text.begin(), text.end()))});
  return Module({Section(1, types), Section(2, imports), Section(3, functions), Section(5, memory),
                 Section(10, code), Section(11, data)});
}

class KbAgentStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb::KbOptions options;
    options.create_if_missing = true;
    auto opened = kb::Kb::Open(env_, dir_.path() + "/w.db", options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    kb_ = std::move(opened).value();
    const Bytes bytes = Stripped();
    ASSERT_TRUE(
        env_.WriteFile(dir_.path() + "/a.wasm", std::string(bytes.begin(), bytes.end())).ok());
    auto r = ingest::IngestFile(env_, *kb_, dir_.path() + "/a.wasm", ingest::IngestOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    version_ = r->store.version_id;
  }
  agents::RunSummary Pass(bool dry_run) {
    auto backend = agents::MakeBackend("offline", std::nullopt, agents::AgentConfig{});
    EXPECT_TRUE(backend.ok()) << backend.status().ToString();
    KbAgentStore store(*kb_);
    agents::PassOptions options;
    options.version_id = version_;
    options.dry_run = dry_run;
    base::Cancellation cancel;
    auto summary = agents::RunAgentPass(store, **backend, options, cancel);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return summary.ok() ? *summary : agents::RunSummary{};
  }

  TempDir dir_;
  base::PosixEnv env_;
  std::unique_ptr<kb::Kb> kb_;
  std::int64_t version_ = 0;
};

TEST_F(KbAgentStoreTest, FactsComeFromTheKb) {
  KbAgentStore store(*kb_);
  auto facts = store.Functions(version_);
  ASSERT_TRUE(facts.ok()) << facts.status().ToString();
  ASSERT_EQ(facts->size(), 3u);
  EXPECT_EQ((*facts)[0].func_index, 1u);
  EXPECT_THAT((*facts)[0].referenced_strings, ::testing::ElementsAre("disk full"));
  EXPECT_THAT((*facts)[0].defined_callees, ::testing::ElementsAre(2u));
  EXPECT_THAT((*facts)[0].instruction_mnemonics,
              ::testing::ElementsAre("i32.const", "drop", "call"));
  EXPECT_THAT((*facts)[1].call_targets, ::testing::ElementsAre("env.puts"));
  EXPECT_EQ(store.Functions(99).status().code(), base::StatusCode::kNotFound);
}

TEST_F(KbAgentStoreTest, OfflinePassNamesEverythingThroughTheGate) {
  // A human name first: the pass must skip it, and no agent write may touch it.
  KbAgentStore store(*kb_);
  auto facts = store.Functions(version_);
  ASSERT_TRUE(facts.ok());
  const std::string human_id = (*facts)[2].stable_id;
  ASSERT_TRUE(kb_->HumanSetName(kb::HumanChannel::kLib, human_id, "seven").ok());

  const agents::RunSummary dry = Pass(true);
  EXPECT_EQ(dry.written, 2);
  auto coverage = kb_->GetCoverage(version_);
  ASSERT_TRUE(coverage.ok());
  EXPECT_EQ(coverage->named, 1) << "a dry run wrote";

  const agents::RunSummary run = Pass(false);
  EXPECT_EQ(run.backend, "offline");
  EXPECT_EQ(run.skipped_existing, 1);
  EXPECT_EQ(run.written, 2);
  EXPECT_EQ(run.proposed, run.written + run.rejected_by_verifier + run.rejected_by_economy);
  coverage = kb_->GetCoverage(version_);
  ASSERT_TRUE(coverage.ok());
  EXPECT_EQ(coverage->named, 3);
  EXPECT_EQ(coverage->agent_named, 2);
  auto human = kb_->GetSymbol(human_id);
  ASSERT_TRUE(human.ok() && human->has_value());
  EXPECT_EQ((*human)->name, "seven");
  EXPECT_TRUE((*human)->locked);
  // The writes carry the path's actor.
  auto first = kb_->GetSymbol((*facts)[0].stable_id);
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->provenance, "agent");
  EXPECT_EQ((*first)->evidence.back().actor, "agent:offline");
  EXPECT_THAT(*(*first)->name, HasSubstr("disk"));

  // A preview agrees with the gate: the same proposal again is a rejection (equal confidence).
  agents::AgentWrite again{(*facts)[0].stable_id, *(*first)->name, "",
                           (*first)->confidence,  "agent:offline", "{}"};
  auto preview = store.PreviewAgentProposal(again);
  ASSERT_TRUE(preview.ok());
  auto real = store.WriteAgentProposal(again);
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(preview->accepted, real->accepted);
  EXPECT_EQ(preview->reason, real->reason);
  EXPECT_FALSE(real->accepted);
}

}  // namespace
}  // namespace trove::warden::pass

namespace trove::warden::pass {
namespace {

// A KB at a URL has no project directory, whatever its query string holds.
TEST(ProjectDirOfDbTest, UrlHasNone) {
  EXPECT_EQ(ProjectDirOfDb("/p/.warden/warden.db"), "/p");
  EXPECT_EQ(ProjectDirOfDb("/p/kb.db"), "");
  EXPECT_EQ(ProjectDirOfDb("postgresql://team@db.example/warden"), "");
  EXPECT_EQ(ProjectDirOfDb("postgres://h/x?host=/p/.warden/warden.db"), "");
}

}  // namespace
}  // namespace trove::warden::pass
