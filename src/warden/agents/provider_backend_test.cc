// The OpenAI and Anthropic backends, unchanged, against a local stand-in for each provider on
// 127.0.0.1 (cpp-httplib). The stand-in checks every request it receives (path, auth headers,
// model, JSON schema, facts in the prompt) and replays scripted responses. No network, no
// real key.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "warden/agents/anthropic_backend.h"
#include "warden/agents/backend.h"
#include "warden/agents/openai_backend.h"
#include "warden/agents/pipeline.h"
#include "warden/agents/testing/fake_store.h"

namespace trove::warden::agents {
namespace {

using Json = nlohmann::json;

constexpr char kKey[] = "sk-test-secret-0123456789";

enum class Kind { kOpenAi, kAnthropic };

struct Scripted {
  int status = 200;
  std::string body;
  int delay_ms = 0;
};

// The provider stand-in.
class FakeProvider {
 public:
  FakeProvider(Kind kind, std::string model) : kind_(kind), model_(std::move(model)) {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      Handle(req, res);
    };
    server_.Post("/v1/responses", handler);
    server_.Post("/v1/messages", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeProvider() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Push(Scripted s) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.push_back(std::move(s));
  }
  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::vector<std::string> failures() {
    std::lock_guard<std::mutex> lock(mu_);
    return failures_;
  }
  std::set<int> client_ports() {
    std::lock_guard<std::mutex> lock(mu_);
    return client_ports_;
  }
  std::string last_prompt() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_prompt_;
  }
  // The facts every request's prompt must carry.
  void ExpectInPrompt(std::vector<std::string> parts) {
    std::lock_guard<std::mutex> lock(mu_);
    expect_in_prompt_ = std::move(parts);
  }

 private:
  // Returns what is wrong with `req`, or empty.
  std::string Check(const httplib::Request& req, std::string& prompt) {
    Json body = Json::parse(req.body, nullptr, false);
    if (body.is_discarded()) return "body is not JSON";
    if (body.value("model", "") != model_) return "model is not " + model_;
    if (kind_ == Kind::kOpenAi) {
      if (req.path != "/v1/responses") return "wrong path " + req.path;
      if (req.get_header_value("Authorization") != std::string("Bearer ") + kKey) {
        return "bad Authorization header";
      }
      const Json& format = body["text"]["format"];
      if (format.value("type", "") != "json_schema" || !format.contains("schema") ||
          !format["schema"]["properties"].contains("name") ||
          !format["schema"]["properties"].contains("cited_strings")) {
        return "no JSON schema in text.format";
      }
      if (!body["input"].is_string()) return "input is not a string";
      prompt = body["input"].get<std::string>();
    } else {
      if (req.path != "/v1/messages") return "wrong path " + req.path;
      if (req.get_header_value("x-api-key") != kKey) return "bad x-api-key header";
      if (req.get_header_value("anthropic-version") != "2023-06-01") {
        return "bad anthropic-version header";
      }
      if (req.has_header("Authorization")) return "unexpected Authorization header";
      if (!body["max_tokens"].is_number_integer()) return "no max_tokens";
      const Json& tools = body["tools"];
      if (!tools.is_array() || tools.empty() ||
          !tools[0]["input_schema"]["properties"].contains("name") ||
          body["tool_choice"].value("type", "") != "tool") {
        return "no JSON schema tool";
      }
      const Json& messages = body["messages"];
      if (!messages.is_array() || messages.size() != 1 || !messages[0]["content"].is_string()) {
        return "messages are not one user text";
      }
      prompt = messages[0]["content"].get<std::string>();
    }
    for (const std::string& part : expect_in_prompt_) {
      if (prompt.find(part) == std::string::npos) return "prompt lacks " + part;
    }
    return {};
  }

  void Handle(const httplib::Request& req, httplib::Response& res) {
    Scripted reply;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++requests_;
      client_ports_.insert(req.remote_port);
      std::string prompt;
      std::string problem = Check(req, prompt);
      last_prompt_ = prompt;
      if (!problem.empty()) {
        failures_.push_back(problem);
        res.status = 400;
        res.set_content(Json{{"error", {{"message", "request check failed: " + problem}}}}.dump(),
                        "application/json");
        return;
      }
      if (script_.empty()) {
        failures_.push_back("unscripted request");
        res.status = 500;
        return;
      }
      reply = script_.front();
      script_.pop_front();
    }
    for (int waited = 0; waited < reply.delay_ms && !stopping_; waited += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    res.status = reply.status;
    res.set_content(reply.body, "application/json");
  }

  const Kind kind_;
  const std::string model_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::deque<Scripted> script_;
  int requests_ = 0;
  std::set<int> client_ports_;  // one per connection the client opened
  std::vector<std::string> failures_;
  std::string last_prompt_;
  std::vector<std::string> expect_in_prompt_;
};

// Wraps the model's answer text in each provider's response shape.
std::string Answer(Kind kind, const std::string& text) {
  if (kind == Kind::kOpenAi) {
    return Json{{"id", "resp_1"},
                {"object", "response"},
                {"status", "completed"},
                {"output", Json::array({Json{{"type", "reasoning"}, {"summary", Json::array()}},
                                        Json{{"type", "message"},
                                             {"role", "assistant"},
                                             {"content", Json::array({Json{{"type", "output_text"},
                                                                           {"text", text}}})}}})}}
        .dump();
  }
  Json content;
  Json parsed = Json::parse(text, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object()) {
    content = Json{{"type", "tool_use"},
                   {"id", "toolu_1"},
                   {"name", std::string(kAnthropicToolName)},
                   {"input", parsed}};
  } else {
    content = Json{{"type", "text"}, {"text", text}};
  }
  return Json{{"id", "msg_1"},
              {"type", "message"},
              {"role", "assistant"},
              {"content", Json::array({content})},
              {"stop_reason", "tool_use"}}
      .dump();
}

std::string ErrorBody(const std::string& message) {
  return Json{{"error", {{"type", "error"}, {"message", message}}}}.dump();
}

FunctionFacts Facts(std::uint32_t index = 5) {
  FunctionFacts f;
  f.func_index = index;
  f.stable_id = "w1:aa" + std::to_string(index) + "b0c1d2e3f40516273849aabbccddee";
  f.type_signature = "(i32, i32) -> i32";
  f.call_targets = {"env.fd_write"};
  f.referenced_strings = {"cannot open file %s"};
  f.instruction_mnemonics = {"local.get", "local.get", "call", "end"};
  f.export_names = {};
  return f;
}

class ProviderBackendTest : public ::testing::TestWithParam<Kind> {
 protected:
  Kind kind() const { return GetParam(); }
  const char* model() const { return kind() == Kind::kOpenAi ? "gpt-test-model" : "claude-test"; }
  std::string selector() const { return kind() == Kind::kOpenAi ? "codex" : "anthropic"; }
  std::string internal_name() const { return kind() == Kind::kOpenAi ? "openai" : "anthropic"; }

  AgentConfig Config(const std::string& base_url, const std::string& key = kKey) const {
    ConfigSources sources;
    std::map<std::string, std::string> env;
    if (kind() == Kind::kOpenAi) {
      env = {{"OPENAI_API_KEY", key}, {"OPENAI_BASE_URL", base_url}};
    } else {
      env = {{"ANTHROPIC_API_KEY", key}, {"ANTHROPIC_BASE_URL", base_url}};
    }
    sources.getenv = [env](std::string_view name) -> std::optional<std::string> {
      auto it = env.find(std::string(name));
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    return ResolveAgentConfig(sources);
  }

  std::unique_ptr<Backend> Make(FakeProvider& server, ProviderOptions options = {}) {
    if (options.timeout_ms == ProviderOptions{}.timeout_ms) options.timeout_ms = 10'000;
    options.backoff_base_ms = 1;
    auto backend =
        MakeBackend(selector(), std::string(model()), Config(server.base_url()), options);
    EXPECT_TRUE(backend.ok()) << backend.status().ToString();
    return std::move(backend).value();
  }

  static std::string ProposalJson(const std::string& name, double confidence,
                                  std::vector<std::string> cited, const std::string& summary) {
    return Json{{"abstain", false},          {"name", name},
                {"summary", summary},        {"confidence", confidence},
                {"type_signature", nullptr}, {"cited_strings", cited}}
        .dump();
  }
};

TEST_P(ProviderBackendTest, ValidProposalAndTheRequestItWasAskedWith) {
  FakeProvider server(kind(), model());
  server.ExpectInPrompt({Facts().stable_id, "cannot open file %s", "env.fd_write",
                         "(i32, i32) -> i32", "named_callee"});
  server.Push({200, Answer(kind(), ProposalJson("open_file_checked", 0.8, {"cannot open file %s"},
                                                "Opens a file; logs \"cannot open file\"."))});
  auto backend = Make(server);
  EXPECT_EQ(backend->name(), internal_name());
  EXPECT_EQ(backend->model(), model());
  base::Cancellation cancel;
  std::vector<CalleeName> callees = {{9, "named_callee"}};
  Result<BackendReply> reply = backend->Propose(Facts(), callees, cancel);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_TRUE(server.failures().empty()) << server.failures().front();
  ASSERT_TRUE(reply->proposal.has_value()) << reply->note;
  EXPECT_EQ(reply->proposal->name, "open_file_checked");
  EXPECT_DOUBLE_EQ(reply->proposal->confidence, 0.8);
  EXPECT_EQ(reply->proposal->cited_strings, std::vector<std::string>{"cannot open file %s"});
  EXPECT_FALSE(reply->proposal->type_signature.has_value());
  EXPECT_EQ(reply->retries, 0);
  EXPECT_EQ(server.requests(), 1);
  EXPECT_EQ(server.last_prompt().find(kKey), std::string::npos);
}

TEST_P(ProviderBackendTest, ConsecutiveCallsShareOneConnection) {
  FakeProvider server(kind(), model());
  server.Push({200, Answer(kind(), ProposalJson("first_name", 0.4, {}, "One."))});
  server.Push({200, Answer(kind(), ProposalJson("second_name", 0.4, {}, "Two."))});
  auto backend = Make(server);
  base::Cancellation cancel;
  ASSERT_TRUE(backend->Propose(Facts(1), {}, cancel).ok());
  Result<BackendReply> second = backend->Propose(Facts(2), {}, cancel);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(second->proposal.has_value());
  EXPECT_EQ(second->proposal->name, "second_name");
  EXPECT_EQ(server.requests(), 2);
  EXPECT_EQ(server.client_ports().size(), 1u);
}

TEST_P(ProviderBackendTest, Abstention) {
  FakeProvider server(kind(), model());
  server.Push({200, Answer(kind(), R"({"abstain": true})")});
  auto backend = Make(server);
  base::Cancellation cancel;
  Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_FALSE(reply->proposal.has_value());
  EXPECT_EQ(reply->note, "");
}

TEST_P(ProviderBackendTest, MalformedOutputIsAnAbstentionWithANote) {
  const std::string answers[] = {
      "this is { not json",
      R"({"name": 42, "confidence": 0.5})",
      R"({"name": "ok_name", "confidence": "high"})",
      R"({"name": "ok_name", "confidence": 0.5, "cited_strings": "one"})",
  };
  for (const std::string& answer : answers) {
    FakeProvider server(kind(), model());
    server.Push({200, Answer(kind(), answer)});
    auto backend = Make(server);
    base::Cancellation cancel;
    Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_FALSE(reply->proposal.has_value()) << answer;
    EXPECT_EQ(reply->note.rfind("malformed model output: ", 0), 0u) << reply->note;
  }
  // A body that is not the provider's shape at all.
  FakeProvider server(kind(), model());
  server.Push({200, "<html>gateway</html>"});
  auto backend = Make(server);
  base::Cancellation cancel;
  Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
  ASSERT_TRUE(reply.ok());
  EXPECT_FALSE(reply->proposal.has_value());
  EXPECT_EQ(reply->note.rfind("malformed model output: ", 0), 0u) << reply->note;
}

TEST_P(ProviderBackendTest, RefusalIsAnAbstentionWithANote) {
  FakeProvider server(kind(), model());
  std::string body;
  if (kind() == Kind::kOpenAi) {
    body =
        Json{{"status", "completed"},
             {"output",
              Json::array({Json{{"type", "message"},
                                {"content", Json::array({Json{{"type", "refusal"},
                                                              {"refusal", "I can't help"}}})}}})}}
            .dump();
  } else {
    body = Json{{"type", "message"},
                {"content", Json::array({Json{{"type", "text"}, {"text", "I can't help"}}})},
                {"stop_reason", "refusal"}}
               .dump();
  }
  server.Push({200, body});
  auto backend = Make(server);
  base::Cancellation cancel;
  Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_FALSE(reply->proposal.has_value());
  EXPECT_EQ(reply->note, "the model refused");
}

TEST_P(ProviderBackendTest, RetriesA429ThenSucceeds) {
  FakeProvider server(kind(), model());
  server.Push({429, ErrorBody("rate limited")});
  server.Push({200, Answer(kind(), ProposalJson("retry_name", 0.4, {}, "Retried."))});
  auto backend = Make(server);
  base::Cancellation cancel;
  Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_TRUE(reply->proposal.has_value());
  EXPECT_EQ(reply->proposal->name, "retry_name");
  EXPECT_EQ(reply->retries, 1);
  EXPECT_EQ(server.requests(), 2);
}

TEST_P(ProviderBackendTest, GivesUpAfterThreeRetriesOfA5xx) {
  FakeProvider server(kind(), model());
  for (int i = 0; i < 5; ++i) server.Push({500, ErrorBody("internal error")});
  auto backend = Make(server);
  base::Cancellation cancel;
  Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), base::StatusCode::kIo);
  EXPECT_NE(reply.status().message().find("HTTP 500 after 4 attempts"), std::string::npos)
      << reply.status().message();
  EXPECT_EQ(server.requests(), 4);  // the first try and three retries
}

TEST_P(ProviderBackendTest, UnauthorizedAbortsWithoutQuotingTheKey) {
  FakeProvider server(kind(), model());
  server.Push({401, ErrorBody(std::string("Incorrect API key provided: ") + kKey)});
  auto backend = Make(server);
  base::Cancellation cancel;
  Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), base::StatusCode::kPermissionDenied);
  EXPECT_NE(reply.status().message().find("authentication failed (HTTP 401)"), std::string::npos);
  EXPECT_EQ(reply.status().message().find(kKey), std::string::npos);
  EXPECT_EQ(server.requests(), 1);  // never retried
}

TEST_P(ProviderBackendTest, OtherClientErrorsRedactTheKey) {
  FakeProvider server(kind(), model());
  server.Push({400, ErrorBody(std::string("bad request for key ") + kKey)});
  auto backend = Make(server);
  base::Cancellation cancel;
  Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(reply.status().message().find(kKey), std::string::npos);
  EXPECT_NE(reply.status().message().find("[redacted]"), std::string::npos)
      << reply.status().message();
  EXPECT_EQ(server.requests(), 1);
}

TEST_P(ProviderBackendTest, SlowReplyTimesOut) {
  FakeProvider server(kind(), model());
  server.Push({200, Answer(kind(), ProposalJson("late_name", 0.4, {}, "Late.")), 3'000});
  ProviderOptions options;
  options.timeout_ms = 150;
  auto backend = Make(server, options);
  base::Cancellation cancel;
  Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), base::StatusCode::kDeadlineExceeded);
  EXPECT_NE(reply.status().message().find("timed out after 150 ms"), std::string::npos);
}

TEST_P(ProviderBackendTest, CancellationInterruptsAWait) {
  FakeProvider server(kind(), model());
  server.Push({200, Answer(kind(), ProposalJson("late_name", 0.4, {}, "Late.")), 5'000});
  auto backend = Make(server);
  base::Cancellation cancel;
  std::thread canceller([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel.Cancel();
  });
  Result<BackendReply> reply = backend->Propose(Facts(), {}, cancel);
  canceller.join();
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), base::StatusCode::kCancelled);
}

TEST_P(ProviderBackendTest, MissingKeyMeansUnavailableAndAClearError) {
  AgentConfig config = Config("http://127.0.0.1:9", "");
  std::vector<BackendInfo> list = ListBackends(config);
  const BackendInfo& info = kind() == Kind::kOpenAi ? list[1] : list[2];
  EXPECT_EQ(info.name, internal_name());
  EXPECT_FALSE(info.available);
  const std::string var = kind() == Kind::kOpenAi ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
  EXPECT_EQ(info.requirements, std::vector<std::string>{var});
  auto backend = MakeBackend(selector(), std::nullopt, config);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), base::StatusCode::kUnsupported);
  EXPECT_EQ(backend.status().message(),
            internal_name() + " backend unavailable: " + var +
                " is not set (set it in the environment or with 'warden config set " +
                internal_name() + ".api_key ...')");
  // auto falls back to offline rather than failing.
  auto automatic = MakeBackend("auto", std::nullopt, config);
  ASSERT_TRUE(automatic.ok());
  EXPECT_EQ((*automatic)->name(), "offline");
}

// The whole pass over a provider: a grounded proposal is written, an invented citation is
// stopped by the verifier, a malformed answer is an error detail, and no key reaches evidence.
TEST_P(ProviderBackendTest, PassThroughVerifierAndEconomy) {
  FakeProvider server(kind(), model());
  std::vector<FunctionFacts> functions = {Facts(1), Facts(2), Facts(3)};
  testing::FakeAgentStore store(functions);
  // Schedule: all leaves with one call target, so index order 1, 2, 3.
  server.Push({200, Answer(kind(), ProposalJson("open_file", 0.45, {"cannot open file %s"},
                                                "Reports \"cannot open\"."))});
  server.Push({200, Answer(kind(), ProposalJson("invented_name", 0.45, {"password: %s"},
                                                "Checks a password."))});
  server.Push({429, ErrorBody("slow down")});
  server.Push({200, Answer(kind(), "not json at all")});
  auto backend = Make(server);
  base::Cancellation cancel;
  PassOptions options;
  options.version_id = 1;
  options.channel = "mcp";
  options.pass_id = "p1";
  Result<RunSummary> s = RunAgentPass(store, *backend, options, cancel);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(server.failures().empty()) << server.failures().front();
  EXPECT_EQ(s->backend, internal_name());
  EXPECT_EQ(s->considered, 3);
  EXPECT_EQ(s->proposed, 2);
  EXPECT_EQ(s->written, 1);
  EXPECT_EQ(s->rejected_by_verifier, 1);
  EXPECT_EQ(s->rejected_by_economy, 0);
  ASSERT_EQ(s->details.size(), 3u);
  EXPECT_EQ(s->details[1].outcome, DetailOutcome::kVerifierReject);
  EXPECT_EQ(s->details[2].outcome, DetailOutcome::kError);
  EXPECT_EQ(s->details[2].reason.rfind("abstained: malformed model output", 0), 0u);
  ASSERT_EQ(store.attempts().size(), 1u);
  const AgentWrite& write = store.attempts()[0].write;
  EXPECT_EQ(write.actor, "agent:" + internal_name());
  Json details = Json::parse(write.details_json);
  EXPECT_EQ(details["model"], model());
  EXPECT_EQ(details["channel"], "mcp");
  EXPECT_EQ(details["backend"], internal_name());
  EXPECT_EQ(write.details_json.find(kKey), std::string::npos);
  EXPECT_EQ(RunSummaryToJson(*s).find(kKey), std::string::npos);
}

TEST_P(ProviderBackendTest, UnauthorizedEndsThePass) {
  FakeProvider server(kind(), model());
  server.Push({403, ErrorBody("forbidden")});
  testing::FakeAgentStore store({Facts(1), Facts(2)});
  auto backend = Make(server);
  base::Cancellation cancel;
  PassOptions options;
  options.version_id = 1;
  Result<RunSummary> s = RunAgentPass(store, *backend, options, cancel);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), base::StatusCode::kPermissionDenied);
  EXPECT_EQ(server.requests(), 1);
  EXPECT_TRUE(store.attempts().empty());
}

INSTANTIATE_TEST_SUITE_P(Providers, ProviderBackendTest,
                         ::testing::Values(Kind::kOpenAi, Kind::kAnthropic),
                         [](const ::testing::TestParamInfo<Kind>& param_info) {
                           return param_info.param == Kind::kOpenAi ? std::string("OpenAi")
                                                                    : std::string("Anthropic");
                         });

TEST(ProviderTransportTest, ConnectionRefusedIsAnIoErrorOfThatFunctionOnly) {
  // Bind a port and close it without listening, so that a connect is refused.
  int port = 0;
  {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port = ntohs(addr.sin_port);
    close(fd);
  }
  ProviderConfig config{
      .api_key = kKey, .model = "m", .base_url = "http://127.0.0.1:" + std::to_string(port)};
  ProviderOptions options;
  options.backoff_base_ms = 1;
  options.timeout_ms = 5'000;
  OpenAiBackend backend(config, options);
  base::Cancellation cancel;
  Result<BackendReply> reply = backend.Propose(Facts(), {}, cancel);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), base::StatusCode::kIo);
  EXPECT_EQ(reply.status().message().find(kKey), std::string::npos);
}

}  // namespace
}  // namespace trove::warden::agents
