#include "kodo/native/build.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/hash.h"
#include "kodo/native/ext_builtins.h"
#include "kodo/native/process.h"

namespace trove::kodo::native {
namespace {

namespace fs = std::filesystem;

Status WriteText(const fs::path& path, std::string_view text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return Status::Io(fmt::format("could not write `{}`", path.string()));
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) return Status::Io(fmt::format("could not write `{}`", path.string()));
  return Status::Ok();
}

// A temporary directory removed when this goes out of scope.
class TempDir {
 public:
  static Result<TempDir> Make() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string tmpl = (base / "kodoc-build-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      return Status::Io(
          fmt::format("could not create a temporary directory in `{}`", base.string()));
    }
    return TempDir(tmpl);
  }
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  explicit TempDir(fs::path p) : path_(std::move(p)) {}
  fs::path path_;
};

// The first lines of the compiler's diagnostics, for the error message.
std::string FirstLines(const std::string& text, int lines) {
  std::size_t pos = 0;
  for (int n = 0; n < lines && pos < text.size(); ++n) {
    pos = text.find('\n', pos);
    pos = pos == std::string::npos ? text.size() : pos + 1;
  }
  std::string out = text.substr(0, pos);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

Status RunCompiler(std::vector<std::string> argv, const std::string& what) {
  ASSIGN_OR_RETURN(ProcessResult r, RunProcess(argv));
  if (r.exit_code != 0) {
    return Status::Internal(fmt::format("the C compiler `{}` failed on {} (exit {}): {}", argv[0],
                                        what, r.exit_code, FirstLines(r.err + r.out, 8)));
  }
  return Status::Ok();
}

// Compiles the runtime source `name` in `dir` with `compiler`, the options' flags and `extra`;
// returns the object.
Result<fs::path> CompileRuntime(const std::string& compiler, const BuildOptions& options,
                                const fs::path& dir, const std::string& name,
                                const std::vector<std::string>& extra) {
  const fs::path tmp_object = dir / (fs::path(name).stem().string() + ".o");
  std::vector<std::string> argv = {compiler};
  for (const std::string& f : options.cflags) argv.push_back(f);
  for (const std::string& f : extra) argv.push_back(f);
  for (const char* a : {"-c", "-o"}) argv.emplace_back(a);
  argv.push_back(tmp_object.string());
  argv.push_back((dir / name).string());
  RETURN_IF_ERROR(RunCompiler(argv, "the Kōdo runtime"));
  return tmp_object;
}

// Returns the object to link for the runtime source `name` (written in `dir`, compiled by
// `compiler` with `extra` flags after the options' flags): the cached one (compiled now when
// missing). Without a cache: the source itself (compiled with the program), or the object
// compiled now when `separate` (a C++ source, which the C compiler does not take).
Result<std::string> RuntimeInput(const std::string& compiler, const BuildOptions& options,
                                 const fs::path& dir, const std::string& name,
                                 const std::string& key_text, const std::vector<std::string>& extra,
                                 bool separate) {
  const fs::path source = dir / name;
  if (options.cache_dir.empty()) {
    if (!separate) return source.string();
    ASSIGN_OR_RETURN(fs::path object, CompileRuntime(compiler, options, dir, name, extra));
    return object.string();
  }
  std::string key = key_text;
  key += compiler;
  for (const std::string& f : options.cflags) key += "\n" + f;
  for (const std::string& f : extra) key += "\n" + f;
  const std::string stem = fs::path(name).stem().string();
  const fs::path cache = options.cache_dir;
  const fs::path object = cache / fmt::format("{}-{:016x}.o", stem, base::XxHash64(key));
  std::error_code ec;
  if (fs::exists(object, ec)) return object.string();
  fs::create_directories(cache, ec);
  if (ec && !separate) return source.string();  // no usable cache: compile with the program
  ASSIGN_OR_RETURN(const fs::path tmp_object, CompileRuntime(compiler, options, dir, name, extra));
  if (ec) return tmp_object.string();
  // Copy into the cache under a unique name, then rename: concurrent builds never see a
  // partial object.
  const fs::path staged = cache / fmt::format("{}-{}.tmp", stem, ::getpid());
  fs::copy_file(tmp_object, staged, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(staged, object, ec);
  if (ec) {
    fs::remove(staged, ec);
    return tmp_object.string();
  }
  return object.string();
}

// Returns the full path of `compiler` (searched in PATH when it has no slash).
Result<std::string> ResolveCompiler(const std::string& compiler, std::string_view what) {
  if (compiler.find('/') != std::string::npos) return compiler;
  Result<std::string> found = FindInPath(compiler);
  if (!found.ok()) {
    return Status::NotFound(
        fmt::format("no {}: `{}` was not found in PATH (native builds need one; install gcc or "
                    "clang, or run the program with `kodoc run`)",
                    what, compiler));
  }
  return *found;
}

}  // namespace

std::string DefaultCacheDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    return (fs::path(x) / "trove-kodo").string();
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return (fs::path(h) / ".cache" / "trove-kodo").string();
  }
  return "";
}

Status BuildExecutable(const mir::Program& program, const std::string& out_path,
                       const BuildOptions& options) {
  ASSIGN_OR_RETURN(std::string c_source, EmitC(program, options.emit));
  ASSIGN_OR_RETURN(const std::string cc, ResolveCompiler(options.cc, "C compiler"));
  // JSON and regex need the runtime's C++ part (ext_builtins.h), compiled by the C++ compiler.
  const bool ext = UsesExtBuiltins(program);
  std::string cxx;
  if (ext) {
    ASSIGN_OR_RETURN(cxx, ResolveCompiler(options.cxx, "C++ compiler (JSON and regex need one)"));
  }
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Make());
  const fs::path program_c = dir.path() / "program.c";
  RETURN_IF_ERROR(WriteText(program_c, c_source));
  RETURN_IF_ERROR(WriteText(dir.path() / "kodo_rt.h", RuntimeHeader()));
  RETURN_IF_ERROR(WriteText(dir.path() / "kodo_rt.c", RuntimeSource()));
  ASSIGN_OR_RETURN(std::string runtime,
                   RuntimeInput(cc, options, dir.path(), "kodo_rt.c",
                                std::string(RuntimeHeader()) + std::string(RuntimeSource()), {},
                                /*separate=*/false));
  std::string runtime_ext;
  if (ext) {
    RETURN_IF_ERROR(WriteText(dir.path() / "kodo_rt_ext.h", RuntimeExtHeader()));
    RETURN_IF_ERROR(WriteText(dir.path() / "kodo_rt_ext.cc", RuntimeExtSource()));
    ASSIGN_OR_RETURN(runtime_ext,
                     RuntimeInput(cxx, options, dir.path(), "kodo_rt_ext.cc",
                                  std::string(RuntimeHeader()) + std::string(RuntimeExtHeader()) +
                                      std::string(RuntimeExtSource()),
                                  {"-std=c++17"}, /*separate=*/true));
  }

  const fs::path out = fs::absolute(out_path);
  const fs::path tmp_out =
      out.parent_path() / fmt::format(".{}.tmp-{}", out.filename().string(), ::getpid());
  std::vector<std::string> argv = {cc};
  for (const std::string& f : options.cflags) argv.push_back(f);
  argv.insert(argv.end(),
              {"-I", dir.path().string(), "-o", tmp_out.string(), program_c.string(), runtime});
  if (ext) {
    argv.push_back(runtime_ext);
    argv.push_back("-lstdc++");
  }
  argv.insert(argv.end(), {"-lm", "-lpthread"});
  if (Status s = RunCompiler(argv, "the generated C"); !s.ok()) {
    std::error_code ec;
    fs::remove(tmp_out, ec);
    return s;
  }
  std::error_code ec;
  fs::rename(tmp_out, out, ec);
  if (ec) {
    fs::remove(tmp_out, ec);
    return Status::Io(fmt::format("could not write `{}`: {}", out_path, ec.message()));
  }
  return Status::Ok();
}

}  // namespace trove::kodo::native
