// The shared POST client (http_post.h) against a local cpp-httplib server on 127.0.0.1: the
// body and headers sent, any status passed through, Retry-After, the response cap, the
// timeout, cancellation, an unreachable host, and redaction of the caller's secret.
#include "base/http/http_post.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace trove::base::http {
namespace {

class LocalServer {
 public:
  LocalServer() {
    server_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.get_header_value("X-Test") + "|" + req.body, "text/plain");
    });
    server_.Post("/busy", [](const httplib::Request&, httplib::Response& res) {
      res.status = 429;
      res.set_header("Retry-After", "7");
      res.set_content("slow down", "text/plain");
    });
    server_.Post("/dated", [](const httplib::Request&, httplib::Response& res) {
      res.status = 503;
      res.set_header("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT");
    });
    server_.Post("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(4096, 'x'), "text/plain");
    });
    server_.Post("/slow", [](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
      res.set_content("late", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~LocalServer() {
    server_.stop();
    thread_.join();
  }
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(HttpPostTest, SendsBodyAndHeadersAndReturnsAnyStatus) {
  LocalServer server;
  Session session;
  base::Cancellation cancel;
  Request request{server.url("/echo"), {{"X-Test", "yes"}}, "hello"};
  auto ok = session.Post("test", request, {}, cancel);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "yes|hello");
  EXPECT_FALSE(ok->retry_after_seconds.has_value());

  // The same session serves the next request; a 429 is a response, with its Retry-After.
  auto busy = session.Post("test", {server.url("/busy"), {}, "{}"}, {}, cancel);
  ASSERT_TRUE(busy.ok()) << busy.status().ToString();
  EXPECT_EQ(busy->status, 429);
  EXPECT_EQ(busy->body, "slow down");
  EXPECT_EQ(busy->retry_after_seconds, 7);

  auto dated = session.Post("test", {server.url("/dated"), {}, "{}"}, {}, cancel);
  ASSERT_TRUE(dated.ok());
  EXPECT_EQ(dated->status, 503);
  EXPECT_FALSE(dated->retry_after_seconds.has_value());  // a date, not seconds
}

TEST(HttpPostTest, ResponseOverTheCapIsResourceExhausted) {
  LocalServer server;
  Session session;
  base::Cancellation cancel;
  Limits limits;
  limits.max_response_bytes = 1000;
  auto big = session.Post("test", {server.url("/big"), {}, ""}, limits, cancel);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(big.status().message(), "test: response larger than 1000 bytes");
}

TEST(HttpPostTest, TimeoutIsDeadlineExceeded) {
  LocalServer server;
  Session session;
  base::Cancellation cancel;
  Limits limits;
  limits.timeout_ms = 150;
  auto slow = session.Post("test", {server.url("/slow"), {}, ""}, limits, cancel);
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(slow.status().message(), "test: request timed out after 150 ms");
}

TEST(HttpPostTest, CancellationInterruptsATransfer) {
  LocalServer server;
  Session session;
  base::Cancellation cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel.Cancel();
  });
  auto slow = session.Post("test", {server.url("/slow"), {}, ""}, {}, cancel);
  canceller.join();
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().code(), StatusCode::kCancelled);
  // Already cancelled: nothing is sent.
  auto again = session.Post("test", {server.url("/echo"), {}, ""}, {}, cancel);
  EXPECT_EQ(again.status().code(), StatusCode::kCancelled);
}

TEST(HttpPostTest, UnreachableHostIsIoWithoutTheSecret) {
  // A port nothing listens on: bound, never listened on, and closed again.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  close(fd);
  const int port = ntohs(address.sin_port);
  Limits limits;
  limits.timeout_ms = 5'000;
  Session session;
  base::Cancellation cancel;
  std::string secret = "127.0.0.1";  // a secret that libcurl's message would quote
  auto down = session.Post("test", {"http://127.0.0.1:" + std::to_string(port) + "/x", {}, ""}, {},
                           cancel, secret);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), StatusCode::kIo);
  EXPECT_EQ(down.status().message().find(secret), std::string::npos) << down.status().message();
}

TEST(HttpPostTest, RedactReplacesEveryOccurrence) {
  EXPECT_EQ(Redact("key sk-1 and sk-1 again", "sk-1"), "key [redacted] and [redacted] again");
  EXPECT_EQ(Redact("nothing to hide", ""), "nothing to hide");
  EXPECT_EQ(Redact("aaaa", "aa"), "[redacted][redacted]");
}

}  // namespace
}  // namespace trove::base::http
