#include "kodo/contracts/smt_solver.h"

#include <dlfcn.h>
#include <z3.h>  // types and prototypes only: the functions are resolved with dlsym

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#ifndef TROVE_Z3_SONAME
#define TROVE_Z3_SONAME "libz3.so"
#endif

namespace trove::kodo::contracts {
namespace {

// The C API entry points this adapter calls, resolved from libz3 at first use.
struct Z3Api {
  decltype(&::Z3_mk_config) mk_config = nullptr;
  decltype(&::Z3_del_config) del_config = nullptr;
  decltype(&::Z3_mk_context) mk_context = nullptr;
  decltype(&::Z3_del_context) del_context = nullptr;
  decltype(&::Z3_set_error_handler) set_error_handler = nullptr;
  decltype(&::Z3_get_error_code) get_error_code = nullptr;
  decltype(&::Z3_parse_smtlib2_string) parse_smtlib2_string = nullptr;
  decltype(&::Z3_ast_vector_inc_ref) ast_vector_inc_ref = nullptr;
  decltype(&::Z3_ast_vector_dec_ref) ast_vector_dec_ref = nullptr;
  decltype(&::Z3_ast_vector_size) ast_vector_size = nullptr;
  decltype(&::Z3_ast_vector_get) ast_vector_get = nullptr;
  decltype(&::Z3_mk_solver) mk_solver = nullptr;
  decltype(&::Z3_solver_inc_ref) solver_inc_ref = nullptr;
  decltype(&::Z3_solver_dec_ref) solver_dec_ref = nullptr;
  decltype(&::Z3_solver_assert) solver_assert = nullptr;
  decltype(&::Z3_solver_check) solver_check = nullptr;
  decltype(&::Z3_solver_get_model) solver_get_model = nullptr;
  decltype(&::Z3_solver_get_reason_unknown) solver_get_reason_unknown = nullptr;
  decltype(&::Z3_model_inc_ref) model_inc_ref = nullptr;
  decltype(&::Z3_model_dec_ref) model_dec_ref = nullptr;
  decltype(&::Z3_model_to_string) model_to_string = nullptr;
  decltype(&::Z3_interrupt) interrupt = nullptr;
  std::string error;  // why loading failed; empty when loaded
};

std::atomic<bool> g_loaded{false};

template <typename F>
bool Resolve(void* handle, const char* name, F& fn, std::string& error) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  if (fn == nullptr && error.empty()) error = std::string("missing symbol ") + name;
  return fn != nullptr;
}

const Z3Api& Api() {
  static const Z3Api api = [] {
    Z3Api a;
    void* h = dlopen(TROVE_Z3_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) h = dlopen("libz3.so", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      a.error = e != nullptr ? e : "dlopen failed";
      return a;
    }
    std::string& err = a.error;
    Resolve(h, "Z3_mk_config", a.mk_config, err);
    Resolve(h, "Z3_del_config", a.del_config, err);
    Resolve(h, "Z3_mk_context", a.mk_context, err);
    Resolve(h, "Z3_del_context", a.del_context, err);
    Resolve(h, "Z3_set_error_handler", a.set_error_handler, err);
    Resolve(h, "Z3_get_error_code", a.get_error_code, err);
    Resolve(h, "Z3_parse_smtlib2_string", a.parse_smtlib2_string, err);
    Resolve(h, "Z3_ast_vector_inc_ref", a.ast_vector_inc_ref, err);
    Resolve(h, "Z3_ast_vector_dec_ref", a.ast_vector_dec_ref, err);
    Resolve(h, "Z3_ast_vector_size", a.ast_vector_size, err);
    Resolve(h, "Z3_ast_vector_get", a.ast_vector_get, err);
    Resolve(h, "Z3_mk_solver", a.mk_solver, err);
    Resolve(h, "Z3_solver_inc_ref", a.solver_inc_ref, err);
    Resolve(h, "Z3_solver_dec_ref", a.solver_dec_ref, err);
    Resolve(h, "Z3_solver_assert", a.solver_assert, err);
    Resolve(h, "Z3_solver_check", a.solver_check, err);
    Resolve(h, "Z3_solver_get_model", a.solver_get_model, err);
    Resolve(h, "Z3_solver_get_reason_unknown", a.solver_get_reason_unknown, err);
    Resolve(h, "Z3_model_inc_ref", a.model_inc_ref, err);
    Resolve(h, "Z3_model_dec_ref", a.model_dec_ref, err);
    Resolve(h, "Z3_model_to_string", a.model_to_string, err);
    Resolve(h, "Z3_interrupt", a.interrupt, err);
    g_loaded.store(true);
    return a;
  }();
  return api;
}

// Errors are read back with Z3_get_error_code; the default handler would abort the process.
void IgnoreError(Z3_context, Z3_error_code) {}

// Interrupts a context's check at a deadline unless Finish() came first.
class Watchdog {
 public:
  Watchdog(const Z3Api& api, Z3_context ctx, std::uint32_t timeout_ms)
      : thread_([this, &api, ctx, timeout_ms] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                            [this] { return done_; })) {
            fired_ = true;
            api.interrupt(ctx);
          }
        }) {}
  ~Watchdog() { Finish(); }
  // Returns whether the deadline passed first.
  bool Finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return fired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;  // last: started after the members it reads
};

}  // namespace

bool SmtAvailable() { return Api().error.empty(); }

bool SmtLoaded() { return g_loaded.load(); }

SmtAnswer CheckSat(const std::string& smtlib2, std::uint32_t timeout_ms) {
  SmtAnswer answer;
  const Z3Api& api = Api();
  if (!api.error.empty()) {
    answer.reason = "z3 not available: " + api.error;
    return answer;
  }
  Z3_config cfg = api.mk_config();
  Z3_context ctx = api.mk_context(cfg);
  api.del_config(cfg);
  api.set_error_handler(ctx, IgnoreError);
  Z3_ast_vector assertions =
      api.parse_smtlib2_string(ctx, smtlib2.c_str(), 0, nullptr, nullptr, 0, nullptr, nullptr);
  if (api.get_error_code(ctx) != Z3_OK || assertions == nullptr) {
    answer.reason = "z3 could not parse the formula";
    api.del_context(ctx);
    return answer;
  }
  api.ast_vector_inc_ref(ctx, assertions);
  Z3_solver solver = api.mk_solver(ctx);
  api.solver_inc_ref(ctx, solver);
  const unsigned n = api.ast_vector_size(ctx, assertions);
  for (unsigned i = 0; i < n; ++i) {
    api.solver_assert(ctx, solver, api.ast_vector_get(ctx, assertions, i));
  }
  Z3_lbool result = Z3_L_UNDEF;
  bool timed_out = false;
  {
    Watchdog watchdog(api, ctx, timeout_ms);
    result = api.solver_check(ctx, solver);
    timed_out = watchdog.Finish();
  }
  if (api.get_error_code(ctx) != Z3_OK) result = Z3_L_UNDEF;
  if (result == Z3_L_FALSE) {
    answer.outcome = SmtOutcome::kProved;
  } else if (result == Z3_L_TRUE) {
    Z3_model model = api.solver_get_model(ctx, solver);
    if (model != nullptr && api.get_error_code(ctx) == Z3_OK) {
      api.model_inc_ref(ctx, model);
      answer.outcome = SmtOutcome::kRefuted;
      answer.model = api.model_to_string(ctx, model);
      api.model_dec_ref(ctx, model);
    } else {
      answer.outcome = SmtOutcome::kRefuted;
      answer.model = "no model available";
    }
  } else {
    answer.reason = timed_out ? "timeout" : api.solver_get_reason_unknown(ctx, solver);
  }
  api.solver_dec_ref(ctx, solver);
  api.ast_vector_dec_ref(ctx, assertions);
  api.del_context(ctx);
  return answer;
}

}  // namespace trove::kodo::contracts
