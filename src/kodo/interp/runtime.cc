// The builtins of docs/kodo.md §4.9 for the MIR interpreter.
#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <unordered_map>

#include "kodo/interp/value.h"

namespace trove::kodo::interp {
namespace {

using Args = std::vector<RValue>;

// ---- helpers --------------------------------------------------------------------------------

std::vector<std::uint32_t> Decode(const std::string& s) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::uint32_t cp = c;
    std::size_t n = 1;
    if (c >= 0xf0 && i + 3 < s.size() + 0) {
      cp = c & 0x07;
      n = 4;
    } else if (c >= 0xe0) {
      cp = c & 0x0f;
      n = 3;
    } else if (c >= 0xc0) {
      cp = c & 0x1f;
      n = 2;
    }
    if (i + n > s.size()) n = s.size() - i;
    for (std::size_t k = 1; k < n; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    out.push_back(cp);
    i += n;
  }
  return out;
}

std::string Encode(std::uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return out;
}

std::int64_t CodePointCount(const std::string& s) {
  std::int64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
  return n;
}

bool NeedArgs(Ctx& ctx, const Args& a, std::size_t n, const char* name) {
  if (a.size() >= n) return true;
  return ctx.Trap(kExitAbort, fmt::format("builtin `{}` called with too few arguments", name));
}

ListObj* AsList(const RValue& v) {
  return v.tag == Tag::kList || v.tag == Tag::kTuple ? static_cast<ListObj*>(v.o.get()) : nullptr;
}
MapObj* AsMap(const RValue& v) {
  return v.tag == Tag::kMap || v.tag == Tag::kSet ? static_cast<MapObj*>(v.o.get()) : nullptr;
}

std::string Key(const RValue& v) {
  switch (v.tag) {
    case Tag::kInt:
      return fmt::format("i{}", v.i);
    case Tag::kStr:
      return "s" + v.str();
    case Tag::kBool:
      return v.i ? "bt" : "bf";
    case Tag::kFloat:
      return fmt::format("f{}", v.f);
    default:
      return "o" + ToText(v);
  }
}

RValue NewList(Ctx& ctx) { return RValue::Obj(Tag::kList, std::make_shared<ListObj>(ctx.mem)); }
RValue NewMap(Ctx& ctx, Tag t) { return RValue::Obj(t, std::make_shared<MapObj>(ctx.mem)); }

void MapPut(MapObj* m, const RValue& k, RValue v) {
  const std::string key = Key(k);
  auto it = m->index.find(key);
  if (it != m->index.end()) {
    m->vals[it->second] = std::move(v);
    return;
  }
  m->index.emplace(key, m->keys.size());
  m->keys.push_back(k);
  m->vals.push_back(std::move(v));
  m->Account(2 * sizeof(RValue) + key.size() + 32);
}

bool MapDel(MapObj* m, const RValue& k) {
  auto it = m->index.find(Key(k));
  if (it == m->index.end()) return false;
  const std::size_t pos = it->second;
  m->keys.erase(m->keys.begin() + static_cast<std::ptrdiff_t>(pos));
  m->vals.erase(m->vals.begin() + static_cast<std::ptrdiff_t>(pos));
  m->index.clear();
  for (std::size_t i = 0; i < m->keys.size(); ++i) m->index.emplace(Key(m->keys[i]), i);
  return true;
}

RValue Enum(Ctx& ctx, const char* enum_name, const char* variant, std::int64_t disc,
            std::vector<RValue> payload) {
  auto e = std::make_shared<EnumObj>(ctx.mem);
  e->enum_name = enum_name;
  e->variant = variant;
  e->disc = disc;
  e->payload = std::move(payload);
  return RValue::Obj(Tag::kEnum, e);
}
RValue Some(Ctx& ctx, RValue v) { return Enum(ctx, "Option", "Some", 0, {std::move(v)}); }
RValue None(Ctx& ctx) { return Enum(ctx, "Option", "None", 1, {}); }
RValue Ok(Ctx& ctx, RValue v) { return Enum(ctx, "Result", "Ok", 0, {std::move(v)}); }
RValue Err(Ctx& ctx, std::string s) { return Enum(ctx, "Result", "Err", 1, {ctx.Str(s)}); }

EnumObj* AsEnum(const RValue& v) {
  return v.tag == Tag::kEnum ? static_cast<EnumObj*>(v.o.get()) : nullptr;
}

RValue MakeIter(Ctx& ctx, std::shared_ptr<HeapObj> source) {
  auto it = std::make_shared<IterObj>(ctx.mem);
  it->source = std::move(source);
  return RValue::Obj(Tag::kIter, it);
}

// A snapshot list of `items` (for map keys/values and set iteration).
std::shared_ptr<ListObj> Snapshot(Ctx& ctx, const std::vector<RValue>& items) {
  auto l = std::make_shared<ListObj>(ctx.mem);
  l->items = items;
  l->Account(items.size() * sizeof(RValue));
  return l;
}

// ---- builtins -------------------------------------------------------------------------------

#define BUILTIN(name) bool name(Ctx& ctx, Args& a, RValue& out)
#define UNUSED_OUT (void)out
#define UNUSED_CTX (void)ctx

BUILTIN(BPrintln) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "println")) return false;
  ctx.Out(ToText(a[0]));
  ctx.Out("\n");
  return true;
}
BUILTIN(BPrint) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "print")) return false;
  ctx.Out(ToText(a[0]));
  return true;
}
BUILTIN(BPrintInt) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "print_int")) return false;
  ctx.Out(fmt::format("{}\n", a[0].i));
  return true;
}
BUILTIN(BPrintFloat) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "print_float")) return false;
  ctx.Out(FormatFloat(a[0].f));
  return true;
}
BUILTIN(BPrintlnFloat) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "println_float")) return false;
  ctx.Out(FormatFloat(a[0].f));
  ctx.Out("\n");
  return true;
}
BUILTIN(BToString) {
  if (!NeedArgs(ctx, a, 1, "to_string")) return false;
  out = ctx.Str(ToText(a[0]));
  return true;
}
BUILTIN(BAbs) {
  if (!NeedArgs(ctx, a, 1, "abs")) return false;
  out = RValue::Int(a[0].i < 0 ? static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(a[0].i))
                               : a[0].i);
  return true;
}
BUILTIN(BMin) {
  if (!NeedArgs(ctx, a, 2, "min")) return false;
  out = RValue::Int(std::min(a[0].i, a[1].i));
  return true;
}
BUILTIN(BMax) {
  if (!NeedArgs(ctx, a, 2, "max")) return false;
  out = RValue::Int(std::max(a[0].i, a[1].i));
  return true;
}
BUILTIN(BClamp) {
  if (!NeedArgs(ctx, a, 3, "clamp")) return false;
  out = RValue::Int(std::max(a[1].i, std::min(a[0].i, a[2].i)));
  return true;
}
#define FLOAT1(fn_name, expr)                         \
  BUILTIN(fn_name) {                                  \
    if (!NeedArgs(ctx, a, 1, #fn_name)) return false; \
    const double x = a[0].f;                          \
    out = RValue::Float(expr);                        \
    return true;                                      \
  }
FLOAT1(BSqrt, std::sqrt(x))
FLOAT1(BSin, std::sin(x))
FLOAT1(BCos, std::cos(x))
FLOAT1(BLog, std::log(x))
FLOAT1(BFloor, std::floor(x))
FLOAT1(BCeil, std::ceil(x))
FLOAT1(BRound, std::round(x))
BUILTIN(BPow) {
  if (!NeedArgs(ctx, a, 2, "pow")) return false;
  out = RValue::Float(std::pow(a[0].f, a[1].f));
  return true;
}
BUILTIN(BRandInt) {
  if (!NeedArgs(ctx, a, 2, "rand_int")) return false;
  ctx.rng ^= ctx.rng << 13;
  ctx.rng ^= ctx.rng >> 7;
  ctx.rng ^= ctx.rng << 17;
  const std::int64_t lo = a[0].i, hi = a[1].i;
  if (hi <= lo) {
    out = RValue::Int(lo);
    return true;
  }
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  out = RValue::Int(lo + static_cast<std::int64_t>(span == 0 ? ctx.rng : ctx.rng % span));
  return true;
}

// Strings.
BUILTIN(BStrLength) {
  if (!NeedArgs(ctx, a, 1, "length")) return false;
  out = RValue::Int(CodePointCount(a[0].str()));
  return true;
}
BUILTIN(BStrByteLength) {
  if (!NeedArgs(ctx, a, 1, "byte_length")) return false;
  out = RValue::Int(static_cast<std::int64_t>(a[0].str().size()));
  return true;
}
BUILTIN(BStrContains) {
  if (!NeedArgs(ctx, a, 2, "contains")) return false;
  out = RValue::Bool(a[0].str().find(a[1].str()) != std::string::npos);
  return true;
}
BUILTIN(BStrStartsWith) {
  if (!NeedArgs(ctx, a, 2, "starts_with")) return false;
  out = RValue::Bool(a[0].str().rfind(a[1].str(), 0) == 0);
  return true;
}
BUILTIN(BStrEndsWith) {
  if (!NeedArgs(ctx, a, 2, "ends_with")) return false;
  const std::string& s = a[0].str();
  const std::string& t = a[1].str();
  out = RValue::Bool(s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0);
  return true;
}
BUILTIN(BStrTrim) {
  if (!NeedArgs(ctx, a, 1, "trim")) return false;
  const std::string& s = a[0].str();
  const std::size_t b = s.find_first_not_of(" \t\n\r\v\f");
  if (b == std::string::npos) {
    out = ctx.Str("");
    return true;
  }
  const std::size_t e = s.find_last_not_of(" \t\n\r\v\f");
  out = ctx.Str(s.substr(b, e - b + 1));
  return true;
}
BUILTIN(BStrUpper) {
  if (!NeedArgs(ctx, a, 1, "to_upper")) return false;
  std::string s = a[0].str();
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  out = ctx.Str(s);
  return true;
}
BUILTIN(BStrLower) {
  if (!NeedArgs(ctx, a, 1, "to_lower")) return false;
  std::string s = a[0].str();
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  out = ctx.Str(s);
  return true;
}
BUILTIN(BStrSubstring) {
  if (!NeedArgs(ctx, a, 3, "substring")) return false;
  const std::vector<std::uint32_t> cps = Decode(a[0].str());
  const auto n = static_cast<std::int64_t>(cps.size());
  const std::int64_t s = std::clamp<std::int64_t>(a[1].i, 0, n);
  const std::int64_t e = std::clamp<std::int64_t>(a[2].i, s, n);
  std::string r;
  for (std::int64_t i = s; i < e; ++i) r += Encode(cps[static_cast<std::size_t>(i)]);
  out = ctx.Str(r);
  return true;
}
BUILTIN(BStrSplit) {
  if (!NeedArgs(ctx, a, 2, "split")) return false;
  const std::string& s = a[0].str();
  const std::string& sep = a[1].str();
  RValue list = NewList(ctx);
  auto* l = AsList(list);
  if (sep.empty()) {
    for (std::uint32_t cp : Decode(s)) l->Push(ctx.Str(Encode(cp)));
  } else {
    std::size_t start = 0;
    while (true) {
      const std::size_t p = s.find(sep, start);
      if (p == std::string::npos) {
        l->Push(ctx.Str(s.substr(start)));
        break;
      }
      l->Push(ctx.Str(s.substr(start, p - start)));
      start = p + sep.size();
    }
  }
  out = list;
  return true;
}
BUILTIN(BStrLines) {
  if (!NeedArgs(ctx, a, 1, "lines")) return false;
  RValue list = NewList(ctx);
  std::istringstream in(a[0].str());
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    AsList(list)->Push(ctx.Str(line));
  }
  out = list;
  return true;
}
BUILTIN(BStrParseInt) {
  if (!NeedArgs(ctx, a, 1, "parse_int")) return false;
  std::string s = a[0].str();
  std::int64_t v = 0;
  const char* b = s.data();
  if (!s.empty() && s[0] == '+') ++b;
  auto r = std::from_chars(b, s.data() + s.size(), v);
  out = RValue::Int(r.ec == std::errc() && r.ptr == s.data() + s.size() ? v : 0);
  return true;
}
BUILTIN(BStrCharAt) {
  if (!NeedArgs(ctx, a, 2, "char_at")) return false;
  const std::vector<std::uint32_t> cps = Decode(a[0].str());
  const std::int64_t i = a[1].i;
  out = RValue::Int(
      i >= 0 && i < static_cast<std::int64_t>(cps.size()) ? cps[static_cast<std::size_t>(i)] : -1);
  return true;
}
BUILTIN(BStrRepeat) {
  if (!NeedArgs(ctx, a, 2, "repeat")) return false;
  std::string r;
  const std::string& s = a[0].str();
  if (a[1].i > 0) {
    if (s.size() * static_cast<std::uint64_t>(a[1].i) > (std::uint64_t{1} << 30)) {
      return ctx.Trap(kExitLimit, "repeat: result larger than 1 GiB");
    }
    for (std::int64_t i = 0; i < a[1].i; ++i) r += s;
  }
  out = ctx.Str(r);
  return true;
}
BUILTIN(BStrChars) {
  if (!NeedArgs(ctx, a, 1, "chars")) return false;
  auto l = std::make_shared<ListObj>(ctx.mem);
  for (std::uint32_t cp : Decode(a[0].str())) l->Push(RValue::Int(cp));
  out = MakeIter(ctx, l);
  return true;
}

// Conversions.
BUILTIN(BIntToFloat) {
  if (!NeedArgs(ctx, a, 1, "to_float64")) return false;
  out = RValue::Float(static_cast<double>(a[0].i));
  return true;
}
BUILTIN(BFloatToInt) {
  if (!NeedArgs(ctx, a, 1, "to_int")) return false;
  const double x = a[0].f;
  // Rust's saturating `as i64`.
  std::int64_t v = 0;
  if (std::isnan(x)) {
    v = 0;
  } else if (x >= 9.2233720368547758e18) {
    v = INT64_MAX;
  } else if (x <= -9.2233720368547758e18) {
    v = INT64_MIN;
  } else {
    v = static_cast<std::int64_t>(x);
  }
  out = RValue::Int(v);
  return true;
}

// Option / Result.
BUILTIN(BIsFirst) {
  if (!NeedArgs(ctx, a, 1, "is_some")) return false;
  EnumObj* e = AsEnum(a[0]);
  out = RValue::Bool(e != nullptr && e->disc == 0);
  return true;
}
BUILTIN(BIsSecond) {
  if (!NeedArgs(ctx, a, 1, "is_none")) return false;
  EnumObj* e = AsEnum(a[0]);
  out = RValue::Bool(e != nullptr && e->disc == 1);
  return true;
}
BUILTIN(BOptionUnwrap) {
  if (!NeedArgs(ctx, a, 1, "unwrap")) return false;
  EnumObj* e = AsEnum(a[0]);
  if (e == nullptr || e->disc != 0 || e->payload.empty()) {
    return ctx.Trap(kExitAbort, "called `Option::unwrap()` on a `None` value");
  }
  out = e->payload[0];
  return true;
}
BUILTIN(BResultUnwrap) {
  if (!NeedArgs(ctx, a, 1, "unwrap")) return false;
  EnumObj* e = AsEnum(a[0]);
  if (e == nullptr || e->disc != 0 || e->payload.empty()) {
    return ctx.Trap(kExitAbort, fmt::format("called `Result::unwrap()` on an `Err` value: {}",
                                            e && !e->payload.empty() ? ToText(e->payload[0]) : ""));
  }
  out = e->payload[0];
  return true;
}
BUILTIN(BResultUnwrapErr) {
  if (!NeedArgs(ctx, a, 1, "unwrap_err")) return false;
  EnumObj* e = AsEnum(a[0]);
  if (e == nullptr || e->disc != 1 || e->payload.empty()) {
    return ctx.Trap(kExitAbort, "called `Result::unwrap_err()` on an `Ok` value");
  }
  out = e->payload[0];
  return true;
}
BUILTIN(BUnwrapOr) {
  if (!NeedArgs(ctx, a, 2, "unwrap_or")) return false;
  EnumObj* e = AsEnum(a[0]);
  out = e != nullptr && e->disc == 0 && !e->payload.empty() ? e->payload[0] : a[1];
  return true;
}

// Lists.
BUILTIN(BListNew) {
  (void)a;
  out = NewList(ctx);
  return true;
}
ListObj* NeedList(Ctx& ctx, const Args& a, std::size_t n, const char* name) {
  if (!NeedArgs(ctx, a, n, name)) return nullptr;
  ListObj* l = AsList(a[0]);
  if (l == nullptr) ctx.Trap(kExitAbort, fmt::format("`{}` of a value that is not a list", name));
  return l;
}
BUILTIN(BListPush) {
  UNUSED_OUT;
  ListObj* l = NeedList(ctx, a, 2, "list_push");
  if (l == nullptr) return false;
  l->Push(a[1]);
  return true;
}
BUILTIN(BListGet) {
  ListObj* l = NeedList(ctx, a, 2, "list_get");
  if (l == nullptr) return false;
  const std::int64_t i = a[1].i;
  if (i < 0 || i >= static_cast<std::int64_t>(l->items.size())) {
    return ctx.Trap(
        kExitAbort,
        fmt::format("index out of bounds: the len is {} but the index is {}", l->items.size(), i));
  }
  out = l->items[static_cast<std::size_t>(i)];
  return true;
}
BUILTIN(BListSet) {
  ListObj* l = NeedList(ctx, a, 3, "list_set");
  if (l == nullptr) return false;
  const std::int64_t i = a[1].i;
  const bool ok = i >= 0 && i < static_cast<std::int64_t>(l->items.size());
  if (ok) l->items[static_cast<std::size_t>(i)] = a[2];
  out = RValue::Bool(ok);
  return true;
}
BUILTIN(BListLength) {
  ListObj* l = NeedList(ctx, a, 1, "list_length");
  if (l == nullptr) return false;
  out = RValue::Int(static_cast<std::int64_t>(l->items.size()));
  return true;
}
BUILTIN(BListIsEmpty) {
  ListObj* l = NeedList(ctx, a, 1, "list_is_empty");
  if (l == nullptr) return false;
  out = RValue::Bool(l->items.empty());
  return true;
}
BUILTIN(BListContains) {
  ListObj* l = NeedList(ctx, a, 2, "list_contains");
  if (l == nullptr) return false;
  bool found = false;
  for (const RValue& v : l->items) {
    if (Equal(v, a[1])) {
      found = true;
      break;
    }
  }
  out = RValue::Bool(found);
  return true;
}
BUILTIN(BListPop) {
  ListObj* l = NeedList(ctx, a, 1, "list_pop");
  if (l == nullptr) return false;
  if (l->items.empty()) {
    out = RValue::Int(0);
    return true;
  }
  out = l->items.back();
  l->items.pop_back();
  return true;
}
BUILTIN(BListRemove) {
  ListObj* l = NeedList(ctx, a, 2, "list_remove");
  if (l == nullptr) return false;
  const std::int64_t i = a[1].i;
  const bool ok = i >= 0 && i < static_cast<std::int64_t>(l->items.size());
  if (ok) l->items.erase(l->items.begin() + i);
  out = RValue::Bool(ok);
  return true;
}
BUILTIN(BListReverse) {
  UNUSED_OUT;
  ListObj* l = NeedList(ctx, a, 1, "list_reverse");
  if (l == nullptr) return false;
  std::reverse(l->items.begin(), l->items.end());
  return true;
}
BUILTIN(BListSlice) {
  ListObj* l = NeedList(ctx, a, 3, "list_slice");
  if (l == nullptr) return false;
  const auto n = static_cast<std::int64_t>(l->items.size());
  const std::int64_t s = std::clamp<std::int64_t>(a[1].i, 0, n);
  const std::int64_t e = std::max(s, std::clamp<std::int64_t>(a[2].i, 0, n));
  RValue r = NewList(ctx);
  for (std::int64_t i = s; i < e; ++i) AsList(r)->Push(l->items[static_cast<std::size_t>(i)]);
  out = r;
  return true;
}
bool Less(const RValue& x, const RValue& y) {
  if (x.tag == Tag::kInt && y.tag == Tag::kInt) return x.i < y.i;
  if (x.tag == Tag::kFloat && y.tag == Tag::kFloat) return x.f < y.f;
  if (x.tag == Tag::kStr && y.tag == Tag::kStr) return x.str() < y.str();
  return false;
}
BUILTIN(BListSort) {
  UNUSED_OUT;
  ListObj* l = NeedList(ctx, a, 1, "list_sort");
  if (l == nullptr) return false;
  std::stable_sort(l->items.begin(), l->items.end(), Less);
  return true;
}
BUILTIN(BListJoin) {
  ListObj* l = NeedList(ctx, a, 2, "list_join");
  if (l == nullptr) return false;
  std::string r;
  for (std::size_t i = 0; i < l->items.size(); ++i) {
    if (i > 0) r += a[1].str();
    r += ToText(l->items[i]);
  }
  out = ctx.Str(r);
  return true;
}

// Iterators (list_iter / Map_keys / ... protocols, and kodo_iter for an unknown collection).
BUILTIN(BIter) {
  if (!NeedArgs(ctx, a, 1, "iter")) return false;
  switch (a[0].tag) {
    case Tag::kList:
      out = MakeIter(ctx, a[0].o);
      return true;
    case Tag::kMap:
    case Tag::kSet:
      out = MakeIter(ctx, Snapshot(ctx, AsMap(a[0])->keys));
      return true;
    case Tag::kIter:
      out = a[0];
      return true;
    case Tag::kStr: {
      auto l = std::make_shared<ListObj>(ctx.mem);
      for (std::uint32_t cp : Decode(a[0].str())) l->Push(RValue::Int(cp));
      out = MakeIter(ctx, l);
      return true;
    }
    default:
      return ctx.Trap(kExitAbort, "for-in over a value that is not a collection");
  }
}
BUILTIN(BMapValues) {
  if (!NeedArgs(ctx, a, 1, "values")) return false;
  MapObj* m = AsMap(a[0]);
  if (m == nullptr) return ctx.Trap(kExitAbort, "`values` of a value that is not a map");
  out = MakeIter(ctx, Snapshot(ctx, m->vals));
  return true;
}
BUILTIN(BIterAdvance) {
  if (!NeedArgs(ctx, a, 1, "iterator_advance")) return false;
  if (a[0].tag != Tag::kIter) return ctx.Trap(kExitAbort, "advance of a non-iterator");
  auto* it = static_cast<IterObj*>(a[0].o.get());
  auto* l = static_cast<ListObj*>(it->source.get());
  if (it->next < l->items.size()) {
    it->current = l->items[it->next++];
    out = RValue::Int(1);
  } else {
    out = RValue::Int(0);
  }
  return true;
}
BUILTIN(BIterValue) {
  if (!NeedArgs(ctx, a, 1, "iterator_value")) return false;
  if (a[0].tag != Tag::kIter) return ctx.Trap(kExitAbort, "value of a non-iterator");
  out = static_cast<IterObj*>(a[0].o.get())->current;
  return true;
}
BUILTIN(BIterNext) {
  if (!BIterAdvance(ctx, a, out)) return false;
  if (out.i == 0) return true;
  return BIterValue(ctx, a, out);
}
BUILTIN(BNoop) {
  UNUSED_CTX;
  (void)a;
  out = RValue();
  return true;
}

// Maps.
BUILTIN(BMapNew) {
  (void)a;
  out = NewMap(ctx, Tag::kMap);
  return true;
}
MapObj* NeedMap(Ctx& ctx, const Args& a, std::size_t n, const char* name) {
  if (!NeedArgs(ctx, a, n, name)) return nullptr;
  MapObj* m = AsMap(a[0]);
  if (m == nullptr) ctx.Trap(kExitAbort, fmt::format("`{}` of a value that is not a map", name));
  return m;
}
BUILTIN(BMapInsert) {
  UNUSED_OUT;
  MapObj* m = NeedMap(ctx, a, 3, "map_insert");
  if (m == nullptr) return false;
  MapPut(m, a[1], a[2]);
  return true;
}
BUILTIN(BMapGet) {
  MapObj* m = NeedMap(ctx, a, 2, "map_get");
  if (m == nullptr) return false;
  auto it = m->index.find(Key(a[1]));
  out = it == m->index.end() ? RValue::Int(0) : m->vals[it->second];
  return true;
}
BUILTIN(BMapContains) {
  MapObj* m = NeedMap(ctx, a, 2, "map_contains_key");
  if (m == nullptr) return false;
  out = RValue::Bool(m->index.count(Key(a[1])) > 0);
  return true;
}
BUILTIN(BMapRemove) {
  MapObj* m = NeedMap(ctx, a, 2, "map_remove");
  if (m == nullptr) return false;
  out = RValue::Bool(MapDel(m, a[1]));
  return true;
}
BUILTIN(BMapLength) {
  MapObj* m = NeedMap(ctx, a, 1, "map_length");
  if (m == nullptr) return false;
  out = RValue::Int(static_cast<std::int64_t>(m->keys.size()));
  return true;
}
BUILTIN(BMapIsEmpty) {
  MapObj* m = NeedMap(ctx, a, 1, "map_is_empty");
  if (m == nullptr) return false;
  out = RValue::Bool(m->keys.empty());
  return true;
}
BUILTIN(BMapMerge) {
  MapObj* m = NeedMap(ctx, a, 2, "map_merge");
  MapObj* n = m ? AsMap(a[1]) : nullptr;
  if (m == nullptr || n == nullptr)
    return m ? ctx.Trap(kExitAbort, "map_merge of a non-map") : false;
  RValue r = NewMap(ctx, Tag::kMap);
  for (std::size_t i = 0; i < m->keys.size(); ++i) MapPut(AsMap(r), m->keys[i], m->vals[i]);
  for (std::size_t i = 0; i < n->keys.size(); ++i) MapPut(AsMap(r), n->keys[i], n->vals[i]);
  out = r;
  return true;
}

// Sets.
BUILTIN(BSetNew) {
  (void)a;
  out = NewMap(ctx, Tag::kSet);
  return true;
}
BUILTIN(BSetAdd) {
  UNUSED_OUT;
  MapObj* m = NeedMap(ctx, a, 2, "set_add");
  if (m == nullptr) return false;
  MapPut(m, a[1], RValue());
  return true;
}
BUILTIN(BSetToList) {
  MapObj* m = NeedMap(ctx, a, 1, "set_to_list");
  if (m == nullptr) return false;
  RValue r = NewList(ctx);
  for (const RValue& k : m->keys) AsList(r)->Push(k);
  out = r;
  return true;
}
bool SetOp(Ctx& ctx, Args& a, RValue& out, int which) {
  MapObj* x = NeedMap(ctx, a, 2, "set operation");
  MapObj* y = x ? AsMap(a[1]) : nullptr;
  if (x == nullptr || y == nullptr)
    return x ? ctx.Trap(kExitAbort, "set operation of a non-set") : false;
  RValue r = NewMap(ctx, Tag::kSet);
  MapObj* m = AsMap(r);
  if (which == 0) {
    for (const RValue& k : x->keys) MapPut(m, k, RValue());
    for (const RValue& k : y->keys) MapPut(m, k, RValue());
  } else {
    for (const RValue& k : x->keys) {
      const bool in_y = y->index.count(Key(k)) > 0;
      if ((which == 1) == in_y) MapPut(m, k, RValue());
    }
  }
  out = r;
  return true;
}
BUILTIN(BSetUnion) { return SetOp(ctx, a, out, 0); }
BUILTIN(BSetIntersection) { return SetOp(ctx, a, out, 1); }
BUILTIN(BSetDifference) { return SetOp(ctx, a, out, 2); }

// Characters and the string builder.
BUILTIN(BCharFromCode) {
  if (!NeedArgs(ctx, a, 1, "char_from_code")) return false;
  out = ctx.Str(a[0].i >= 0 && a[0].i <= 0x10ffff ? Encode(static_cast<std::uint32_t>(a[0].i))
                                                  : std::string());
  return true;
}
BUILTIN(BIsAlpha) {
  if (!NeedArgs(ctx, a, 1, "is_alpha")) return false;
  const std::int64_t c = a[0].i;
  out = RValue::Bool((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
  return true;
}
BUILTIN(BIsDigit) {
  if (!NeedArgs(ctx, a, 1, "is_digit")) return false;
  out = RValue::Bool(a[0].i >= '0' && a[0].i <= '9');
  return true;
}
BUILTIN(BIsAlnum) {
  if (!NeedArgs(ctx, a, 1, "is_alphanumeric")) return false;
  const std::int64_t c = a[0].i;
  out = RValue::Bool((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
  return true;
}
BUILTIN(BIsSpace) {
  if (!NeedArgs(ctx, a, 1, "is_whitespace")) return false;
  const std::int64_t c = a[0].i;
  out = RValue::Bool(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0b || c == 0x0c);
  return true;
}
BUILTIN(BBuilderNew) {
  (void)a;
  out = RValue::Obj(Tag::kBuilder, std::make_shared<BuilderObj>(ctx.mem));
  return true;
}
BuilderObj* NeedBuilder(Ctx& ctx, const Args& a, std::size_t n, const char* name) {
  if (!NeedArgs(ctx, a, n, name)) return nullptr;
  if (a[0].tag != Tag::kBuilder) {
    ctx.Trap(kExitAbort, fmt::format("`{}` of a value that is not a string builder", name));
    return nullptr;
  }
  return static_cast<BuilderObj*>(a[0].o.get());
}
BUILTIN(BBuilderPush) {
  UNUSED_OUT;
  BuilderObj* b = NeedBuilder(ctx, a, 2, "string_builder_push");
  if (b == nullptr) return false;
  b->s += a[1].str();
  b->Account(a[1].str().size());
  return true;
}
BUILTIN(BBuilderPushChar) {
  UNUSED_OUT;
  BuilderObj* b = NeedBuilder(ctx, a, 2, "string_builder_push_char");
  if (b == nullptr) return false;
  if (a[1].i >= 0 && a[1].i <= 0x10ffff) b->s += Encode(static_cast<std::uint32_t>(a[1].i));
  b->Account(4);
  return true;
}
BUILTIN(BBuilderToString) {
  BuilderObj* b = NeedBuilder(ctx, a, 1, "string_builder_to_string");
  if (b == nullptr) return false;
  out = ctx.Str(b->s);
  return true;
}
BUILTIN(BBuilderLen) {
  BuilderObj* b = NeedBuilder(ctx, a, 1, "string_builder_len");
  if (b == nullptr) return false;
  out = RValue::Int(static_cast<std::int64_t>(b->s.size()));
  return true;
}
BUILTIN(BFormatInt) {
  if (!NeedArgs(ctx, a, 2, "format_int")) return false;
  const std::int64_t base = a[1].i;
  std::int64_t v = a[0].i;
  if (base < 2 || base > 36) {
    out = ctx.Str(fmt::format("{}", v));
    return true;
  }
  const bool neg = v < 0;
  auto u = neg ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  std::string r;
  do {
    const auto d = static_cast<int>(u % static_cast<std::uint64_t>(base));
    r += static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    u /= static_cast<std::uint64_t>(base);
  } while (u != 0);
  if (neg) r += '-';
  std::reverse(r.begin(), r.end());
  out = ctx.Str(r);
  return true;
}

// System.
BUILTIN(BArgs) {
  (void)a;
  RValue r = NewList(ctx);
  for (const std::string& s : ctx.options.args) AsList(r)->Push(ctx.Str(s));
  out = r;
  return true;
}
BUILTIN(BReadln) {
  (void)a;
  std::string line;
  if (!ctx.options.read_line || !ctx.options.read_line(line)) line.clear();
  out = ctx.Str(line);
  return true;
}
BUILTIN(BExit) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "exit")) return false;
  ctx.FlushOut();
  return ctx.Exit(static_cast<int>(a[0].i));
}
bool HostIo(Ctx& ctx) {
  if (ctx.options.allow_host_io) return true;
  return false;
}
BUILTIN(BFileRead) {
  if (!NeedArgs(ctx, a, 1, "file_read")) return false;
  if (!HostIo(ctx)) {
    out = Err(ctx, "file access is not available in this build");
    return true;
  }
  std::ifstream in(a[0].str(), std::ios::binary);
  if (!in) {
    out = Err(ctx, fmt::format("could not read file `{}`", a[0].str()));
    return true;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  out = Ok(ctx, ctx.Str(ss.str()));
  return true;
}
bool WriteFile(Ctx& ctx, Args& a, RValue& out, bool append) {
  if (!NeedArgs(ctx, a, 2, "file_write")) return false;
  if (!HostIo(ctx)) {
    out = Err(ctx, "file access is not available in this build");
    return true;
  }
  std::ofstream f(a[0].str(), append ? std::ios::app | std::ios::binary : std::ios::binary);
  if (!f) {
    out = Err(ctx, fmt::format("could not write file `{}`", a[0].str()));
    return true;
  }
  f << a[1].str();
  out = Ok(ctx, RValue());
  return true;
}
BUILTIN(BFileWrite) { return WriteFile(ctx, a, out, false); }
BUILTIN(BFileAppend) { return WriteFile(ctx, a, out, true); }
BUILTIN(BFileExists) {
  if (!NeedArgs(ctx, a, 1, "file_exists")) return false;
  std::error_code ec;
  out = RValue::Bool(HostIo(ctx) && std::filesystem::is_regular_file(a[0].str(), ec));
  return true;
}
BUILTIN(BDirExists) {
  if (!NeedArgs(ctx, a, 1, "dir_exists")) return false;
  std::error_code ec;
  out = RValue::Bool(HostIo(ctx) && std::filesystem::is_directory(a[0].str(), ec));
  return true;
}
BUILTIN(BFileDelete) {
  if (!NeedArgs(ctx, a, 1, "file_delete")) return false;
  std::error_code ec;
  out = RValue::Bool(HostIo(ctx) && std::filesystem::remove(a[0].str(), ec));
  return true;
}
BUILTIN(BDirList) {
  if (!NeedArgs(ctx, a, 1, "dir_list")) return false;
  RValue r = NewList(ctx);
  std::vector<std::string> names;
  std::error_code ec;
  if (HostIo(ctx)) {
    for (const auto& e : std::filesystem::directory_iterator(a[0].str(), ec)) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) AsList(r)->Push(ctx.Str(n));
  out = r;
  return true;
}
BUILTIN(BEnvGet) {
  if (!NeedArgs(ctx, a, 1, "env_get")) return false;
  const char* v = HostIo(ctx) ? std::getenv(a[0].str().c_str()) : nullptr;
  out = ctx.Str(v ? v : "");
  return true;
}
BUILTIN(BEnvSet) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 2, "env_set")) return false;
  if (HostIo(ctx)) setenv(a[0].str().c_str(), a[1].str().c_str(), 1);
  return true;
}
BUILTIN(BTimeNow) {
  (void)a;
  UNUSED_CTX;
  out = RValue::Int(std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count());
  return true;
}
BUILTIN(BTimeNowMs) {
  (void)a;
  UNUSED_CTX;
  out = RValue::Int(std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count());
  return true;
}
BUILTIN(BTimeElapsed) {
  if (!NeedArgs(ctx, a, 1, "time_elapsed_ms")) return false;
  RValue now;
  BTimeNowMs(ctx, a, now);
  out = RValue::Int(now.i - a[0].i);
  return true;
}
BUILTIN(BTimeFormat) {
  if (!NeedArgs(ctx, a, 1, "time_format")) return false;
  const std::time_t t = static_cast<std::time_t>(a[0].i);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  out = ctx.Str(buf);
  return true;
}
// HTTP servers and SQLite handles: a clear error and exit 1, not a crash (docs/kodo.md §4.9).
BUILTIN(BHttpServerNotAvailable) {
  (void)a;
  UNUSED_OUT;
  return ctx.Trap(1, "error: the HTTP server builtins are not available in this build");
}
BUILTIN(BDbNotAvailable) {
  (void)a;
  UNUSED_OUT;
  return ctx.Trap(1, "error: the database builtins are not available in this build");
}
// `http_get`/`http_post` return Result<String, String>: an Err value the program can handle.
BUILTIN(BHttpNotAvailable) {
  (void)a;
  out = Err(ctx, "HTTP is not available in this build");
  return true;
}

// Channels (docs/kodo.md §4.9): Int handles from 0, unbounded queues. Receiving and `select`
// wait in the scheduler (interp.cc); these never block.
Channel* FindChannel(Ctx& ctx, const RValue& h) {
  if (h.tag != Tag::kInt || h.i < 0 || static_cast<std::uint64_t>(h.i) >= ctx.channels.size()) {
    return nullptr;
  }
  Channel& c = ctx.channels[static_cast<std::size_t>(h.i)];
  return c.freed ? nullptr : &c;
}
BUILTIN(BChannelNew) {
  (void)a;
  out = RValue::Int(static_cast<std::int64_t>(ctx.channels.size()));
  ctx.channels.emplace_back();
  ctx.mem->live += 64;  // released with the context
  return true;
}
BUILTIN(BChannelSend) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 2, "channel_send")) return false;
  // Upstream's send to a closed or unknown channel is a silent no-op.
  if (Channel* c = FindChannel(ctx, a[0])) {
    c->queue.push_back(std::move(a[1]));
    ctx.mem->live += sizeof(RValue);
  }
  return true;
}
BUILTIN(BChannelFree) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "channel_free")) return false;
  if (Channel* c = FindChannel(ctx, a[0])) {
    ctx.mem->live -= c->queue.size() * sizeof(RValue);
    c->queue.clear();
    c->freed = true;
  }
  return true;
}

// JSON (docs/kodo.md §4.6) with nlohmann-json: handles are Ints, 0 = no value (a parse error),
// upstream's defaults for a missing key or a wrong type (`""`, 0, -1 for a Bool, 0.0).
struct JsonTable {
  std::vector<std::unique_ptr<nlohmann::json>> slots;
};
JsonTable& Json(Ctx& ctx) {
  if (!ctx.json) ctx.json = std::make_shared<JsonTable>();
  return *static_cast<JsonTable*>(ctx.json.get());
}
std::int64_t JsonAdd(Ctx& ctx, nlohmann::json v) {
  JsonTable& t = Json(ctx);
  t.slots.push_back(std::make_unique<nlohmann::json>(std::move(v)));
  ctx.mem->live += 128;
  return static_cast<std::int64_t>(t.slots.size());
}
nlohmann::json* JsonAt(Ctx& ctx, const RValue& h) {
  JsonTable& t = Json(ctx);
  if (h.tag != Tag::kInt || h.i <= 0 || static_cast<std::uint64_t>(h.i) > t.slots.size()) {
    return nullptr;
  }
  return t.slots[static_cast<std::size_t>(h.i - 1)].get();
}
const nlohmann::json* JsonField(Ctx& ctx, Args& a) {
  nlohmann::json* j = JsonAt(ctx, a[0]);
  if (j == nullptr || !j->is_object()) return nullptr;
  auto it = j->find(a[1].str());
  return it == j->end() ? nullptr : &*it;
}
BUILTIN(BJsonParse) {
  if (!NeedArgs(ctx, a, 1, "json_parse")) return false;
  nlohmann::json v = nlohmann::json::parse(a[0].str(), nullptr, /*allow_exceptions=*/false);
  out = RValue::Int(v.is_discarded() ? 0 : JsonAdd(ctx, std::move(v)));
  return true;
}
BUILTIN(BJsonNewObject) {
  (void)a;
  out = RValue::Int(JsonAdd(ctx, nlohmann::json::object()));
  return true;
}
BUILTIN(BJsonFree) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "json_free")) return false;
  if (JsonAt(ctx, a[0]) != nullptr) {
    Json(ctx).slots[static_cast<std::size_t>(a[0].i - 1)].reset();
    ctx.mem->live -= 128;
  }
  return true;
}
BUILTIN(BJsonStringify) {
  if (!NeedArgs(ctx, a, 1, "json_stringify")) return false;
  const nlohmann::json* j = JsonAt(ctx, a[0]);
  out = ctx.Str(j ? j->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) : "");
  return true;
}
BUILTIN(BJsonGetString) {
  if (!NeedArgs(ctx, a, 2, "json_get_string")) return false;
  const nlohmann::json* v = JsonField(ctx, a);
  out = ctx.Str(v && v->is_string() ? v->get<std::string>() : "");
  return true;
}
BUILTIN(BJsonGetInt) {
  if (!NeedArgs(ctx, a, 2, "json_get_int")) return false;
  const nlohmann::json* v = JsonField(ctx, a);
  std::int64_t n = 0;
  if (v && v->is_number_integer()) {
    if (v->is_number_unsigned() &&
        v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      n = 0;
    } else {
      n = v->get<std::int64_t>();
    }
  }
  out = RValue::Int(n);
  return true;
}
BUILTIN(BJsonGetBool) {
  if (!NeedArgs(ctx, a, 2, "json_get_bool")) return false;
  const nlohmann::json* v = JsonField(ctx, a);
  out = RValue::Int(v && v->is_boolean() ? (v->get<bool>() ? 1 : 0) : -1);
  return true;
}
BUILTIN(BJsonGetFloat) {
  if (!NeedArgs(ctx, a, 2, "json_get_float")) return false;
  const nlohmann::json* v = JsonField(ctx, a);
  out = RValue::Float(v && v->is_number() ? v->get<double>() : 0.0);
  return true;
}
BUILTIN(BJsonGetArray) {
  if (!NeedArgs(ctx, a, 2, "json_get_array")) return false;
  const nlohmann::json* v = JsonField(ctx, a);
  RValue list = NewList(ctx);
  if (v && v->is_array()) {
    // Each element becomes a JSON handle of its own, as upstream's list of handles.
    const nlohmann::json copy = *v;
    for (const nlohmann::json& e : copy) AsList(list)->Push(RValue::Int(JsonAdd(ctx, e)));
  }
  out = list;
  return true;
}
BUILTIN(BJsonGetObject) {
  if (!NeedArgs(ctx, a, 2, "json_get_object")) return false;
  const nlohmann::json* v = JsonField(ctx, a);
  out = RValue::Int(v && v->is_object() ? JsonAdd(ctx, *v) : 0);
  return true;
}
bool JsonSet(Ctx& ctx, Args& a, const char* name, nlohmann::json v) {
  if (!NeedArgs(ctx, a, 3, name)) return false;
  nlohmann::json* j = JsonAt(ctx, a[0]);
  if (j != nullptr && j->is_object()) (*j)[a[1].str()] = std::move(v);
  return true;
}
BUILTIN(BJsonSetString) {
  UNUSED_OUT;
  return a.size() >= 3 ? JsonSet(ctx, a, "json_set_string", a[2].str())
                       : NeedArgs(ctx, a, 3, "json_set_string");
}
BUILTIN(BJsonSetInt) {
  UNUSED_OUT;
  return a.size() >= 3 ? JsonSet(ctx, a, "json_set_int", a[2].i)
                       : NeedArgs(ctx, a, 3, "json_set_int");
}
BUILTIN(BJsonSetBool) {
  UNUSED_OUT;
  return a.size() >= 3 ? JsonSet(ctx, a, "json_set_bool", a[2].i != 0)
                       : NeedArgs(ctx, a, 3, "json_set_bool");
}
BUILTIN(BJsonSetFloat) {
  UNUSED_OUT;
  return a.size() >= 3 ? JsonSet(ctx, a, "json_set_float", a[2].f)
                       : NeedArgs(ctx, a, 3, "json_set_float");
}

// Regex (docs/kodo.md §4.6) with std::regex, ECMAScript syntax (the common subset of upstream's
// Rust `regex` crate; no PCRE2 in the build). An invalid pattern gives false / None / the text
// unchanged, as upstream's. libstdc++'s matcher recurses once or more per character of the
// subject, so a subject longer than kRegexInlineBytes is matched on a thread whose stack grows
// with the subject, and one longer than kMaxRegexSubject stops the program with a message.
constexpr std::size_t kRegexInlineBytes = 1024;
constexpr std::size_t kMaxRegexSubject = 1u << 20;
// AddressSanitizer's frames are several times larger, so its builds reserve more per byte.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kRegexStackPerByte = 8 * 1024;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr std::size_t kRegexStackPerByte = 8 * 1024;
#else
constexpr std::size_t kRegexStackPerByte = 1024;
#endif
#else
constexpr std::size_t kRegexStackPerByte = 1024;
#endif

bool CompileRegex(const std::string& pattern, std::regex& re) {
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
    return true;
  } catch (const std::regex_error&) {
    return false;
  }
}

struct RegexJob {
  std::function<void()> body;
  std::exception_ptr error;
};

void* RunRegexJob(void* arg) {
  auto* job = static_cast<RegexJob*>(arg);
  try {
    job->body();
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}

// Runs `body` (which matches against `subject`) with enough stack for libstdc++'s recursion.
// Returns false (having trapped) when the subject is too long or the match fails.
bool WithRegexStack(Ctx& ctx, const std::string& subject, const std::function<void()>& body) {
  if (subject.size() > kMaxRegexSubject) {
    return ctx.Trap(kExitAbort, fmt::format("regex subject of {} bytes is longer than the {} "
                                            "bytes this build matches",
                                            subject.size(), kMaxRegexSubject));
  }
  RegexJob job{body, nullptr};
  if (subject.size() <= kRegexInlineBytes) {
    RunRegexJob(&job);
  } else {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (1u << 20) + subject.size() * kRegexStackPerByte);
    pthread_t thread;
    const bool started = pthread_create(&thread, &attr, RunRegexJob, &job) == 0;
    pthread_attr_destroy(&attr);
    if (!started) return ctx.Trap(kExitAbort, "could not start the regex matcher");
    pthread_join(thread, nullptr);
  }
  if (job.error) {
    // std::regex_error (error_complexity, error_stack) on a pathological pattern.
    return ctx.Trap(kExitAbort, "regex match too complex");
  }
  return true;
}

BUILTIN(BRegexMatch) {
  if (!NeedArgs(ctx, a, 2, "regex_match")) return false;
  std::regex re;
  bool found = false;
  if (CompileRegex(a[0].str(), re)) {
    const std::string& text = a[1].str();
    if (!WithRegexStack(ctx, text, [&] { found = std::regex_search(text, re); })) return false;
  }
  out = RValue::Bool(found);
  return true;
}
BUILTIN(BRegexFind) {
  if (!NeedArgs(ctx, a, 2, "regex_find")) return false;
  std::regex re;
  bool found = false;
  std::string match;
  if (CompileRegex(a[0].str(), re)) {
    const std::string& text = a[1].str();
    if (!WithRegexStack(ctx, text, [&] {
          std::smatch m;
          found = std::regex_search(text, m, re);
          if (found) match = m.str(0);
        })) {
      return false;
    }
  }
  out = found ? Some(ctx, ctx.Str(match)) : None(ctx);
  return true;
}
BUILTIN(BRegexReplace) {
  if (!NeedArgs(ctx, a, 3, "regex_replace")) return false;
  std::regex re;
  const std::string& text = a[1].str();
  std::string result = text;
  if (CompileRegex(a[0].str(), re)) {
    if (!WithRegexStack(ctx, text, [&] { result = std::regex_replace(text, re, a[2].str()); })) {
      return false;
    }
  }
  out = ctx.Str(std::move(result));
  return true;
}

// Contracts (the assertions are in test_hooks.cc).
BUILTIN(BContractFail) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "kodo_contract_fail")) return false;
  return ctx.Trap(kExitAbort, "contract violation: " + a[0].str());
}
BUILTIN(BContractFailRecoverable) {
  UNUSED_OUT;
  if (!NeedArgs(ctx, a, 1, "kodo_contract_fail_recoverable")) return false;
  ctx.FlushOut();
  ctx.Err("WARNING: contract violation (recoverable): " + a[0].str() + "\n");
  return true;
}
BUILTIN(BSleep) {
  UNUSED_OUT;
  (void)a;
  UNUSED_CTX;
  return true;
}

const std::unordered_map<std::string, Builtin>& Table() {
  static const auto* table = new std::unordered_map<std::string, Builtin>{
      {"println", BPrintln},
      {"print", BPrint},
      {"print_int", BPrintInt},
      {"print_float", BPrintFloat},
      {"println_float", BPrintlnFloat},
      {"kodo_to_string", BToString},
      {"abs", BAbs},
      {"min", BMin},
      {"max", BMax},
      {"clamp", BClamp},
      {"sqrt", BSqrt},
      {"pow", BPow},
      {"sin", BSin},
      {"cos", BCos},
      {"log", BLog},
      {"floor", BFloor},
      {"ceil", BCeil},
      {"round", BRound},
      {"rand_int", BRandInt},
      {"String_length", BStrLength},
      {"String_char_count", BStrLength},
      {"String_byte_length", BStrByteLength},
      {"String_contains", BStrContains},
      {"String_starts_with", BStrStartsWith},
      {"String_ends_with", BStrEndsWith},
      {"String_trim", BStrTrim},
      {"String_to_upper", BStrUpper},
      {"String_to_lower", BStrLower},
      {"String_substring", BStrSubstring},
      {"String_split", BStrSplit},
      {"String_lines", BStrLines},
      {"String_parse_int", BStrParseInt},
      {"String_char_at", BStrCharAt},
      {"String_repeat", BStrRepeat},
      {"String_chars", BStrChars},
      {"String_to_string", BToString},
      {"Int_to_string", BToString},
      {"Int_to_float64", BIntToFloat},
      {"Float64_to_string", BToString},
      {"Float64_to_int", BFloatToInt},
      {"Bool_to_string", BToString},
      {"Option_is_some", BIsFirst},
      {"Option_is_none", BIsSecond},
      {"Option_unwrap", BOptionUnwrap},
      {"Option_unwrap_or", BUnwrapOr},
      {"Result_is_ok", BIsFirst},
      {"Result_is_err", BIsSecond},
      {"Result_unwrap", BResultUnwrap},
      {"Result_unwrap_err", BResultUnwrapErr},
      {"Result_unwrap_or", BUnwrapOr},
      {"list_new", BListNew},
      {"list_push", BListPush},
      {"list_get", BListGet},
      {"list_set", BListSet},
      {"list_length", BListLength},
      {"list_is_empty", BListIsEmpty},
      {"list_contains", BListContains},
      {"list_pop", BListPop},
      {"list_remove", BListRemove},
      {"list_reverse", BListReverse},
      {"list_slice", BListSlice},
      {"list_sort", BListSort},
      {"list_join", BListJoin},
      {"List_push", BListPush},
      {"List_get", BListGet},
      {"List_set", BListSet},
      {"List_length", BListLength},
      {"List_len", BListLength},
      {"List_is_empty", BListIsEmpty},
      {"List_contains", BListContains},
      {"List_pop", BListPop},
      {"List_remove", BListRemove},
      {"List_reverse", BListReverse},
      {"List_slice", BListSlice},
      {"List_sort", BListSort},
      {"List_join", BListJoin},
      {"List_iter", BIter},
      {"list_iter", BIter},
      {"kodo_iter", BIter},
      {"list_iterator_advance", BIterAdvance},
      {"list_iterator_value", BIterValue},
      {"list_iterator_next", BIterNext},
      {"list_iterator_free", BNoop},
      {"string_chars_advance", BIterAdvance},
      {"string_chars_value", BIterValue},
      {"string_chars_free", BNoop},
      {"Map_keys", BIter},
      {"Map_values", BMapValues},
      {"map_keys_advance", BIterAdvance},
      {"map_keys_value", BIterValue},
      {"map_keys_free", BNoop},
      {"map_values_advance", BIterAdvance},
      {"map_values_value", BIterValue},
      {"map_values_free", BNoop},
      {"kodo_iter_advance", BIterAdvance},
      {"kodo_iter_value", BIterValue},
      {"kodo_iter_free", BNoop},
      {"map_new", BMapNew},
      {"map_insert", BMapInsert},
      {"map_get", BMapGet},
      {"map_contains_key", BMapContains},
      {"map_remove", BMapRemove},
      {"map_length", BMapLength},
      {"map_is_empty", BMapIsEmpty},
      {"map_merge", BMapMerge},
      {"Map_insert", BMapInsert},
      {"Map_get", BMapGet},
      {"Map_contains_key", BMapContains},
      {"Map_remove", BMapRemove},
      {"Map_length", BMapLength},
      {"Map_len", BMapLength},
      {"Map_is_empty", BMapIsEmpty},
      {"Map_merge", BMapMerge},
      {"set_new", BSetNew},
      {"set_add", BSetAdd},
      {"set_contains", BMapContains},
      {"set_remove", BMapRemove},
      {"set_length", BMapLength},
      {"set_is_empty", BMapIsEmpty},
      {"set_union", BSetUnion},
      {"set_intersection", BSetIntersection},
      {"set_difference", BSetDifference},
      {"set_to_list", BSetToList},
      {"Set_add", BSetAdd},
      {"Set_contains", BMapContains},
      {"Set_remove", BMapRemove},
      {"Set_length", BMapLength},
      {"Set_len", BMapLength},
      {"Set_is_empty", BMapIsEmpty},
      {"Set_union", BSetUnion},
      {"Set_intersection", BSetIntersection},
      {"Set_difference", BSetDifference},
      {"Set_to_list", BSetToList},
      {"char_at", BStrCharAt},
      {"char_from_code", BCharFromCode},
      {"is_alpha", BIsAlpha},
      {"is_digit", BIsDigit},
      {"is_alphanumeric", BIsAlnum},
      {"is_whitespace", BIsSpace},
      {"string_builder_new", BBuilderNew},
      {"string_builder_push", BBuilderPush},
      {"string_builder_push_char", BBuilderPushChar},
      {"string_builder_to_string", BBuilderToString},
      {"string_builder_len", BBuilderLen},
      {"format_int", BFormatInt},
      {"args", BArgs},
      {"readln", BReadln},
      {"exit", BExit},
      {"file_read", BFileRead},
      {"file_write", BFileWrite},
      {"file_append", BFileAppend},
      {"file_exists", BFileExists},
      {"file_delete", BFileDelete},
      {"dir_exists", BDirExists},
      {"dir_list", BDirList},
      {"env_get", BEnvGet},
      {"env_set", BEnvSet},
      {"time_now", BTimeNow},
      {"timestamp", BTimeNow},
      {"time_now_ms", BTimeNowMs},
      {"time_elapsed_ms", BTimeElapsed},
      {"time_format", BTimeFormat},
      {"sleep", BSleep},
      {"http_get", BHttpNotAvailable},
      {"http_post", BHttpNotAvailable},
      {"channel_new", BChannelNew},
      {"channel_new_bool", BChannelNew},
      {"channel_new_string", BChannelNew},
      {"channel_send", BChannelSend},
      {"channel_send_bool", BChannelSend},
      {"channel_send_string", BChannelSend},
      {"channel_free", BChannelFree},
      {"json_parse", BJsonParse},
      {"json_new_object", BJsonNewObject},
      {"json_free", BJsonFree},
      {"json_stringify", BJsonStringify},
      {"json_get_string", BJsonGetString},
      {"json_get_int", BJsonGetInt},
      {"json_get_bool", BJsonGetBool},
      {"json_get_float", BJsonGetFloat},
      {"json_get_array", BJsonGetArray},
      {"json_get_object", BJsonGetObject},
      {"json_set_string", BJsonSetString},
      {"json_set_int", BJsonSetInt},
      {"json_set_bool", BJsonSetBool},
      {"json_set_float", BJsonSetFloat},
      {"regex_match", BRegexMatch},
      {"regex_find", BRegexFind},
      {"regex_replace", BRegexReplace},
      {"kodo_contract_fail", BContractFail},
      {"kodo_contract_fail_recoverable", BContractFailRecoverable},
  };
  return *table;
}

}  // namespace

Builtin FindBuiltin(const std::string& name) {
  if (Builtin b = FindTestBuiltin(name)) return b;
  const auto& t = Table();
  auto it = t.find(name);
  if (it != t.end()) return it->second;
  // HTTP servers and databases: a clear error, not a crash.
  if (name.rfind("http_", 0) == 0) return BHttpServerNotAvailable;
  if (name.rfind("db_", 0) == 0) return BDbNotAvailable;
  return nullptr;
}

namespace {
struct ReleaseQueue {
  std::vector<std::shared_ptr<HeapObj>> pending;
  bool draining = false;
};
thread_local ReleaseQueue g_release;

void Drain() {
  if (g_release.draining) return;
  g_release.draining = true;
  while (!g_release.pending.empty()) {
    std::shared_ptr<HeapObj> next = std::move(g_release.pending.back());
    g_release.pending.pop_back();
    next.reset();  // its destructor queues its children; this loop frees them
  }
  g_release.draining = false;
}
}  // namespace

void ReleaseChildren(std::vector<RValue>& items) {
  for (RValue& v : items) {
    if (v.o) g_release.pending.push_back(std::move(v.o));
  }
  Drain();
}

void ReleaseChild(std::shared_ptr<HeapObj>& child) {
  if (!child) return;
  g_release.pending.push_back(std::move(child));
  Drain();
}

// Recursion over nested values is bounded by how deep a program can nest values it builds
// (each level is one more allocation the program made); a guard stops at 1,000 levels.
namespace {
bool EqualAt(const RValue& a, const RValue& b, int depth) {
  if (depth > 1000) return false;
  if (a.tag != b.tag) {
    return false;
  }
  switch (a.tag) {
    case Tag::kUnit:
      return true;
    case Tag::kInt:
    case Tag::kBool:
    case Tag::kFunc:
      return a.i == b.i;
    case Tag::kFloat:
      return a.f == b.f;
    case Tag::kStr:
      return a.str() == b.str();
    case Tag::kList:
    case Tag::kTuple: {
      auto* x = static_cast<ListObj*>(a.o.get());
      auto* y = static_cast<ListObj*>(b.o.get());
      if (x->items.size() != y->items.size()) return false;
      for (std::size_t i = 0; i < x->items.size(); ++i) {
        if (!EqualAt(x->items[i], y->items[i], depth + 1)) return false;
      }
      return true;
    }
    case Tag::kStruct: {
      auto* x = static_cast<StructObj*>(a.o.get());
      auto* y = static_cast<StructObj*>(b.o.get());
      if (x->name != y->name || x->fields.size() != y->fields.size()) return false;
      for (std::size_t i = 0; i < x->fields.size(); ++i) {
        if (!EqualAt(x->fields[i], y->fields[i], depth + 1)) return false;
      }
      return true;
    }
    case Tag::kEnum: {
      auto* x = static_cast<EnumObj*>(a.o.get());
      auto* y = static_cast<EnumObj*>(b.o.get());
      if (x->disc != y->disc || x->payload.size() != y->payload.size()) return false;
      for (std::size_t i = 0; i < x->payload.size(); ++i) {
        if (!EqualAt(x->payload[i], y->payload[i], depth + 1)) return false;
      }
      return true;
    }
    default:
      return a.o == b.o;
  }
}

void TextAt(const RValue& v, std::string& out, int depth) {
  if (depth > 1000) {
    out += "...";
    return;
  }
  switch (v.tag) {
    case Tag::kUnit:
      out += "()";
      return;
    case Tag::kInt:
      out += fmt::format("{}", v.i);
      return;
    case Tag::kFloat:
      out += FormatFloat(v.f);
      return;
    case Tag::kBool:
      out += v.i ? "true" : "false";
      return;
    case Tag::kStr:
      out += v.str();
      return;
    case Tag::kList:
    case Tag::kTuple: {
      auto* l = static_cast<ListObj*>(v.o.get());
      out += v.tag == Tag::kList ? "[" : "(";
      for (std::size_t i = 0; i < l->items.size(); ++i) {
        if (i > 0) out += ", ";
        TextAt(l->items[i], out, depth + 1);
      }
      out += v.tag == Tag::kList ? "]" : ")";
      return;
    }
    case Tag::kStruct: {
      auto* s = static_cast<StructObj*>(v.o.get());
      out += s->name + " { ";
      for (std::size_t i = 0; i < s->fields.size(); ++i) {
        if (i > 0) out += ", ";
        out += (*s->field_names)[i] + ": ";
        TextAt(s->fields[i], out, depth + 1);
      }
      out += " }";
      return;
    }
    case Tag::kEnum: {
      auto* e = static_cast<EnumObj*>(v.o.get());
      out += e->variant;
      if (!e->payload.empty()) {
        out += "(";
        for (std::size_t i = 0; i < e->payload.size(); ++i) {
          if (i > 0) out += ", ";
          TextAt(e->payload[i], out, depth + 1);
        }
        out += ")";
      }
      return;
    }
    case Tag::kBuilder:
      out += static_cast<BuilderObj*>(v.o.get())->s;
      return;
    default:
      out += "<handle>";
      return;
  }
}
}  // namespace

bool Equal(const RValue& a, const RValue& b) { return EqualAt(a, b, 0); }

std::string ToText(const RValue& v) {
  if (v.tag == Tag::kStr) return v.str();
  std::string out;
  TextAt(v, out, 0);
  return out;
}

}  // namespace trove::kodo::interp
