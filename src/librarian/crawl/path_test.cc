#include "librarian/crawl/path.h"

#include <gtest/gtest.h>

#include <string>

#include "librarian/testing/temp_dir.h"

namespace trove::librarian::crawl {
namespace {

using testing::TempDir;

TEST(NormalizeRelativePathTest, Normalizes) {
  EXPECT_EQ(*NormalizeRelativePath("a/b"), "a/b");
  EXPECT_EQ(*NormalizeRelativePath("./a//b/./c/"), "a/b/c");
  EXPECT_EQ(*NormalizeRelativePath("a/../b"), "b");
  EXPECT_EQ(*NormalizeRelativePath("a/.."), ".");
  EXPECT_EQ(*NormalizeRelativePath("."), ".");
}

TEST(NormalizeRelativePathTest, Refuses) {
  struct Bad {
    std::string path;
    std::string message;
  };
  const Bad bad[] = {
      {"", "path: is empty"},
      {"../x", "path: escapes the workspace"},
      {"a/../../x", "path: escapes the workspace"},
      {"/etc/passwd", "path: must be relative to the workspace"},
      {std::string("a\0b", 3), "path: contains a NUL byte"},
      {"a\\..\\b", "path: contains a backslash; use `/` as the separator"},
      {std::string(kMaxUserPathChars + 1, 'a'), "path: longer than 4096 characters"},
  };
  for (const Bad& b : bad) {
    Result<std::string> out = NormalizeRelativePath(b.path);
    ASSERT_FALSE(out.ok()) << b.path;
    EXPECT_EQ(out.status().code(), base::StatusCode::kInvalidArgument);
    EXPECT_EQ(out.status().message(), b.message);
  }
  EXPECT_EQ(NormalizeRelativePath(std::string(kMaxUserPathChars, 'a')).status().code(),
            base::StatusCode::kOk);
}

TEST(ResolveInWorkspaceTest, AcceptsPathsInside) {
  TempDir dir;
  dir.Write("src/a.cc", "x");
  dir.Symlink("src/a.cc", "link.cc");
  dir.Symlink("src", "srclink");
  EXPECT_EQ(*ResolveInWorkspace(dir.path(), "src/a.cc"), "src/a.cc");
  EXPECT_EQ(*ResolveInWorkspace(dir.path(), "src/../src/./a.cc"), "src/a.cc");
  EXPECT_EQ(*ResolveInWorkspace(dir.path(), "link.cc"), "link.cc");
  EXPECT_EQ(*ResolveInWorkspace(dir.path(), "srclink/a.cc"), "srclink/a.cc");
  // Not there yet (an output path): accepted.
  EXPECT_EQ(*ResolveInWorkspace(dir.path(), "exports/new/out.json"), "exports/new/out.json");
  EXPECT_EQ(*ResolveInWorkspace(dir.path(), "."), ".");
  // A trailing slash on the root is fine.
  EXPECT_EQ(*ResolveInWorkspace(dir.path() + "/", "src"), "src");
}

TEST(ResolveInWorkspaceTest, RefusesEscapes) {
  TempDir dir;
  TempDir outside;
  outside.Write("secret.txt", "s");
  dir.Write("a.txt", "a");
  dir.Symlink(outside.Abs("secret.txt"), "out.txt");
  dir.Symlink(outside.path(), "outdir");
  dir.Symlink("missing/target", "dangling");
  dir.Symlink("loop2", "loop1");
  dir.Symlink("loop1", "loop2");

  PathPolicy policy{.field = "affectedFiles[2]"};
  auto message = [&](std::string_view user_path) {
    Result<std::string> out = ResolveInWorkspace(dir.path(), user_path, policy);
    EXPECT_FALSE(out.ok()) << user_path;
    if (!out.ok()) {
      EXPECT_EQ(out.status().code(), base::StatusCode::kInvalidArgument) << user_path;
    }
    return out.ok() ? std::string("ok") : out.status().message();
  };
  EXPECT_EQ(message("../x"), "affectedFiles[2]: escapes the workspace");
  EXPECT_EQ(message("a/../../" + outside.path().substr(outside.path().rfind('/') + 1)),
            "affectedFiles[2]: escapes the workspace");
  EXPECT_EQ(message(outside.Abs("secret.txt")),
            "affectedFiles[2]: must be relative to the workspace");
  EXPECT_EQ(message("out.txt"), "affectedFiles[2]: a symlink leads out of the workspace");
  EXPECT_EQ(message("outdir/secret.txt"), "affectedFiles[2]: a symlink leads out of the workspace");
  EXPECT_EQ(message("outdir/new.txt"), "affectedFiles[2]: a symlink leads out of the workspace");
  EXPECT_EQ(message("dangling"), "affectedFiles[2]: a symlink on the path cannot be resolved");
  EXPECT_EQ(message("loop1/x"), "affectedFiles[2]: a symlink on the path cannot be resolved");
  EXPECT_EQ(message(std::string("a.txt\0../x", 10)), "affectedFiles[2]: contains a NUL byte");
  EXPECT_EQ(message("..\\x"), "affectedFiles[2]: contains a backslash; use `/` as the separator");
}

TEST(ResolveInWorkspaceTest, AbsolutePathsNeedThePolicyAndTheRoot) {
  TempDir dir;
  TempDir outside;
  dir.Write("a/b.txt", "b");
  const PathPolicy allow{.field = "outputPath", .allow_absolute = true};
  EXPECT_EQ(*ResolveInWorkspace(dir.path(), dir.Abs("a/b.txt"), allow), "a/b.txt");
  EXPECT_EQ(*ResolveInWorkspace(dir.path(), dir.path(), allow), ".");
  Result<std::string> out = ResolveInWorkspace(dir.path(), outside.Abs("x"), allow);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "outputPath: escapes the workspace");
  out = ResolveInWorkspace(dir.path(), dir.path() + "/../x", allow);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "outputPath: escapes the workspace");
  // A sibling whose name merely starts with the root's name is not inside.
  out = ResolveInWorkspace(dir.path(), dir.path() + "x/y", allow);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "outputPath: escapes the workspace");
}

TEST(ResolveInWorkspaceTest, BadRoot) {
  EXPECT_EQ(ResolveInWorkspace("relative", "a").status().message(),
            "workspace: must be an absolute path");
  EXPECT_EQ(ResolveInWorkspace("/nonexistent/trove/root", "a").status().code(),
            base::StatusCode::kNotFound);
  TempDir dir;
  dir.Write("file", "x");
  EXPECT_EQ(ResolveInWorkspace(dir.Abs("file"), "a").status().message(),
            "workspace: not a directory");
}

}  // namespace
}  // namespace trove::librarian::crawl
