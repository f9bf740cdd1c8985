// The one adapter between Kōdo's contracts and the Z3 SMT solver (docs/kodo-contracts.md §3).
//
// Z3 is loaded lazily: libz3 (Debian's libz3-dev, C API) is opened with dlopen the first time a
// formula is solved, so programs that never prove anything (kodo-mcp, whose tools run contracts
// in `runtime` mode; `kodoc check` in its default mode) do not pay for mapping and relocating a
// 23 MB library at startup. Without libz3 every formula comes back kUnknown, which callers treat
// as "could not prove" (a runtime check), exactly as upstream built without its `smt` feature.
//
// The timeout is enforced here, not by Z3's own `timeout` parameter: Debian's Z3 4.8.12 can
// deadlock when that parameter's timer fires inside its nonlinear arithmetic solver (measured:
// the process sleeps forever). A watchdog thread calls Z3_interrupt at the deadline instead;
// an interrupted check is kUnknown. z3::exception / error codes never escape: any Z3 error is
// kUnknown, never kProved.
//
// Thread safety: Solve may be called from any thread; each call uses its own Z3 context.
#pragma once

#include <cstdint>
#include <string>

namespace trove::kodo::contracts {

enum class SmtOutcome : std::uint8_t {
  kProved,   // the asserted formula is unsatisfiable (its negation always holds)
  kRefuted,  // satisfiable: `model` is Z3's model text
  kUnknown,  // Z3 said unknown, timed out, failed, or is not available
};

struct SmtAnswer {
  SmtOutcome outcome = SmtOutcome::kUnknown;
  std::string model;   // kRefuted: Z3_model_to_string, e.g. "x -> 0\n"
  std::string reason;  // kUnknown: why ("timeout", "z3 not available: ...", Z3's reason)
};

// Checks the satisfiability of `smtlib2`, a script of declarations and assertions in SMT-LIB 2
// syntax, within `timeout_ms` milliseconds of wall time. Returns kProved when it is
// unsatisfiable (the caller asserts the negation of what it wants proved).
SmtAnswer CheckSat(const std::string& smtlib2, std::uint32_t timeout_ms);

// Whether libz3 could be loaded (loads it on first call).
bool SmtAvailable();

// Whether libz3 has been loaded in this process (without loading it): kodo-mcp's startup test
// checks that serving `runtime`-mode tools never loads it.
bool SmtLoaded();

}  // namespace trove::kodo::contracts
