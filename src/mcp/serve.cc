#include "mcp/serve.h"

#include <fmt/core.h>

#include <cstdio>

#include "mcp/policy/audit.h"
#include "mcp/policy/auth.h"
#include "mcp/policy/confine.h"
#include "mcp/policy/rate_limit.h"
#include "mcp/stdio.h"

namespace trove::mcp {

namespace {

// The process-wide environment of the policy objects (files, clock); never destroyed.
base::Env& PolicyEnv() {
  static base::PosixEnv* const env = new base::PosixEnv();
  return *env;
}

}  // namespace

void ServePolicy::Apply(ServerOptions& server, ServeOptions& serve) const {
  server.audit_log = audit_log;
  server.rate_limiter = rate_limiter;
  server.confiner = confiner;
  server.consent = options.consent;
  if (confiner == nullptr && serve.transport == "stdio") {
    auto cwd = policy::PathConfiner::Make({"."});
    if (cwd.ok()) server.confiner = std::make_shared<const policy::PathConfiner>(*std::move(cwd));
  }
  serve.http.host = options.host;
  serve.http.authenticator = authenticator;
  serve.stdio_principal = stdio_principal;
}

void AddServeFlags(CLI::App& app, policy::PolicyFlags& flags) {
  policy::AddPolicyFlags(app, flags);
}

Result<ServePolicy> ResolveServePolicy(const policy::PolicyFlags& flags,
                                       policy::PolicyOptions defaults) {
  base::Env& env = PolicyEnv();
  ServePolicy out;
  ASSIGN_OR_RETURN(out.options, policy::ResolvePolicyOptions(flags, defaults, env));
  ASSIGN_OR_RETURN(std::unique_ptr<policy::Authenticator> auth,
                   policy::MakeAuthenticator(out.options, env));
  out.authenticator = std::move(auth);
  ASSIGN_OR_RETURN(policy::Principal local, policy::StdioPrincipalFromEnvironment());
  out.stdio_principal = ToCorePrincipal(local);
  if (!out.options.audit_log.empty()) {
    auto log = policy::AuditLog::Open(out.options.audit_log, env);
    if (!log.ok()) {
      return Status(log.status().code(), fmt::format("--audit-log {}: {}", out.options.audit_log,
                                                     log.status().message()));
    }
    out.audit_log = std::move(log).value();
  }
  if (!out.options.allow_roots.empty()) {
    auto confiner = policy::PathConfiner::Make(out.options.allow_roots);
    if (!confiner.ok()) {
      return Status(confiner.status().code(),
                    fmt::format("--allow-root: {}", confiner.status().message()));
    }
    out.confiner = std::make_shared<const policy::PathConfiner>(*std::move(confiner));
  }
  if (out.options.rate_limit) {
    out.rate_limiter = std::make_shared<policy::RateLimiter>(
        policy::RateLimitOptions{.per_minute = out.options.rate_limit->tokens_per_minute,
                                 .burst = static_cast<double>(out.options.burst)},
        env);
  }
  return out;
}

int Serve(Server& server, const ServeOptions& options) {
  Status s;
  if (options.transport == "stdio") {
    s = ServeStdio(server, StdioOptions{.principal = options.stdio_principal});
  } else if (options.transport == "http") {
    s = ServeHttpAnnounced(server, options.http, options.program);
  } else {
    std::fputs(fmt::format("{}: error: unknown transport '{}' (stdio or http)\n", options.program,
                           options.transport)
                   .c_str(),
               stderr);
    return 2;
  }
  if (s.ok()) return 0;
  std::fputs(fmt::format("{}: error: {}\n", options.program, s.message()).c_str(), stderr);
  return 1;
}

}  // namespace trove::mcp
