#include "kodo/driver/front.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <utility>

#include "kodo/diag/from_parse.h"
#include "kodo/diag/near_name.h"

namespace trove::kodo::driver {
namespace {

using diag::Diagnostic;
using diag::Kind;

// The directory part of `path` with its trailing slash ("" for a bare file name).
std::string DirOf(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? "" : std::string(path.substr(0, slash + 1));
}

std::string BaseOf(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Whether `real` (an Env::RealPath) lies inside the directory `root` (another). A root of ""
// or "." (an Env without links, relative paths) holds every relative path that does not climb.
bool Inside(std::string_view real, std::string_view root) {
  while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
  if (root.empty() || root == ".") {
    return !real.starts_with('/') && real != ".." && !real.starts_with("../");
  }
  if (root == "/") return real.starts_with('/');
  return real.size() > root.size() && real.starts_with(root) && real[root.size()] == '/';
}

// `std::option` and `std::result` are upstream's prelude, which the checker always has (§4.3).
bool IsPreludeImport(const ast::ImportDecl& imp) {
  return imp.path.size() == 2 && imp.path[0] == "std" &&
         (imp.path[1] == "option" || imp.path[1] == "result");
}

// Why an import failed: the kind (E0903-E0905) and its two message arguments.
struct Failure {
  Kind kind;
  std::string first;
  std::string second;
  std::string suggestion;
};

// Loads imported modules depth first, each checked on its own against its own imports
// (fail-fast, as upstream checks imported modules), dependencies before their importers.
// Paths are the importing file's directory plus the import's segments, which the parser makes
// identifiers; a file that symbolic links lead outside the checked file's directory is refused
// (Escapes). Each module's warnings are kept with it (ImportedModule::warnings).
class ImportLoader {
 public:
  ImportLoader(base::Env& env, std::string root, const FrontOptions& options)
      : env_(env), root_(std::move(root)), options_(options) {}

  // Marks the checked file itself as being loaded, so that importing it is a cycle.
  void Enter(const std::string& rel) { on_stack_.insert(rel); }

  // Loads `imp`, written in file `from` (relative to the root). Returns the failure, if any.
  std::optional<Failure> Load(const ast::ImportDecl& imp, const std::string& from,
                              std::size_t depth, std::vector<std::size_t>& deps) {
    if (IsPreludeImport(imp)) return std::nullopt;
    std::string joined;
    for (const std::string& seg : imp.path) {
      if (seg.empty() || seg == "." || seg == ".." || seg.find('/') != std::string::npos) {
        return Failure{Kind::kE0903, "", "", "an import path is a list of module names"};
      }
      joined += (joined.empty() ? "" : "/") + seg;
    }
    const std::string dir = DirOf(from);
    std::string rel = dir + joined + ".ko";
    if (!env_.FileExists(root_ + rel) && env_.FileExists(root_ + dir + joined + "/lib.ko")) {
      rel = dir + joined + "/lib.ko";
    }
    if (on_stack_.count(rel) > 0) {
      return Failure{Kind::kE0904, rel, from,
                     "remove one of the imports that form the cycle; imported modules may not "
                     "import their importers"};
    }
    if (auto it = index_.find(rel); it != index_.end()) {
      AddDep(it->second, deps);
      return std::nullopt;
    }
    if (std::optional<Failure> outside = Escapes(rel)) return outside;
    if (depth > kMaxImportDepth || loaded_.size() >= kMaxImportedModules) {
      return Failure{Kind::kE0903, rel, "",
                     fmt::format("imports are limited to {} modules and chains of {}",
                                 kMaxImportedModules, kMaxImportDepth)};
    }
    Result<std::string> text = env_.ReadFile(root_ + rel);
    if (!text.ok()) {
      Failure f = Unresolved(rel, dir, joined);
      if (imp.path[0] == "std") {
        // Upstream ships no std modules as files: only its prelude's two are built in.
        f.suggestion =
            "the standard library has only `std::option` and `std::result` (built in); "
            "other `std` paths are looked up as files and this one does not exist";
      }
      return f;
    }
    Result<SourceBuffer> source =
        SourceBuffer::Create(static_cast<FileId>(loaded_.size() + 1), root_ + rel,
                             std::move(text).value(), options_.parse.lex.max_source_bytes);
    if (!source.ok()) {
      return Failure{Kind::kE0905, rel, std::string(source.status().message()), ""};
    }
    parse::ParseOptions fail_fast = options_.parse;
    fail_fast.recover = false;
    Result<parse::ParseResult> parsed = parse::ParseModule(*source, fail_fast);
    if (!parsed.ok()) return Failure{Kind::kE0905, rel, std::string(parsed.status().message()), ""};
    if (!parsed->ok()) {
      return InModule(rel, *source, diag::FromParse(parsed->diagnostics.front()));
    }
    on_stack_.insert(rel);
    std::vector<std::size_t> own_deps;
    for (const ast::ImportDecl& sub : parsed->module->imports) {
      if (std::optional<Failure> failed = Load(sub, rel, depth + 1, own_deps)) {
        on_stack_.erase(rel);
        return failed;
      }
    }
    on_stack_.erase(rel);
    std::sort(own_deps.begin(), own_deps.end());
    std::vector<const ast::Module*> dep_modules;
    for (std::size_t d : own_deps) dep_modules.push_back(&loaded_[d]->module);
    sema::SourceCheck checked = sema::CheckParsed(
        *source, std::move(parsed).value(),
        sema::CheckOptions{.fail_fast = true, .verify_fixes = false, .imports = dep_modules},
        options_.parse);
    if (!checked.diagnostics.empty()) {
      return InModule(rel, *source, checked.diagnostics.front());
    }
    const std::size_t index = loaded_.size();
    loaded_.push_back(std::make_unique<ImportedModule>(
        ImportedModule{rel, std::move(source).value(), std::move(*checked.module), own_deps,
                       std::move(checked.warnings)}));
    deps_.push_back(std::move(own_deps));
    index_[rel] = index;
    AddDep(index, deps);
    return std::nullopt;
  }

  std::vector<std::unique_ptr<ImportedModule>> Take() { return std::move(loaded_); }

 private:
  // Adds `index` and what it imports, transitively, to `deps`.
  void AddDep(std::size_t index, std::vector<std::size_t>& deps) const {
    if (std::find(deps.begin(), deps.end(), index) == deps.end()) deps.push_back(index);
    for (std::size_t d : deps_[index]) {
      if (std::find(deps.begin(), deps.end(), d) == deps.end()) deps.push_back(d);
    }
  }

  // The import's file `rel` must lie inside the checked file's directory once symbolic links
  // and `..` are resolved (the segments are identifiers, but a directory or file on the way may
  // be a link): else E0903, saying where it leads. A file that does not exist is left to the
  // read, which reports it as unresolved.
  std::optional<Failure> Escapes(const std::string& rel) {
    if (!env_.FileExists(root_ + rel)) return std::nullopt;
    if (!root_real_) {
      Result<std::string> root = env_.RealPath(root_.empty() ? "." : root_);
      root_real_ = root.ok() ? std::move(root).value() : root_;
    }
    Result<std::string> real = env_.RealPath(root_ + rel);
    if (real.ok() && Inside(*real, *root_real_)) return std::nullopt;
    return Failure{
        Kind::kE0903, rel, "",
        real.ok() ? fmt::format("`{}` resolves to `{}`, outside the program's directory `{}` "
                                "(through a symbolic link or `..`); imports must stay inside the "
                                "directory of the checked file",
                                rel, *real, *root_real_)
                  : fmt::format("`{}` could not be resolved: {}", rel, real.status().message())};
  }

  // Upstream's hint: the `.ko` file of that directory nearest by edit distance.
  Failure Unresolved(const std::string& rel, const std::string& dir, const std::string& joined) {
    Failure f{
        Kind::kE0903, rel, "",
        fmt::format("create `{}` (or `{}/lib.ko`) or check the module path", rel, dir + joined)};
    const std::string parent = DirOf(dir + joined);
    const std::string stem = BaseOf(joined);
    Result<std::vector<std::string>> names = env_.ListDir(root_ + (parent.empty() ? "." : parent));
    if (!names.ok()) return f;
    std::vector<std::string> sorted = std::move(names).value();
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::string_view> stems;
    for (const std::string& name : sorted) {
      if (name.size() > 3 && name.ends_with(".ko"))
        stems.push_back(std::string_view(name).substr(0, name.size() - 3));
    }
    if (std::optional<std::string> best = diag::NearName(stem, stems)) {
      f.suggestion = fmt::format("did you mean `{}`?", *best);
    }
    return f;
  }

  // The first error of the imported file `rel`, with its code and place.
  static Failure InModule(const std::string& rel, const SourceBuffer& source, const Diagnostic& d) {
    std::string where = rel;
    if (d.span) {
      const LineColumn at = source.Locate(d.span->begin);
      where = fmt::format("{}:{}:{}", rel, at.line, at.column);
    }
    const std::string_view message =
        std::string_view(d.message).substr(0, d.message.find(" at Span {"));
    return Failure{Kind::kE0905, rel, fmt::format("{} ({} at {})", message, d.code(), where),
                   fmt::format("fix the error in `{}` first", rel)};
  }

  base::Env& env_;
  const std::string root_;
  std::optional<std::string> root_real_;  // Env::RealPath of root_, once needed
  const FrontOptions& options_;
  std::vector<std::unique_ptr<ImportedModule>> loaded_;
  std::vector<std::vector<std::size_t>> deps_;  // per loaded module: what it imports, transitively
  std::map<std::string, std::size_t> index_;    // relative path -> index into loaded_
  std::set<std::string> on_stack_;
};

Diagnostic FailureDiagnostic(const SourceBuffer& source, const ast::ImportDecl& imp,
                             const Failure& f) {
  const SourceRange at{source.id(), imp.span.start, imp.span.end};
  Diagnostic d = f.kind == Kind::kE0903 ? diag::Make(f.kind, at, f.first)
                                        : diag::Make(f.kind, at, f.first, f.second);
  if (!f.suggestion.empty()) d.suggestion = f.suggestion;
  return d;
}

// Loads the imports of `module`, parsed from `source` (§4.3), into `imports`. Returns one
// diagnostic per import that failed to load (only the first with fail_fast).
std::vector<Diagnostic> LoadImports(const SourceBuffer& source, const ast::Module& module,
                                    const FrontOptions& options,
                                    std::vector<std::unique_ptr<ImportedModule>>& imports) {
  const std::string& path = source.name();
  ImportLoader loader(*options.import_env, DirOf(path), options);
  loader.Enter(BaseOf(path));
  std::vector<Diagnostic> failures;
  for (const ast::ImportDecl& imp : module.imports) {
    std::vector<std::size_t> deps;
    if (std::optional<Failure> f = loader.Load(imp, BaseOf(path), 1, deps)) {
      failures.push_back(FailureDiagnostic(source, imp, *f));
      if (options.fail_fast) break;
    }
  }
  imports = loader.Take();
  return failures;
}

}  // namespace

std::vector<diag::FileDiagnostic> ImportedWarnings(const Compiled& c) {
  std::vector<diag::FileDiagnostic> out;
  for (const auto& imported : c.imports) {
    for (const Diagnostic& w : imported->warnings) {
      const bool seen = std::any_of(out.begin(), out.end(), [&](const diag::FileDiagnostic& o) {
        return o.path == imported->source.name() && o.diagnostic->kind == w.kind &&
               o.diagnostic->message == w.message && o.diagnostic->span == w.span;
      });
      if (!seen)
        out.push_back(diag::FileDiagnostic{&imported->source, imported->source.name(), &w});
    }
  }
  return out;
}

std::string RenderImportedWarnings(const Compiled& c) {
  std::string text;
  for (const diag::FileDiagnostic& w : ImportedWarnings(c)) {
    text += diag::RenderText(*w.source, w.path, *w.diagnostic);
  }
  return text;
}

Result<Compiled> CompileSource(std::string text, std::string name, const FrontOptions& options) {
  ASSIGN_OR_RETURN(SourceBuffer source, SourceBuffer::Create(0, std::move(name), std::move(text),
                                                             options.parse.lex.max_source_bytes));
  Compiled out{.source = std::move(source)};
  if (options.type_check) {
    sema::CheckOptions check{.fail_fast = options.fail_fast, .trust_config = options.trust_config};
    sema::SourceCheck checked;
    bool have = false;
    if (options.import_env != nullptr) {
      // Parse first, to load the imports the check needs (§4.3); a parse error is reported by
      // CheckSource below as usual.
      parse::ParseOptions fail_fast = options.parse;
      fail_fast.recover = false;
      ASSIGN_OR_RETURN(parse::ParseResult parsed, parse::ParseModule(out.source, fail_fast));
      if (parsed.ok()) {
        std::vector<Diagnostic> failures =
            LoadImports(out.source, *parsed.module, options, out.imports);
        std::vector<const ast::Module*> modules;
        for (const auto& m : out.imports) modules.push_back(&m->module);
        if (!failures.empty()) {
          // The file is not type-checked against imports that did not load: one diagnostic per
          // failed import, no E0201 for the names they would have provided.
          out.module = std::move(parsed.module);
          out.diagnostics = std::move(failures);
          out.type_checked = true;
          out.outcome = Outcome::kTypeErrors;
          return out;
        }
        check.imports = modules;
        checked = sema::CheckParsed(out.source, std::move(parsed), check, options.parse);
        have = true;
      }
    }
    if (!have) {
      ASSIGN_OR_RETURN(checked, sema::CheckSource(out.source, check, options.parse));
    }
    out.module = std::move(checked.module);
    out.diagnostics = std::move(checked.diagnostics);
    out.warnings = std::move(checked.warnings);
    if (checked.phase == sema::Phase::kParse && !out.diagnostics.empty()) {
      out.outcome = Outcome::kParseFailed;
    } else {
      out.type_checked = true;
      out.outcome = out.diagnostics.empty() ? Outcome::kOk : Outcome::kTypeErrors;
    }
    return out;
  }
  ASSIGN_OR_RETURN(parse::ParseResult parsed, parse::ParseModule(out.source, options.parse));
  for (const parse::ParseDiagnostic& d : parsed.diagnostics) {
    out.diagnostics.push_back(diag::FromParse(d));
  }
  if (parsed.ok()) {
    out.module = std::move(parsed.module);
    if (options.import_env != nullptr) {
      out.diagnostics = LoadImports(out.source, *out.module, options, out.imports);
      if (!out.diagnostics.empty()) out.outcome = Outcome::kTypeErrors;
    }
  } else {
    out.outcome = Outcome::kParseFailed;
  }
  return out;
}

}  // namespace trove::kodo::driver
