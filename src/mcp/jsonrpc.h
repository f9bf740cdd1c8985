// JSON-RPC 2.0 framing for MCP: classifying one incoming message and writing outgoing ones.
//
// Ids keep their JSON type and value: an integer stays an integer (digit for digit up to
// 64 bits), a string stays a string. Batches are rejected in every revision (-32600).
// Thread safety: free functions over values.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "mcp/json.h"

namespace trove::mcp {

// JSON-RPC and MCP error codes (docs/mcp.md §3.1).
namespace error_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;
inline constexpr int kServerBusy = -32000;
inline constexpr int kRequestTimeout = -32001;
inline constexpr int kAuthenticationRequired = -32010;
inline constexpr int kPermissionDenied = -32011;
inline constexpr int kRateLimitExceeded = -32012;
}  // namespace error_code

// A protocol error: becomes a JSON-RPC `error` response. Only the dispatcher and the
// validation layer create these; tool handlers cannot (they return tool errors).
struct ProtocolError {
  int code = error_code::kInternalError;
  std::string message;
  Json data;  // null: omitted
};

enum class MessageKind { kRequest, kNotification, kResponse };

struct Message {
  MessageKind kind = MessageKind::kRequest;
  Json id;             // request and response: string or integer
  std::string method;  // request and notification
  Json params;         // object or null
  Json result;         // response
  Json error;          // response with an error (object), else null
};

struct ParseLimits {
  std::size_t max_message_bytes = 4u << 20;
  int max_depth = 64;
};

// The outcome of parsing one message: a message, or the error to answer (with its id, which
// is null when the id cannot be determined).
struct ParsedMessage {
  std::optional<Message> message;
  ProtocolError error;
  Json error_id;  // id for the error response
};

// MessageParser classifies text as one JSON-RPC message per docs/mcp.md §2.1 and §3.2.
// It parses with simdjson (UTF-8 and nesting depth are checked there) and builds nlohmann
// values only for params, result and error; its buffers are reused from message to message.
// Integers beyond the 64-bit range are a parse error. See docs/decisions/0003-simdjson.md.
// Thread safety: one thread at a time per MessageParser (a reader thread owns one).
class MessageParser {
 public:
  MessageParser();
  ~MessageParser();
  MessageParser(const MessageParser&) = delete;
  MessageParser& operator=(const MessageParser&) = delete;

  ParsedMessage Parse(std::string_view text, const ParseLimits& limits);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses one message with a fresh MessageParser (tests, fuzzers, one-off callers).
ParsedMessage ParseMessage(std::string_view text, const ParseLimits& limits);

// Returns the in-flight table key of an id: its compact JSON (so 5 and "5" differ).
inline std::string IdKey(const Json& id) { return Dump(id); }

// Serializers for outgoing messages (compact JSON, no trailing newline).
std::string SerializeResult(const Json& id, const Json& result);
// Same, with the result already serialized as compact JSON.
std::string SerializeRawResult(const Json& id, std::string_view result_json);
std::string SerializeError(const Json& id, const ProtocolError& error);
std::string SerializeNotification(std::string_view method, const Json& params);
std::string SerializeRequest(const Json& id, std::string_view method, const Json& params);

}  // namespace trove::mcp
