#include "warden/samples/samples.h"

#include <fmt/core.h>

#include <map>
#include <utility>

namespace trove::warden::samples {

namespace {

using Bytes = std::vector<std::uint8_t>;

void PutU(Bytes& out, std::uint64_t value) {
  do {
    std::uint8_t byte = value & 0x7f;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(byte);
  } while (value != 0);
}

void PutS(Bytes& out, std::int64_t value) {
  while (true) {
    const auto byte = static_cast<std::uint8_t>(value & 0x7f);
    value >>= 7;
    const bool done = (value == 0 && !(byte & 0x40)) || (value == -1 && (byte & 0x40));
    out.push_back(done ? byte : static_cast<std::uint8_t>(byte | 0x80));
    if (done) return;
  }
}

void PutName(Bytes& out, std::string_view text) {
  PutU(out, text.size());
  out.insert(out.end(), text.begin(), text.end());
}

void PutSized(Bytes& out, const Bytes& payload) {
  PutU(out, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
}

void PutSection(Bytes& out, std::uint8_t id, const Bytes& payload) {
  out.push_back(id);
  PutSized(out, payload);
}

void PutBlockType(Bytes& out, std::optional<ValType> result) {
  out.push_back(result ? static_cast<std::uint8_t>(*result) : 0x40);
}

}  // namespace

std::vector<std::uint8_t>& Body::Tail() {
  if (pieces_.empty() || pieces_.back().callee) pieces_.emplace_back();
  return pieces_.back().bytes;
}

Body& Body::Op(std::uint8_t opcode) {
  Tail().push_back(opcode);
  return *this;
}
Body& Body::Raw(const std::vector<std::uint8_t>& bytes) {
  Bytes& t = Tail();
  t.insert(t.end(), bytes.begin(), bytes.end());
  return *this;
}
Body& Body::LocalGet(std::uint32_t index) {
  Tail().push_back(0x20);
  PutU(Tail(), index);
  return *this;
}
Body& Body::LocalSet(std::uint32_t index) {
  Tail().push_back(0x21);
  PutU(Tail(), index);
  return *this;
}
Body& Body::LocalTee(std::uint32_t index) {
  Tail().push_back(0x22);
  PutU(Tail(), index);
  return *this;
}
Body& Body::GlobalGet(std::uint32_t index) {
  Tail().push_back(0x23);
  PutU(Tail(), index);
  return *this;
}
Body& Body::I32Const(std::int32_t value) {
  Tail().push_back(0x41);
  PutS(Tail(), value);
  return *this;
}
Body& Body::I64Const(std::int64_t value) {
  Tail().push_back(0x42);
  PutS(Tail(), value);
  return *this;
}
Body& Body::Memory(std::uint8_t opcode, std::uint32_t align, std::uint32_t offset) {
  Tail().push_back(opcode);
  PutU(Tail(), align);
  PutU(Tail(), offset);
  return *this;
}
Body& Body::Block(std::optional<ValType> result) {
  Tail().push_back(0x02);
  PutBlockType(Tail(), result);
  return *this;
}
Body& Body::Loop(std::optional<ValType> result) {
  Tail().push_back(0x03);
  PutBlockType(Tail(), result);
  return *this;
}
Body& Body::If(std::optional<ValType> result) {
  Tail().push_back(0x04);
  PutBlockType(Tail(), result);
  return *this;
}
Body& Body::Else() { return Op(0x05); }
Body& Body::End() { return Op(0x0b); }
Body& Body::Br(std::uint32_t depth) {
  Tail().push_back(0x0c);
  PutU(Tail(), depth);
  return *this;
}
Body& Body::BrIf(std::uint32_t depth) {
  Tail().push_back(0x0d);
  PutU(Tail(), depth);
  return *this;
}
Body& Body::Return() { return Op(0x0f); }
Body& Body::Drop() { return Op(0x1a); }
Body& Body::Call(std::string key) {
  pieces_.push_back(Piece{{}, std::move(key)});
  return *this;
}

Result<std::vector<std::uint8_t>> WriteModule(const Module& module) {
  // Indices: imports first, then functions in order.
  std::map<std::string, std::uint32_t> index;
  std::uint32_t next = 0;
  auto add_key = [&](const std::string& key) -> Status {
    if (!index.emplace(key, next++).second) {
      return Status::InvalidArgument(fmt::format("sample module: duplicate key '{}'", key));
    }
    return Status::Ok();
  };
  for (const Import& i : module.imports) RETURN_IF_ERROR(add_key(i.key));
  for (const Function& f : module.functions) RETURN_IF_ERROR(add_key(f.key));
  if (!module.data.empty() && module.memory_pages == 0) {
    return Status::InvalidArgument("sample module: data segments need a memory");
  }

  // Types, deduplicated in order of first use.
  std::vector<Signature> types;
  auto type_of = [&](const Signature& sig) {
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (types[i] == sig) return static_cast<std::uint32_t>(i);
    }
    types.push_back(sig);
    return static_cast<std::uint32_t>(types.size() - 1);
  };
  std::vector<std::uint32_t> import_types, function_types;
  for (const Import& i : module.imports) import_types.push_back(type_of(i.sig));
  for (const Function& f : module.functions) function_types.push_back(type_of(f.sig));

  Bytes out = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  Bytes s;
  PutU(s, types.size());
  for (const Signature& t : types) {
    s.push_back(0x60);
    PutU(s, t.params.size());
    for (ValType v : t.params) s.push_back(static_cast<std::uint8_t>(v));
    PutU(s, t.results.size());
    for (ValType v : t.results) s.push_back(static_cast<std::uint8_t>(v));
  }
  PutSection(out, 1, s);
  if (!module.imports.empty()) {
    s.clear();
    PutU(s, module.imports.size());
    for (std::size_t i = 0; i < module.imports.size(); ++i) {
      PutName(s, module.imports[i].module);
      PutName(s, module.imports[i].field);
      s.push_back(0x00);
      PutU(s, import_types[i]);
    }
    PutSection(out, 2, s);
  }
  s.clear();
  PutU(s, module.functions.size());
  for (std::uint32_t t : function_types) PutU(s, t);
  PutSection(out, 3, s);
  if (module.memory_pages > 0) {
    s.clear();
    PutU(s, 1);
    s.push_back(0x00);
    PutU(s, module.memory_pages);
    PutSection(out, 5, s);
  }
  std::vector<std::pair<std::string, std::uint32_t>> exports;
  for (std::size_t i = 0; i < module.functions.size(); ++i) {
    for (const std::string& e : module.functions[i].exports) {
      exports.emplace_back(e, static_cast<std::uint32_t>(module.imports.size() + i));
    }
  }
  if (!exports.empty()) {
    s.clear();
    PutU(s, exports.size());
    for (const auto& [name, func] : exports) {
      PutName(s, name);
      s.push_back(0x00);
      PutU(s, func);
    }
    PutSection(out, 7, s);
  }
  s.clear();
  PutU(s, module.functions.size());
  for (const Function& f : module.functions) {
    Bytes body;
    // Locals: runs of equal types.
    std::vector<std::pair<std::uint32_t, ValType>> runs;
    for (ValType v : f.locals) {
      if (!runs.empty() && runs.back().second == v) {
        ++runs.back().first;
      } else {
        runs.emplace_back(1, v);
      }
    }
    PutU(body, runs.size());
    for (const auto& [count, type] : runs) {
      PutU(body, count);
      body.push_back(static_cast<std::uint8_t>(type));
    }
    for (const Body::Piece& piece : f.body.pieces()) {
      if (piece.callee) {
        auto it = index.find(*piece.callee);
        if (it == index.end()) {
          return Status::InvalidArgument(fmt::format(
              "sample module: function '{}' calls unknown key '{}'", f.key, *piece.callee));
        }
        body.push_back(0x10);
        PutU(body, it->second);
      } else {
        body.insert(body.end(), piece.bytes.begin(), piece.bytes.end());
      }
    }
    body.push_back(0x0b);
    PutSized(s, body);
  }
  PutSection(out, 10, s);
  if (!module.data.empty()) {
    s.clear();
    PutU(s, module.data.size());
    for (const Data& d : module.data) {
      s.push_back(0x00);
      s.push_back(0x41);
      PutS(s, static_cast<std::int32_t>(d.address));
      s.push_back(0x0b);
      PutName(s, d.bytes);
    }
    PutSection(out, 11, s);
  }
  if (module.name_section) {
    std::vector<std::pair<std::uint32_t, std::string>> names;
    for (std::size_t i = 0; i < module.functions.size(); ++i) {
      if (module.functions[i].name) {
        names.emplace_back(static_cast<std::uint32_t>(module.imports.size() + i),
                           *module.functions[i].name);
      }
    }
    if (!names.empty()) {
      Bytes sub;
      PutU(sub, names.size());
      for (const auto& [func, name] : names) {
        PutU(sub, func);
        PutName(sub, name);
      }
      s.clear();
      PutName(s, "name");
      s.push_back(0x01);  // function names
      PutSized(s, sub);
      PutSection(out, 0, s);
    }
  }
  return out;
}

}  // namespace trove::warden::samples
