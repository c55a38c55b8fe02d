// The program cache (one build per source and options, thread-safe, failures with their logs),
// embedded kernel sources and kernel fingerprints.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "../../src/cl/compiler_chatter.hpp"
#include "../../src/cl/kernel_file.hpp"
#include "support_cl.hpp"
#include "tunekit/stable_hash.hpp"

extern char** environ;

namespace tunekit::test {

namespace {
cl::ProgramCache fresh_cache() {
  auto& client = shared_client();
  return {client.context(), client.device().device, client.device().device_name};
}
}  // namespace

TEST_CASE("a program is built once per source and build options", "[opencl][program-cache]") {
  auto& client = shared_client();
  cl::ProgramCache cache(client.context(), client.device().device, client.device().device_name);
  CHECK(cache.builds() == 0);
  const auto first = cache.program(test_kernel("add"));
  CHECK(cache.builds() == 1);
  // A second spec with the same text and options (another kernel of it, even) is a hit.
  const auto again = cache.program(test_kernel("busy"));
  CHECK(cache.builds() == 1);
  CHECK(again() == first());
  (void)cache.kernel(test_kernel("add"));
  CHECK(cache.builds() == 1);
  // The same text and options as raw source: the same program, whichever overload is asked.
  CHECK(cache.program(test_kernels, "", "raw text")() == first());
  CHECK(cache.builds() == 1);
  CHECK(cache.size() == 1);
  // Other options: another program.
  (void)cache.program(test_kernel("add", "-DUNUSED=1"));
  CHECK(cache.builds() == 2);
  CHECK(cache.size() == 2);
  cache.clear();
  (void)cache.program(test_kernel("add"));
  CHECK(cache.builds() == 3);
}

TEST_CASE("threads asking for one program together share a single build",
          "[opencl][program-cache]") {
  auto& client = shared_client();
  cl::ProgramCache cache(client.context(), client.device().device, client.device().device_name);
  const auto spec = test_kernel("add", "-DTHREADED=1");
  std::vector<cl_program> got(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] { got[t] = cache.program(spec)(); });
  }
  for (auto& thread : threads) thread.join();
  CHECK(cache.builds() == 1);
  for (cl_program p : got) CHECK(p == got.front());
}

TEST_CASE("a kernel from the client's cache computes what the host computes",
          "[opencl][program-cache]") {
  auto& client = shared_client();
  auto input = ramp(256);
  auto buffer = client.upload(input);
  auto kernel = client.kernel(test_kernel("add"));
  client.launch_with(kernel, ::cl::NDRange(256), ::cl::NDRange(64), buffer, 2.5f);
  auto want = input;
  for (float& x : want) x += 2.5f;
  CHECK(max_error(client.download<float>(buffer, 256), want) < 1e-6);
}

TEST_CASE("a build failure is a build error carrying the build log, and is not rebuilt",
          "[opencl][program-cache]") {
  auto cache = fresh_cache();
  const auto broken = cl::KernelSpec::from_text(
      "__kernel void broken(__global float* x) { x[0] = undeclared_identifier_42; }", "-DX=1",
      "broken", "broken.cl");
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      (void)cache.kernel(broken);
      FAIL("expected a build error");
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::build);
      CHECK_THAT(e.message(), Catch::Contains("broken.cl") && Catch::Contains("-DX=1") &&
                                  Catch::Contains("CL_BUILD_PROGRAM_FAILURE") &&
                                  Catch::Contains("build log") &&
                                  Catch::Contains("undeclared_identifier_42"));
    }
  }
  CHECK(cache.builds() == 1);
}

TEST_CASE("asking for a kernel the program lacks is a build error naming the kernels there",
          "[opencl][program-cache]") {
  auto cache = fresh_cache();
  try {
    (void)cache.kernel(test_kernel("no_such_kernel"));
    FAIL("expected a build error");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::build);
    CHECK_THAT(e.message(), Catch::Contains("no_such_kernel") && Catch::Contains("busy"));
  }
}

TEST_CASE("a shipped kernel that includes another is compiled with it expanded, once",
          "[opencl][embedded]") {
  const std::string_view shared = cl::embedded_source("tensor_core.cl");
  for (const char* name : {"matmul_tc.cl", "matmul_wgmma.cl"}) {
    INFO(name);
    REQUIRE(cl::embedded_source(name).find("#include \"tensor_core.cl\"") !=
            std::string_view::npos);
    for (const auto& spec :
         {cl::KernelSpec(name, "", "any"), cl::KernelSpec::embedded(name, "", "any")}) {
      const std::string_view source = spec.source();
      CHECK_FALSE(cl::detail::has_include_directive(source));
      CHECK(source.find(shared.substr(shared.find("inline uint pack2"))) != std::string_view::npos);
      CHECK(source.find("#line 1 \"tensor_core.cl\"") != std::string_view::npos);
      // The expanded text's hash goes into the fingerprint: editing the shared file re-tunes.
      CHECK(spec.source_hash() == stable_hash(source));
      CHECK(spec.fingerprint().find(std::to_string(stable_hash(source))) != std::string::npos);
    }
  }
  // Expanded once per process: every spec of a file shares one text; a file that includes
  // nothing is compiled from its embedded text itself (specs are made for every candidate).
  CHECK(cl::KernelSpec("matmul_tc.cl", "-DBM=64", "a").source().data() ==
        cl::KernelSpec::embedded("matmul_tc.cl", "-DBM=128", "b").source().data());
  CHECK(cl::KernelSpec::embedded("reduce.cl", "", "any").source().data() ==
        cl::embedded_source("reduce.cl").data());
  // A build log's line in the included text is named as tensor_core.cl's line.
  {
    const std::string_view source = cl::KernelSpec::embedded("matmul_wgmma.cl", "", "any").source();
    const auto line_of = [](std::string_view text, std::string_view what) {
      return 1 + std::count(text.begin(), text.begin() + text.find(what), '\n');
    };
    const auto physical = line_of(source, "inline uint pack2");
    const auto logical = line_of(shared, "inline uint pack2");
    const std::string log = "<kernel>:" + std::to_string(physical) + ":1: error: x";
    CHECK_THAT(cl::detail::with_source_lines(source, log),
               Catch::Contains("tensor_core.cl:" + std::to_string(logical) + ":1: error"));
  }
  // Only directives count: a comment that mentions #include (tensor_core.cl's) is no include,
  // nor is one after a comment on its line (the expansion would leave it to the driver).
  CHECK_FALSE(cl::detail::has_include_directive("// #include \"x.cl\"\n/*\n#include \"y.cl\"\n*/"));
  CHECK(cl::detail::has_include_directive("int a;\n  #  include \"x.cl\"\n"));
  CHECK_FALSE(cl::detail::has_include_directive("/* x */ #include \"x.cl\"\n"));
  // An include of kernels/ that is not there names the file, like any other build error.
  try {
    (void)cl::detail::read_library_kernel("no_such_file.cl");
    FAIL("expected an error");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::build);
    CHECK_THAT(e.message(), Catch::Contains("no_such_file.cl"));
  }
}

TEST_CASE("every kernels/*.cl is embedded with its exact text and found by file name",
          "[opencl][embedded]") {
  namespace fs = std::filesystem;
  // TUNEKIT_TEST_SOURCE_DIR: where the sources are when the binary runs elsewhere (a GPU machine).
  const char* moved = std::getenv("TUNEKIT_TEST_SOURCE_DIR");
  const fs::path dir = fs::path(moved != nullptr ? moved : TUNEKIT_SOURCE_DIR) / "kernels";
  const auto names = cl::embedded_sources();
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (std::string_view name : names) {
    INFO(name);
    CHECK(cl::has_embedded_source(name));
    std::ifstream file(dir / std::string(name), std::ios::binary);
    REQUIRE(file);
    std::ostringstream text;
    text << file.rdbuf();
    CHECK(cl::embedded_source(name) == text.str());
    const cl::KernelSpec spec(name, "", "any");
    CHECK(spec.origin() == name);
    // A kernel that includes another of kernels/ is compiled with it expanded.
    if (!cl::detail::has_include_directive(text.str())) {
      CHECK(spec.source() == text.str());
    } else {
      // Its own text follows the included ones, from the line after its last #include.
      const std::string own = text.str();
      const auto tail = own.substr(own.find('\n', own.rfind("#include \"")) + 1);
      CHECK(spec.source().ends_with(tail));
      CHECK_FALSE(cl::detail::has_include_directive(spec.source()));
    }
  }
  if (fs::is_directory(dir)) {
    std::size_t on_disk = 0;
    for (const auto& entry : fs::directory_iterator(dir))
      on_disk += entry.path().extension() == ".cl";
    CHECK(on_disk == names.size());
  }
  try {
    (void)cl::embedded_source("no_such_file.cl");
    FAIL("expected an error");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::build);
    CHECK_THAT(e.message(), Catch::Contains("no_such_file.cl"));
  }
  CHECK_FALSE(cl::has_embedded_source("no_such_file.cl"));
}

// OpenCL C's plain `inline` has C99's meaning: a definition that a compiler may decline to use,
// leaving a call to a function defined nowhere. clang does that at -O0 (-cl-opt-disable) or for a
// function too large to inline; `static inline` always has a definition in the program.
TEST_CASE("every helper function of a shipped kernel is static inline, never plain inline",
          "[opencl][embedded]") {
  for (std::string_view name : cl::embedded_sources()) {
    std::istringstream text{std::string(cl::embedded_source(name))};
    std::string line;
    for (int number = 1; std::getline(text, line); ++number) {
      INFO(name << ":" << number << ": " << line);
      CHECK_FALSE(line.starts_with("inline "));
    }
  }
}

TEST_CASE("a kernel's fingerprint covers its source, options and name, and enters the set checksum",
          "[opencl][fingerprint]") {
  const auto a = test_kernel("add", "-DTILE=16");
  // The source by its size and stable hash (not its text: a set of thousands of candidates
  // would copy it into the checksum once per candidate).
  CHECK_THAT(a.fingerprint(), Catch::Contains("-DTILE=16") && Catch::Contains("add") &&
                                  Catch::Contains(std::to_string(a.source().size()) + " " +
                                                  std::to_string(stable_hash(a.source()))));
  CHECK(a.fingerprint().find("__kernel") == std::string::npos);
  CHECK(a.fingerprint() != test_kernel("add", "-DTILE=32").fingerprint());
  CHECK(a.fingerprint() != test_kernel("busy", "-DTILE=16").fingerprint());
  CHECK(a.fingerprint() != cl::KernelSpec(test_kernels + " ", "-DTILE=16", "add").fingerprint());
  CHECK(a.fingerprint() == test_kernel("add", "-DTILE=16").fingerprint());

  auto run = [](cl::Client&, ::cl::Kernel&, int&) { return 0; };
  auto key = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
  auto inputs = [](const SizeKey&, const int& n) { return std::tuple<int>(n); };
  auto set_with = [&](const std::string& options) {
    return TunableSet{key, inputs}.with(
        Tunable{"k", cl::with_kernels(run, test_kernel("add", options))});
  };
  CHECK(set_with("-DTILE=16").checksum_text() == set_with("-DTILE=16").checksum_text());
  CHECK(set_with("-DTILE=16").checksum_text() != set_with("-DTILE=32").checksum_text());
}

}  // namespace tunekit::test

namespace tunekit::test {

TEST_CASE("the compiler's summary lines are taken out of what the process writes, nothing else",
          "[opencl][program-cache][chatter]") {
  CHECK(cl::detail::without_compiler_summaries(
            "before\n1 warning generated.\n2 warnings generated.\n3 warnings and 1 error "
            "generated.\nwarnings generated.\nmine: 2 warnings generated. (quoted)\nafter") ==
        "before\nwarnings generated.\nmine: 2 warnings generated. (quoted)\nafter");
  CHECK(cl::detail::without_compiler_summaries("") == "");
  CHECK(cl::detail::without_compiler_summaries("12 warnings generated.\n") == "");
}

TEST_CASE(
    "a kernel with warnings builds without PoCL's summary reaching stderr, its warnings "
    "stay in the build log",
    "[opencl][program-cache][chatter]") {
  auto& client = shared_client();
  // A loop the compiler cannot unroll as asked: clang warns (PoCL then prints "1 warning
  // generated."). Unique text, so that PoCL's own kernel cache cannot skip the compiler.
  const std::string source =
      "// " + std::to_string(std::random_device{}()) +
      "\n__kernel void chatty(__global float* x, const int n) {\n#pragma unroll\n"
      "  for (int i = get_global_id(0); i < n; i += 3) x[i] = 1.0f;\n}\n";
  char path[] = "/tmp/tunekit-stderr-XXXXXX";
  const int file = ::mkstemp(path);
  REQUIRE(file >= 0);
  ::unlink(path);
  std::fflush(stderr);
  const int real = ::dup(2);
  REQUIRE(real >= 0);
  ::dup2(file, 2);
  std::fputs("before the build\n", stderr);
  bool built = false;
  {
    cl::ProgramCache cache(client.context(), client.device().device, client.device().device_name);
    built = cache.program(source, "", "chatty.cl")() != nullptr;
  }
  std::fputs("after the build\n", stderr);
  std::fflush(stderr);
  ::dup2(real, 2);
  ::close(real);
  std::string written(4096, '\0');
  ::lseek(file, 0, SEEK_SET);
  const auto n = ::read(file, written.data(), written.size());
  ::close(file);
  written.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  INFO("stderr during the build: " << written);
  CHECK(built);
  CHECK_THAT(written,
             Catch::Contains("before the build\n") && Catch::Contains("after the build\n"));
  CHECK_THAT(written, !Catch::Contains("generated."));
}

TEST_CASE("a compiler's abort while stderr is held (run by the test below, in its own process)",
          "[.][chatter-abort]") {
  // The action the guard's handler hands the signal on to: the default (Catch's own handler, which
  // allocates in the signal, is not what is tested, and a sanitizer would halt on it).
  std::signal(SIGABRT, SIG_DFL);
  const cl::detail::CompilerChatterGuard guard(true);
  std::fputs("the compiler's last words\n", stderr);
  std::fflush(stderr);
  std::abort();
}

TEST_CASE("an exit while stderr is filtered (run by a test below, in its own process)",
          "[.][chatter-exit]") {
  const cl::detail::CompilerChatterGuard guard(true);
  std::fputs("2 warnings generated.\nwritten before the exit, its line not ended", stderr);
  std::fflush(stderr);
  std::exit(3);
}

TEST_CASE("a process started while stderr is filtered (run by a test below, in its own process)",
          "[.][chatter-child]") {
  pid_t child = -1;
  {
    const cl::detail::CompilerChatterGuard guard(true);
    std::string shell = "/bin/sh", flag = "-c",
                script = "sleep 0.3; echo 'the started process, after the build' >&2";
    char* argv[] = {shell.data(), flag.data(), script.data(), nullptr};
    REQUIRE(::posix_spawn(&child, shell.c_str(), nullptr, nullptr, argv, environ) == 0);
  }  // the build ends before the started process writes
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  // Its line reaches this process's stderr (a file) through the forwarder, which ends once the
  // started process has: waited for by the file's size.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  struct stat file {};
  while (::fstat(2, &file) == 0 && file.st_size == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

TEST_CASE("an abort while fd 2 is closed (run by a test below, in its own process)",
          "[.][chatter-closed]") {
  std::signal(SIGABRT, SIG_DFL);
  // A file that grows without end (what a regression did) ends the process by SIGXFSZ instead.
  const rlimit file_size{64 << 20, 64 << 20};
  ::setrlimit(RLIMIT_FSIZE, &file_size);
  ::close(2);
  const cl::detail::CompilerChatterGuard guard(true);
  (void)!::write(2, "nowhere\n", 8);
  std::abort();
}

namespace {

struct ChildRun {
  int status = 0;
  bool ended = false;  // within the deadline (else killed)
  std::string stderr_text;
};

// This test program run on the hidden case `tag`, its stderr a file, its stdout /dev/null: how it
// ended and what it wrote on stderr. Killed after 60 s.
ChildRun run_hidden_case(const std::string& tag) {
  char path[] = "/tmp/tunekit-stderr-XXXXXX";
  const int file = ::mkstemp(path);
  REQUIRE(file >= 0);
  ::unlink(path);
  const int quiet = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  REQUIRE(quiet >= 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, file, 2);
  posix_spawn_file_actions_adddup2(&actions, quiet, 1);
  std::string self = "/proc/self/exe", case_tag = tag;
  char* argv[] = {self.data(), case_tag.data(), nullptr};
  pid_t child = -1;
  const int spawned = ::posix_spawn(&child, self.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(quiet);
  REQUIRE(spawned == 0);
  ChildRun run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const pid_t done = ::waitpid(child, &run.status, WNOHANG);
    if (done == child) {
      run.ended = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &run.status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string written(1 << 16, '\0');
  const auto n = ::pread(file, written.data(), written.size(), 0);
  ::close(file);
  written.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  run.stderr_text = written;
  return run;
}

}  // namespace

TEST_CASE("what the process wrote while stderr was held reaches stderr when the compiler aborts",
          "[opencl][program-cache][chatter]") {
  // A compiler that fails an assertion inside a PoCL build ends the process while fd 2 is the
  // pipe: what it wrote there was lost with it. This test runs the hidden case above in a child
  // whose stderr is a file.
  const ChildRun run = run_hidden_case("[chatter-abort]");
  INFO("the child's stderr: " << run.stderr_text);
  CHECK(run.ended);
  CHECK((WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGABRT));
  CHECK_THAT(run.stderr_text, Catch::Contains("the compiler's last words"));
}

TEST_CASE(
    "what the process wrote while stderr was filtered reaches stderr at exit, and a process "
    "started meanwhile keeps its stderr",
    "[opencl][program-cache][chatter]") {
  SECTION("an exit during a build") {
    // Before, held in a memory file that only the build's end or a fatal signal wrote out.
    const ChildRun run = run_hidden_case("[chatter-exit]");
    INFO("the child's stderr: " << run.stderr_text);
    CHECK((run.ended && WIFEXITED(run.status) && WEXITSTATUS(run.status) == 3));
    CHECK(run.stderr_text == "written before the exit, its line not ended");
  }
  SECTION("a process started during a build, which writes after it") {
    // Before, its stderr was the memory file for its whole life, and nothing read it.
    const ChildRun run = run_hidden_case("[chatter-child]");
    INFO("the child's stderr: " << run.stderr_text);
    CHECK((run.ended && WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0));
    CHECK_THAT(run.stderr_text, Catch::Contains("the started process, after the build\n"));
  }
  SECTION("fd 2 closed: nothing is filtered, and an abort ends the process") {
    // Before, the memory file took fd 2's place, and the abort's handler copied it into itself
    // without end.
    const ChildRun run = run_hidden_case("[chatter-closed]");
    CHECK(run.ended);
    CHECK((WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGABRT));
  }
}

namespace {
void survive_fpe(int) {}
std::size_t open_descriptors() {
  return static_cast<std::size_t>(std::distance(
      std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{}));
}
}  // namespace

TEST_CASE(
    "the fatal-signal handler runs on a program's alternate stack, and a signal the program "
    "survives leaves no descriptor open",
    "[opencl][program-cache][chatter]") {
  struct sigaction before_test {};
  ::sigaction(SIGFPE, nullptr, &before_test);
  struct sigaction survive {};
  survive.sa_handler = survive_fpe;
  sigemptyset(&survive.sa_mask);
  ::sigaction(SIGFPE, &survive, nullptr);
  const std::size_t before = open_descriptors();
  for (int build = 0; build < 3; ++build) {
    const cl::detail::CompilerChatterGuard guard(true);
    struct sigaction now {};
    ::sigaction(SIGSEGV, nullptr, &now);
    CHECK((now.sa_flags & SA_ONSTACK) != 0);  // a stack overflow's handler needs that stack
    ::raise(SIGFPE);                          // handed on to survive_fpe, which returns
  }
  CHECK(open_descriptors() == before);
  ::sigaction(SIGFPE, &before_test, nullptr);
}

// Run with failing_build_shim preloaded (its own CTest entry): clBuildProgram fails with
// CL_OUT_OF_HOST_MEMORY while the file TUNEKIT_TEST_FAILING_BUILDS names exists.
TEST_CASE("a build that failed for the moment is built again by the next request",
          "[.][failing-builds]") {
  const char* flag = std::getenv("TUNEKIT_TEST_FAILING_BUILDS");
  REQUIRE(flag != nullptr);
  auto& client = shared_client();
  cl::ProgramCache cache(client.context(), client.device().device, client.device().device_name);
  const std::string source = "__kernel void moment(__global float* d) { d[0] = 1.0f; }\n";
  std::ofstream(flag) << "failing\n";
  try {
    (void)cache.program(source, "", "moment");
    FAIL("expected the build to fail");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::allocation);
  }
  std::filesystem::remove(flag);  // the driver has memory again
  CHECK_NOTHROW(cache.program(source, "", "moment"));
  CHECK(cache.builds() == 2);
}

}  // namespace tunekit::test
