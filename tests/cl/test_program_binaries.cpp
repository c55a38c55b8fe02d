// Program binaries kept on disk (ProgramBinaries): a later process, or a fresh program cache,
// loads a program instead of compiling it; bad files are reported, removed and rebuilt.
#include <sys/file.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>

#include "../cache/test_cache_support.hpp"  // TempDir, CapturedWarnings, Child (CACHE_CHILD_PATH)
#include "support_cl.hpp"
#include "tunekit/cl/program_binaries.hpp"

namespace tunekit::test {

namespace {

// A program cache of the shared client's device that keeps binaries under `root`.
std::unique_ptr<cl::ProgramCache> cache_under(
    const fs::path& root, std::string identity = shared_client().id().identity()) {
  auto& client = shared_client();
  return std::make_unique<cl::ProgramCache>(client.context(), client.device().device,
                                            client.device().device_name, std::move(identity),
                                            std::make_shared<const cl::ProgramBinaries>(root));
}

cl::ProgramKey key_of(const cl::KernelSpec& spec,
                      const std::string& identity = shared_client().id().identity()) {
  return {identity, spec.source(), spec.build_options()};
}

// Compiles `spec` with binaries under `root`, and returns its binary file.
fs::path stored_binary(const fs::path& root, const cl::KernelSpec& spec) {
  (void)cache_under(root)->program(spec);
  return cl::ProgramBinaries(root).file_of(key_of(spec));
}

std::size_t binary_files(const fs::path& root) { return cl::ProgramBinaries(root).usage().files; }

// What a program_child printed: {builds, loads}, or {-1, -1} when it failed.
std::pair<int, int> child_counts(const fs::path& output) {
  const std::string text = read_text(output);
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("builds=(\\d+) loads=(\\d+)"))) return {-1, -1};
  return {std::stoi(m[1]), std::stoi(m[2])};
}

std::pair<int, int> run_program_child(const std::vector<std::string>& args, const fs::path& out) {
  Child child(args, out);
  return child.wait() == 0 ? child_counts(out) : std::pair{-1, -1};
}

// An add kernel whose result names its source: `tag` is in the text, not in the options.
cl::KernelSpec tagged_add(int tag, std::string options = {}) {
  return cl::KernelSpec::from_text(
      "__kernel void add(__global float* data, float amount) {\n"
      "  data[get_global_id(0)] += amount + " +
          std::to_string(tag) + ".0f;\n}\n",
      std::move(options), "add", "tagged_add");
}
// The tagged add computes 1 + 2 + tag: what this source does, and no other source.
bool tagged_add_works(cl::ProgramCache& cache, const cl::KernelSpec& spec, int tag) {
  auto& client = shared_client();
  auto kernel = cache.kernel(spec);
  auto buffer = client.upload(std::vector<float>(64, 1.0f));
  client.launch_with(kernel, ::cl::NDRange(64), ::cl::NullRange, buffer, 2.0f);
  const auto out = client.download<float>(buffer, 64);
  return std::all_of(out.begin(), out.end(), [&](float v) { return v == 3.0f + float(tag); });
}
}  // namespace

TEST_CASE("a second process loads its programs from binaries and compiles nothing",
          "[opencl][program-binaries]") {
  TempDir dir;
  CHECK(run_program_child({dir.path().string(), "-DA=1", "-DA=2"}, dir / "first.txt") ==
        std::pair{2, 0});
  CHECK(binary_files(dir.path()) == 2);
  CHECK(run_program_child({dir.path().string(), "-DA=1", "-DA=2"}, dir / "second.txt") ==
        std::pair{0, 2});
  // Another option string is another program.
  CHECK(run_program_child({dir.path().string(), "-DA=1", "-DA=3"}, dir / "third.txt") ==
        std::pair{1, 1});
}

TEST_CASE("a program loaded from its binary runs like the compiled one",
          "[opencl][program-binaries]") {
  TempDir dir;
  // Tagged sources: a binary of another source would compute another result.
  const auto spec = tagged_add(5, "-DLOADED=1");
  CHECK(tagged_add_works(*cache_under(dir.path()), spec, 5));
  auto second = cache_under(dir.path());
  CHECK(tagged_add_works(*second, spec, 5));
  CHECK(second->builds() == 0);
  CHECK(second->binary_loads() == 1);
}

TEST_CASE("a corrupt, truncated or foreign binary is reported, removed and rebuilt",
          "[opencl][program-binaries]") {
  TempDir dir;
  const auto spec = tagged_add(6, "-DDAMAGED=1");
  (void)stored_binary(dir.path(), tagged_add(7, "-DDAMAGED=1"));  // another source, same options
  const fs::path file = stored_binary(dir.path(), spec);
  const std::string good = read_text(file);
  REQUIRE(good.size() > 64);

  std::string damaged;
  std::string expected;
  SECTION("a flipped byte in the binary") {
    damaged = good;
    damaged[good.size() / 2] = static_cast<char>(damaged[good.size() / 2] ^ 0x5a);
    expected = "checksum mismatch";
  }
  SECTION("truncated") {
    damaged = good.substr(0, good.size() / 2);
    expected = "checksum mismatch";
  }
  SECTION("not a binary file at all") {
    damaged = "garbage";
    expected = "not a tunekit program binary";
  }
  SECTION("a well-formed file for another device, under this device's name") {
    damaged = cl::detail::encode_program_binary(
        key_of(spec, "some other device"), std::vector<unsigned char>(good.begin(), good.end()));
    expected = "compiled for another device";
  }
  SECTION("a well-formed file for a device whose name holds a terminal's control bytes") {
    damaged = cl::detail::encode_program_binary(
        key_of(spec, "other\x1b[2J device"), std::vector<unsigned char>(good.begin(), good.end()));
    expected = "compiled for another device ('other\\x1b[2J device')";
  }
  SECTION("a well-formed file whose binary the driver rejects") {
    damaged =
        cl::detail::encode_program_binary(key_of(spec), std::vector<unsigned char>(100, 0xab));
    expected = "the driver rejected it";
  }
  write_text(file, damaged);
  CapturedWarnings warnings;
  auto cache = cache_under(dir.path());
  CHECK(tagged_add_works(*cache, spec, 6));
  CHECK(cache->builds() == 1);
  CHECK(cache->binary_loads() == 0);
  CHECK(warnings.count(expected) == 1);
  CHECK(warnings.text().find('\x1b') ==
        std::string::npos);  // a file's bytes never reach a terminal raw
  // Rebuilt from source and stored again: the next cache loads it.
  auto next = cache_under(dir.path());
  (void)next->program(spec);
  CHECK(next->builds() == 0);
  CHECK(next->binary_loads() == 1);
}

TEST_CASE("a binary file larger than any the cache writes is refused unread, and rebuilt",
          "[opencl][program-binaries]") {
  TempDir dir;
  const auto spec = tagged_add(8, "-DOVERSIZED=1");
  const fs::path file = stored_binary(dir.path(), spec);
  // One byte past the largest file a binary makes (its payload and header at their limits):
  // sparse, so that it costs no disk, and a reader that read it whole would say "checksum".
  fs::resize_file(
      file, cl::ProgramBinaries::max_binary_bytes + 2 * cl::ProgramBinaries::max_field_bytes + 65);
  CapturedWarnings warnings;
  auto cache = cache_under(dir.path());
  CHECK(tagged_add_works(*cache, spec, 8));
  CHECK(cache->builds() == 1);
  CHECK(cache->binary_loads() == 0);
  CHECK(warnings.count("it is larger than") == 1);
  CHECK(warnings.count("checksum") == 0);
  CHECK(fs::file_size(file) < (std::uintmax_t{1} << 20));  // stored again at its own size
}

TEST_CASE("a binary of another device identity is never loaded", "[opencl][program-binaries]") {
  TempDir dir;
  const auto spec = test_kernel("add", "-DFOREIGN=1");
  (void)cache_under(dir.path(), "device A")->program(spec);
  auto other = cache_under(dir.path(), "device B");
  (void)other->program(spec);
  CHECK(other->builds() == 1);
  CHECK(other->binary_loads() == 0);
  CHECK(binary_files(dir.path()) == 2);
}

TEST_CASE("a link where a binary belongs is neither followed nor removed",
          "[opencl][program-binaries]") {
  TempDir dir;
  const auto spec = test_kernel("add", "-DLINKED=1");
  const fs::path file = stored_binary(dir.path(), spec);
  fs::rename(file, dir / "elsewhere.bin");
  fs::create_symlink(dir / "elsewhere.bin", file);
  CapturedWarnings warnings;
  auto cache = cache_under(dir.path());
  (void)cache->program(spec);
  CHECK(cache->binary_loads() == 0);
  CHECK(warnings.count("symbolic link") == 1);
  CHECK(fs::exists(dir / "elsewhere.bin"));
}

TEST_CASE("a programs folder planted as a link is neither loaded, listed nor cleared through",
          "[opencl][program-binaries]") {
  TempDir dir;
  const auto spec = test_kernel("add", "-DLINKED_FOLDER=1");
  const fs::path file = stored_binary(dir.path(), spec);
  const fs::path programs = dir / "programs";
  REQUIRE(file.parent_path().parent_path() == programs);
  fs::rename(programs, dir / "victim");  // another user's folder, or a folder of the user's
  fs::create_symlink(dir / "victim", programs);
  const fs::path victim_file = dir / "victim" / file.parent_path().filename() / file.filename();
  REQUIRE(fs::is_regular_file(victim_file));
  CapturedWarnings warnings;
  const cl::ProgramBinaries binaries(dir.path());
  CHECK(binaries.usage().files == 0);
  CHECK(binaries.clear().files == 0);
  auto cache = cache_under(dir.path());
  (void)cache->program(spec);
  CHECK(cache->binary_loads() == 0);
  CHECK(warnings.count("symbolic link") >= 1);
  CHECK(fs::is_regular_file(victim_file));  // nothing deleted through the link
}

TEST_CASE("two processes compiling the same programs at once both succeed, and leave whole files",
          "[opencl][program-binaries]") {
  TempDir dir;
  const std::vector<std::string> args{dir.path().string(), "-DBOTH=1", "-DBOTH=2", "-DBOTH=3"};
  Child a(args, dir / "a.txt");
  Child b(args, dir / "b.txt");
  CHECK(a.wait() == 0);
  CHECK(b.wait() == 0);
  const auto [a_builds, a_loads] = child_counts(dir / "a.txt");
  const auto [b_builds, b_loads] = child_counts(dir / "b.txt");
  CHECK(a_builds + a_loads == 3);
  CHECK(b_builds + b_loads == 3);
  CHECK(binary_files(dir.path()) == 3);
  std::size_t leftovers = 0;
  for (const auto& entry : fs::directory_iterator(cl::ProgramBinaries(dir.path()).directory())) {
    leftovers += entry.path().filename().string().find(".tmp.") != std::string::npos;
  }
  CHECK(leftovers == 0);
  CHECK(run_program_child(args, dir / "c.txt") == std::pair{0, 3});
}

TEST_CASE("with the persistent cache off nothing is written and every process compiles",
          "[opencl][program-binaries]") {
  TempDir dir;
  // The children inherit TUNEKIT_CACHE_DIR: it would be their directory if the cache were on.
  const char* old = std::getenv("TUNEKIT_CACHE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("TUNEKIT_CACHE_DIR", dir.path().c_str(), 1);
  const auto first = run_program_child({"off", "-DOFF=1"}, dir / "first.txt");
  const auto second = run_program_child({"off", "-DOFF=1"}, dir / "second.txt");
  old ? ::setenv("TUNEKIT_CACHE_DIR", saved.c_str(), 1) : ::unsetenv("TUNEKIT_CACHE_DIR");
  CHECK(first == std::pair{1, 0});
  CHECK(second == std::pair{1, 0});
  CHECK_FALSE(fs::exists(dir / "programs"));
}

TEST_CASE("binary files are private and cleared with their leftovers",
          "[opencl][program-binaries]") {
  TempDir dir;
  const fs::path file = stored_binary(dir.path(), test_kernel("add", "-DPRIVATE=1"));
  const cl::ProgramBinaries binaries(dir.path());
  CHECK((fs::status(file).permissions() & (fs::perms::group_all | fs::perms::others_all)) ==
        fs::perms::none);
  CHECK((fs::status(binaries.directory()).permissions() &
         (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
  write_text(file.string() + ".tmp.1.0", "left by a killed process");
  const auto used = binaries.usage();
  CHECK(used.files == 1);
  CHECK(used.bytes == fs::file_size(file));
  const auto removed = binaries.clear();
  CHECK(removed.files == 1);
  CHECK(binaries.usage().files == 0);
  CHECK(fs::is_empty(binaries.directory()));
}

TEST_CASE("build options past what a binary's header holds are built each time, never stored",
          "[opencl][program-binaries]") {
  TempDir dir;
  CapturedWarnings warnings;
  // A macro of 70000 characters: a valid build, options past max_field_bytes.
  const std::string options =
      "-DLONG=" + std::string(cl::ProgramBinaries::max_field_bytes + 4464, '1');
  const auto spec = test_kernel("add", options);
  const cl::ProgramBinaries binaries(dir.path());
  (void)cache_under(dir.path())->program(spec);
  CHECK(binary_files(dir.path()) == 0);
  CHECK_THAT(warnings.text(), Catch::Contains("build options of 70007 bytes pass the 65536"));
  // The writer alone refuses it too: no file the reader would call malformed.
  binaries.save(key_of(spec), {1, 2, 3});
  CHECK_FALSE(fs::exists(binaries.file_of(key_of(spec))));
  // At the limit it is stored and loaded back.
  const auto at_limit =
      test_kernel("add", "-DL=" + std::string(cl::ProgramBinaries::max_field_bytes - 4, '1'));
  REQUIRE(at_limit.build_options().size() == cl::ProgramBinaries::max_field_bytes);
  (void)cache_under(dir.path())->program(at_limit);
  auto next = cache_under(dir.path());
  (void)next->program(at_limit);
  CHECK(next->binary_loads() == 1);
}

TEST_CASE("the binary file decoder rejects every truncation and never reads out of bounds",
          "[program-binaries]") {
  const std::string source = "kernel void k() {}";
  const cl::ProgramKey key{"dev", source, "-DX"};
  const std::string good = cl::detail::encode_program_binary(key, {1, 2, 3, 4, 5});
  const auto decoded = cl::detail::decode_program_binary(good, key);
  CHECK(decoded.problem.empty());
  CHECK(decoded.binary == std::vector<unsigned char>{1, 2, 3, 4, 5});
  std::size_t rejected = 0;
  for (std::size_t n = 0; n < good.size(); ++n) {
    rejected += !cl::detail::decode_program_binary(good.substr(0, n), key).problem.empty();
  }
  CHECK(rejected == good.size());
  const cl::ProgramKey other_options{"dev", source, "-DY"};
  CHECK_THAT(cl::detail::decode_program_binary(good, other_options).problem,
             Catch::Contains("other options"));
}

}  // namespace tunekit::test

namespace tunekit::test {

TEST_CASE("where binaries are not stored when built, keep() stores one",
          "[opencl][program-binaries]") {
  TempDir dir;
  auto& client = shared_client();
  const auto spec = test_kernel("add", "-DKEPT=1");
  const auto other = test_kernel("add", "-DNOT_KEPT=1");
  cl::ProgramCache cache(client.context(), client.device().device, client.device().device_name,
                         client.id().identity(),
                         std::make_shared<const cl::ProgramBinaries>(dir.path()), false);
  (void)cache.program(spec);
  (void)cache.program(other);
  CHECK(binary_files(dir.path()) == 0);
  cache.keep(spec);
  cache.keep(spec);  // once is enough
  CHECK(binary_files(dir.path()) == 1);
  CHECK(cache.builds() == 2);
  auto next = cache_under(dir.path());
  (void)next->program(spec);
  (void)next->program(other);
  CHECK(next->binary_loads() == 1);
  CHECK(next->builds() == 1);
}

}  // namespace tunekit::test

namespace tunekit::test {

TEST_CASE("without any cache directory (no HOME), a client builds from source and works",
          "[opencl][binaries]") {
  // A daemon or container with neither TUNEKIT_CACHE_DIR, XDG_CACHE_HOME nor HOME: binaries are
  // not kept (said once), and nothing else changes.
  const Settings before = global_settings();
  std::vector<std::pair<std::string, std::string>> saved;
  for (const char* name : {"HOME", "XDG_CACHE_HOME", "TUNEKIT_CACHE_DIR"}) {
    if (const char* v = std::getenv(name)) saved.emplace_back(name, v);
    ::unsetenv(name);
  }
  Settings settings;
  settings.persistent_cache = true;
  set_global_settings(settings);
  CapturedWarnings warnings;
  bool works = false;
  try {
    cl::Client client(shared_client().device());
    auto data = client.upload(ramp(64));
    auto kernel = client.kernel(test_kernel("add", "-DNO_HOME_TEST=1"));
    client.launch_with(kernel, ::cl::NDRange(64), ::cl::NDRange(16), data, 1.0f);
    const auto got = client.download<float>(data, 64);
    works = got[3] == ramp(64)[3] + 1.0f;
  } catch (...) {
  }
  for (const auto& [name, value] : saved) ::setenv(name.c_str(), value.c_str(), 1);
  set_global_settings(before);
  CHECK(works);
  CHECK(warnings.count("program binaries are not kept") == 1);
}

}  // namespace tunekit::test

namespace tunekit::test {

TEST_CASE("a well-formed binary of another program in its place is reported once and rebuilt",
          "[opencl][program-binaries]") {
  TempDir dir;
  // Another program: another source under the same options, or the same source under other -D
  // options (how a space's configurations differ). The stamp covers both.
  const auto option_tagged = [](int tag) {
    return cl::KernelSpec::from_text(
        "__kernel void add(__global float* data, float amount) {\n"
        "  data[get_global_id(0)] += amount + (float)TAG;\n}\n",
        "-DTAG=" + std::to_string(tag), "add", "option_tagged_add");
  };
  auto mine = tagged_add(1, "-DMINE=1");
  auto other = tagged_add(2, "-DMINE=1");
  SECTION("another source, the same kernel names and options") {}
  SECTION("the same source, other options") {
    mine = option_tagged(1);
    other = option_tagged(2);
  }
  const fs::path other_file = stored_binary(dir.path(), other);
  const auto payload = cl::detail::decode_program_binary(read_text(other_file), key_of(other));
  REQUIRE(payload.problem.empty());
  const fs::path file = cl::ProgramBinaries(dir.path()).file_of(key_of(mine));
  write_text(file, cl::detail::encode_program_binary(key_of(mine), payload.binary));
  CapturedWarnings warnings;
  auto cache = cache_under(dir.path());
  CHECK(tagged_add_works(*cache, mine, 1));  // its own program's result, not the other's
  CHECK(cache->builds() == 1);
  CHECK(cache->binary_loads() == 0);
  CHECK(warnings.count("another program's binary") == 1);
  // Rebuilt and stored: the next cache loads the right one.
  auto next = cache_under(dir.path());
  CHECK(tagged_add_works(*next, mine, 1));
  CHECK(next->binary_loads() == 1);
  CHECK(warnings.lines() == 1);
}

TEST_CASE("a binary whose load a process did not survive is set aside, and the source compiled",
          "[opencl][program-binaries]") {
  TempDir dir;
  const auto spec = tagged_add(3, "-DASIDE=1");
  const fs::path file = stored_binary(dir.path(), spec);
  const std::string marker = file.string() + ".loading", aside = file.string() + ".aside";
  // What a process that died while its driver loaded the binary leaves: its marker, unlocked.
  write_text(marker, "pid 1 loading\n");
  CapturedWarnings warnings;
  auto cache = cache_under(dir.path());
  CHECK(tagged_add_works(*cache, spec, 3));
  CHECK(cache->builds() == 1);
  CHECK(cache->binary_loads() == 0);
  CHECK(warnings.count("set aside") == 1);
  CHECK(fs::exists(aside));
  CHECK_FALSE(fs::exists(marker));
  // Not stored again for that program: the next cache compiles it too, without a word.
  auto next = cache_under(dir.path());
  CHECK(tagged_add_works(*next, spec, 3));
  CHECK(next->builds() == 1);
  CHECK(warnings.lines() == 1);
  CHECK_FALSE(fs::exists(file));
  // A fine load leaves no marker behind; `cache clear` removes what was set aside.
  const auto fine = tagged_add(4, "-DASIDE=1");
  (void)stored_binary(dir.path(), fine);
  CHECK(tagged_add_works(*cache_under(dir.path()), fine, 4));
  CHECK_FALSE(
      fs::exists(cl::ProgramBinaries(dir.path()).file_of(key_of(fine)).string() + ".loading"));
  (void)cl::ProgramBinaries(dir.path()).clear();
  CHECK_FALSE(fs::exists(aside));
}

TEST_CASE("a source whose last line ends in a backslash keeps its stamp: its binary loads",
          "[opencl][program-binaries]") {
  // The stamp kernel is appended after the source: the backslash (no line end after it) once
  // spliced it into the comment, and every binary of the program was "another program's".
  TempDir dir;
  const auto spec = cl::KernelSpec::from_text(
      "__kernel void add(__global float* data, float amount) {\n"
      "  data[get_global_id(0)] += amount + 7.0f;\n}\n// the end \\",
      "", "add", "spliced_add");
  (void)stored_binary(dir.path(), spec);
  CapturedWarnings warnings;
  auto cache = cache_under(dir.path());
  CHECK(tagged_add_works(*cache, spec, 7));
  CHECK(cache->binary_loads() == 1);
  CHECK(cache->builds() == 0);
  CHECK(warnings.lines() == 0);
}

TEST_CASE("a marker held past the wait is waited for once, not once per program",
          "[opencl][program-binaries]") {
  TempDir dir;
  const auto first = tagged_add(5, "-DHELD=1"), second = tagged_add(6, "-DHELD=1");
  // What a stopped process that was loading both binaries holds: their markers, locked.
  struct HeldMarker {
    int fd;
    ~HeldMarker() { ::close(fd); }
  };
  std::vector<std::unique_ptr<HeldMarker>> held;
  for (const auto& spec : {first, second}) {
    const std::string marker = stored_binary(dir.path(), spec).string() + ".loading";
    held.push_back(std::unique_ptr<HeldMarker>(
        new HeldMarker{::open(marker.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)}));
    REQUIRE(held.back()->fd >= 0);
    REQUIRE(::flock(held.back()->fd, LOCK_EX | LOCK_NB) == 0);
  }
  constexpr auto wait = std::chrono::milliseconds(1500);
  auto& client = shared_client();
  cl::ProgramCache cache(client.context(), client.device().device, client.device().device_name,
                         client.id().identity(),
                         std::make_shared<const cl::ProgramBinaries>(dir.path(), wait));
  const auto timed = [&](const cl::KernelSpec& spec, int tag) {
    const auto start = std::chrono::steady_clock::now();
    CHECK(tagged_add_works(cache, spec, tag));
    return std::chrono::steady_clock::now() - start;
  };
  CHECK(timed(first, 5) >= wait);  // waited, then compiled
  CHECK(timed(second, 6) < wait);  // not waited for again
  CHECK(cache.builds() == 2);
  CHECK(cache.binary_loads() == 0);
}

TEST_CASE("a checksummed binary that crashes the driver kills one process and not the next",
          "[opencl][program-binaries]") {
  TempDir dir;
  const std::string options = "-DCRASH=1";
  CHECK(run_program_child({dir.path().string(), options}, dir / "first.txt") == std::pair{1, 0});
  // The payload damaged, the file's header and checksum made right: PoCL 3 dies loading it
  // (SIGSEGV or an assert's SIGABRT), in every process that builds the program.
  const auto spec = test_kernel("add", options);
  const fs::path file = cl::ProgramBinaries(dir.path()).file_of(key_of(spec));
  auto decoded = cl::detail::decode_program_binary(read_text(file), key_of(spec));
  REQUIRE(decoded.problem.empty());
  REQUIRE(decoded.binary.size() > 128);
  for (std::size_t i = 64; i < 128; ++i) decoded.binary[i] ^= 0xff;
  write_text(file, cl::detail::encode_program_binary(key_of(spec), decoded.binary));
  Child second({dir.path().string(), options}, dir / "second.txt");
  const int second_exit = second.wait();
  if (second_exit == 0) {
    WARN("this driver survived the damaged binary: the crash path is not exercised here");
  }
  // The next processes, after a crash: the binary set aside, the source compiled, nothing stored
  // for it again. After a driver that refused the binary instead (NVIDIA's): it was removed,
  // the source compiled and a sound binary stored, which they load.
  const auto next = second_exit != 0 ? std::pair{1, 0} : std::pair{0, 1};
  CHECK(run_program_child({dir.path().string(), options}, dir / "third.txt") == next);
  CHECK(run_program_child({dir.path().string(), options}, dir / "fourth.txt") == next);
  if (second_exit != 0) CHECK(fs::exists(file.string() + ".aside"));
}

}  // namespace tunekit::test
