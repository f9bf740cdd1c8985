// The Kōdo native runtime's C++ part; see kodo_rt_ext.h. Each builtin mirrors the interpreter's
// of the same name in src/kodo/interp/runtime.cc (BJson*, BRegex*) with the same library, so
// results are byte-identical: keep the two in step.
#include "kodo_rt_ext.h"

#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

namespace {

// The interpreter's RValue reads: a string of another type is empty, an integer of another
// type 0, a double of another type 0.
std::string Str(KV v) {
  if (v.t != KT_STR) return std::string();
  const KStr* s = static_cast<const KStr*>(v.u.p);
  return std::string(s->data, static_cast<std::size_t>(s->len));
}
std::int64_t Int(KV v) { return (v.t == KT_INT || v.t == KT_BOOL || v.t == KT_FUNC) ? v.u.i : 0; }
double Float(KV v) { return v.t == KT_FLOAT ? v.u.f : 0; }
KV MakeStr(const std::string& s) {
  return kr_str_new(s.data(), static_cast<std::int64_t>(s.size()));
}

// JSON: handles are Ints from 1, never reused; 0 is no value.
std::vector<std::unique_ptr<nlohmann::json>>& Slots() {
  static auto* slots = new std::vector<std::unique_ptr<nlohmann::json>>();
  return *slots;
}
std::int64_t JsonAdd(nlohmann::json v) {
  Slots().push_back(std::make_unique<nlohmann::json>(std::move(v)));
  return static_cast<std::int64_t>(Slots().size());
}
nlohmann::json* JsonAt(KV h) {
  if (h.t != KT_INT || h.u.i <= 0 || static_cast<std::uint64_t>(h.u.i) > Slots().size()) {
    return nullptr;
  }
  return Slots()[static_cast<std::size_t>(h.u.i - 1)].get();
}
const nlohmann::json* JsonField(KV h, KV key) {
  nlohmann::json* j = JsonAt(h);
  if (j == nullptr || !j->is_object()) return nullptr;
  auto it = j->find(Str(key));
  return it == j->end() ? nullptr : &*it;
}
void JsonSet(KV h, KV key, nlohmann::json v) {
  nlohmann::json* j = JsonAt(h);
  if (j != nullptr && j->is_object()) (*j)[Str(key)] = std::move(v);
}

// Regex: the interpreter's limits (runtime.cc kRegexInlineBytes, kMaxRegexSubject).
constexpr std::size_t kRegexInlineBytes = 1024;
constexpr std::size_t kMaxRegexSubject = 1u << 20;
constexpr std::size_t kRegexStackPerByte = 1024;

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
  bool failed = false;
};

void* RunRegexJob(void* arg) {
  auto* job = static_cast<RegexJob*>(arg);
  try {
    job->body();
  } catch (...) {
    job->failed = true;
  }
  return nullptr;
}

// Runs `body` (which matches against `subject`) with enough stack for libstdc++'s recursion;
// stops the program with the interpreter's messages when it cannot.
void WithRegexStack(const std::string& subject, const std::function<void()>& body) {
  if (subject.size() > kMaxRegexSubject) {
    char msg[160];
    std::snprintf(msg, sizeof msg,
                  "regex subject of %zu bytes is longer than the %zu bytes this build matches",
                  subject.size(), kMaxRegexSubject);
    kr_trap(134, msg);
  }
  RegexJob job{body};
  if (subject.size() <= kRegexInlineBytes) {
    RunRegexJob(&job);
  } else {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (1u << 20) + subject.size() * kRegexStackPerByte);
    pthread_t thread;
    const bool started = pthread_create(&thread, &attr, RunRegexJob, &job) == 0;
    pthread_attr_destroy(&attr);
    if (!started) kr_trap(134, "could not start the regex matcher");
    pthread_join(thread, nullptr);
  }
  if (job.failed) kr_trap(134, "regex match too complex");
}

}  // namespace

extern "C" {

KV kb_json_parse(KV text) {
  nlohmann::json v = nlohmann::json::parse(Str(text), nullptr, /*allow_exceptions=*/false);
  return kv_int(v.is_discarded() ? 0 : JsonAdd(std::move(v)));
}
KV kb_json_new_object(void) { return kv_int(JsonAdd(nlohmann::json::object())); }
KV kb_json_free(KV h) {
  if (JsonAt(h) != nullptr) Slots()[static_cast<std::size_t>(h.u.i - 1)].reset();
  return kv_unit();
}
KV kb_json_stringify(KV h) {
  const nlohmann::json* j = JsonAt(h);
  return MakeStr(j ? j->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) : "");
}
KV kb_json_get_string(KV h, KV key) {
  const nlohmann::json* v = JsonField(h, key);
  return MakeStr(v && v->is_string() ? v->get<std::string>() : "");
}
KV kb_json_get_int(KV h, KV key) {
  const nlohmann::json* v = JsonField(h, key);
  std::int64_t n = 0;
  if (v && v->is_number_integer()) {
    if (v->is_number_unsigned() &&
        v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      n = 0;
    } else {
      n = v->get<std::int64_t>();
    }
  }
  return kv_int(n);
}
KV kb_json_get_bool(KV h, KV key) {
  const nlohmann::json* v = JsonField(h, key);
  return kv_int(v && v->is_boolean() ? (v->get<bool>() ? 1 : 0) : -1);
}
KV kb_json_get_float(KV h, KV key) {
  const nlohmann::json* v = JsonField(h, key);
  return kv_float(v && v->is_number() ? v->get<double>() : 0.0);
}
KV kb_json_get_array(KV h, KV key) {
  const nlohmann::json* v = JsonField(h, key);
  KV list = kr_list_make();
  if (v && v->is_array()) {
    // Each element becomes a handle of its own; the copy keeps `v` valid while slots grow.
    const nlohmann::json copy = *v;
    for (const nlohmann::json& e : copy) kr_list_append(list, kv_int(JsonAdd(e)));
  }
  return list;
}
KV kb_json_get_object(KV h, KV key) {
  const nlohmann::json* v = JsonField(h, key);
  return kv_int(v && v->is_object() ? JsonAdd(*v) : 0);
}
KV kb_json_set_string(KV h, KV key, KV v) {
  JsonSet(h, key, Str(v));
  return kv_unit();
}
KV kb_json_set_int(KV h, KV key, KV v) {
  JsonSet(h, key, Int(v));
  return kv_unit();
}
KV kb_json_set_bool(KV h, KV key, KV v) {
  JsonSet(h, key, Int(v) != 0);
  return kv_unit();
}
KV kb_json_set_float(KV h, KV key, KV v) {
  JsonSet(h, key, Float(v));
  return kv_unit();
}

KV kb_regex_match(KV pattern, KV text) {
  std::regex re;
  bool found = false;
  if (CompileRegex(Str(pattern), re)) {
    const std::string subject = Str(text);
    WithRegexStack(subject, [&] { found = std::regex_search(subject, re); });
  }
  return kv_bool(found);
}
KV kb_regex_find(KV pattern, KV text) {
  std::regex re;
  bool found = false;
  std::string match;
  if (CompileRegex(Str(pattern), re)) {
    const std::string subject = Str(text);
    WithRegexStack(subject, [&] {
      std::smatch m;
      found = std::regex_search(subject, m, re);
      if (found) match = m.str(0);
    });
  }
  return found ? kr_some(MakeStr(match)) : kr_none();
}
KV kb_regex_replace(KV pattern, KV text, KV replacement) {
  std::regex re;
  const std::string subject = Str(text);
  std::string result = subject;
  if (CompileRegex(Str(pattern), re)) {
    const std::string with = Str(replacement);
    WithRegexStack(subject, [&] { result = std::regex_replace(subject, re, with); });
  }
  return MakeStr(result);
}

}  // extern "C"
