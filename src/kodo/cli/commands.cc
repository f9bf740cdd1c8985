#include "kodo/cli/commands.h"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "kodo/annotate/annotate.h"
#include "kodo/cli/trust_commands.h"
#include "kodo/contracts/contracts.h"
#include "kodo/diag/diagnostic.h"
#include "kodo/diag/explain.h"
#include "kodo/diag/mcp_json.h"
#include "kodo/diag/sarif.h"
#include "kodo/driver/front.h"
#include "kodo/driver/tools.h"
#include "kodo/interp/interp.h"
#include "kodo/mir/lower.h"
#include "kodo/mir/opt/opt.h"
#include "kodo/native/build.h"
#include "kodo/sema/check.h"
#include "kodo/sema/unchecked.h"
#include "kodo/testrun/testrun.h"
#include "kodo/trust/config.h"
#include "trove_version.h"  // generated: trove::Version(), trove::GitCommit()

namespace trove::kodo::cli {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The upstream kodoc release whose behaviour this follows.
constexpr std::string_view kKodocRelease = "1.14.1";

// Pretty JSON as serde's to_string_pretty writes it (two-space indent), invalid UTF-8 replaced.
template <typename J>
std::string Pretty(const J& value) {
  return value.dump(2, ' ', false, J::error_handler_t::replace) + "\n";
}

// Reads `path`; on failure fills `out` with upstream's message and exit 1.
bool ReadSource(base::Env& env, const std::string& path, std::string& text, CommandOutput& out) {
  Result<std::string> read = env.ReadFile(path);
  if (!read.ok()) {
    out.err += fmt::format("error: could not read file `{}`: {}\n", path, read.status().message());
    out.exit_code = kExitFailure;
    return false;
  }
  text = std::move(read).value();
  return true;
}

// Compiles `text`; a crossed bound is reported like an unreadable file.
std::optional<driver::Compiled> Compile(std::string text, const std::string& path,
                                        const driver::FrontOptions& options, CommandOutput& out) {
  Result<driver::Compiled> compiled = driver::CompileSource(std::move(text), path, options);
  if (!compiled.ok()) {
    out.err += fmt::format("error: {}: {}\n", path, compiled.status().message());
    out.exit_code = kExitFailure;
    return std::nullopt;
  }
  return std::move(compiled).value();
}

// The `check` report of a compiled program, text or JSON. Imported modules' warnings follow the
// checked file's, with their own paths.
void ReportCheck(const driver::Compiled& c, const std::string& path, bool json_errors,
                 CommandOutput& out) {
  const std::vector<diag::FileDiagnostic> imported = driver::ImportedWarnings(c);
  if (json_errors) {
    diag::ModuleSummary summary;
    if (c.ok()) summary = sema::Summarize(*c.module);
    out.out +=
        diag::RenderCheckJson(c.source, path, c.diagnostics, summary, c.warnings, imported) + "\n";
  } else if (c.ok()) {
    // Never a plain "Check passed" when a part was not checked (W0901/W0902, issue 20), in the
    // checked file or in a module it imports.
    std::string not_checked;
    const auto note = [&not_checked](const diag::Diagnostic& w) {
      std::string part = "constructs (W0902)";
      if (w.kind == diag::Kind::kW0901) {
        const std::string_view m = w.message;
        const std::size_t start = m.find(": ") + 2;
        part = std::string(m.substr(start, m.find(':', start) - start));
      }
      const std::string listed = ", " + not_checked + ", ";
      if (listed.find(", " + part + ", ") == std::string::npos) {
        not_checked += (not_checked.empty() ? "" : ", ") + part;
      }
    };
    for (const diag::Diagnostic& w : c.warnings) {
      out.err += diag::RenderText(c.source, path, w);
      note(w);
    }
    for (const diag::FileDiagnostic& w : imported) {
      out.err += diag::RenderText(*w.source, w.path, *w.diagnostic);
      note(*w.diagnostic);
    }
    if (not_checked.empty()) {
      out.out += fmt::format("Check passed for module `{}`\n", c.module->name);
    } else {
      out.out += fmt::format("Check passed for module `{}` (not checked: {})\n", c.module->name,
                             not_checked);
    }
  } else {
    for (const diag::Diagnostic& d : c.diagnostics) out.err += diag::RenderText(c.source, path, d);
  }
  out.exit_code = c.ok() ? kExitOk : kExitFailure;
}

// When `d`'s patch was withheld by verification, says so and why (its plan's first step).
void NoteWithheld(const diag::Diagnostic& d, CommandOutput& out) {
  if (!d.fix_withheld || d.repair_plan.empty()) return;
  out.err += fmt::format("note: {}: {}\n", d.code(), d.repair_plan.front().description);
}

// A type in Kōdo syntax, for the text form of `describe`.
std::string TypeText(const ast::TypeExpr& t) {
  auto list = [](const ast::Vec<ast::TypeExpr>& types, std::size_t count) {
    std::string s;
    for (std::size_t i = 0; i < count; ++i) s += (i ? ", " : "") + TypeText(types[i]);
    return s;
  };
  switch (t.kind) {
    case ast::TypeKind::kNamed:
      return std::string(t.name);
    case ast::TypeKind::kGeneric:
      return fmt::format("{}<{}>", t.name, list(t.args, t.args.size()));
    case ast::TypeKind::kFunction:
      if (t.args.empty()) return "() -> ()";
      return fmt::format("({}) -> {}", list(t.args, t.args.size() - 1), TypeText(t.args.back()));
    case ast::TypeKind::kUnit:
      return "()";
    case ast::TypeKind::kOptional:
      return t.args.empty() ? "?" : TypeText(t.args[0]) + "?";
    case ast::TypeKind::kTuple:
      return fmt::format("({})", list(t.args, t.args.size()));
    case ast::TypeKind::kDynTrait:
      return "dyn " + std::string(t.name);
  }
  return std::string(t.name);
}

std::string_view SpanText(const SourceBuffer& source, ast::Span span) {
  if (span.end > source.size() || span.start > span.end) return {};
  return source.text().substr(span.start, span.end - span.start);
}

std::string DescribeText(const driver::Compiled& c) {
  const ast::Module& m = *c.module;
  std::string s = fmt::format("module {}\n", m.name);
  if (m.meta) {
    for (const ast::MetaEntry& e : m.meta->entries) s += fmt::format("  {}: {}\n", e.key, e.value);
  }
  for (const ast::TypeDecl& t : m.type_decls) {
    std::string fields;
    for (const ast::FieldDef& f : t.fields) {
      fields += fmt::format("{}{}: {}", fields.empty() ? "" : ", ", f.name, TypeText(f.ty));
    }
    s += fmt::format("\nstruct {} {{ {} }}\n", t.name, fields);
  }
  for (const ast::Function& f : m.functions) {
    std::string params;
    for (const ast::Param& p : f.params) {
      params += fmt::format("{}{}: {}", params.empty() ? "" : ", ", p.name, TypeText(p.ty));
    }
    s += "\n";
    for (const ast::Annotation& a : f.annotations) {
      s += fmt::format("{}\n", SpanText(c.source, a.span));
    }
    s += fmt::format("{}fn {}({}) -> {}\n", f.is_async ? "async " : "", f.name, params,
                     TypeText(f.return_type));
    for (const ast::Expr& e : f.requires_) {
      s += fmt::format("  requires {{ {} }}\n", SpanText(c.source, ast::ExprSpan(e)));
    }
    for (const ast::Expr& e : f.ensures) {
      s += fmt::format("  ensures {{ {} }}\n", SpanText(c.source, ast::ExprSpan(e)));
    }
  }
  return s;
}

}  // namespace

std::string VersionText(const std::string& program) {
  return fmt::format("{} {} (trove {}, git {})", program, kKodocRelease, trove::Version(),
                     trove::GitCommit());
}

CommandOutput RunCheck(base::Env& env, const CheckArgs& args) {
  CommandOutput out;
  if (args.sarif && args.json_errors) {
    out.err += "error: --sarif and --json-errors exclude each other\n";
    out.exit_code = kExitUsage;
    return out;
  }
  std::string text;
  if (!ReadSource(env, args.file, text, out)) return out;
  // The kodo.toml [trust] table beside the file (kodo/trust/config.h); a corrupt one stops here.
  std::optional<trust::TrustConfig> trust_config;
  if (!internal::LoadTrust(env, args.file, trust_config, out)) return out;
  std::optional<driver::Compiled> c =
      Compile(std::move(text), args.file,
              driver::FrontOptions{.trust_config = trust_config ? &*trust_config : nullptr,
                                   .import_env = &env},
              out);
  if (!c) return out;
  // Contracts, after a clean type check (upstream verifies them after desugaring).
  std::string contract_lines;
  const contracts::ParsedMode mode = contracts::ParseContractMode(args.contracts);
  if (c->ok()) {
    if (mode.warning) out.err += *mode.warning + "\n";
    contracts::SmtCache cache;
    const contracts::ContractReport report =
        contracts::VerifyModule(*c->module, {.mode = mode.mode}, cache);
    if (const contracts::FunctionContracts* failed = report.FirstFailure()) {
      out.err += contracts::FailureLines(*failed);
      out.exit_code = kExitFailure;
      return out;
    }
    contract_lines = contracts::ProveLines(report) + contracts::SummaryLine(report);
    // The contracts phase ran: its summary line says how many were proved and how many are
    // left to runtime checks, so W0901 no longer needs to (kodo/sema/unchecked.h). In `none`
    // mode nothing was looked at and the warning stays.
    if (mode.mode != contracts::ContractMode::kNone) {
      sema::MarkChecked(c->warnings, sema::Feature::kContracts);
    }
  }
  if (args.sarif) {
    diag::SarifTool tool;
    tool.version = kKodocRelease;
    tool.full_name = VersionText("kodoc");
    // The checked file's warnings and its imported modules' (each with its own file) follow
    // its errors, as in the text and JSON forms.
    out.out += diag::RenderSarif(c->source, args.file, c->diagnostics, tool, c->warnings,
                                 driver::ImportedWarnings(*c)) +
               "\n";
    out.exit_code = c->ok() ? kExitOk : kExitFailure;
    return out;
  }
  ReportCheck(*c, args.file, args.json_errors, out);
  if (!args.json_errors) out.out += contract_lines;
  if (args.emit_cert && c->ok()) {
    internal::EmitCertificate(env, args.file, *c, mode.mode, args.json_errors, out);
  }
  return out;
}

CommandOutput RunExplain(const ExplainArgs& args) {
  CommandOutput out;
  Result<diag::Explanation> e = diag::Explain(args.code);
  if (!e.ok()) {
    if (args.json) {
      out.out += Pretty(diag::UnknownCodeJson(args.code));
    } else {
      out.err += fmt::format("error: unknown error code `{}`\n", args.code);
      out.err += "hint: error codes range from E0001 to E0699\n";
    }
    out.exit_code = kExitFailure;
    return out;
  }
  out.out += args.json ? Pretty(diag::ExplainJson(*e)) : diag::RenderExplainText(*e);
  return out;
}

CommandOutput RunDescribe(base::Env& env, const DescribeArgs& args) {
  CommandOutput out;
  std::string text;
  if (!ReadSource(env, args.file, text, out)) return out;
  std::optional<driver::Compiled> c =
      Compile(std::move(text), args.file, driver::FrontOptions{.type_check = false}, out);
  if (!c) return out;
  if (!c->module) {
    if (args.json) {
      out.out += Pretty(diag::McpParseFailure(c->diagnostics));
    } else {
      for (const diag::Diagnostic& d : c->diagnostics) {
        out.err += diag::RenderText(c->source, args.file, d);
      }
    }
    out.exit_code = kExitFailure;
    return out;
  }
  out.out += args.json ? Pretty(driver::DescribeModuleJson(*c->module)) : DescribeText(*c);
  return out;
}

CommandOutput RunAnnotate(base::Env& env, const AnnotateArgs& args) {
  CommandOutput out;
  std::string text;
  if (!ReadSource(env, args.file, text, out)) return out;
  std::optional<driver::Compiled> c =
      Compile(std::move(text), args.file, driver::FrontOptions{.type_check = false}, out);
  if (!c) return out;
  if (!c->module) {
    out.err += fmt::format("error: parse failed: {}\n", c->diagnostics.front().message);
    out.exit_code = kExitFailure;
    return out;
  }
  std::vector<annotate::CliSuggestion> suggestions =
      annotate::SuggestContracts(*c->module, c->source.text());
  std::size_t verified = 0;
  for (const annotate::CliSuggestion& s : suggestions) verified += s.verified ? 1 : 0;
  if (args.json) {
    // Upstream serializes a struct here: fields in declaration order, not sorted.
    ordered_json list = ordered_json::array();
    for (const annotate::CliSuggestion& s : suggestions) {
      list.push_back(
          {{"function", s.function},
           {"line", s.line},
           {"kind", s.kind == annotate::ContractKind::kRequires ? "Requires" : "Ensures"},
           {"expression", s.expression},
           {"reason", s.reason},
           {"verified", s.verified}});
    }
    out.out += Pretty(ordered_json{{"suggestions", std::move(list)},
                                   {"verified_count", verified},
                                   {"total_count", suggestions.size()}});
  } else if (suggestions.empty()) {
    out.out += fmt::format(
        "{}: no contract suggestions (all functions already annotated or no patterns "
        "detected)\n",
        args.file);
  } else {
    std::string current;
    for (const annotate::CliSuggestion& s : suggestions) {
      if (s.function != current) {
        if (!current.empty()) out.out += "\n";
        out.out += fmt::format("{}:{}: fn {}()\n", args.file, s.line, s.function);
        current = s.function;
      }
      out.out += fmt::format("  + {} {{ {} }}    [{}: {}]\n",
                             s.kind == annotate::ContractKind::kRequires ? "requires" : "ensures",
                             s.expression, s.verified ? "verified" : "unverified", s.reason);
    }
    out.out +=
        fmt::format("\n{} contract(s) suggested, {} verified.\n", suggestions.size(), verified);
  }
  if (args.apply && !suggestions.empty()) {
    out.err +=
        "note: --apply is not yet implemented. Use the suggestions above to manually add "
        "contracts.\n";
  }
  return out;
}

CommandOutput RunFix(base::Env& env, const FixArgs& args) {
  CommandOutput out;
  std::string text;
  if (!ReadSource(env, args.file, text, out)) return out;
  std::optional<driver::Compiled> c =
      Compile(text, args.file, driver::FrontOptions{.fail_fast = true}, out);
  if (!c) return out;

  // Upstream fixes one error per run: the parse error's patch (file ""), or the first type
  // error's from the fail-fast checker (file = the path).
  // Patches were verified by the front half (kodo/sema/verify_fixes.h): one that would leave
  // a file that does not parse, or that keeps its error, is withheld as a manual repair plan,
  // and the note below says why.
  std::vector<diag::FixPatch> patches;
  std::string patch_file;
  if (c->outcome == driver::Outcome::kParseFailed) {
    const diag::Diagnostic& d = c->diagnostics.front();
    if (!d.fix_patch) {
      out.err += fmt::format("parse error with no auto-fix available: {}\n", d.message);
      NoteWithheld(d, out);
      out.exit_code = kExitFailure;
      return out;
    }
    patches.push_back(*d.fix_patch);
  } else if (!c->diagnostics.empty() && c->diagnostics.front().fix_patch) {
    patches.push_back(*c->diagnostics.front().fix_patch);
    patch_file = args.file;
  }
  if (patches.empty()) {
    out.out += fmt::format("No auto-fixable errors found in `{}`\n", args.file);
    if (!c->diagnostics.empty()) NoteWithheld(c->diagnostics.front(), out);
    return out;
  }

  if (!args.apply) {
    json list = json::array();
    for (const diag::FixPatch& p : patches) {
      list.push_back({{"description", p.description},
                      {"end_offset", p.end_offset},
                      {"file", patch_file},
                      {"replacement", p.replacement},
                      {"start_offset", p.start_offset}});
    }
    out.out += Pretty(json{{"applied", false}, {"patches", std::move(list)}});
    return out;
  }

  Result<std::string> fixed = diag::ApplyPatches(text, patches);
  if (!fixed.ok()) {
    out.err += fmt::format("error: {}: {}; the file was not changed\n", args.file,
                           fixed.status().message());
    out.exit_code = kExitFailure;
    return out;
  }
  // Check the new text, as `kodoc check` would, before writing it: a file that does not parse
  // is never written (the patch was verified, so this is a last guard). Env::WriteFile writes a
  // temporary file and renames it over the original, so a failed write leaves it untouched.
  CommandOutput checked;
  std::optional<driver::Compiled> again = Compile(*fixed, args.file, {}, checked);
  if (!again || again->outcome == driver::Outcome::kParseFailed) {
    out.err += checked.err;
    out.err +=
        fmt::format("error: {}: the fixed file would not parse: {}; the file was not changed\n",
                    args.file, again ? again->diagnostics.front().message : "");
    out.exit_code = kExitFailure;
    return out;
  }
  if (Status w = env.WriteFile(args.file, *fixed); !w.ok()) {
    out.err += fmt::format("error: could not write file `{}`: {}\n", args.file, w.message());
    out.exit_code = kExitFailure;
    return out;
  }
  for (const diag::FixPatch& p : patches)
    out.out += fmt::format("Applied fix: {}\n", p.description);
  out.out += fmt::format("Applied {} fix(es) to `{}`\n", patches.size(), args.file);
  ReportCheck(*again, args.file, /*json_errors=*/false, out);
  return out;
}

namespace {

// Compiles and lowers FILE, with the modules it imports, for `mir`, `run` and `build`; on
// failure fills `out` and returns nullopt.
std::optional<mir::Program> CompileToMir(base::Env& env, const std::string& path,
                                         const std::string& contracts, int opt_level,
                                         CommandOutput& out) {
  std::string text;
  if (!ReadSource(env, path, text, out)) return std::nullopt;
  std::optional<driver::Compiled> c =
      Compile(std::move(text), path, driver::FrontOptions{.import_env = &env}, out);
  if (!c) return std::nullopt;
  if (!c->ok()) {
    for (const diag::Diagnostic& d : c->diagnostics)
      out.err += diag::RenderText(c->source, path, d);
    out.exit_code = kExitFailure;
    return std::nullopt;
  }
  // The imported modules' warnings, as `check` prints them (§4.3; the checked file's own are
  // not printed: single-file programs keep upstream's stderr).
  out.err += driver::RenderImportedWarnings(*c);
  // The imported modules (docs/kodo.md §4.3) are lowered with the file into one program.
  std::vector<mir::Import> imports;
  for (const auto& m : c->imports) imports.push_back(mir::Import{&m->module, m->deps});
  mir::LowerOptions options;
  options.recoverable_contracts = contracts == "recoverable";
  options.resolve_intents = true;
  Result<mir::Program> program = mir::LowerProgram(*c->module, imports, options);
  if (!program.ok()) {
    out.err += fmt::format("error: {}: {}\n", path, program.status().message());
    out.exit_code = kExitFailure;
    return std::nullopt;
  }
  mir::opt::Optimize(*program, opt_level);
  return std::move(program).value();
}

}  // namespace

CommandOutput RunMir(base::Env& env, const MirArgs& args) {
  CommandOutput out;
  std::optional<mir::Program> program =
      CompileToMir(env, args.file, args.contracts, args.opt_level, out);
  if (!program) return out;
  out.out = mir::Print(*program);
  return out;
}

CommandOutput RunRun(base::Env& env, const RunArgs& args) {
  CommandOutput out;
  std::optional<mir::Program> program =
      CompileToMir(env, args.file, args.contracts, args.opt_level, out);
  if (!program) return out;
  interp::RunOptions options;
  options.args.push_back(args.file);
  for (const std::string& a : args.args) options.args.push_back(a);
  options.max_steps = args.max_steps;
  interp::RunResult r = interp::Run(*program, options);
  out.out = std::move(r.out);
  out.err += r.err;  // after the imported modules' warnings
  out.exit_code = r.exit_code;
  return out;
}

CommandOutput RunTest(base::Env& env, const TestArgs& args) {
  CommandOutput out;
  std::string text;
  if (!ReadSource(env, args.file, text, out)) return out;
  testrun::TestOutcome r = testrun::RunTests(std::move(text), args.file,
                                             {.filter = args.filter,
                                              .json = args.json,
                                              .contracts = args.contracts,
                                              .opt_level = args.opt_level,
                                              .max_steps = args.max_steps,
                                              .import_env = &env});
  out.out = std::move(r.out);
  out.err = std::move(r.err);
  out.exit_code = r.exit_code;
  return out;
}

CommandOutput RunBuild(base::Env& env, const BuildArgs& args) {
  CommandOutput out;
  std::optional<mir::Program> program =
      CompileToMir(env, args.file, args.contracts, /*opt_level=*/1, out);
  if (!program) return out;
  std::string output = args.output;
  if (output.empty()) {
    output = args.file;
    if (output.size() > 3 && output.compare(output.size() - 3, 3, ".ko") == 0) {
      output.resize(output.size() - 3);
    } else {
      output += ".out";
    }
  }
  native::BuildOptions options;
  options.cache_dir = native::DefaultCacheDir();
  if (Status s = native::BuildExecutable(*program, output, options); !s.ok()) {
    out.err += fmt::format("error: {}: {}\n", args.file, s.message());
    out.exit_code = kExitFailure;
    return out;
  }
  out.out = fmt::format("Successfully compiled `{}` \u2192 {}\n", program->module, output);
  return out;
}

}  // namespace trove::kodo::cli
