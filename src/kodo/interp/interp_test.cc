#include "kodo/interp/interp.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kodo/driver/front.h"
#include "kodo/interp/value.h"
#include "kodo/mir/lower.h"

namespace trove::kodo::interp {
namespace {

RunResult RunText(const std::string& body, RunOptions options = {}, mir::LowerOptions lower = {}) {
  const std::string text = "module t {\n meta { purpose: \"t\" }\n" + body + "\n}\n";
  Result<driver::Compiled> c = driver::CompileSource(text, "t.ko");
  EXPECT_TRUE(c.ok());
  if (!c->ok()) {
    ADD_FAILURE() << c->diagnostics[0].message;
    return {};
  }
  Result<mir::Program> p = mir::Lower(*c->module, lower);
  if (!p.ok()) {
    ADD_FAILURE() << p.status().ToString();
    return {};
  }
  return interp::Run(*p, options);
}

TEST(FormatFloat, RustDisplay) {
  EXPECT_EQ(FormatFloat(3.0), "3");
  EXPECT_EQ(FormatFloat(5.14), "5.14");
  EXPECT_EQ(FormatFloat(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatFloat(1e21), "1000000000000000000000");
  EXPECT_EQ(FormatFloat(1e-7), "0.0000001");
  EXPECT_EQ(FormatFloat(-2.5), "-2.5");
  EXPECT_EQ(FormatFloat(0.0 / 0.0 * 0 + __builtin_nan("")), "NaN");
  EXPECT_EQ(FormatFloat(__builtin_inf()), "inf");
  EXPECT_EQ(FormatFloat(-__builtin_inf()), "-inf");
}

TEST(Interp, ArithmeticWrapsAndTruncates) {
  RunResult r = RunText(
      "fn main() {\n"
      " let big = 9223372036854775807\n print_int(big + 1)\n"
      " print_int(-7 / 2)\n print_int(-7 % 2)\n print_int(7 / -2)\n}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "-9223372036854775808\n-3\n-1\n-3\n");
}

TEST(Interp, DivisionByZeroTraps) {
  RunResult r =
      RunText("fn d(a: Int, b: Int) -> Int { return a / b }\nfn main() { print_int(d(1, 0)) }");
  EXPECT_EQ(r.exit_code, kExitDivide);
  EXPECT_EQ(r.err, "attempt to divide by zero\n");
}

TEST(Interp, IndexOutOfBounds) {
  RunResult r =
      RunText("fn main() { let xs = list_new()\n list_push(xs, 1)\n print_int(list_get(xs, 3)) }");
  EXPECT_EQ(r.exit_code, kExitAbort);
  EXPECT_EQ(r.err, "index out of bounds: the len is 1 but the index is 3\n");
}

TEST(Interp, ContractViolationExits134WithUpstreamMessage) {
  const std::string src =
      "fn positive_only(x: Int) -> Int requires { x > 0 } { return x * 2 }\n"
      "fn main() { print_int(positive_only(-1)) }";
  RunResult r = RunText(src);
  EXPECT_EQ(r.exit_code, 134);
  EXPECT_EQ(r.err,
            "contract violation: contract violation: requires clause 1 failed in function "
            "`positive_only`\n");
  mir::LowerOptions recoverable;
  recoverable.recoverable_contracts = true;
  RunResult rec = RunText(src, {}, recoverable);
  EXPECT_EQ(rec.exit_code, 0);
  EXPECT_EQ(rec.out, "-2\n");
  EXPECT_NE(rec.err.find("WARNING: contract violation (recoverable): "), std::string::npos);
}

TEST(Interp, EnsuresChecksResult) {
  RunResult r = RunText(
      "fn f(x: Int) -> Int ensures { result > 10 } { return x }\nfn main() { print_int(f(1)) }");
  EXPECT_EQ(r.exit_code, 134);
  EXPECT_NE(r.err.find("ensures clause 1 failed in function `f`"), std::string::npos);
}

TEST(Interp, DeepRecursionIsAStackOverflowNotACrash) {
  RunOptions o;
  o.max_frames = 5000;
  RunResult r =
      RunText("fn down(n: Int) -> Int { return down(n + 1) }\nfn main() { print_int(down(0)) }", o);
  EXPECT_EQ(r.exit_code, kExitAbort);
  EXPECT_NE(r.err.find("stack overflow"), std::string::npos);
  // Recursion within the limit works, with no host recursion per call.
  RunResult ok = RunText(
      "fn sum(n: Int) -> Int { if n == 0 { return 0 }\n return n + sum(n - 1) }\n"
      "fn main() { print_int(sum(50000)) }");
  EXPECT_EQ(ok.out, "1250025000\n");
}

TEST(Interp, StepLimit) {
  RunOptions o;
  o.max_steps = 1000;
  RunResult r = RunText("fn main() { let mut i = 0\n while true { i = i + 1 } }", o);
  EXPECT_EQ(r.exit_code, kExitLimit);
  EXPECT_NE(r.err.find("step limit"), std::string::npos);
}

TEST(Interp, MemoryLimit) {
  RunOptions o;
  o.max_memory_bytes = 1 << 20;
  RunResult r = RunText("fn main() { let xs = list_new()\n while true { list_push(xs, 1) } }", o);
  EXPECT_EQ(r.exit_code, kExitLimit);
  EXPECT_NE(r.err.find("memory limit"), std::string::npos);
}

TEST(Interp, ExitCode) {
  RunResult r = RunText("fn main() { println(\"a\")\n exit(3)\n println(\"b\") }");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "a\n");
}

// ---- concurrency (docs/decisions/0067) ----------------------------------------------------

TEST(Scheduler, DeterministicOrder) {
  // Deferred tasks (spawn, actor messages) run only when nothing else can: after main here.
  // A parallel block's tasks start at its join in spawn order; an async call's task starts when
  // its caller waits.
  RunResult r = RunText(
      "async fn job(n: Int) -> Int { print_int(n)\n return n }\n"
      "fn main() {\n"
      " spawn { println(\"s1\") }\n"
      " let f = job(1)\n"
      " println(\"m1\")\n"
      " parallel { spawn { println(\"p1\") }\n spawn { println(\"p2\") } }\n"
      " println(\"m2\")\n"
      " spawn { println(\"s2\") }\n"
      " print_int(f.await + 10)\n"
      " println(\"m3\")\n"
      "}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The parallel join lets the ready async task run first (it was started before the join).
  EXPECT_EQ(r.out, "m1\n1\np1\np2\nm2\n11\nm3\ns1\ns2\n");
  // The same program prints the same bytes every time.
  EXPECT_EQ(RunText("async fn job(n: Int) -> Int { print_int(n)\n return n }\n"
                    "fn main() {\n"
                    " spawn { println(\"s1\") }\n"
                    " let f = job(1)\n"
                    " println(\"m1\")\n"
                    " parallel { spawn { println(\"p1\") }\n spawn { println(\"p2\") } }\n"
                    " println(\"m2\")\n"
                    " spawn { println(\"s2\") }\n"
                    " print_int(f.await + 10)\n"
                    " println(\"m3\")\n"
                    "}")
                .out,
            r.out);
}

TEST(Scheduler, ReceiverWaitsForSender) {
  RunResult r = RunText(
      "fn main() {\n"
      " let ch: Channel<Int> = channel_new()\n"
      " spawn { channel_send(ch, 5)\n println(\"sent\") }\n"
      " let v: Int = channel_recv(ch)\n"
      " print_int(v)\n"
      "}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "sent\n5\n");
}

TEST(Scheduler, DeadlockIsAnErrorNotAHang) {
  RunResult r = RunText(
      "fn main() {\n let ch: Channel<Int> = channel_new()\n let v: Int = channel_recv(ch)\n"
      " print_int(v)\n}");
  EXPECT_EQ(r.exit_code, kExitDeadlock);
  EXPECT_EQ(r.err,
            "deadlock: all 1 remaining tasks are blocked\n"
            "  task 0 (main) receiving from channel 0 in function `main`\n");
  EXPECT_EQ(r.out, "");
  // Two tasks waiting for each other inside a parallel block, main joining them.
  RunResult two = RunText(
      "fn main() {\n"
      " let a: Channel<Int> = channel_new()\n let b: Channel<Int> = channel_new()\n"
      " parallel {\n"
      "  spawn { let x: Int = channel_recv(a)\n channel_send(b, x) }\n"
      "  spawn { let y: Int = channel_recv(b)\n channel_send(a, y) }\n"
      " }\n"
      " println(\"unreachable\")\n"
      "}");
  EXPECT_EQ(two.exit_code, kExitDeadlock);
  EXPECT_NE(two.err.find("deadlock: all 3 remaining tasks are blocked"), std::string::npos)
      << two.err;
  EXPECT_NE(two.err.find("task 0 (main) joining a parallel block"), std::string::npos);
  EXPECT_NE(two.err.find("(parallel) receiving from channel 0"), std::string::npos);
  EXPECT_NE(two.err.find("(parallel) receiving from channel 1"), std::string::npos);
  // A select nobody can satisfy.
  RunResult sel = RunText(
      "fn main() {\n let a: Channel<Int> = channel_new()\n let b: Channel<Int> = channel_new()\n"
      " select {\n  a => |v: Int| { print_int(v) }\n  b => |w: Int| { print_int(w) }\n }\n}");
  EXPECT_EQ(sel.exit_code, kExitDeadlock);
  EXPECT_NE(sel.err.find("in a select over channels 0, 1"), std::string::npos) << sel.err;
}

TEST(Scheduler, SpawnCapturesAreCopiedAtSpawn) {
  RunResult r =
      RunText("fn main() {\n let mut n = 1\n spawn { print_int(n) }\n n = 2\n print_int(n)\n}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n1\n");
}

TEST(Scheduler, TasksAreBoundedByTheLimits) {
  RunOptions o;
  o.max_memory_bytes = 1 << 20;
  RunResult r = RunText("fn main() { while true { spawn { println(\"x\") } } }", o);
  EXPECT_EQ(r.exit_code, kExitLimit);
  EXPECT_EQ(r.out, "");
  RunOptions steps;
  steps.max_steps = 5000;
  RunResult busy = RunText(
      "fn main() {\n let ch: Channel<Int> = channel_new()\n"
      " parallel { spawn { while true { channel_send(ch, 1) } }\n"
      "  spawn { while true { let v: Int = channel_recv(ch) } } }\n}",
      steps);
  EXPECT_EQ(busy.exit_code, kExitLimit);
}

TEST(Scheduler, ActorMessagesRunAfterMainInSendOrder) {
  RunResult r = RunText(
      "actor Log {\n tag: String\n fn say(self, n: Int) { println(f\"{self.tag} {n}\") }\n}\n"
      "fn main() {\n let l = Log { tag: \"log\" }\n l.say(1)\n let m = Log { tag: \"other\" }\n"
      " m.say(2)\n println(\"main\")\n}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "main\nlog 1\nother 2\n");
}

// ---- runtime errors -----------------------------------------------------------------------

TEST(Values, DeeplyNestedValuesAreFreedWithoutHostRecursion) {
  // 200,000 nested lists, then a 200,000-long chain of enums: destroying either recursively
  // would overflow the host stack.
  auto mem = std::make_shared<MemCounter>();
  {
    RValue outer = RValue::Obj(Tag::kList, std::make_shared<ListObj>(mem));
    for (int i = 0; i < 200'000; ++i) {
      auto next = std::make_shared<ListObj>(mem);
      next->Push(std::move(outer));
      outer = RValue::Obj(Tag::kList, std::move(next));
    }
    RValue chain = RValue::Obj(Tag::kEnum, std::make_shared<EnumObj>(mem));
    for (int i = 0; i < 200'000; ++i) {
      auto e = std::make_shared<EnumObj>(mem);
      e->payload.push_back(std::move(chain));
      chain = RValue::Obj(Tag::kEnum, std::move(e));
    }
    EXPECT_GT(mem->live, 0u);
  }
  EXPECT_EQ(mem->live, 0u);
}

TEST(Values, DeepChainBuiltByAProgramIsFreed) {
  RunResult r = RunText(
      "fn main() {\n"
      " let mut f = |x: Int| -> Int { x }\n"
      " let mut i = 0\n"
      " while i < 300000 {\n  let g = f\n  f = |x: Int| -> Int { g(x) + 0 }\n  i = i + 1\n }\n"
      " println(\"built\")\n"
      "}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "built\n");
}

TEST(Interp, ContractViolationInATaskAborts) {
  RunResult r = RunText(
      "fn pos(x: Int) -> Int requires { x > 0 } { return x }\n"
      "fn main() { spawn { print_int(pos(0)) }\n println(\"main\") }");
  EXPECT_EQ(r.exit_code, 134);
  EXPECT_EQ(r.out, "main\n");
  EXPECT_NE(r.err.find("contract violation"), std::string::npos);
}

// ---- intents (docs/kodo.md §4.7) ---------------------------------------------------------------

Result<mir::Program> LowerWithIntents(const std::string& body) {
  const std::string text = "module t {\n meta { purpose: \"t\" }\n" + body + "\n}\n";
  Result<driver::Compiled> c = driver::CompileSource(text, "t.ko");
  EXPECT_TRUE(c.ok() && c->ok());
  mir::LowerOptions o;
  o.resolve_intents = true;
  return mir::Lower(*c->module, o);
}

TEST(Intents, ResolveToGeneratedFunctions) {
  // The checker runs before the resolver (upstream's order), so user code cannot call what an
  // intent generates; the functions exist in the MIR, the user's own `mul` is kept.
  Result<mir::Program> p = LowerWithIntents(
      "intent math_module { functions: [add, safe_div, mul, pow] }\n"
      "fn mul(a: Int, b: Int) -> Int { return 0 }\nfn main() { print_int(mul(2, 2)) }");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_GE(p->Find("add"), 0);
  EXPECT_GE(p->Find("validate_safe_div"), 0);
  EXPECT_LT(p->Find("pow"), 0);
  int muls = 0;
  for (const mir::Function& f : p->functions) muls += f.name == "mul" ? 1 : 0;
  EXPECT_EQ(muls, 1);
  EXPECT_NE(mir::Print(*p).find("requires clause 1 failed in function `safe_div`"),
            std::string::npos);
  EXPECT_EQ(interp::Run(*p).out, "0\n");
  // Without `main`, upstream's runtime enters the generated `kodo_main`.
  mir::LowerOptions lower;
  lower.resolve_intents = true;
  RunResult app =
      RunText("intent console_app { greeting: \"from the \\\"intent\\\"\" }", {}, lower);
  EXPECT_EQ(app.exit_code, 0) << app.err;
  EXPECT_EQ(app.out, "from the \"intent\"\n");
  RunResult named = RunText(
      "intent console_app { greeting: \"hi\", entry_point: \"greet\" }\nfn main() { }", {}, lower);
  EXPECT_EQ(named.out, "");
}

TEST(Intents, UnknownIntentOrKeyIsAResolverError) {
  Result<mir::Program> unknown =
      LowerWithIntents("intent math_utils { functions: [add] }\nfn main() { }");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "resolver error: no resolver found for intent `math_utils` (E0400)");
  Result<mir::Program> key =
      LowerWithIntents("intent serve_http { port: 80, ratio: 0.5 }\nfn main() { }");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.status().message(),
            "resolver error: unknown configuration key `ratio` for intent `serve_http` (E0402)");
  // A known strategy this build does not generate code for lowers to nothing extra.
  EXPECT_TRUE(LowerWithIntents("intent serve_http { port: 80 }\nfn main() { }").ok());
}

// ---- builtins -------------------------------------------------------------------------------

TEST(Builtins, FilesInATempDir) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("trove_interp_files_" + std::to_string(reinterpret_cast<std::uintptr_t>(&dir)));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string d = dir.string();
  RunResult r = RunText("fn p() -> String { return \"" + d +
                        "/a.txt\" }\n"
                        "fn main() {\n"
                        " let w = file_write(p(), \"one\\n\")\n"
                        " if w.is_ok() { println(\"written\") }\n"
                        " let ap = file_append(p(), \"two\\n\")\n"
                        " if file_exists(p()) { println(\"exists\") }\n"
                        " match file_read(p()) {\n  Result::Ok(s) => { print(s) }\n  "
                        "Result::Err(e) => { println(e) }\n }\n"
                        " match file_read(\"" +
                        d +
                        "/missing.txt\") {\n  Result::Ok(s) => { print(s) }\n"
                        "  Result::Err(e) => { println(\"error\") }\n }\n"
                        " let names = dir_list(\"" +
                        d +
                        "\")\n"
                        " print_int(names.length())\n"
                        " if dir_exists(\"" +
                        d +
                        "\") { println(\"dir\") }\n"
                        " if file_delete(p()) { println(\"deleted\") }\n"
                        " if !file_exists(p()) { println(\"gone\") }\n"
                        "}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "written\nexists\none\ntwo\nerror\n1\ndir\ndeleted\ngone\n");
  std::filesystem::remove_all(dir);
  // Without host I/O (the MCP server's setting) the file builtins answer errors, not effects.
  RunOptions sandboxed;
  sandboxed.allow_host_io = false;
  RunResult s = RunText("fn main() {\n match file_write(\"" + d +
                            "/x\", \"y\") {\n  Result::Ok(u) => { println(\"ok\") }\n"
                            "  Result::Err(e) => { println(e) }\n }\n}",
                        sandboxed);
  EXPECT_EQ(s.out, "file access is not available in this build\n");
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(Builtins, EnvAndTime) {
  RunResult r = RunText(
      "fn main() {\n"
      " env_set(\"TROVE_INTERP_TEST_VAR\", \"v1\")\n"
      " println(env_get(\"TROVE_INTERP_TEST_VAR\"))\n"
      " println(env_get(\"TROVE_INTERP_TEST_UNSET_VAR\"))\n"
      " let t0 = time_now_ms()\n let t1 = time_now_ms()\n"
      " if t1 >= t0 { println(\"monotonic\") }\n"
      " if time_elapsed_ms(t0) >= 0 { println(\"elapsed\") }\n"
      " if time_now() > 1600000000 { println(\"now\") }\n"
      " println(time_format(0))\n"
      "}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "v1\n\nmonotonic\nelapsed\nnow\n1970-01-01T00:00:00Z\n");
}

TEST(Builtins, JsonRoundTrip) {
  RunResult r = RunText(
      "fn main() {\n"
      " let h = json_parse(\"{\\\"name\\\": \\\"kodo\\\", \\\"n\\\": 42, \\\"ok\\\": true, "
      "\\\"x\\\": 1.5, \\\"tags\\\": [1, 2], \\\"o\\\": {\\\"k\\\": 7}}\")\n"
      " println(json_get_string(h, \"name\"))\n"
      " print_int(json_get_int(h, \"n\"))\n"
      " print_int(json_get_bool(h, \"ok\"))\n"
      " print_int(json_get_bool(h, \"missing\"))\n"
      " println_float(json_get_float(h, \"x\"))\n"
      " print_int(json_get_array(h, \"tags\").length())\n"
      " print_int(json_get_int(json_get_object(h, \"o\"), \"k\"))\n"
      " println(json_stringify(h))\n"
      " println(json_stringify(json_parse(json_stringify(h))))\n"
      " print_int(json_parse(\"not json {\"))\n"
      " let b = json_new_object()\n"
      " json_set_string(b, \"a\", \"x\")\n json_set_int(b, \"b\", 2)\n"
      " json_set_bool(b, \"c\", false)\n json_set_float(b, \"d\", 0.25)\n"
      " println(json_stringify(b))\n"
      " json_free(b)\n"
      " println(json_stringify(b))\n"
      "}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string obj = R"({"n":42,"name":"kodo","o":{"k":7},"ok":true,"tags":[1,2],"x":1.5})";
  EXPECT_EQ(r.out, "kodo\n42\n1\n-1\n1.5\n2\n7\n" + obj + "\n" + obj +
                       "\n0\n{\"a\":\"x\",\"b\":2,\"c\":false,\"d\":0.25}\n\n");
}

TEST(Builtins, RegexMatchFindReplace) {
  RunResult r = RunText(
      "fn main() {\n"
      " if regex_match(\"^[a-z]+[0-9]+$\", \"abc123\") { println(\"match\") }\n"
      " if !regex_match(\"^[0-9]+$\", \"abc\") { println(\"no match\") }\n"
      " match regex_find(\"[0-9]+\", \"ab 42 cd 7\") {\n"
      "  Option::Some(s) => { println(s) }\n  Option::None => { println(\"none\") }\n }\n"
      " println(regex_replace(\"[0-9]+\", \"a1b22c333\", \"#\"))\n"
      " println(regex_replace(\"(\\\\w+)@(\\\\w+)\", \"me@host\", \"$2 at $1\"))\n"
      " println(regex_replace(\"(unclosed\", \"text\", \"x\"))\n"
      " if !regex_match(\"(unclosed\", \"text\") { println(\"invalid pattern\") }\n"
      "}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "match\nno match\n42\na#b#c#\nhost at me\ntext\ninvalid pattern\n");
}

TEST(Builtins, RegexOnALongSubjectDoesNotCrash) {
  RunResult r = RunText(
      "fn long() -> String { return \"ab\".repeat(50000) }\n"
      "fn main() {\n"
      " if regex_match(\"^(ab|cd)*$\", long()) { println(\"long match\") }\n"
      " print_int(regex_replace(\"b\", long(), \"\").length())\n}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "long match\n50000\n");
}

TEST(Builtins, HttpAndDbAreNotAvailable) {
  RunResult r = RunText(
      "fn main() {\n match http_get(\"http://example.com\") {\n"
      "  Result::Ok(s) => { println(s) }\n  Result::Err(e) => { println(e) }\n }\n"
      " let db = db_open(\"x.db\")\n println(\"after\")\n}");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "HTTP is not available in this build\n");
  EXPECT_EQ(r.err, "error: the database builtins are not available in this build\n");
  RunResult server = RunText("fn main() { let s = http_server_new(8080) }");
  EXPECT_EQ(server.exit_code, 1);
  EXPECT_EQ(server.err, "error: the HTTP server builtins are not available in this build\n");
}

// Right-trims every line and the whole text, as upstream's harness compares (docs/kodo.md §4.9).
std::string Trimmed(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.pop_back();
    }
    out += line + "\n";
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every program in testdata/kodo with an expected stdout (`NAME.stdout` beside `NAME.ko`) runs in
// the interpreter and prints exactly that (right-trimmed lines).
TEST(InterpCorpus, EveryExpectedStdoutMatches) {
  int checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(TROVE_KODO_TESTDATA)) {
    if (entry.path().extension() != ".stdout") continue;
    std::filesystem::path source = entry.path();
    source.replace_extension(".ko");
    ASSERT_TRUE(std::filesystem::exists(source)) << source;
    Result<driver::Compiled> c = driver::CompileSource(Slurp(source), source.string());
    ASSERT_TRUE(c.ok()) << source;
    ASSERT_TRUE(c->ok()) << source << ": " << c->diagnostics[0].message;
    mir::LowerOptions lower;
    lower.resolve_intents = true;  // as `kodoc run`
    Result<mir::Program> p = mir::Lower(*c->module, lower);
    ASSERT_TRUE(p.ok()) << source << ": " << p.status().ToString();
    RunOptions options;
    options.max_steps = 100'000'000;
    RunResult r = interp::Run(*p, options);
    EXPECT_EQ(r.exit_code, 0) << source << ": " << r.err;
    EXPECT_EQ(Trimmed(r.out), Trimmed(Slurp(entry.path()))) << source;
    ++checked;
  }
  EXPECT_GE(checked, 9);
}

// The interpreter fuzzer's seeds (fuzz/kodo_interp_fuzzer.cc) run here too, under the same
// limits and checks, so the release build exercises what the smoke run starts from.
TEST(InterpFuzzSeeds, RunWithinTheLimits) {
  int ran = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TROVE_KODO_FUZZ_SEEDS)) {
    Result<driver::Compiled> c = driver::CompileSource(Slurp(entry.path()), "fuzz.ko");
    if (!c.ok() || !c->ok() || !c->module) continue;
    Result<mir::Program> p = mir::Lower(*c->module);
    if (!p.ok()) continue;
    RunOptions o;
    o.max_steps = 20000;
    o.max_memory_bytes = 32u << 20;
    o.max_frames = 2000;
    o.allow_host_io = false;
    RunResult r = interp::Run(*p, o);
    EXPECT_LE(r.steps, o.max_steps + 1) << entry.path();
    if (r.steps > o.max_steps) {
      EXPECT_EQ(r.exit_code, kExitLimit) << entry.path();
    }
    EXPECT_TRUE(r.err.empty() || r.err.back() == '\n') << entry.path();
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

}  // namespace
}  // namespace trove::kodo::interp
