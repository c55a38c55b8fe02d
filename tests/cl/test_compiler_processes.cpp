// Compiler processes (Settings::build_processes): programs compiled in tunekit-compiler
// processes run as those built here; whatever goes wrong over there (a process that does not
// start, hangs, leaves, or answers garbage), the build goes on here, within a deadline.
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "../../src/cl/compiler_processes.hpp"
#include "../cache/test_cache_support.hpp"  // TempDir, CapturedWarnings
#include "support_cl.hpp"

namespace tunekit::test {

namespace {

using cl::detail::CompilerDeadlines;
using cl::detail::CompilerProcesses;

// Where this build put it, else beside the test program (binaries carried to another machine).
std::filesystem::path built(const std::filesystem::path& path) {
  if (std::filesystem::exists(path)) return path;
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / path.filename();
}
const std::filesystem::path real_compiler = built(COMPILER_PATH);
const std::filesystem::path fake_compiler = built(FAKE_COMPILER_PATH);

// A program cache of the shared client's device that compiles in `compilers`.
cl::ProgramCache cache_with(std::shared_ptr<CompilerProcesses> compilers) {
  auto& client = shared_client();
  return cl::ProgramCache(client.context(), client.device().device, client.device().device_name,
                          client.id().identity(), nullptr, true, std::move(compilers));
}

// Processes of the fake compiler, misbehaving as `mode` says (fake_compiler.cpp).
std::shared_ptr<CompilerProcesses> fake(const std::string& mode, CompilerDeadlines deadlines = {}) {
  return std::make_shared<CompilerProcesses>(fake_compiler, mode, 2, deadlines);
}

cl::KernelSpec numbered_add(int tag) {
  return cl::KernelSpec::from_text(
      "__kernel void add(__global float* data, float amount) {\n"
      "  data[get_global_id(0)] += amount + " +
          std::to_string(tag) + ".0f;\n}\n",
      "", "add", "numbered_add");
}

// Whether `spec`'s kernel, from `cache`, adds 2 + tag to every element.
bool adds_right(cl::ProgramCache& cache, const cl::KernelSpec& spec, int tag) {
  auto& client = shared_client();
  auto kernel = cache.kernel(spec);
  auto buffer = client.upload(std::vector<float>(64, 1.0f));
  client.launch_with(kernel, ::cl::NDRange(64), ::cl::NullRange, buffer, 2.0f);
  const auto out = client.download<float>(buffer, 64);
  return std::all_of(out.begin(), out.end(), [&](float v) { return v == 3.0f + float(tag); });
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("programs compiled in compiler processes run as those built here",
          "[opencl][compiler-processes]") {
  auto compilers =
      std::make_shared<CompilerProcesses>(real_compiler, shared_client().id().identity(), 2);
  auto cache = cache_with(compilers);
  for (int tag : {11, 12, 13}) CHECK(adds_right(cache, numbered_add(tag), tag));
  CHECK(cache.builds() == 3);
  CHECK(cache.built_elsewhere() == 3);
  CHECK(compilers->compiled() == 3);
  CHECK(compilers->started() == 1);  // one thread asked: one process served every build
  CHECK(compilers->given_up().empty());
}

TEST_CASE("a program that does not compile fails with the words of a build here",
          "[opencl][compiler-processes]") {
  const auto broken = cl::KernelSpec::from_text(
      "__kernel void add(__global float* data) { data[0] = undeclared_thing; }\n", "", "add",
      "broken_add");
  auto here = cache_with(nullptr);
  std::string expected;
  try {
    (void)here.program(broken);
  } catch (const AutotuneError& e) {
    expected = e.what();
  }
  REQUIRE(expected.find("undeclared_thing") != std::string::npos);
  auto compilers =
      std::make_shared<CompilerProcesses>(real_compiler, shared_client().id().identity(), 1);
  auto cache = cache_with(compilers);
  try {
    (void)cache.program(broken);
    FAIL("it built");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::build);
    CHECK(std::string(e.what()) == expected);
  }
  CHECK(cache.built_elsewhere() == 0);
  CHECK(compilers->given_up().empty());  // a program's failure is not the processes'
}

TEST_CASE("compiler processes of another device, or another version, are not used",
          "[opencl][compiler-processes]") {
  CapturedWarnings warnings;
  auto elsewhere = std::make_shared<CompilerProcesses>(real_compiler, "OpenCL | no such device", 1);
  auto cache = cache_with(elsewhere);
  for (int tag : {21, 22, 23}) CHECK(adds_right(cache, numbered_add(tag), tag));
  CHECK(cache.built_elsewhere() == 0);
  CHECK(elsewhere->started() == 3);
  CHECK(elsewhere->given_up().find("no device here is") != std::string::npos);
  CHECK(warnings.count("failed 3 times in a row") == 1);
  // Given up: no fourth process.
  CHECK(adds_right(cache, numbered_add(24), 24));
  CHECK(elsewhere->started() == 3);

  auto old = fake("old");
  CHECK_FALSE(old->compile("x", ""));
  CHECK_FALSE(old->compile("x", ""));
  CHECK_FALSE(old->compile("x", ""));
  CHECK(old->given_up().find("tunekit-compiler 0") != std::string::npos);
}

TEST_CASE("a compiler process that hangs is ended at its deadline and the build goes on here",
          "[opencl][compiler-processes]") {
  const CompilerDeadlines short_ones{std::chrono::milliseconds(300), std::chrono::milliseconds(300)};
  for (const std::string mode : {"hang", "hang-build"}) {
    CAPTURE(mode);
    auto compilers = fake(mode, short_ones);
    auto cache = cache_with(compilers);
    const auto start = std::chrono::steady_clock::now();
    CHECK(adds_right(cache, numbered_add(31), 31));
    CHECK(seconds_since(start) < 20);  // the deadline, a kill and a build here; not forever
    CHECK(compilers->started() == 1);
    CHECK(cache.built_elsewhere() == 0);
  }
}

TEST_CASE("a compiler process's bad answers are refused and the build goes on here",
          "[opencl][compiler-processes]") {
  CapturedWarnings warnings;
  for (const std::string mode : {"garbage", "huge", "leave", "maybe"}) {
    CAPTURE(mode);
    auto compilers = fake(mode);
    auto cache = cache_with(compilers);
    CHECK(adds_right(cache, numbered_add(41), 41));
    CHECK(cache.built_elsewhere() == 0);
  }
  // The forged binary is named; the rest failed the process, which was ended.
  CHECK(warnings.count("a compiler process's binary") == 1);
}

TEST_CASE("the compiler executable is one nobody else could have changed",
          "[opencl][compiler-processes]") {
  TempDir dir;
  const auto copy = dir / "tunekit-compiler";
  std::filesystem::copy_file(real_compiler, copy);
  const auto with = [](const std::string& value) {
    const char* old = std::getenv("TUNEKIT_COMPILER");
    const std::string saved = old ? old : "";
    ::setenv("TUNEKIT_COMPILER", value.c_str(), 1);
    auto found = cl::detail::find_compiler_executable();
    old ? ::setenv("TUNEKIT_COMPILER", saved.c_str(), 1) : ::unsetenv("TUNEKIT_COMPILER");
    return found;
  };
  ::chmod(dir.path().c_str(), 0700);
  ::chmod(copy.c_str(), 0755);
  CHECK(with(copy.string()).path == copy);
  CHECK(with("tunekit-compiler").problem.find("not an absolute path") != std::string::npos);
  ::chmod(copy.c_str(), 0775);
  CHECK(with(copy.string()).problem.find("another user could change it") != std::string::npos);
  ::chmod(copy.c_str(), 0755);
  ::chmod(dir.path().c_str(), 0777);
  CHECK(with(copy.string()).problem.find("its folder") != std::string::npos);
  ::chmod(dir.path().c_str(), 0700);
  std::filesystem::create_symlink(copy, dir / "link");
  CHECK(with((dir / "link").string()).problem.find("symbolic link") != std::string::npos);
  ::chmod(copy.c_str(), 0644);
  CHECK(with(copy.string()).problem.find("not executable") != std::string::npos);
  // Without the variable, the one this build made is found.
  const char* old = std::getenv("TUNEKIT_COMPILER");
  if (old == nullptr) CHECK(cl::detail::find_compiler_executable().problem.empty());
}

TEST_CASE("compiler frames are read within their limits and deadlines",
          "[compiler-processes]") {
  using namespace cl::detail;
  int ends[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) == 0);
  const auto soon = [] { return CompilerClock::now() + std::chrono::milliseconds(200); };
  const auto send = [&](const std::string& bytes) {
    REQUIRE(write_frame(ends[0], bytes, soon()) == Io::ok);
  };
  send(encode_frame("MADE", {"ok", "binary"}));
  auto read = read_frame(ends[1], "MADE", 2, 1024, soon());
  REQUIRE(read.status == Io::ok);
  CHECK(read.frame.fields == std::vector<std::string>{"ok", "binary"});

  send(encode_frame("MADE", {"ok", std::string(2000, 'x')}));  // past a limit of 1024
  read = read_frame(ends[1], "MADE", 2, 1024, soon());
  CHECK(read.status == Io::failed);
  CHECK(read.problem.find("past its limit") != std::string::npos);
  ::close(ends[0]);
  ::close(ends[1]);

  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) == 0);
  send(encode_frame("HERE", {"ok"}));
  read = read_frame(ends[1], "MADE", 2, 1024, soon());
  CHECK(read.status == Io::failed);
  CHECK(read.problem == "a frame of another kind");
  ::close(ends[0]);
  ::close(ends[1]);

  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) == 0);
  read = read_frame(ends[1], "MADE", 2, 1024, soon());  // nothing comes
  CHECK(read.status == Io::timed_out);
  send(encode_frame("MADE", {"ok", "binary"}).substr(0, 20));  // a frame cut short
  ::close(ends[0]);
  read = read_frame(ends[1], "MADE", 2, 1024, soon());
  CHECK(read.status == Io::failed);
  CHECK(read.problem == "the frame ended early");
  read = read_frame(ends[1], "MADE", 2, 1024, soon());
  CHECK(read.status == Io::closed);
  ::close(ends[1]);
}

TEST_CASE("build_processes reads auto, on and off", "[settings][compiler-processes]") {
  CHECK(parse_build_processes("auto") == BuildProcesses::automatic);
  CHECK(parse_build_processes("on") == BuildProcesses::on);
  CHECK(parse_build_processes("1") == BuildProcesses::on);
  CHECK(parse_build_processes("off") == BuildProcesses::off);
  CHECK(parse_build_processes("false") == BuildProcesses::off);
  CHECK_THROWS_WITH(parse_build_processes("4"),
                    Catch::Contains("TUNEKIT_BUILD_PROCESSES") && Catch::Contains("auto, on, off"));
}

}  // namespace tunekit::test
