#include "mcp/jsonrpc.h"

#include <simdjson.h>

#include <algorithm>
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

// Converts a simdjson value to a Json value.
Json ToNlohmann(simdjson::dom::element e) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::OBJECT: {
      Json out = Json::object();
      for (simdjson::dom::key_value_pair field : simdjson::dom::object(e)) {
        out[std::string(field.key)] = ToNlohmann(field.value);
      }
      return out;
    }
    case element_type::ARRAY: {
      Json out = Json::array();
      for (simdjson::dom::element item : simdjson::dom::array(e)) out.push_back(ToNlohmann(item));
      return out;
    }
    case element_type::STRING:
      return Json(std::string(std::string_view(e)));
    case element_type::INT64:
      return Json(std::int64_t(e));
    case element_type::UINT64:
      return Json(std::uint64_t(e));
    case element_type::DOUBLE:
      return Json(double(e));
    case element_type::BOOL:
      return Json(bool(e));
    case element_type::NULL_VALUE:
      return Json(nullptr);
  }
  return Json(nullptr);
}

bool IsValidIdElement(simdjson::dom::element e) {
  using simdjson::dom::element_type;
  auto t = e.type();
  return t == element_type::STRING || t == element_type::INT64 || t == element_type::UINT64;
}

}  // namespace

struct MessageParser::Impl {
  simdjson::dom::parser parser;
  std::size_t depth = 0;
};

MessageParser::MessageParser() : impl_(std::make_unique<Impl>()) {}
MessageParser::~MessageParser() = default;

ParsedMessage ParseMessage(std::string_view text, const ParseLimits& limits) {
  MessageParser parser;
  return parser.Parse(text, limits);
}

ParsedMessage MessageParser::Parse(std::string_view text, const ParseLimits& limits) {
  if (text.size() > limits.max_message_bytes) {
    return Fail(error_code::kInvalidRequest,
                "message of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                    std::to_string(limits.max_message_bytes) + " bytes");
  }
  simdjson::dom::parser& parser = impl_->parser;
  // Depth counts the outermost object as level 1, as simdjson's max_depth does.
  const std::size_t depth = static_cast<std::size_t>(limits.max_depth);
  if (impl_->depth != depth || parser.capacity() < text.size()) {
    if (parser.allocate(std::max<std::size_t>(text.size(), 4096), depth) != simdjson::SUCCESS) {
      return Fail(error_code::kInternalError, "out of memory");
    }
    impl_->depth = depth;
  }
  simdjson::dom::element doc;
  simdjson::error_code err = parser.parse(text.data(), text.size()).get(doc);
  if (err == simdjson::DEPTH_ERROR) {
    return Fail(error_code::kParseError,
                "parse error: nesting deeper than " + std::to_string(limits.max_depth));
  }
  if (err != simdjson::SUCCESS) {
    return Fail(error_code::kParseError,
                std::string("parse error: ") + simdjson::error_message(err));
  }
  using simdjson::dom::element_type;
  if (doc.type() == element_type::ARRAY) {
    return Fail(error_code::kInvalidRequest, "invalid request: batch arrays are not supported");
  }
  if (doc.type() != element_type::OBJECT) {
    return Fail(error_code::kInvalidRequest, "invalid request: a message must be a JSON object");
  }
  simdjson::dom::object obj(doc);

  // The id to answer with, when it is usable.
  Json reply_id = nullptr;
  simdjson::dom::element id_el;
  const bool has_id = obj["id"].get(id_el) == simdjson::SUCCESS;
  if (has_id && IsValidIdElement(id_el)) reply_id = ToNlohmann(id_el);

  simdjson::dom::element version;
  std::string_view version_text;
  if (obj["jsonrpc"].get(version) != simdjson::SUCCESS ||
      version.get(version_text) != simdjson::SUCCESS || version_text != "2.0") {
    return Fail(error_code::kInvalidRequest, "invalid request: \"jsonrpc\" must be \"2.0\"",
                reply_id);
  }

  Message msg;
  simdjson::dom::element method;
  if (obj["method"].get(method) == simdjson::SUCCESS) {
    std::string_view method_text;
    if (method.get(method_text) != simdjson::SUCCESS) {
      return Fail(error_code::kInvalidRequest, "invalid request: \"method\" must be a string",
                  reply_id);
    }
    msg.method = std::string(method_text);
    simdjson::dom::element params;
    if (obj["params"].get(params) == simdjson::SUCCESS) {
      if (params.type() != element_type::OBJECT) {
        return Fail(error_code::kInvalidRequest, "invalid request: \"params\" must be an object",
                    reply_id);
      }
      msg.params = ToNlohmann(params);
    }
    if (!has_id) {
      msg.kind = MessageKind::kNotification;
      return ParsedMessage{std::move(msg), {}, nullptr};
    }
    if (!IsValidIdElement(id_el)) {
      return Fail(error_code::kInvalidRequest,
                  "invalid request: \"id\" must be a string or an integer");
    }
    msg.kind = MessageKind::kRequest;
    msg.id = std::move(reply_id);
    return ParsedMessage{std::move(msg), {}, nullptr};
  }

  // A response to a server->client request.
  simdjson::dom::element result, error;
  const bool has_result = obj["result"].get(result) == simdjson::SUCCESS;
  const bool has_error = obj["error"].get(error) == simdjson::SUCCESS;
  if (!has_id || !IsValidIdElement(id_el) || has_result == has_error ||
      (has_error && error.type() != element_type::OBJECT)) {
    return Fail(error_code::kInvalidRequest,
                "invalid request: not a request, notification or response", reply_id);
  }
  msg.kind = MessageKind::kResponse;
  msg.id = std::move(reply_id);
  if (has_result) msg.result = ToNlohmann(result);
  if (has_error) msg.error = ToNlohmann(error);
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
