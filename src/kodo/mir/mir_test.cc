#include "kodo/mir/mir.h"

#include <gtest/gtest.h>

#include <string>

#include "kodo/driver/front.h"
#include "kodo/mir/lower.h"

namespace trove::kodo::mir {
namespace {

Program LowerText(const std::string& body) {
  const std::string text = "module t {\n meta { purpose: \"t\" }\n" + body + "\n}\n";
  Result<driver::Compiled> c = driver::CompileSource(text, "t.ko");
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c->ok()) << (c->diagnostics.empty() ? "" : c->diagnostics[0].message);
  Result<Program> p = Lower(*c->module);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(p).value();
}

TEST(MirLower, FunctionsHaveParamsFirstAndEntryBlock) {
  Program p = LowerText(
      "fn add(a: Int, b: Int) -> Int { return a + b }\nfn main() { print_int(add(1, 2)) }");
  const int idx = p.Find("add");
  ASSERT_GE(idx, 0);
  const Function& add = p.functions[static_cast<std::size_t>(idx)];
  EXPECT_EQ(add.param_count, 2u);
  EXPECT_EQ(add.locals[0].name, "a");
  EXPECT_EQ(add.locals[1].name, "b");
  EXPECT_EQ(add.return_type, "Int");
  EXPECT_FALSE(add.blocks.empty());
  const std::string text = Print(p);
  EXPECT_NE(text.find("name: \"add\""), std::string::npos);
  EXPECT_NE(text.find("BinOp(Add, Local(_0), Local(_1))"), std::string::npos);
  EXPECT_NE(text.find("callee: \"print_int\""), std::string::npos);
  // Injected builtin methods are not printed and not counted.
  EXPECT_EQ(text.find("List_map"), std::string::npos);
  EXPECT_EQ(p.UserFunctionCount(), 2u);
}

TEST(MirLower, MethodsAreLiftedAndCallsRewritten) {
  Program p = LowerText(
      "struct P { x: Int, y: Int }\n"
      "impl P { fn sum(self) -> Int { return self.x + self.y } }\n"
      "fn main() { let p = P { x: 1, y: 2 }\n print_int(p.sum()) }");
  EXPECT_GE(p.Find("P_sum"), 0);
  EXPECT_NE(Print(p).find("callee: \"P_sum\""), std::string::npos);
}

TEST(MirLower, ClosuresAreLambdaLiftedWithCaptures) {
  Program p = LowerText("fn main() { let k = 3\n let f = |x: Int| x * k\n print_int(f(2)) }");
  const int idx = p.Find("__closure_0");
  ASSERT_GE(idx, 0);
  // The captured `k` comes first, then the parameter `x`.
  EXPECT_EQ(p.functions[static_cast<std::size_t>(idx)].param_count, 2u);
  EXPECT_NE(Print(p).find("kodo_closure_new"), std::string::npos);
}

TEST(MirLower, RequiresGetValidateFunctionAndFailureBranch) {
  Program p = LowerText(
      "fn f(x: Int) -> Int requires { x > 0 } { return x }\nfn main() { print_int(f(1)) }");
  EXPECT_GE(p.Find("validate_f"), 0);
  EXPECT_NE(Print(p).find("requires clause 1 failed in function `f`"), std::string::npos);
}

// Concurrency lowers to upstream's runtime hooks (docs/kodo.md §7.6, decision 0067).
TEST(MirLower, ConcurrencyLowersToRuntimeHooks) {
  Program p = LowerText(
      "async fn f() -> Int { return 1 }\n"
      "actor A {\n n: Int\n fn h(self, x: Int) { print_int(x) }\n}\n"
      "fn main() {\n let a: Channel<Int> = channel_new()\n let b: Channel<Int> = channel_new()\n"
      " parallel { spawn { channel_send(a, 1) } }\n"
      " select {\n  a => |v: Int| { print_int(v) }\n  b => |w: Int| { print_int(w) }\n }\n"
      " let r = f().await\n}");
  const std::string text = Print(p);
  for (const char* hook : {"kodo_parallel_begin", "kodo_parallel_spawn", "kodo_parallel_join",
                           "channel_select_2", "channel_recv", "kodo_await"}) {
    EXPECT_NE(text.find(hook), std::string::npos) << hook;
  }
  EXPECT_EQ(text.find("kodo_join"), std::string::npos);
  ASSERT_GE(p.Find("f"), 0);
  EXPECT_TRUE(p.functions[static_cast<std::size_t>(p.Find("f"))].is_async);
  ASSERT_GE(p.Find("A_h"), 0);
  EXPECT_TRUE(p.functions[static_cast<std::size_t>(p.Find("A_h"))].actor_handler);
  EXPECT_FALSE(p.functions[static_cast<std::size_t>(p.Find("main"))].is_async);
}

TEST(MirLower, UnsupportedConstructsSayWhere) {
  const std::string text =
      "module t {\n meta { purpose: \"t\" }\n fn main() { let ch = channel_new()\n"
      " select { ch => |v: Int| { print_int(v) } } }\n}\n";
  Result<driver::Compiled> c = driver::CompileSource(text, "t.ko");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->module.has_value());
  Result<Program> p = Lower(*c->module);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), base::StatusCode::kUnsupported);
  EXPECT_NE(p.status().message().find("function `main`"), std::string::npos);
}

}  // namespace
}  // namespace trove::kodo::mir
