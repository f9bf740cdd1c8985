// The `warden` commands' exit codes and leftovers (docs/warden.md §2.1, §2.4, §4.3, §4.5;
// issue 17): a directory as the module, a bad name for set-name, a malformed module into a KB
// the command creates (nothing is left) or into an existing one (unchanged), the error line's
// offset and function, and a malformed name section (a warning, and the code is ingested).
#include "warden/cli/commands.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "warden/kb/kb.h"
#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using wasm::testing::Bytes;
using wasm::testing::Cat;
using wasm::testing::Module;
using wasm::testing::Name;
using wasm::testing::Section;
using wasm::testing::Sized;
using wasm::testing::U;

// func 0 () -> (): nop; func 1 (exported "run"): `body1`; then the name section `names` (none
// when empty).
Bytes TwoFunctions(const Bytes& body1, const Bytes& names = {}) {
  Bytes module = Module({Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, {0x02, 0x00, 0x00}),
                         Section(7, Cat({U(1), Name("run"), {0x00, 0x01}})),
                         Section(10, Cat({{0x02}, Sized({0x00, 0x01, 0x0b}), Sized(body1)}))});
  if (!names.empty()) {
    const Bytes section = Section(0, Cat({Name("name"), names}));
    module.insert(module.end(), section.begin(), section.end());
  }
  return module;
}

class CommandsTest : public ::testing::Test {
 protected:
  CommandsTest() { global_.cwd = dir_.path(); }

  std::string Write(const std::string& name, const Bytes& bytes) {
    const std::string path = dir_.Abs(name);
    EXPECT_TRUE(env_.WriteFile(path, std::string(bytes.begin(), bytes.end())).ok());
    return path;
  }
  // Runs `warden ingest` and returns its exit code; its stderr goes to *err.
  int Ingest(const std::string& wasm, const std::string& db, std::string* err = nullptr) {
    GlobalOptions global = global_;
    global.db = db;
    IngestArgs args;
    args.wasm = wasm;
    ::testing::internal::CaptureStderr();
    const int code = RunIngest(env_, global, args);
    const std::string text = ::testing::internal::GetCapturedStderr();
    if (err != nullptr) *err = text;
    return code;
  }
  std::vector<std::string> FilesIn(const std::string& dir) {
    std::vector<std::string> out;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  base::testing::TempDir dir_{"warden_commands_test"};
  base::PosixEnv env_;
  GlobalOptions global_;
};

TEST_F(CommandsTest, ADirectoryAsTheModuleIsAUsageErrorAndCreatesNoKb) {
  fs::create_directory(dir_.Abs("mod.wasm"));
  std::string err;
  EXPECT_EQ(Ingest(dir_.Abs("mod.wasm"), dir_.Abs("new.db"), &err), kExitUsage);
  EXPECT_THAT(err, HasSubstr("cannot read"));
  EXPECT_THAT(err, HasSubstr("is a directory"));
  EXPECT_FALSE(fs::exists(dir_.Abs("new.db")));
}

// A failed first ingest leaves nothing that was not there before: not the database, nor its
// -wal, -shm or -journal files.
TEST_F(CommandsTest, AMalformedModuleIntoANewKbLeavesNoFile) {
  fs::create_directory(dir_.Abs("kb"));
  const std::string bad = Write("bad.wasm", TwoFunctions({0x00, 0x02, 0x40, 0x0b}));
  std::string err;
  EXPECT_EQ(Ingest(bad, dir_.Abs("kb/new.db"), &err), kExitMalformed);
  EXPECT_THAT(err, HasSubstr("malformed wasm at offset"));
  EXPECT_TRUE(FilesIn(dir_.Abs("kb")).empty()) << fmt::format("{}", FilesIn(dir_.Abs("kb")).size());
  // A truncated module too, and again (the first failure left nothing in the way).
  Bytes cut = TwoFunctions({0x00, 0x01, 0x0b});
  cut.resize(cut.size() - 3);
  const std::string truncated = Write("cut.wasm", cut);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(Ingest(truncated, dir_.Abs("kb/new.db")), kExitMalformed);
    EXPECT_TRUE(FilesIn(dir_.Abs("kb")).empty());
  }
  // The good module then creates it.
  const std::string good = Write("good.wasm", TwoFunctions({0x00, 0x01, 0x0b}));
  EXPECT_EQ(Ingest(good, dir_.Abs("kb/new.db")), kExitOk);
  EXPECT_TRUE(fs::exists(dir_.Abs("kb/new.db")));
}

// Into an existing KB, a malformed module changes nothing and removes nothing.
TEST_F(CommandsTest, AMalformedModuleIntoAnExistingKbKeepsIt) {
  const std::string good = Write("good.wasm", TwoFunctions({0x00, 0x01, 0x0b}));
  ASSERT_EQ(Ingest(good, dir_.Abs("kb.db")), kExitOk);
  const std::string bad = Write("bad.wasm", TwoFunctions({0x00, 0x02, 0x40, 0x0b}));
  EXPECT_EQ(Ingest(bad, dir_.Abs("kb.db")), kExitMalformed);
  ASSERT_TRUE(fs::exists(dir_.Abs("kb.db")));
  auto k = kb::Kb::Open(env_, dir_.Abs("kb.db"));
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  Result<std::vector<kb::VersionInfo>> versions = (*k)->ListVersions();
  ASSERT_TRUE(versions.ok());
  EXPECT_EQ(versions->size(), 1u);
}

// An empty KB made by `init` (or an earlier command) is not the failed command's to remove.
TEST_F(CommandsTest, AnEmptyKbThatExistedIsKept) {
  {
    kb::KbOptions options;
    options.create_if_missing = true;
    ASSERT_TRUE(kb::Kb::Open(env_, dir_.Abs("empty.db"), options).ok());
  }
  const std::string bad = Write("bad.wasm", TwoFunctions({0x00, 0x02, 0x40, 0x0b}));
  EXPECT_EQ(Ingest(bad, dir_.Abs("empty.db")), kExitMalformed);
  EXPECT_TRUE(fs::exists(dir_.Abs("empty.db")));
}

// §4.5: offset in hex and decimal, the section and, in the code section, the function.
TEST_F(CommandsTest, TheErrorLineNamesOffsetSectionAndFunction) {
  const Bytes module = TwoFunctions({0x00, 0x02, 0x40, 0x0b});
  const std::string bad = Write("bad.wasm", module);
  // The body of function 1 is the last 4 bytes; it ends inside its block at its end.
  const std::size_t at = module.size();
  std::string err;
  EXPECT_EQ(Ingest(bad, dir_.Abs("kb.db"), &err), kExitMalformed);
  EXPECT_EQ(err, fmt::format("warden: error: malformed wasm at offset {:#x} ({}), code section, "
                             "function 1: function body: body ends inside a block\n",
                             at, at));
}

// §4.3: a malformed name section is a warning on stderr; the code is ingested (exit 0).
TEST_F(CommandsTest, AMalformedNameSectionIsAWarningAndTheModuleIsIngested) {
  // Function names 1 then 0: out of order.
  const Bytes names = Cat({{0x01}, Sized(Cat({U(2), U(1), Name("b"), U(0), Name("a")}))});
  const std::string path = Write("names.wasm", TwoFunctions({0x00, 0x01, 0x0b}, names));
  std::string err;
  EXPECT_EQ(Ingest(path, dir_.Abs("kb.db"), &err), kExitOk);
  EXPECT_THAT(err, HasSubstr("warning: ignored the malformed name section at offset 0x"));
  EXPECT_THAT(err, HasSubstr("function name index: index 0 out of order after 1"));
  auto k = kb::Kb::Open(env_, dir_.Abs("kb.db"));
  ASSERT_TRUE(k.ok());
  Result<std::vector<kb::VersionInfo>> versions = (*k)->ListVersions();
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 1u);
  EXPECT_EQ(versions->front().defined, 2);
}

// A bad value for set-name (here an empty name) is a usage error, exit 2 (§2.4), not a failed
// check; the gate still records the attempt.
TEST_F(CommandsTest, SetNameWithAnEmptyNameIsExit2) {
  const std::string good = Write("good.wasm", TwoFunctions({0x00, 0x01, 0x0b}));
  ASSERT_EQ(Ingest(good, dir_.Abs("kb.db")), kExitOk);
  GlobalOptions global = global_;
  global.db = dir_.Abs("kb.db");
  SetNameArgs args;
  args.func = "0";
  args.name = "";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunSetName(env_, global, args), kExitUsage);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("name is empty"));
  args.name = std::string(600, 'x');  // over 512 bytes
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunSetName(env_, global, args), kExitUsage);
  ::testing::internal::GetCapturedStderr();
  args.name = "main_loop";
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(RunSetName(env_, global, args), kExitOk);
  EXPECT_THAT(::testing::internal::GetCapturedStdout(), HasSubstr("-> main_loop [human, locked]"));
}

}  // namespace
}  // namespace trove::warden::cli
