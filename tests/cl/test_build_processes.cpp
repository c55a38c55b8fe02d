// Build helper processes (BuildProcesses, tools/build_helper): a program compiled in a helper is
// made here from its binary and runs as one compiled here; its build error reads the same; a
// helper that fails, lies or stays silent leaves the builds to this process; only an executable
// no one else could have planted is run; the messages' reader refuses what they cannot be.
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <optional>
#include <thread>

#include "../../src/cl/build_processes.hpp"
#include "../cache/test_cache_support.hpp"  // TempDir
#include "../support.hpp"                   // CapturedWarnings
#include "../unprivileged.hpp"
#include "support_cl.hpp"

extern char** environ;

namespace tunekit::test {

namespace {

using namespace std::chrono_literals;

// The helper the build made; where the tests run away from the build tree (the GPU machine's
// carried binaries), the one beside this test.
fs::path built_helper() {
  const fs::path built = TUNEKIT_TEST_BUILD_HELPER;
  if (fs::exists(built)) return built;
  return fs::read_symlink("/proc/self/exe").parent_path() / built.filename();
}

cl::BuildProcessOptions helper_options(std::size_t processes = 1,
                                       fs::path helper = built_helper()) {
  auto& client = shared_client();
  cl::BuildProcessOptions options;
  options.helper = std::move(helper);
  options.processes = processes;
  options.device_identity = client.device().identity();
  options.device_index = client.device().index;
  options.device_name = client.device().device_name;
  return options;
}

// PoCL with its kernel cache off shares a program's files between a helper and this process,
// and the helper's release deletes them (docs/opencl.md, "Building in helper processes"): the
// cases that build through a real helper then do not run (ctest leaves the cache on).
bool helpers_unsafe_here() {
  const char* cache = std::getenv("POCL_KERNEL_CACHE");
  if (shared_client().device().is_cpu() && cache != nullptr && std::string(cache) == "0") {
    WARN("not run: POCL_KERNEL_CACHE=0 on a CPU device");
    return true;
  }
  return false;
}

// A program cache of the shared client's device with `helpers` and no binaries on disk.
std::unique_ptr<cl::ProgramCache> cache_with(std::shared_ptr<cl::BuildProcesses> helpers) {
  auto& client = shared_client();
  return std::make_unique<cl::ProgramCache>(client.context(), client.device().device,
                                            client.device().device_name, client.device().identity(),
                                            nullptr, false, std::move(helpers));
}

// An add kernel whose result names its source (a binary of another source computes another).
cl::KernelSpec tagged_add(int tag) {
  return cl::KernelSpec::from_text(
      "__kernel void add(__global float* data, float amount) {\n"
      "  data[get_global_id(0)] += amount + " +
          std::to_string(tag) + ".0f;\n}\n",
      "", "add", "tagged_add_" + std::to_string(tag));
}
bool tagged_add_works(cl::ProgramCache& cache, int tag) {
  auto& client = shared_client();
  auto kernel = cache.kernel(tagged_add(tag));
  auto buffer = client.upload(std::vector<float>(64, 1.0f));
  client.launch_with(kernel, ::cl::NDRange(64), ::cl::NullRange, buffer, 2.0f);
  const auto out = client.download<float>(buffer, 64);
  return std::all_of(out.begin(), out.end(), [&](float v) { return v == 3.0f + float(tag); });
}

// An executable shell script at `path` (mode 0700) running `body`.
fs::path script(const fs::path& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace);
  return path;
}

std::string message_of(const std::function<void()>& build) {
  try {
    build();
  } catch (const AutotuneError& error) {
    return std::string(to_string(error.kind())) + ": " + error.message();
  }
  return "no error";
}

// A ByteSource over `bytes`, as a socket that then closes.
cl::detail::ByteSource bytes_source(std::string bytes) {
  auto left = std::make_shared<std::string>(std::move(bytes));
  return [left](char* into, std::size_t size, std::string& problem) {
    if (left->size() < size) {
      problem = "the other side closed";
      return false;
    }
    std::copy_n(left->data(), size, into);
    left->erase(0, size);
    return true;
  };
}

// A shell command that sends the message of `fields` on the helper's socket (descriptor 3),
// `times` times in one write.
std::string send_command(const std::vector<std::string_view>& fields, int times = 1) {
  std::string format, message;
  for (int i = 0; i < times; ++i) message += cl::detail::encode_message(fields);
  for (unsigned char byte : message) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "\\%03o", byte);
    format += octal;
  }
  return "printf '" + format + "' >&3";
}
// A shell command that answers builds 1 to `count` of one helper in turn, one a second: the
// message `name ID rest...` for each build's ID (a helper that takes a second per build).
std::string answers_each_second(std::string_view name, const std::vector<std::string_view>& rest,
                                int count) {
  std::string command;
  for (int build = 1; build <= count; ++build) {
    const std::string id = cl::detail::build_request_id(static_cast<std::uint64_t>(build));
    std::vector<std::string_view> fields{name, id};
    fields.insert(fields.end(), rest.begin(), rest.end());
    command += "sleep 1; " + send_command(fields) + "; ";
  }
  return command;
}
// What a helper's shell script sends to start well.
const std::string ready_reply =
    send_command({"ready", std::to_string(cl::detail::build_protocol_version)});

std::string u32(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string u64(std::uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

TEST_CASE(
    "unset, the build processes are the build threads on an NVIDIA GPU whose compile cache is "
    "on, and none elsewhere",
    "[build-processes]") {
  using cl::detail::automatic_build_processes;
  CHECK(automatic_build_processes(true, "", 4) == 4);
  CHECK(automatic_build_processes(true, "0", 3) == 3);
  CHECK(automatic_build_processes(true, "1", 4) == 0);  // CUDA_CACHE_DISABLE=1: helpers lose
  CHECK(automatic_build_processes(false, "", 4) == 0);  // not measured elsewhere
  CHECK(automatic_build_processes(true, "", 0) == 0);   // no build threads: nothing in parallel
  // Never past what TUNEKIT_BUILD_PROCESSES may ask for (each helper a context on the GPU).
  CHECK(automatic_build_processes(true, "", max_build_threads) == max_build_processes);
}

TEST_CASE("a program compiled in a helper process runs as one compiled here",
          "[opencl][build-processes]") {
  if (helpers_unsafe_here()) return;
  auto helpers = std::make_shared<cl::BuildProcesses>(helper_options());
  auto cache = cache_with(helpers);
  CHECK(tagged_add_works(*cache, 11));
  CHECK(cache->builds() == 1);
  CHECK(cache->helper_builds() == 1);
  CHECK(helpers->started() == 1);
  CHECK(helpers->unavailable().empty());
}

TEST_CASE("a build error from a helper is the error a build here throws",
          "[opencl][build-processes]") {
  if (helpers_unsafe_here()) return;
  const auto broken = cl::KernelSpec::from_text(
      "__kernel void add(__global float* data) {\n  data[0] = undeclared_name;\n}\n", "-DX=1",
      "add", "broken_add");
  const std::string here = message_of([&] { (void)cache_with(nullptr)->program(broken); });
  auto helpers = std::make_shared<cl::BuildProcesses>(helper_options());
  auto cache = cache_with(helpers);
  const std::string there = message_of([&] { (void)cache->program(broken); });
  CHECK_THAT(here, Catch::Contains("build failed: ") && Catch::Contains("broken_add"));
  CHECK(there == here);
  CHECK(helpers->answered() == 1);        // the helper's answer, not a build here
  CHECK(cache->helper_builds() == 0);     // no binary
  CHECK(helpers->unavailable().empty());  // an error of the source is no failure of the helper
}

TEST_CASE("threads building at once share at most the helpers asked for",
          "[opencl][build-processes]") {
  if (helpers_unsafe_here()) return;
  auto helpers = std::make_shared<cl::BuildProcesses>(helper_options(2));
  auto cache = cache_with(helpers);
  std::vector<std::thread> threads;
  std::atomic<int> working{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2; ++i) working += tagged_add_works(*cache, 20 + 2 * t + i) ? 1 : 0;
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(working == 8);
  CHECK(cache->helper_builds() == 8);
  CHECK(helpers->started() >= 1);
  CHECK(helpers->started() <= 2);
}

TEST_CASE("while every helper builds, a caller starts another, up to the number asked for",
          "[opencl][build-processes]") {
  TempDir dir;
  auto options = helper_options(2);
  // Each answer takes a second (a build error, whatever was asked): the first caller's helper is
  // busy while the others ask.
  options.helper = script(
      dir / "slow",
      ready_reply + "; " + answers_each_second("failed", {"build failed", "slow"}, 8) + "sleep 30");
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2; ++i) {
        if (message_of([&] { (void)cache->program(tagged_add(80 + 2 * t + i)); }) ==
            "build failed: slow") {
          ++failed;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failed == 8);
  CHECK(helpers->answered() == 8);
  CHECK(helpers->started() == 2);
}

TEST_CASE("a helper idle past its retirement is replaced by a new one",
          "[opencl][build-processes]") {
  if (helpers_unsafe_here()) return;
  auto options = helper_options();
  options.idle_retire = 2s;
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  (void)cache->program(tagged_add(31));
  (void)cache->program(tagged_add(32));  // within the retirement: the same helper
  CHECK(helpers->started() == 1);
  std::this_thread::sleep_for(2500ms);
  CHECK(tagged_add_works(*cache, 33));
  CHECK(helpers->started() == 2);
  CHECK(cache->helper_builds() == 3);
}

TEST_CASE("a helper idle past its retirement is ended and reaped, though no build comes",
          "[opencl][build-processes]") {
  TempDir dir;
  auto options = helper_options();
  options.idle_retire = 300ms;
  const fs::path pid_file = dir / "pid";
  const std::string answer = send_command({"failed", "1", "build failed", "once"});
  SECTION("it leaves by itself after its answer") {
    options.helper =
        script(dir / "leaves", "echo $$ > '" + pid_file.string() + "'; " + ready_reply +
                                   "; sleep 0.3; " + answer + "; exit 0");
  }
  SECTION("it stays") {
    options.helper = script(dir / "stays", "echo $$ > '" + pid_file.string() + "'; " + ready_reply +
                                               "; sleep 0.3; " + answer + "; sleep 30");
  }
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  CHECK(message_of([&] { (void)cache->program(tagged_add(111)); }) == "build failed: once");
  const pid_t pid = static_cast<pid_t>(std::stol(read_text(pid_file)));
  // Retired at 300 ms, its exit waited for (a stayer is killed after half a second): gone, and
  // no zombie of it left for the program's life.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  siginfo_t info{};
  bool reaped = false;
  while (!reaped && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    info = {};
    reaped = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 &&
             errno == ECHILD;
  }
  CHECK(reaped);
  CHECK(helpers->started() == 1);
}

namespace {
void ignore_signal(int) {}
}  // namespace

TEST_CASE("a helper leaving well is waited for through the program's signals, not killed",
          "[opencl][build-processes]") {
  TempDir dir;
  auto options = helper_options();
  const fs::path mark = dir / "left well";
  // After its answer it reads until its socket closes, then takes 50 ms to leave: well within the
  // half second a leaving helper is given.
  options.helper = script(dir / "slow exit",
                          ready_reply + "; sleep 0.3; " +
                              send_command({"failed", "1", "build failed", "slow exit"}) +
                              "; cat <&3 >/dev/null; sleep 0.05; touch '" + mark.string() + "'");
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  CHECK(message_of([&] { (void)cache->program(tagged_add(121)); }) == "build failed: slow exit");
  // A signal every millisecond at this thread, whose handler (no SA_RESTART) interrupts each
  // wait, while the helpers are ended.
  struct sigaction quiet {};
  struct sigaction old {};
  quiet.sa_handler = ignore_signal;
  sigemptyset(&quiet.sa_mask);
  ::sigaction(SIGUSR2, &quiet, &old);
  const pthread_t self = ::pthread_self();
  std::atomic<bool> done{false};
  std::thread poker([&] {
    while (!done) {
      ::pthread_kill(self, SIGUSR2);
      std::this_thread::sleep_for(1ms);
    }
  });
  cache.reset();
  helpers.reset();  // ends the helper, and waits for it
  done = true;
  poker.join();
  ::sigaction(SIGUSR2, &old, nullptr);
  CHECK(fs::exists(mark));
}

TEST_CASE("a helper's second answer to one build is not taken for the next build's answer",
          "[opencl][build-processes]") {
  // A helper that answers one build twice had its second answer (an error of tagged_add_1) read
  // as the answer to tagged_add_2's request. Both cases: the second answer waits before the next
  // request is sent (one write), or comes after it went out (a second later), when only its
  // request's ID tells it from the answer to tagged_add_2.
  TempDir dir;
  auto options = helper_options();
  const std::string failure = send_command(
      {"failed", "1", "build failed", "error: tagged_add_1:2:3: an error of tagged_add_1 only"});
  std::string answers;
  SECTION("in one write") { answers = failure + "; " + failure; }
  SECTION("the second after the next request") { answers = failure + "; sleep 1.5; " + failure; }
  // The first helper answers twice; any later one leaves at once (this process then builds).
  const std::string once = (dir / "started").string();
  options.helper =
      script(dir / "answers twice", "[ -e '" + once + "' ] && exit 0; touch '" + once + "'; " +
                                        ready_reply + "; sleep 0.5; " + answers + "; sleep 30");
  options.processes = 1;
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  CHECK_THAT(message_of([&] { (void)cache->program(tagged_add(1)); }),
             Catch::Contains("an error of tagged_add_1 only"));
  CHECK(tagged_add_works(*cache, 2));  // built here, not failed with the stale answer
}

TEST_CASE("a helper that fails, lies or stays silent leaves the builds to this process",
          "[opencl][build-processes]") {
  TempDir dir;
  auto options = helper_options();
  std::string expected;
  SECTION("it exits at once") {
    options.helper = script(dir / "exits", "exit 0");
    expected = "gave no answer to its start (the other side closed)";
  }
  SECTION("it sends bytes that are no message") {
    options.helper = script(dir / "garbage", "printf 'garbage!' >&3; sleep 5");
    expected = "a message of 1651663207 fields (1 to 5 expected)";
  }
  SECTION("it says a field longer than a message may be") {
    options.helper = script(dir / "huge",
                            "printf '\\001\\000\\000\\000\\377\\377\\377\\377\\377\\377\\377\\377' "
                            ">&3; sleep 5");
    expected = "a field of 18446744073709551615 bytes";
  }
  SECTION("it refuses") {
    options.helper = script(dir / "refuses", send_command({"refused", "nope"}) + "; sleep 5");
    expected = "refused: nope";
  }
  SECTION("it stays silent") {
    options.helper = script(dir / "silent", "sleep 5");
    options.start_patience = 300ms;
    expected = "gave no answer to its start (no answer in time)";
  }
  CapturedWarnings warnings;
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  CHECK(tagged_add_works(*cache, 41));
  CHECK(tagged_add_works(*cache, 42));
  CHECK(cache->builds() == 2);
  CHECK(cache->helper_builds() == 0);
  CHECK(helpers->started() == 0);  // not asked again after the first could not start
  CHECK_THAT(helpers->unavailable(), Catch::Contains(expected));
  CHECK(warnings.count("tunekit: build helpers: a helper could not start") == 1);
}

TEST_CASE("a helper that starts well and then fails its builds is left after three",
          "[opencl][build-processes]") {
  TempDir dir;
  auto options = helper_options();
  std::string expected, or_else = "(no second reason)";
  SECTION("it answers with bytes that are no program") {
    options.helper =
        script(dir / "junk", ready_reply + "; for i in 1 2 3; do " +
                                 send_command({"binary", "1", "junk"}) + "; done; sleep 30");
    expected = "the driver rejected it";
    or_else = "an answer to no request";  // its second and third junk, unasked for
  }
  SECTION("it exits in the middle of each build") {
    options.helper = script(dir / "exits", ready_reply + "; sleep 1; exit 0");
    expected = "gave no answer to a build of tagged_add_6";
  }
  SECTION("it is silent past the build's patience") {
    options.helper = script(dir / "silent", ready_reply + "; sleep 30");
    options.build_patience = 500ms;
    expected = "(no answer in time, ended by signal 9)";  // killed: it never exits by itself
  }
  CapturedWarnings warnings;
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  for (int tag = 61; tag <= 64; ++tag) CHECK(tagged_add_works(*cache, tag));
  CHECK(cache->builds() == 4);
  CHECK(cache->helper_builds() == 0);
  CHECK_THAT(helpers->unavailable(), Catch::StartsWith("3 builds in a row failed in them") &&
                                         (Catch::Contains(expected) || Catch::Contains(or_else)));
  CHECK(warnings.count("tunekit: build helpers: 3 builds in a row failed") == 1);
}

TEST_CASE("a compiler that crashes twice in helpers fails that program, and nothing else",
          "[opencl][build-processes]") {
  TempDir dir;
  auto options = helper_options();
  // Ready, then killed by SIGSEGV once the build request has come: as a compiler that crashes.
  options.helper = script(dir / "crashes", ready_reply + "; sleep 2; kill -SEGV $$");
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  const std::string error = message_of([&] { (void)cache->program(tagged_add(71)); });
  CHECK_THAT(error, Catch::StartsWith("build failed: the compiler crashed compiling "
                                      "tagged_add_71") &&
                        Catch::Contains("in a build helper process (signal 11 (SIGSEGV), then "
                                        "signal 11 (SIGSEGV)); not compiled in this process"));
  CHECK(helpers->started() == 2);
  CHECK(helpers->unavailable().empty());
}

TEST_CASE(
    "helpers that crash on every program are given up after three, and the rest is built here",
    "[opencl][build-processes]") {
  // A helper whose environment is broken (its libraries, its executable) crashes whatever it
  // compiles: before, every program failed as "the compiler crashed", and the tuning with it.
  TempDir dir;
  auto options = helper_options();
  options.helper = script(dir / "crashes", ready_reply + "; sleep 1; kill -SEGV $$");
  CapturedWarnings warnings;
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  for (int tag = 81; tag <= 82; ++tag) {
    CHECK_THAT(message_of([&] { (void)cache->program(tagged_add(tag)); }),
               Catch::StartsWith("build failed: the compiler crashed compiling tagged_add_" +
                                 std::to_string(tag)));
  }
  CHECK(helpers->unavailable().empty());
  // The third crash gives the helpers up: that program and the next are built here.
  for (int tag = 83; tag <= 84; ++tag) CHECK(tagged_add_works(*cache, tag));
  CHECK(cache->helper_builds() == 0);
  CHECK_THAT(helpers->unavailable(),
             Catch::StartsWith("the helpers crashed on 3 builds in a row (the last: ") &&
                 Catch::Contains("tagged_add_83"));
  CHECK(warnings.count("tunekit: build helpers: the helpers crashed on 3 builds in a row") == 1);
  CHECK(helpers->started() == 6);  // two per crashed program, none after
}

TEST_CASE("a helper that takes no more bytes holds a build no longer than its patience",
          "[opencl][build-processes]") {
  TempDir dir;
  auto options = helper_options();
  options.helper = script(dir / "deaf", ready_reply + "; sleep 60");  // never reads
  options.build_patience = 300ms;
  CapturedWarnings warnings;
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  // Sources of 8 MiB (a comment, then the kernel): far past what a socket buffers.
  for (int tag = 91; tag <= 93; ++tag) {
    const auto spec = cl::KernelSpec::from_text(
        "/*" + std::string(8 << 20, 'x') + "*/\n" + std::string(tagged_add(tag).source()), "",
        "add", "big_add_" + std::to_string(tag));
    CHECK_NOTHROW(cache->program(spec));  // built here
  }
  CHECK(cache->helper_builds() == 0);
  CHECK_THAT(helpers->unavailable(), Catch::Contains("(no room to send in time)"));
}

TEST_CASE("a helper found gone when a build is sent is replaced, and nothing fails",
          "[opencl][build-processes]") {
  TempDir dir;
  auto options = helper_options();
  // Answers its first build, then exits: idle in the pool, but gone.
  options.helper =
      script(dir / "once", ready_reply + "; sleep 0.3; " +
                               send_command({"failed", "1", "build failed", "once"}) + "; exit 0");
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  CHECK(message_of([&] { (void)cache->program(tagged_add(101)); }) == "build failed: once");
  std::this_thread::sleep_for(500ms);
  CHECK(message_of([&] { (void)cache->program(tagged_add(102)); }) == "build failed: once");
  CHECK(helpers->started() == 2);
  CHECK(helpers->answered() == 2);
  CHECK(helpers->unavailable().empty());
}

TEST_CASE("the tunekit-build-helper executable refuses a device it does not have",
          "[opencl][build-processes]") {
  auto options = helper_options();
  options.device_identity = "OpenCL | no such platform";
  CapturedWarnings warnings;
  auto helpers = std::make_shared<cl::BuildProcesses>(options);
  auto cache = cache_with(helpers);
  CHECK(tagged_add_works(*cache, 51));
  CHECK(cache->helper_builds() == 0);
  CHECK_THAT(helpers->unavailable(), Catch::Contains("refused: no device #"));
}

TEST_CASE("the tunekit-build-helper executable says why it will not start", "[build-processes]") {
  // Run as a tuning process runs it, its socket on descriptor 3; the start message is no hello.
  int ends[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ends[1], 3);
  const std::string path = built_helper().string();
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("--socket"),
                  const_cast<char*>("3"), nullptr};
  pid_t pid = -1;
  REQUIRE(::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(ends[1]);
  std::string problem;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  REQUIRE(cl::detail::send_all(ends[0], cl::detail::encode_message({"goodbye", "1", "x", "0"}),
                               deadline, problem));
  const auto reply =
      cl::detail::read_message(cl::detail::socket_source(ends[0], deadline), problem);
  // Waited for before the socket closes: a close would make its watcher thread end it with 0.
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(ends[0]);
  CHECK(reply == std::vector<std::string>{"refused", "a start message that is no hello"});
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
}

TEST_CASE("only a helper executable no one else could have planted is run",
          "[opencl][build-processes]") {
  TempDir dir;
  const fs::path good = script(dir / "helper", "exit 0");
  CHECK(cl::untrusted_executable(good).empty());
  CHECK(cl::untrusted_executable(dir / "absent") ==
        "it cannot be read (No such file or directory)");
  fs::create_symlink(good, dir / "link");
  CHECK(cl::untrusted_executable(dir / "link") == "it is a symbolic link (not followed)");
  fs::create_directory(dir / "sub");
  CHECK(cl::untrusted_executable(dir / "sub") == "it is not a regular file");
  fs::permissions(good, fs::perms::group_write, fs::perm_options::add);
  CHECK(cl::untrusted_executable(good) == "its group or others may write to it");
  fs::permissions(good, fs::perms::group_write, fs::perm_options::remove);
  fs::permissions(good, fs::perms::owner_exec, fs::perm_options::remove);
  if (::geteuid() != 0) CHECK(cl::untrusted_executable(good) == "it is not executable");
  fs::permissions(good, fs::perms::owner_exec, fs::perm_options::add);
  fs::permissions(dir.path(), fs::perms::all, fs::perm_options::replace);
  CHECK(cl::untrusted_executable(good) ==
        "its group or others may write to its directory " + fs::canonical(dir.path()).string());
  fs::permissions(dir.path(), fs::perms::sticky_bit, fs::perm_options::add);
  CHECK(cl::untrusted_executable(good).empty());  // a sticky directory keeps others' hands off
  fs::permissions(dir.path(), fs::perms::owner_all, fs::perm_options::replace);
  // Any directory above it counts, not the nearest alone; a link to a directory is resolved.
  fs::create_directories(dir / "a" / "b");
  const fs::path deep = script(dir / "a" / "b" / "helper", "exit 0");
  fs::create_directory_symlink(dir / "a" / "b", dir / "to_b");
  CHECK(cl::untrusted_executable(dir / "to_b" / "helper").empty());
  fs::permissions(dir / "a", fs::perms::all, fs::perm_options::replace);
  CHECK(cl::untrusted_executable(deep) ==
        "its group or others may write to its directory " + fs::canonical(dir / "a").string());
  CHECK(cl::untrusted_executable(dir / "to_b" / "helper") ==
        "its group or others may write to its directory " + fs::canonical(dir / "a").string());
  fs::permissions(dir / "a", fs::perms::owner_all, fs::perm_options::replace);
  if (::geteuid() == 0) {
    give_to_unprivileged(good);
    CHECK_THAT(cl::untrusted_executable(good), Catch::StartsWith("it belongs to another user"));
  }
}

TEST_CASE("TUNEKIT_BUILD_HELPER names the helper, and only a usable one",
          "[opencl][build-processes]") {
  const char* old = std::getenv("TUNEKIT_BUILD_HELPER");
  const std::string saved = old ? old : "";
  std::string why_not;
  ::setenv("TUNEKIT_BUILD_HELPER", built_helper().c_str(), 1);
  CHECK(cl::find_build_helper(why_not) == fs::canonical(built_helper()));
  // Named through a link to its directory: the path run is the resolved one that was checked.
  TempDir dir;
  fs::create_directory_symlink(built_helper().parent_path(), dir / "bin");
  ::setenv("TUNEKIT_BUILD_HELPER", (dir / "bin" / built_helper().filename()).c_str(), 1);
  CHECK(cl::find_build_helper(why_not) == fs::canonical(built_helper()));
  ::setenv("TUNEKIT_BUILD_HELPER", "tunekit-build-helper", 1);
  CHECK_FALSE(cl::find_build_helper(why_not));
  CHECK(why_not ==
        "TUNEKIT_BUILD_HELPER='tunekit-build-helper' is not used: it is not an "
        "absolute path");
  ::unsetenv("TUNEKIT_BUILD_HELPER");
  // Beside the program (the GPU machine's carried tests), else where tunekit is installed.
  const auto found = cl::find_build_helper(why_not);
  if (found) {
    CHECK(cl::untrusted_executable(*found).empty());
  } else {
    CHECK_THAT(why_not, Catch::StartsWith("no tunekit-build-helper may be run: ") &&
                            Catch::Contains("(TUNEKIT_BUILD_HELPER names another)"));
  }
  old ? ::setenv("TUNEKIT_BUILD_HELPER", saved.c_str(), 1) : ::unsetenv("TUNEKIT_BUILD_HELPER");
}

TEST_CASE("a program no helper would take is built here, and no helper is the worse for it",
          "[opencl][build-processes]") {
  TempDir dir;
  auto options = helper_options();
  options.helper = script(dir / "never", "exit 1");  // would fail the helpers if started
  cl::BuildProcesses helpers(options);
  const std::string source(cl::detail::max_message_bytes, 'x');
  CHECK_FALSE(helpers.build(source, "", "past a message"));
  // The bound is the reader's: all fields' bytes together, at most max_message_bytes.
  const std::string_view all(source);
  CHECK(cl::detail::fits_a_message({all.substr(0, 5), all.substr(5)}));
  CHECK_FALSE(cl::detail::fits_a_message({"build", all}));
  CHECK_FALSE(cl::detail::fits_a_message({}));
  CHECK(helpers.started() == 0);
  CHECK(helpers.unavailable().empty());
}

TEST_CASE("a place to look for the helper that cannot be looked at is no helper, not an error",
          "[build-processes]") {
  TempDir dir;
  const fs::path too_long = dir / std::string(300, 'a') / "tunekit-build-helper";
  const fs::path absent = dir / "absent";
  std::string why_not;
  std::optional<fs::path> found;
  CHECK_NOTHROW(found = cl::detail::first_runnable({too_long, absent}, why_not));
  CHECK_FALSE(found);
  CHECK_THAT(why_not, Catch::Contains(too_long.string() + ": it cannot be looked at (") &&
                          Catch::Contains("none at " + absent.string()));
  const fs::path good = script(dir / "helper", "exit 0");
  CHECK(cl::detail::first_runnable({too_long, good}, why_not) == fs::canonical(good));
}

TEST_CASE("the helpers' messages: what the reader refuses", "[build-processes]") {
  namespace d = cl::detail;
  std::string problem;
  const auto read = [&](std::string bytes) {
    problem.clear();
    return d::read_message(bytes_source(std::move(bytes)), problem);
  };
  CHECK(read(d::encode_message({"binary", "abc"})) == std::vector<std::string>{"binary", "abc"});
  CHECK(read(u32(0)).empty());
  CHECK(problem == "a message of 0 fields (1 to 5 expected)");
  CHECK(read(u32(6)).empty());
  CHECK(read(u32(1) + u64(d::max_message_bytes + 1)).empty());
  CHECK_THAT(problem, Catch::StartsWith("a field of "));
  // Two fields together past the bound, each under it: refused before the second is read.
  CHECK(read(u32(2) + u64(1) + "x" + u64(d::max_message_bytes)).empty());
  CHECK_THAT(problem, Catch::StartsWith("a field of "));
  CHECK(read(u32(1) + u64(10) + "short").empty());
  CHECK(problem == "the other side closed");
  // A long field is held in about its length, not in a string's doubled growth past it.
  const auto nine_mib = read(d::encode_message({"binary", std::string(9 << 20, 'b')}));
  REQUIRE(nine_mib.size() == 2);
  CHECK(nine_mib[1].size() == (9u << 20));
  CHECK(nine_mib[1].capacity() < (10u << 20));

  using Fields = std::vector<std::string>;
  auto binary = d::read_build_reply(Fields{"binary", "7", "\x01\x02"}, "7", problem);
  REQUIRE(binary);
  CHECK(binary->binary == "\x01\x02");
  CHECK_FALSE(binary->failure);
  CHECK_FALSE(d::read_build_reply(Fields{"binary", "7", ""}, "7", problem));
  auto failure =
      d::read_build_reply(Fields{"failed", "7", "build failed", "the log"}, "7", problem);
  REQUIRE(failure);
  REQUIRE(failure->failure);
  CHECK(failure->failure->kind() == ErrorKind::build);
  CHECK(failure->failure->message() == "the log");
  CHECK_FALSE(d::read_build_reply(Fields{"failed", "7", "no such kind", "the log"}, "7", problem));
  CHECK(problem == "a failure of kind 'no such kind' with a 7-byte message");
  // Another kind is the helper's own trouble (its memory, its context): built here instead.
  CHECK_FALSE(
      d::read_build_reply(Fields{"failed", "7", "out of resources", "the log"}, "7", problem));
  CHECK_FALSE(d::read_build_reply(Fields{"failed", "7", "wrong output", "the log"}, "7", problem));
  CHECK_FALSE(d::read_build_reply(Fields{"failed", "7", "build failed", ""}, "7", problem));
  const Fields unable{"unable", "7", "no binary"};
  CHECK(d::unable_to_build(unable, "7"));
  CHECK_FALSE(d::read_build_reply(Fields(unable), "7", problem));
  CHECK(problem == "the helper could not build it: no binary");
  // An answer to another request (a late one) is none to this one, whatever it says.
  CHECK_FALSE(d::unable_to_build(unable, "8"));
  CHECK_FALSE(d::read_build_reply(Fields{"binary", "6", "\x01\x02"}, "7", problem));
  CHECK(problem == "an answer to request '6', not to request 7 (late, or to no request)");
  CHECK_FALSE(d::read_build_reply(Fields{"failed", "", "build failed", "the log"}, "7", problem));
  CHECK_FALSE(d::read_build_reply(Fields{"binary", "\x01\x02"}, "7", problem));  // no ID
  CHECK(problem == "an answer 'binary' of 2 fields, not one to a build");
  CHECK_FALSE(d::read_build_reply(Fields{"ready", "2"}, "7", problem));
  CHECK(problem == "an answer 'ready' of 2 fields, not one to a build");
}

namespace {
// A child that sleeps `seconds` and exits, and a process descriptor of it; nothing without
// pidfd_open (Linux 5.3), the child then reaped here.
std::optional<std::pair<pid_t, int>> child_for(double seconds) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::usleep(static_cast<useconds_t>(seconds * 1e6));  // async-signal-safe only, after a fork
    ::_exit(0);
  }
  if (child < 0) return std::nullopt;
#ifdef SYS_pidfd_open
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
#else
  const int pidfd = -1;
#endif
  if (pidfd < 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    return std::nullopt;
  }
  return std::pair{child, pidfd};
}

bool reaped(pid_t child) {
  errno = 0;
  return ::waitpid(child, nullptr, WNOHANG) == -1 && errno == ECHILD;
}
}  // namespace

TEST_CASE("a helper still alive after its kill's wait is reaped once it dies: no zombie is left",
          "[build-processes]") {
  // What a helper's end hands to the late reaps when the wait after its SIGKILL ran out (a
  // process stuck in a driver call): here a child alive when handed over, dead 200 ms later.
  auto& reaps = cl::detail::LateReaps::instance();
  const std::size_t before = reaps.reap();
  const auto child = child_for(0.2);
  if (!child) {
    WARN("no pidfd_open here: nothing to test");
    return;
  }
  reaps.keep(child->second);
  CHECK(reaps.reap() == before + 1);  // alive: kept, not waited for
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (reaps.reap() > before && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  CHECK(reaps.reap() == before);
  CHECK(reaped(child->first));  // by the late reaps: no zombie left for the program's life
  // At most `capacity` are kept: past that one is given up (its descriptor closed at once).
  std::vector<std::pair<pid_t, int>> children;
  for (std::size_t i = reaps.reap(); i <= cl::detail::LateReaps::capacity; ++i) {
    const auto another = child_for(1);
    REQUIRE(another);
    children.push_back(*another);
    reaps.keep(another->second);
  }
  CHECK(reaps.reap() == cl::detail::LateReaps::capacity);  // all alive for a second
  while (reaps.reap() > before && std::chrono::steady_clock::now() < deadline + 10s) {
    std::this_thread::sleep_for(20ms);
  }
  CHECK(reaps.reap() == before);
  ::waitpid(children.back().first, nullptr, 0);  // the one given up: reaped here
  for (const auto& [pid, pidfd] : children) CHECK(reaped(pid));
}

}  // namespace tunekit::test
