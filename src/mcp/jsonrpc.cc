#include "mcp/jsonrpc.h"

#include <cmath>

namespace trove::mcp {

namespace {

ParsedMessage Fail(int code, std::string message, Json id = nullptr) {
  ParsedMessage out;
  out.error.code = code;
  out.error.message = std::move(message);
  out.error_id = std::move(id);
  return out;
}

bool IsValidId(const Json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned();
}

}  // namespace

ParsedMessage ParseMessage(std::string_view text, const ParseLimits& limits) {
  if (text.size() > limits.max_message_bytes) {
    return Fail(error_code::kInvalidRequest,
                "message of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                    std::to_string(limits.max_message_bytes) + " bytes");
  }
  if (JsonNestingDepth(text, limits.max_depth) > limits.max_depth) {
    return Fail(error_code::kParseError,
                "parse error: nesting deeper than " + std::to_string(limits.max_depth));
  }
  Json doc = ParseJson(text);
  if (doc.is_discarded()) return Fail(error_code::kParseError, "parse error: invalid JSON");
  if (doc.is_array()) {
    return Fail(error_code::kInvalidRequest, "invalid request: batch arrays are not supported");
  }
  if (!doc.is_object()) {
    return Fail(error_code::kInvalidRequest, "invalid request: a message must be a JSON object");
  }

  // The id to answer with, when it is usable.
  Json reply_id = nullptr;
  auto id_it = doc.find("id");
  const bool has_id = id_it != doc.end();
  if (has_id && IsValidId(*id_it)) reply_id = *id_it;

  auto version = doc.find("jsonrpc");
  if (version == doc.end() || !version->is_string() || *version != "2.0") {
    return Fail(error_code::kInvalidRequest, "invalid request: \"jsonrpc\" must be \"2.0\"",
                reply_id);
  }

  Message msg;
  auto method = doc.find("method");
  if (method != doc.end()) {
    if (!method->is_string()) {
      return Fail(error_code::kInvalidRequest, "invalid request: \"method\" must be a string",
                  reply_id);
    }
    msg.method = method->get<std::string>();
    auto params = doc.find("params");
    if (params != doc.end()) {
      if (!params->is_object()) {
        return Fail(error_code::kInvalidRequest, "invalid request: \"params\" must be an object",
                    reply_id);
      }
      msg.params = std::move(*params);
    }
    if (!has_id) {
      msg.kind = MessageKind::kNotification;
      return ParsedMessage{std::move(msg), {}, nullptr};
    }
    if (!IsValidId(*id_it)) {
      return Fail(error_code::kInvalidRequest,
                  "invalid request: \"id\" must be a string or an integer");
    }
    msg.kind = MessageKind::kRequest;
    msg.id = std::move(*id_it);
    return ParsedMessage{std::move(msg), {}, nullptr};
  }

  // A response to a server->client request.
  auto result = doc.find("result");
  auto error = doc.find("error");
  const bool has_result = result != doc.end();
  const bool has_error = error != doc.end();
  if (!has_id || !IsValidId(*id_it) || has_result == has_error ||
      (has_error && !error->is_object())) {
    return Fail(error_code::kInvalidRequest,
                "invalid request: not a request, notification or response", reply_id);
  }
  msg.kind = MessageKind::kResponse;
  msg.id = std::move(*id_it);
  if (has_result) msg.result = std::move(*result);
  if (has_error) msg.error = std::move(*error);
  return ParsedMessage{std::move(msg), {}, nullptr};
}

std::string SerializeResult(const Json& id, const Json& result) {
  return SerializeRawResult(id, Dump(result));
}

std::string SerializeRawResult(const Json& id, std::string_view result_json) {
  std::string out;
  out.reserve(result_json.size() + 48);
  out += R"({"jsonrpc":"2.0","id":)";
  out += Dump(id);
  out += R"(,"result":)";
  out += result_json;
  out += '}';
  return out;
}

std::string SerializeError(const Json& id, const ProtocolError& error) {
  Json err = {{"code", error.code}, {"message", error.message}};
  if (!error.data.is_null()) err["data"] = error.data;
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += Dump(id);
  out += R"(,"error":)";
  out += Dump(err);
  out += '}';
  return out;
}

std::string SerializeNotification(std::string_view method, const Json& params) {
  Json msg = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) msg["params"] = params;
  return Dump(msg);
}

std::string SerializeRequest(const Json& id, std::string_view method, const Json& params) {
  Json msg = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) msg["params"] = params;
  return Dump(msg);
}

}  // namespace trove::mcp
