// The OpenCL user's path: kernels from the user's own .cl files (with includes), input
// generators and validators that take the client, and the buffer helpers they use.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <tunekit/cl.hpp>
#include <tunekit/tunekit.hpp>

#include "../../src/cl/kernel_file.hpp"
#include "support_cl.hpp"

namespace tunekit::test {

namespace {

namespace fs = std::filesystem;

// A fresh directory under the build tree's temporary area, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("tunekit_user_path_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path file = path / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
};

std::string build_error(const cl::KernelSpec& spec) {
  try {
    (void)shared_client().kernel(spec);
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::build);
    return e.what();
  }
  FAIL("expected a build error");
  return {};
}

}  // namespace

TEST_CASE("a kernel from the user's file finds its includes beside it and in include dirs",
          "[opencl][user-path]") {
  TempDir dir;
  dir.write("inc/scale.h", "#pragma once\nfloat scale(float x) { return SCALE * x; }\n");
  dir.write("src/offset.h",
            "#include <scale.h>\nfloat offset(float x) { return scale(x) + 1.0f; }\n");
  const fs::path file = dir.write("src/k.cl",
                                  "#include \"offset.h\"\n#include <scale.h>\n"
                                  "__kernel void f(__global float* x) {\n"
                                  "  x[get_global_id(0)] = offset(x[get_global_id(0)]);\n}\n");
  const auto spec = cl::KernelSpec::from_file(file, "-DSCALE=3.0f", "f", {dir.path / "inc"});
  CHECK(spec.origin() == file.string());
  auto& client = shared_client();
  auto buffer = client.upload(std::vector<float>{1, 2, 3, 4});
  auto kernel = client.kernel(spec);
  client.launch_with(kernel, ::cl::NDRange(4), ::cl::NullRange, buffer);
  CHECK(client.download<float>(buffer, 4) == std::vector<float>{4, 7, 10, 13});
}

TEST_CASE(
    "from_file takes its path and include directories as paths, directory entries, strings or "
    "string views, and reads the same file from each",
    "[opencl][user-path]") {
  TempDir dir;
  dir.write("inc/value.h", "#define VALUE 5\n");
  const fs::path file =
      dir.write("k.cl", "#include <value.h>\nint value(void) { return VALUE; }\n");
  const fs::path inc = dir.path / "inc";
  const std::string file_text = file.string();
  const std::string inc_text = inc.string();
  const std::string_view inc_view = inc_text;
  const std::vector<fs::path> inc_paths{inc};
  const std::vector<std::string_view> inc_views{inc_view};
  const auto from_path = cl::KernelSpec::from_file(file, "", "f", {inc});
  REQUIRE(from_path.problem().empty());
  const std::vector<cl::KernelSpec> others{
      cl::KernelSpec::from_file(fs::directory_entry(file), "", "f", {fs::directory_entry(inc)}),
      cl::KernelSpec::from_file(file_text, "", "f", {inc_text}),
      cl::KernelSpec::from_file(file_text.c_str(), "", "f", {inc_text.c_str()}),
      cl::KernelSpec::from_file(std::string_view(file_text), "", "f", {inc_view}),
      cl::KernelSpec::from_file(file, "", "f", inc_paths),
      cl::KernelSpec::from_file(file, "", "f", inc_views)};
  for (const auto& spec : others) {
    CHECK(spec.problem().empty());
    CHECK(spec.origin() == file_text);
    CHECK(spec.fingerprint() == from_path.fingerprint());
  }
  // Without the include directory the include is not found: the directories were used.
  CHECK_THAT(cl::KernelSpec::from_file(file, "", "f").problem(), Catch::Contains("value.h"));
}

TEST_CASE("build errors in the user's files name those files and lines", "[opencl][user-path]") {
  TempDir dir;
  dir.write("helper.h", "// helper\n\nfloat helper(float x) { return x + undefined_name; }\n");
  const fs::path file = dir.write("main.cl",
                                  "#include \"helper.h\"\n__kernel void f(__global float* x) {\n"
                                  "  x[0] = helper(x[0]);\n  x[1] = also_undefined;\n}\n");
  const std::string message = build_error(cl::KernelSpec::from_file(file, "", "f"));
  CHECK_THAT(message, Catch::Contains((dir.path / "helper.h").string() + ":3"));
  CHECK_THAT(message, Catch::Contains(file.string() + ":4"));
}

TEST_CASE(
    "a build error's first line is the first compiler error, naming the user's file and "
    "line, whatever the options, the whole log follows",
    "[opencl][user-path]") {
  TempDir dir;
  const fs::path file =
      dir.write("k.cl",
                "__kernel void f(__global float* x) {\n"
                "  x[0] = first_undefined * TM;\n  x[1] = second_undefined;\n}\n");
  std::vector<AutotuneError> errors;
  for (const char* options : {"-DTM=2", "-DTM=4"}) {
    try {
      (void)shared_client().kernel(cl::KernelSpec::from_file(file, options, "f"));
      FAIL("expected a build error");
    } catch (const AutotuneError& e) {
      errors.push_back(e);
    }
  }
  for (const auto& e : errors) {
    INFO(e.message());
    CHECK(e.kind() == ErrorKind::build);
    CHECK_THAT(e.summary(), Catch::Contains(file.string() + ":2") &&
                                Catch::Contains("first_undefined") && Catch::Contains("error"));
    CHECK_THAT(e.message(), Catch::Contains(file.string() + ":3") &&
                                Catch::Contains("second_undefined") &&
                                Catch::Contains("build log"));
  }
  CHECK_THAT(errors[1].message(), Catch::Contains("-DTM=4"));
  CHECK(group_failures({&errors[0], &errors[1]}).size() == 1);  // one failure, shown once
}

TEST_CASE("a build error of a kernel given as text names its label and line, not a driver's file",
          "[opencl][user-path]") {
  try {
    (void)shared_client().kernel(cl::KernelSpec::from_text(
        "__kernel void f(__global float* x) {\n  x[0] = not_declared_here;\n}\n", "", "f",
        "my_softmax.cl"));
    FAIL("expected a build error");
  } catch (const AutotuneError& e) {
    INFO(e.message());
    CHECK_THAT(e.summary(),
               Catch::Contains("my_softmax.cl:2") && Catch::Contains("not_declared_here"));
  }
}

TEST_CASE("a device is named by the name in its identity", "[opencl][user-path]") {
  const auto& client = shared_client();
  CHECK(device_name(client.id().identity()) == client.device().device_name);
}

TEST_CASE("a missing include or file is a build error naming where it was asked for",
          "[opencl][user-path]") {
  TempDir dir;
  const fs::path file = dir.write("main.cl", "// first\n#include \"absent.h\"\n");
  const auto spec = cl::KernelSpec::from_file(file, "", "f", {dir.path / "inc"});
  CHECK_THAT(spec.problem(), Catch::Contains(file.string() + ":2") && Catch::Contains("absent.h") &&
                                 Catch::Contains((dir.path / "inc" / "absent.h").string()));
  CHECK_THAT(build_error(spec), Catch::EndsWith(spec.problem()));
  CHECK_THAT(build_error(cl::KernelSpec::from_file(dir.path / "nothing.cl", "", "f")),
             Catch::Contains((dir.path / "nothing.cl").string()));
  const fs::path cycle = dir.write("a.cl", "#include \"a.cl\"\n");
  CHECK_THAT(build_error(cl::KernelSpec::from_file(cycle, "", "f")), Catch::Contains("cycle"));
}

// The include expander reads what the preprocessor would: found by review 6, where each of
// these failed a kernel that the compiler, given -I, builds.
TEST_CASE(
    "includes under an include guard, inside #if or inside a comment are read as the "
    "preprocessor reads them",
    "[opencl][user-path]") {
  TempDir dir;
  auto& client = shared_client();
  const std::string kernel = "__kernel void f(__global float* x) { x[0] = VALUE; }\n";
  // Guarded headers that include each other: "nests deeper than 64 files (an include cycle?)".
  dir.write("a.h",
            "// a\n#ifndef A_H\n#define A_H\n#include \"b.h\"\n#define VALUE 2.0f\n#endif\n");
  dir.write("b.h", "#ifndef B_H\n#define B_H\n#include \"a.h\"\n#endif  // B_H\n");
  const auto cycle =
      cl::KernelSpec::from_file(dir.write("cycle.cl", "#include \"a.h\"\n" + kernel), "", "f");
  CHECK(cycle.problem().empty());
  CHECK_NOTHROW(client.kernel(cycle));
  // An include of a file that is absent, under a condition that does not hold: "not found".
  const fs::path optional = dir.write(
      "optional.cl",
      "#define VALUE 3.0f\n#ifdef USE_HALF\n#include \"half_helpers.h\"\n#endif\n" + kernel);
  const auto off = cl::KernelSpec::from_file(optional, "", "f");
  CHECK(off.problem().empty());
  CHECK_NOTHROW(client.kernel(off));
  // Where the condition holds, the build fails there, naming the file and what was searched.
  CHECK_THAT(build_error(cl::KernelSpec::from_file(optional, "-DUSE_HALF", "f")),
             Catch::Contains("half_helpers.h' not found") &&
                 Catch::Contains((dir.path / "half_helpers.h").string()));
  // An include inside a block comment: "not found".
  const auto commented = cl::KernelSpec::from_file(
      dir.write("commented.cl",
                "#define VALUE 4.0f\n/* an old version:\n#include \"gone.h\"\n*/\n" + kernel),
      "", "f");
  CHECK(commented.problem().empty());
  CHECK_NOTHROW(client.kernel(commented));
  // 30 levels of guarded headers, each included twice by the one above: the text was 2^30 copies
  // long (past 64 MiB after 6 s); each is read once.
  for (int level = 0; level < 30; ++level) {
    const std::string guard = "H" + std::to_string(level);
    const std::string next = "h" + std::to_string(level + 1) + ".h";
    dir.write("h" + std::to_string(level) + ".h",
              "#ifndef " + guard + "\n#define " + guard + "\n" +
                  (level < 29 ? "#include \"" + next + "\"\n#include \"" + next + "\"\n"
                              : std::string("#define VALUE 5.0f\n")) +
                  "#endif\n");
  }
  const auto deep =
      cl::KernelSpec::from_file(dir.write("deep.cl", "#include \"h0.h\"\n" + kernel), "", "f");
  CHECK(deep.problem().empty());
  CHECK_NOTHROW(client.kernel(deep));
  // Found by review 10. A header whose #ifndef has an #else is no guard: its second inclusion
  // is the #else part (it was dropped: "undeclared identifier 'second_pass'").
  dir.write("twice.h",
            "#ifndef TWICE_FIRST\n#define TWICE_FIRST\nfloat first_pass(float x) { return x + "
            "1.0f; }\n#else\nfloat second_pass(float x) { return x + 2.0f; }\n#endif\n");
  const auto twice = cl::KernelSpec::from_file(
      dir.write("twice.cl",
                "#include \"twice.h\"\n#include \"twice.h\"\n#define VALUE "
                "second_pass(first_pass(x[0]))\n" +
                    kernel),
      "", "f");
  CHECK(twice.problem().empty());
  CHECK_NOTHROW(client.kernel(twice));
  // Guards written #if !defined(X) that include each other: an include cycle (past 64 files).
  dir.write("c.h",
            "#if !defined(C_H)\n#define C_H\n#include \"d.h\"\n#define VALUE 6.0f\n#endif\n");
  dir.write("d.h", "#if !defined D_H\n#define D_H\n#include \"c.h\"\n#endif\n");
  const auto defined_cycle =
      cl::KernelSpec::from_file(dir.write("defined.cl", "#include \"c.h\"\n" + kernel), "", "f");
  CHECK(defined_cycle.problem().empty());
  CHECK_NOTHROW(client.kernel(defined_cycle));
}

TEST_CASE("a FIFO or a folder named as a kernel file is a build error, not a hang",
          "[opencl][user-path]") {
  TempDir dir;
  const fs::path fifo = dir.path / "fifo.cl";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // no writer: reading it would block for ever
  CHECK_THAT(cl::KernelSpec::from_file(fifo, "", "f").problem(),
             Catch::Contains(fifo.string()) && Catch::Contains("not a regular file"));
  const fs::path inc = dir.write("main.cl", "#include \"fifo.cl\"\n");
  CHECK_THAT(cl::KernelSpec::from_file(inc, "", "f").problem(), Catch::Contains("fifo.cl"));
  CHECK_THAT(cl::KernelSpec::from_file(dir.path, "", "f").problem(),
             Catch::Contains("it is a directory"));
}

TEST_CASE("a missing kernel file fails only the candidates that use it, naming the file",
          "[opencl][user-path]") {
  TempDir dir;
  const fs::path missing = dir.path / "conv.cl";
  LocalTuner<SizeKey> tuner("user_path_missing_file", test::test_settings());
  auto& client = shared_client();
  auto add = [](cl::KernelSpec spec) {
    return cl::with_kernels(
        [](cl::Client& c, ::cl::Kernel& k, ::cl::Buffer& x, std::size_t& n) {
          c.launch_with(k, ::cl::NDRange(n), ::cl::NullRange, x, 1.0f);
        },
        std::move(spec));
  };
  // Building the set does not throw: the candidates are there, named.
  const auto& set = tuner.init([&] {
    auto key_of = [](const ::cl::Buffer&, const std::size_t& n) { return SizeKey{n}; };
    auto inputs = [](cl::Client& c, const SizeKey& key, const ::cl::Buffer&, const std::size_t&) {
      const std::size_t n = key.n.value();
      return std::tuple(cl::random_buffer<float>(c, n, cl::seed_of(key)), n);
    };
    return TunableSet{key_of, inputs}
        .with(Tunable{"from the missing file", add(cl::KernelSpec::from_file(missing, "", "add"))})
        .with(Tunable{"embedded nowhere", add(cl::KernelSpec::from_embedded("gone.cl", "", "add"))})
        .with(Tunable{"from text", add(test::test_kernel("add"))});
  });
  REQUIRE(set.size() == 3);
  auto data = client.upload(std::vector<float>(64, 0.0f));
  tuner.execute(client.id(), client, set, data, std::size_t{64});
  CHECK(client.download<float>(data, 64) == std::vector<float>(64, 1.0f));
  const auto report = tuner.tuner(client.id()).report(SizeKey{64});
  REQUIRE(report);
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "from text");
  std::map<std::string, std::string> failures;
  for (const auto& outcome : report->outcomes) {
    if (outcome.error && outcome.error->kind() == ErrorKind::build) {
      failures[outcome.name] = outcome.error->message();
    }
  }
  CHECK_THAT(failures["from the missing file"],
             Catch::Contains("cannot read the kernel source " + missing.string()));
  CHECK_THAT(failures["embedded nowhere"],
             Catch::Contains("no kernel file 'gone.cl' is embedded in this program") &&
                 Catch::Contains("embedded_scale.cl") && Catch::Contains("tunekit_embed_kernels"));
  // The file's arrival changes the candidate's fingerprint: the set's checksum, so a remembered
  // failure is not served once the file is there.
  const auto before = cl::KernelSpec::from_file(missing, "", "add").fingerprint();
  dir.write("conv.cl", "__kernel void add(__global float* x, float a) {}\n");
  const auto after = cl::KernelSpec::from_file(missing, "", "add");
  CHECK(after.problem().empty());
  CHECK(after.fingerprint() != before);
}

TEST_CASE("a kernel file embedded with tunekit_embed_kernels is found by name, from any directory",
          "[opencl][user-path]") {
  TempDir dir;
  const fs::path was = fs::current_path();
  fs::current_path(dir.path);  // nothing is read from the working directory (or anywhere)
  const auto spec = cl::KernelSpec::from_embedded("embedded_scale.cl", "", "scale");
  fs::current_path(was);
  CHECK(spec.problem().empty());
  CHECK_THAT(std::string(spec.source()), Catch::Contains("#define SCALE 3.0f") &&
                                             Catch::Contains("#line 1 \"common/scale.h\""));
  CHECK(cl::program_sources() ==
        std::vector<std::string_view>{"common/scale.h", "embedded_scale.cl"});
  auto& client = shared_client();
  auto data = client.upload(std::vector<float>(16, 2.0f));
  ::cl::Kernel kernel = client.kernel(spec);
  client.launch_with(kernel, ::cl::NDRange(16), ::cl::NullRange, data);
  CHECK(client.download<float>(data, 16) == std::vector<float>(16, 6.0f));
}

TEST_CASE("an installed kernel file is found on TUNEKIT_KERNEL_PATH, then beside the program",
          "[opencl][user-path]") {
  TempDir dir;
  dir.write("kernels/k.cl", "__kernel void f(__global float* x) { x[0] = 1.0f; }\n");
  const std::string path = "relative/dir:" + (dir.path / "kernels").string() + "::/bad\x01dir";
  const char* was = std::getenv("TUNEKIT_KERNEL_PATH");
  const std::optional<std::string> old = was ? std::optional<std::string>(was) : std::nullopt;
  ::setenv("TUNEKIT_KERNEL_PATH", path.c_str(), 1);
  const auto dirs = cl::kernel_search_path();
  const auto found = cl::KernelSpec::from_search_path("k.cl", "", "f");
  const auto missing = cl::KernelSpec::from_search_path("none.cl", "", "f");
  const auto absolute = cl::KernelSpec::from_search_path("/etc/passwd", "", "f");
  if (old) {
    ::setenv("TUNEKIT_KERNEL_PATH", old->c_str(), 1);
  } else {
    ::unsetenv("TUNEKIT_KERNEL_PATH");
  }
  REQUIRE(dirs.size() == 2);  // the usable entry, then the executable's directory
  CHECK(dirs[0] == dir.path / "kernels");
  CHECK(dirs[1] == fs::read_symlink("/proc/self/exe").parent_path());
  CHECK(found.problem().empty());
  CHECK_THAT(std::string(found.source()), Catch::Contains("x[0] = 1.0f"));
  CHECK(found.origin() == (dir.path / "kernels" / "k.cl").string());
  CHECK_THAT(missing.problem(),
             Catch::Contains("the kernel file none.cl is not on the kernel search path") &&
                 Catch::Contains((dir.path / "kernels" / "none.cl").string()) &&
                 Catch::Contains("TUNEKIT_KERNEL_PATH"));
  CHECK_THAT(build_error(missing), Catch::Contains("none.cl"));
  CHECK_THAT(absolute.problem(), Catch::Contains("is not a relative path"));
}

TEST_CASE("editing an included file changes the checksum and the program binary's key",
          "[opencl][user-path]") {
  TempDir dir;
  dir.write("value.h", "#define VALUE 1\n");
  const fs::path file = dir.write(
      "main.cl", "#include \"value.h\"\n__kernel void f(__global int* x) { x[0] = VALUE; }\n");
  const auto before = cl::KernelSpec::from_file(file, "", "f");
  dir.write("value.h", "#define VALUE 2\n");
  const auto after = cl::KernelSpec::from_file(file, "", "f");
  CHECK(before.fingerprint() != after.fingerprint());
  // The binary cache keys programs by their source text: the include's text is in it.
  CHECK(before.source() != after.source());
  CHECK(after.source().find("#define VALUE 2") != std::string_view::npos);
  auto& client = shared_client();
  auto buffer = client.upload(std::vector<int>{0});
  auto kernel = client.kernel(after);
  client.launch_with(kernel, ::cl::NDRange(1), ::cl::NullRange, buffer);
  CHECK(client.download<int>(buffer, 1) == std::vector<int>{2});
}

TEST_CASE("random buffers are reproducible and read back whole", "[opencl][user-path]") {
  auto& client = shared_client();
  const auto values = cl::random_values<float>(1000, 42, 0.5f, 2.0f);
  CHECK(values == cl::random_values<float>(1000, 42, 0.5f, 2.0f));
  CHECK(values != cl::random_values<float>(1000, 43, 0.5f, 2.0f));
  CHECK(std::all_of(values.begin(), values.end(), [](float v) { return v >= 0.5f && v <= 2.0f; }));
  const auto buffer = cl::random_buffer<float>(client, 1000, 42, 0.5f, 2.0f);
  CHECK(cl::read_all<float>(client, buffer) == values);
  CHECK(cl::seed_of(SizeKey{100}) == cl::seed_of(SizeKey{128}));  // anchored: one key
  CHECK(!cl::compare_buffers<float>(client, buffer, buffer));
  CHECK_THAT(
      cl::compare_buffers<float>(client, buffer, cl::buffer_of<float>(client, 999)).value_or(""),
      Catch::Contains("holds 999 values, the reference 1000"));
  const auto other = cl::random_buffer<float>(client, 1000, 7);
  CHECK_THAT(cl::compare_buffers<float>(client, buffer, other, 1e-5, 1000).value_or(""),
             Catch::Contains("first at 0"));
  CHECK_THROWS_AS(cl::buffer_of<double>(client, std::size_t(-1) / 4), AutotuneError);
}

// random_buffer writes its values a piece (1 Mi values) at a time: the same values as
// random_values across the pieces' seams, and a size the device refuses fails before the host
// makes anything (2^40 floats: made first, they were a std::bad_alloc, not this error).
TEST_CASE(
    "a random buffer larger than a piece holds random_values, and an impossible one fails "
    "before its values are made",
    "[opencl][user-path]") {
  auto& client = shared_client();
  const std::size_t count = (std::size_t{1} << 20) * 3 / 2 + 7;
  CHECK(cl::read_all<float>(client, cl::random_buffer<float>(client, count, 5)) ==
        cl::random_values<float>(count, 5));
  const std::size_t too_many = std::size_t{1} << 40;
  REQUIRE(too_many * sizeof(float) > client.device().max_allocation);
  try {
    (void)cl::random_buffer<float>(client, too_many, 5);
    FAIL("no error");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::allocation);
  }
}

TEST_CASE("compare_buffers takes a NaN or an infinity where the reference has the same",
          "[opencl][user-path]") {
  auto& client = shared_client();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const auto reference = client.upload(std::vector<float>{1.0f, nan, inf, -inf});
  CHECK(!cl::compare_buffers<float>(client, reference,
                                    client.upload(std::vector<float>{1.0f, nan, inf, -inf})));
  CHECK_THAT(cl::compare_buffers<float>(client, reference,
                                        client.upload(std::vector<float>{1.0f, 2.0f, inf, -inf}))
                 .value_or(""),
             Catch::Contains("first at 1"));
  CHECK_THAT(cl::compare_buffers<float>(client, reference,
                                        client.upload(std::vector<float>{1.0f, nan, -inf, -inf}))
                 .value_or(""),
             Catch::Contains("first at 2"));
  CHECK_THAT(cl::compare_buffers<float>(client, client.upload(std::vector<float>{1.0f}),
                                        client.upload(std::vector<float>{nan}))
                 .value_or(""),
             Catch::Contains("first at 0"));
}

TEST_CASE("compare_buffers' tolerance is relative above 1 and absolute below", "[user-path]") {
  using cl::detail::within_tolerance;
  // Relative to the reference where it is above 1: 1000 +- 0.005 is within 1e-5 of it.
  CHECK(within_tolerance(1000.0, 1000.005, 1e-5));
  CHECK(within_tolerance(-1000.0, -1000.005, 1e-5));
  CHECK_FALSE(within_tolerance(1000.0, 1000.02, 1e-5));
  // Absolute below 1: 0.5 +- 2e-5 is not, though it is within 1e-5 of a reference of 2.
  CHECK(within_tolerance(0.5, 0.500005, 1e-5));
  CHECK_FALSE(within_tolerance(0.5, 0.50002, 1e-5));
  CHECK_FALSE(within_tolerance(0.0, 2e-5, 1e-5));
}

TEST_CASE("an input generator and a validator may take the client", "[opencl][user-path]") {
  LocalTuner<SizeKey> tuner("user_path_client_inputs", test::test_settings());
  auto& client = shared_client();
  const auto& set = tuner.init([] {
    auto key_of = [](const ::cl::Buffer&, const std::size_t& n) { return SizeKey{n}; };
    auto inputs = [](cl::Client& c, const SizeKey& key, const ::cl::Buffer&, const std::size_t&) {
      const std::size_t n = key.n.value();
      return std::tuple(cl::random_buffer<float>(c, n, cl::seed_of(key)), n);
    };
    auto same = [](cl::Client& c, const auto& reference, const auto& output) {
      return cl::compare_buffers<float>(c, std::get<0>(reference), std::get<0>(output));
    };
    auto add = [](float amount) {
      return cl::with_kernels(
          [amount](cl::Client& c, ::cl::Kernel& k, ::cl::Buffer& x, std::size_t& n) {
            c.launch_with(k, ::cl::NDRange(n), ::cl::NullRange, x, amount);
          },
          test::test_kernel("add"));
    };
    return TunableSet{key_of, inputs}
        .with(Tunable{"right", add(1.0f)})
        .with(Tunable{"wrong", add(2.0f)})
        .validate_with(same);
  });
  auto data = client.upload(std::vector<float>(100, 0.0f));
  tuner.execute(client.id(), client, set, data, std::size_t{100});
  CHECK(client.download<float>(data, 100) == std::vector<float>(100, 1.0f));
  const auto report = tuner.tuner(client.id()).report(SizeKey{100});
  REQUIRE(report);
  REQUIRE(report->outcomes.size() == 2);
  const auto& wrong = report->outcomes[1];
  CHECK(wrong.name == "wrong");
  REQUIRE(wrong.error);
  CHECK(wrong.error->kind() == ErrorKind::wrong_output);
  CHECK_THAT(wrong.error->message(), Catch::Contains("128 of 128 values differ"));
}

}  // namespace tunekit::test

// NVIDIA ignores #line and names the source "<kernel>": its build logs are mapped back to the
// user's files and lines by the #line directives tunekit wrote.
TEST_CASE("a build log that names <kernel> lines is mapped to the user's files and lines",
          "[opencl][user-path]") {
  const std::string source =
      "#line 1 \"/w/main.cl\"\n"            // 1
      "kernel void k() {\n"                 // 2: main.cl:1
      "#line 1 \"/w/help \\\"er\\\".h\"\n"  // 3
      "float f() { return x; }\n"           // 4: help "er".h:1
      "float g() { return y; }\n"           // 5: help "er".h:2
      "#line 3 \"/w/main.cl\"\n"            // 6
      "}\n";                                // 7: main.cl:3
  const std::string log =
      "<kernel>:4:20: error: use of undeclared identifier 'x'\n"
      "<kernel>:5:20: error: use of undeclared identifier 'y'\n"
      "<source>:7:1: note: here\n"
      "<kernel>:1:1: no directive before it\n"
      "<kernel>:3:1: a directive's own line\n"
      "<kernel>:8:1: the empty line after the last line end\n"
      "<kernel>:9:1: past the end\n"
      "<kernel>:99:1: past the end\n"
      "<kernel>:x: not a line";
  CHECK(tunekit::cl::detail::with_source_lines(source, log) ==
        "/w/help \"er\".h:1:20: error: use of undeclared identifier 'x'\n"
        "/w/help \"er\".h:2:20: error: use of undeclared identifier 'y'\n"
        "/w/main.cl:3:1: note: here\n"
        "<kernel>:1:1: no directive before it\n"
        "/w/main.cl:2:1: a directive's own line\n"
        "/w/main.cl:4:1: the empty line after the last line end\n"
        "<kernel>:9:1: past the end\n"
        "<kernel>:99:1: past the end\n"
        "<kernel>:x: not a line");
  // A log that names every line many times (a build with thousands of warnings): each is mapped.
  std::string many, expected;
  for (int i = 0; i < 3000; ++i) {
    many += "<kernel>:4:1: w\n<source>:7:2: w\n<kernel>:1:3: w\n";
    expected += "/w/help \"er\".h:1:1: w\n/w/main.cl:3:2: w\n<kernel>:1:3: w\n";
  }
  CHECK(tunekit::cl::detail::with_source_lines(source, many) == expected);
  CHECK(tunekit::cl::detail::with_source_lines("kernel void k() {}\n", "<kernel>:1:1: e") ==
        "<kernel>:1:1: e");
  // A user's own directives: a number alone keeps the file; blanks around the '#' are C's; one
  // this cannot read leaves the lines after it as the compiler named them.
  const std::string own =
      "#line 100 \"/w/b.cl\"\n"       // 1
      "int a;\n"                      // 2: b.cl:100
      "#line 7\n"                     // 3
      "int b;\n"                      // 4: b.cl:7
      "  #  line 20 \"/w/c.cl\"\r\n"  // 5
      "int c;\n"                      // 6: c.cl:20
      "#line x\n"                     // 7
      "int d;\n"                      // 8: not mapped
      "#line 5 unquoted\n"            // 9
      "int e;\n"                      // 10: not mapped
      "#lines 3\n"                    // 11: no directive
      "int f;\n";                     // 12: not mapped
  CHECK(tunekit::cl::detail::with_source_lines(
            own,
            "<kernel>:2:1: a\n<kernel>:4:1: b\n<kernel>:6:1: c\n<kernel>:8:1: d\n"
            "<kernel>:10:1: e\n<kernel>:12:1: f\n") ==
        "/w/b.cl:100:1: a\n/w/b.cl:7:1: b\n/w/c.cl:20:1: c\n<kernel>:8:1: d\n"
        "<kernel>:10:1: e\n<kernel>:12:1: f\n");
  // A number alone before any file is named maps nothing.
  CHECK(tunekit::cl::detail::with_source_lines("#line 50\nint a;\n", "<kernel>:2:1: a") ==
        "<kernel>:2:1: a");
}
