#include "mcp/policy/confine.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "base/testing/temp_dir.h"

namespace trove::mcp::policy {
namespace {

using base::testing::TempDir;

// A root with files and symlinks in and out of it:
//   outside/secret
//   root/src/main.cc
//   root/docs/            (empty)
//   root/link_out      -> outside        (a directory outside)
//   root/file_out      -> outside/secret
//   root/link_in       -> root/src       (stays inside)
//   root/dangling      -> outside/nothing
//   root/loop          -> root/loop
//   root/abs_etc       -> /etc
class ConfineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.Abs("root");
    outside_ = dir_.Abs("outside");
    ASSERT_EQ(mkdir(root_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir(outside_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir((root_ + "/src").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((root_ + "/docs").c_str(), 0700), 0);
    std::ofstream(root_ + "/src/main.cc") << "int main() {}\n";
    std::ofstream(outside_ + "/secret") << "secret\n";
    ASSERT_EQ(symlink(outside_.c_str(), (root_ + "/link_out").c_str()), 0);
    ASSERT_EQ(symlink((outside_ + "/secret").c_str(), (root_ + "/file_out").c_str()), 0);
    ASSERT_EQ(symlink("src", (root_ + "/link_in").c_str()), 0);
    ASSERT_EQ(symlink((outside_ + "/nothing").c_str(), (root_ + "/dangling").c_str()), 0);
    ASSERT_EQ(symlink((root_ + "/loop").c_str(), (root_ + "/loop").c_str()), 0);
    ASSERT_EQ(symlink("/etc", (root_ + "/abs_etc").c_str()), 0);
  }

  PathConfiner Make(ConfineOptions options = {}) {
    Result<PathConfiner> c = PathConfiner::Make({root_}, options);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return std::move(c).value();
  }

  TempDir dir_{"trove_confine"};
  std::string root_;
  std::string outside_;
};

TEST_F(ConfineTest, InRootPathsAreAcceptedAndCanonical) {
  const PathConfiner c = Make();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"src/main.cc", "/src/main.cc"},
      {"./src//main.cc", "/src/main.cc"},
      {"src/../src/main.cc", "/src/main.cc"},
      {"docs/new/file.txt", "/docs/new/file.txt"},  // need not exist
      {"link_in/main.cc", "/src/main.cc"},          // a symlink inside the root
      {".", ""},
      {"src/", "/src"},
      {"%2e%2e/etc/passwd", "/%2e%2e/etc/passwd"},  // percent-encoding is a literal name
      {"..%2f..%2fetc", "/..%2f..%2fetc"},
      {"...", "/..."},
      {"..foo", "/..foo"},
      {"\xef\xbc\x8e\xef\xbc\x8e/x", "/\xef\xbc\x8e\xef\xbc\x8e/x"},  // fullwidth dots
  };
  for (const auto& [in, want] : cases) {
    Result<std::string> r = c.Resolve(in);
    ASSERT_TRUE(r.ok()) << in << ": " << r.status().ToString();
    EXPECT_EQ(*r, root_ + want) << in;
  }
  Result<std::string> abs = c.Resolve(root_ + "/src/main.cc");
  ASSERT_TRUE(abs.ok());
  EXPECT_EQ(*abs, root_ + "/src/main.cc");
}

// Every attempt to leave the root is refused: 100% of this corpus.
TEST_F(ConfineTest, TraversalCorpusIsRefused) {
  const PathConfiner c = Make();
  const std::vector<std::string> corpus = {
      "..",
      "../",
      "../outside/secret",
      "../../../../../../etc/passwd",
      "src/../../outside/secret",
      "src/../../../etc/shadow",
      "./../outside",
      "docs/../../outside/secret",
      "src/./../..//outside",
      "/etc/passwd",
      "/",
      outside_ + "/secret",
      root_ + "/../outside/secret",
      root_ + "_sibling/file",  // a sibling sharing the root's name as a prefix
      "link_out",
      "link_out/secret",
      "link_out/new_file",
      "link_out/../outside/secret",
      "file_out",
      "abs_etc/passwd",
      "abs_etc/new",
      "dangling",
      "dangling/x",
      "loop",
      "loop/x",
      "link_in/../../outside/secret",
      std::string("src/main.cc\0/../../etc", 22),
      std::string(5000, 'a'),
      "..\\..\\etc\\passwd",
      "src\\..\\..\\outside",
      "",
  };
  int refused = 0;
  for (const std::string& path : corpus) {
    Result<std::string> r = c.Resolve(path);
    if (!r.ok()) {
      ++refused;
      const auto code = r.status().code();
      EXPECT_TRUE(code == base::StatusCode::kPermissionDenied ||
                  code == base::StatusCode::kInvalidArgument)
          << path << ": " << r.status().ToString();
    } else {
      ADD_FAILURE() << "accepted " << path << " as " << *r;
    }
  }
  EXPECT_EQ(refused, static_cast<int>(corpus.size()));
}

TEST_F(ConfineTest, ErrorCodes) {
  const PathConfiner c = Make();
  EXPECT_EQ(c.Resolve(std::string("a\0b", 3)).status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.Resolve(std::string(4097, 'a')).status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.Resolve("a\\b").status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.Resolve("../x").status().code(), base::StatusCode::kPermissionDenied);
  EXPECT_EQ(c.Resolve("link_out/secret").status().code(), base::StatusCode::kPermissionDenied);
  EXPECT_EQ(c.Resolve("src/main.cc/x").status().code(), base::StatusCode::kInvalidArgument);
  // Messages do not reveal where the root is.
  EXPECT_EQ(c.Resolve("link_out/secret").status().message().find(root_), std::string::npos);
}

TEST_F(ConfineTest, Options) {
  const PathConfiner no_abs = Make({.allow_absolute = false});
  EXPECT_EQ(no_abs.Resolve(root_ + "/src/main.cc").status().code(),
            base::StatusCode::kPermissionDenied);
  EXPECT_TRUE(no_abs.Resolve("src/main.cc").ok());
  const PathConfiner backslash_ok = Make({.reject_backslash = false});
  Result<std::string> r = backslash_ok.Resolve("a\\..\\b");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, root_ + "/a\\..\\b");  // one literal name on POSIX
  const PathConfiner short_paths = Make({.max_path_bytes = 8});
  EXPECT_TRUE(short_paths.Resolve("src").ok());
  EXPECT_FALSE(short_paths.Resolve("src/main.cc").ok());
}

TEST_F(ConfineTest, SeveralRoots) {
  Result<PathConfiner> c = PathConfiner::Make({root_, outside_});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->Resolve("link_out/secret").ok());  // now inside the second root
  EXPECT_TRUE(c->Resolve(outside_ + "/secret").ok());
  EXPECT_FALSE(c->Resolve("abs_etc/passwd").ok());
  EXPECT_FALSE(c->Resolve("../../x").ok());
}

TEST_F(ConfineTest, RootsMustBeDirectories) {
  EXPECT_FALSE(PathConfiner::Make({}).ok());
  EXPECT_FALSE(PathConfiner::Make({root_ + "/src/main.cc"}).ok());
  EXPECT_FALSE(PathConfiner::Make({dir_.Abs("missing")}).ok());
  // A root given through a symlink is canonicalized.
  Result<PathConfiner> c = PathConfiner::Make({root_ + "/link_in"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->roots().front(), root_ + "/src");
  EXPECT_EQ(*c->Resolve("main.cc"), root_ + "/src/main.cc");
}

}  // namespace
}  // namespace trove::mcp::policy
