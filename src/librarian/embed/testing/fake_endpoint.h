// FakeEmbeddings: a stand-in for an OpenAI-compatible POST /v1/embeddings endpoint on
// 127.0.0.1 (cpp-httplib), for tests. Each input's vector is a hashed bag of its lower-case
// words (64 dimensions, FNV-1a of the word picks the slot), so texts that share words are near
// and the answers are deterministic. Modes script the failures. Test-only.
// Thread safety: the server thread and the test thread share the counters under a mutex.
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace trove::librarian::embed::testing {

class FakeEmbeddings {
 public:
  enum class Mode { kOk, kUnauthorized, kMalformed, kWrongCount };
  static constexpr int kDimensions = 64;

  FakeEmbeddings() {
    server_.Post("/v1/embeddings",
                 [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeEmbeddings() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1/embeddings"; }
  // A URL nothing listens on: a port bound and closed again.
  static std::string ClosedPortUrl() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    close(fd);
    return "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/v1/embeddings";
  }
  void set_mode(Mode m) {
    std::lock_guard<std::mutex> lock(mu_);
    mode_ = m;
  }
  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  int inputs() {
    std::lock_guard<std::mutex> lock(mu_);
    return inputs_;
  }
  std::string last_auth() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_auth_;
  }
  std::string last_model() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_model_;
  }

  static std::vector<float> Vectorize(const std::string& text) {
    std::vector<float> v(kDimensions, 0.0f);
    std::string word;
    auto flush = [&] {
      if (word.empty()) return;
      std::uint32_t h = 2166136261u;
      for (char c : word) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
      v[h % kDimensions] += 1.0f;
      word.clear();
    };
    for (char c : text) {
      if (std::isalnum(static_cast<unsigned char>(c))) {
        word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      } else {
        flush();
      }
    }
    flush();
    return v;
  }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    Mode mode;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++requests_;
      last_auth_ = req.get_header_value("Authorization");
      mode = mode_;
    }
    if (mode == Mode::kUnauthorized) {
      res.status = 401;
      res.set_content(R"({"error":{"message":"bad key"}})", "application/json");
      return;
    }
    if (mode == Mode::kMalformed) {
      res.set_content("{\"data\": [", "application/json");
      return;
    }
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    nlohmann::json data = nlohmann::json::array();
    if (body.is_object() && body.contains("input") && body["input"].is_array()) {
      std::lock_guard<std::mutex> lock(mu_);
      last_model_ = body.value("model", "");
      inputs_ += static_cast<int>(body["input"].size());
    }
    if (body.is_object() && body.contains("input") && body["input"].is_array()) {
      std::size_t i = 0;
      for (const auto& in : body["input"]) {
        data.push_back({{"object", "embedding"},
                        {"index", i++},
                        {"embedding", Vectorize(in.is_string() ? in.get<std::string>() : "")}});
      }
    }
    if (mode == Mode::kWrongCount) data.push_back(data.empty() ? nlohmann::json{} : data[0]);
    res.set_content(nlohmann::json{{"object", "list"}, {"data", data}, {"model", "fake"}}.dump(),
                    "application/json");
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  Mode mode_ = Mode::kOk;
  int requests_ = 0;
  int inputs_ = 0;
  std::string last_auth_;
  std::string last_model_;
};

}  // namespace trove::librarian::embed::testing
