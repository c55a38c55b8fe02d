// OpenCL failures as AutotuneErrors of the right kind with readable messages, checked before
// launch where possible; a failing candidate loses and tuning goes on.
#include <catch2/catch.hpp>

#include "../../src/cl/compiled_work_group.hpp"
#include "support_cl.hpp"

namespace tunekit::test {

namespace {
template <class F>
AutotuneError error_of(F&& f) {
  try {
    f();
  } catch (const AutotuneError& e) {
    return e;
  }
  FAIL("expected an AutotuneError");
  return AutotuneError(ErrorKind::runtime, "unreachable");
}
}  // namespace

TEST_CASE("OpenCL error codes map to names and AutotuneError kinds", "[opencl][errors]") {
  CHECK(cl::error_name(CL_OUT_OF_RESOURCES) == "CL_OUT_OF_RESOURCES");
  CHECK(cl::error_name(-9999) == "OpenCL error -9999");
  CHECK(cl::error_kind(CL_BUILD_PROGRAM_FAILURE) == ErrorKind::build);
  CHECK(cl::error_kind(CL_INVALID_BUILD_OPTIONS) == ErrorKind::build);
  CHECK(cl::error_kind(CL_OUT_OF_RESOURCES) == ErrorKind::out_of_resources);
  CHECK(cl::error_kind(CL_MEM_OBJECT_ALLOCATION_FAILURE) == ErrorKind::allocation);
  CHECK(cl::error_kind(CL_INVALID_BUFFER_SIZE) == ErrorKind::allocation);
  CHECK(cl::error_kind(CL_INVALID_WORK_GROUP_SIZE) == ErrorKind::launch);
  CHECK(cl::error_kind(CL_INVALID_KERNEL_ARGS) == ErrorKind::launch);
  CHECK(cl::error_kind(CL_INVALID_ARG_SIZE) == ErrorKind::launch);
  CHECK(cl::error_kind(-1001) == ErrorKind::device);
  CHECK(cl::error_kind(-9999) == ErrorKind::runtime);
  CHECK(cl::error_kind(CL_INVALID_COMPILER_OPTIONS) == ErrorKind::build);
  CHECK(cl::error_kind(CL_INVALID_LINKER_OPTIONS) == ErrorKind::build);
  CHECK(cl::error_kind(-71) == ErrorKind::build);  // CL_INVALID_SPEC_ID
  CHECK(cl::error_kind(-72) == ErrorKind::out_of_resources);
  CHECK(cl::error_name(-72) == "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  CHECK(cl::error_kind(-69) == ErrorKind::allocation);  // CL_INVALID_PIPE_SIZE
  CHECK(cl::error_kind(CL_DEVICE_PARTITION_FAILED) == ErrorKind::device);
  // Every code of the OpenCL 3.0 table has its name and a kind of its own.
  for (cl_int code = -1; code >= -72; --code) {
    if (code <= -20 && code >= -29) continue;  // unassigned by the specification
    INFO("code " << code);
    CHECK_THAT(cl::error_name(code), Catch::StartsWith("CL_"));
    CHECK_THAT(cl::make_error(code, "x").message(),
               Catch::Contains(" (" + std::to_string(code) + "): "));  // and a hint
  }
  const auto e = cl::make_error(CL_OUT_OF_RESOURCES, "enqueueing kernel 'k'");
  CHECK(e.kind() == ErrorKind::out_of_resources);
  CHECK_THAT(e.message(), Catch::StartsWith("enqueueing kernel 'k'") &&
                              Catch::Contains("CL_OUT_OF_RESOURCES (-5)"));
}

TEST_CASE("a work-group over the kernel's maximum is out of resources, before launch",
          "[opencl][errors]") {
  auto& client = shared_client();
  auto buffer = client.allocate(sizeof(float) * 16384);
  auto kernel = client.kernel(test_kernel("add"));
  cl::set_args(kernel, buffer, 1.0f);
  const std::size_t too_many = client.device().max_work_group_size * 2;
  const auto e =
      error_of([&] { client.launch(kernel, ::cl::NDRange(too_many), ::cl::NDRange(too_many)); });
  CHECK(e.kind() == ErrorKind::out_of_resources);
  CHECK_THAT(e.message(), Catch::Contains("work-group " + std::to_string(too_many) + " exceeds") &&
                              Catch::Contains("maximum") &&
                              Catch::Contains(client.device().device_name) &&
                              Catch::Contains("'add'"));
  // 2D: both dimensions and their product are named.
  const auto e2 = error_of(
      [&] { client.launch(kernel, ::cl::NDRange(too_many, 2), ::cl::NDRange(too_many / 2, 2)); });
  CHECK(e2.kind() == ErrorKind::out_of_resources);
  CHECK_THAT(e2.message(),
             Catch::Contains(std::to_string(too_many / 2) + "x2=" + std::to_string(too_many)));
}

TEST_CASE("on NVIDIA a kernel compiled for its work-group is held to the device's maximum only",
          "[errors]") {
  using cl::detail::trusts_compiled_work_group;
  using cl::detail::work_group_limit;
  // NVIDIA reports 256 for every kernel, and runs those compiled for 512 or 1024 work-items.
  CHECK(trusts_compiled_work_group(true, {32, 16, 1}, {32, 16, 1}));
  CHECK_FALSE(trusts_compiled_work_group(false, {32, 16, 1}, {32, 16, 1}));  // another vendor's
  CHECK_FALSE(trusts_compiled_work_group(true, {32, 16, 1}, {16, 32, 1}));   // another shape of 512
  CHECK_FALSE(trusts_compiled_work_group(true, {32, 16, 1}, {32, 16, 2}));
  CHECK_FALSE(trusts_compiled_work_group(true, {0, 0, 0}, {32, 16, 1}));  // compiled for none
  CHECK(work_group_limit(256, 1024, true) == 1024);
  CHECK(work_group_limit(256, 1024, false) == 256);
  CHECK(work_group_limit(2048, 1024, true) == 1024);  // never past the device's
  CHECK(work_group_limit(2048, 1024, false) == 1024);
  CHECK(work_group_limit(0, 1024, false) == 1024);  // a driver that reports none
}

TEST_CASE("a kernel argument left unset is named by its index and name", "[opencl][errors]") {
  auto& client = shared_client();
  auto buffer = client.allocate(sizeof(float) * 64);
  SECTION("launch_with knows how many it gave") {
    auto kernel = client.kernel(test_kernel("add_local"));
    const auto e = error_of(
        [&] { client.launch_with(kernel, ::cl::NDRange(64), ::cl::NDRange(64), buffer, 1.0f); });
    CHECK(e.kind() == ErrorKind::launch);
    CHECK_THAT(e.message(), Catch::StartsWith("argument 2 'scratch' (__local") &&
                                Catch::Contains("of kernel 'add_local' is not set") &&
                                Catch::Contains("gave 2 of its 3 arguments"));
  }
  SECTION("set by hand: every argument is listed") {
    auto kernel = client.kernel(test_kernel("add"));
    cl::set_args(kernel, buffer);
    const auto e = error_of([&] { client.launch(kernel, ::cl::NDRange(64), ::cl::NDRange(64)); });
    CHECK(e.kind() == ErrorKind::launch);
    CHECK_THAT(e.message(), Catch::StartsWith("an argument of kernel 'add' is not set") &&
                                Catch::Contains("0 'data', 1 'amount'"));
  }
}

TEST_CASE(
    "local memory beyond the device's is out of resources, named with the device's limits (before "
    "launch, or from the driver where declared arrays may take more than __local arguments)",
    "[opencl][errors]") {
  auto& client = shared_client();
  auto buffer = client.allocate(sizeof(float) * 64);
  auto kernel = client.kernel(test_kernel("add_local"));
  const std::size_t bytes = client.device().local_memory + 4096;
  cl::set_args(kernel, buffer, 1.0f, ::cl::Local(bytes));
  const auto e = error_of([&] { client.launch(kernel, ::cl::NDRange(64), ::cl::NDRange(64)); });
  CHECK(e.kind() == ErrorKind::out_of_resources);
  CHECK_THAT(e.message(), Catch::Contains("bytes local memory") &&
                              Catch::Contains(std::to_string(client.device().local_memory)));
  if (client.device().declared_local_memory() > client.device().local_memory) {
    // The argument passed check_launch (held to the declared limit); the driver refused it.
    CHECK_THAT(e.message(),
               Catch::Contains(std::to_string(client.device().declared_local_memory())) &&
                   Catch::Contains("for __local arguments"));
  }

  // A static __local array past what the device lets declared arrays take (more than
  // local_memory on NVIDIA compute capability 9.0) fails to build or to launch, never silently.
  const auto spec = cl::KernelSpec::from_text(
      "__kernel void big(__global float* out) {\n"
      "  __local float tile[BIG];\n"
      "  tile[get_local_id(0)] = 1.0f;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  out[get_global_id(0)] = tile[get_local_id(0)];\n"
      "}\n",
      "-DBIG=" + std::to_string(client.device().declared_local_memory() / sizeof(float) + 1024),
      "big");
  const auto e2 = error_of([&] {
    auto big = client.kernel(spec);
    client.launch_with(big, ::cl::NDRange(64), ::cl::NDRange(64), buffer);
    client.finish();
  });
  CHECK((e2.kind() == ErrorKind::out_of_resources || e2.kind() == ErrorKind::build));
}

TEST_CASE("launch errors name the CL code, the kernel and the sizes asked for",
          "[opencl][errors]") {
  auto& client = shared_client();
  auto buffer = client.allocate(sizeof(float) * 100);
  auto kernel = client.kernel(test_kernel("add"));
  // Arguments never set: the driver's CL_INVALID_KERNEL_ARGS.
  const auto unset = error_of([&] { client.launch(kernel, ::cl::NDRange(64), ::cl::NDRange(16)); });
  CHECK(unset.kind() == ErrorKind::launch);
  CHECK_THAT(unset.message(), Catch::Contains("CL_INVALID_KERNEL_ARGS") &&
                                  Catch::Contains("'add'") && Catch::Contains("global 64") &&
                                  Catch::Contains("work-group 16"));
  // A wrongly sized argument: rejected when set, naming its index.
  const auto bad_arg = error_of([&] { cl::set_args(kernel, buffer, 1.0); });
  CHECK(bad_arg.kind() == ErrorKind::launch);
  CHECK_THAT(bad_arg.message(), Catch::Contains("argument 1") && Catch::Contains("'add'"));
  // A global size that work-groups do not tile.
  cl::set_args(kernel, buffer, 1.0f);
  const auto ragged =
      error_of([&] { client.launch(kernel, ::cl::NDRange(100), ::cl::NDRange(64)); });
  CHECK(ragged.kind() == ErrorKind::launch);
  CHECK_THAT(ragged.message(), Catch::Contains("not a multiple"));
}

TEST_CASE("a buffer larger than the device allows is an allocation error", "[opencl][errors]") {
  auto& client = shared_client();
  const auto e = error_of([&] { (void)client.allocate(client.device().max_allocation + 1); });
  CHECK(e.kind() == ErrorKind::allocation);
  CHECK_THAT(e.message(), Catch::Contains(std::to_string(client.device().max_allocation)));
}

TEST_CASE("candidates out of resources fail with their reason and tuning goes on",
          "[opencl][errors][tuner]") {
  auto& client = shared_client();
  constexpr std::size_t n = 4096;
  LocalTuner<SizeKey> tuner("cl-resources", test_settings());
  const auto& set = tuner.init([&] {
    auto key = [](const ::cl::Buffer&, const std::size_t& size) { return SizeKey{size}; };
    // Fresh buffers to tune on: the caller's data is written once, by the winner.
    auto inputs = [&](const SizeKey& k, const ::cl::Buffer&, const std::size_t&) {
      const std::size_t size = k.n.value();
      return std::tuple<::cl::Buffer, std::size_t>(client.upload(ramp(size)), size);
    };
    const std::size_t huge_group = client.device().max_work_group_size * 2;
    const std::size_t huge_local = client.device().local_memory + 4096;
    return TunableSet{key, inputs}
        .with(Tunable{
            "plain", cl::with_kernels(
                         [](cl::Client& c, ::cl::Kernel& k, ::cl::Buffer& data, std::size_t& size) {
                           c.launch_with(k, ::cl::NDRange(size), ::cl::NDRange(64), data, 1.0f);
                         },
                         test_kernel("add"))})
        .with(Tunable{"huge work-group",
                      cl::with_kernels(
                          [=](cl::Client& c, ::cl::Kernel& k, ::cl::Buffer& data, std::size_t&) {
                            c.launch_with(k, ::cl::NDRange(huge_group), ::cl::NDRange(huge_group),
                                          data, 1.0f);
                          },
                          test_kernel("add"))})
        .with(
            Tunable{"huge local memory",
                    cl::with_kernels(
                        [=](cl::Client& c, ::cl::Kernel& k, ::cl::Buffer& data, std::size_t& size) {
                          c.launch_with(k, ::cl::NDRange(size), ::cl::NDRange(64), data, 1.0f,
                                        ::cl::Local(huge_local));
                        },
                        test_kernel("add_local"))})
        .with(
            Tunable{"through local memory",
                    cl::with_kernels(
                        [](cl::Client& c, ::cl::Kernel& k, ::cl::Buffer& data, std::size_t& size) {
                          c.launch_with(k, ::cl::NDRange(size), ::cl::NDRange(64), data, 1.0f,
                                        ::cl::Local(64 * sizeof(float)));
                        },
                        test_kernel("add_local"))});
  });
  auto data = client.upload(ramp(n));
  std::size_t size = n;
  tuner.execute(client.id(), client, set, data, size);
  auto want = ramp(n);
  for (float& x : want) x += 1.0f;
  CHECK(max_error(client.download<float>(data, n), want) < 1e-6);

  const auto report = tuner.tuner(client.id()).report(SizeKey{n});
  REQUIRE(report);
  REQUIRE(report->winner());
  CHECK((report->winner()->name == "plain" || report->winner()->name == "through local memory"));
  for (const auto& outcome : report->outcomes) {
    INFO(outcome.name);
    if (outcome.name == "huge work-group" || outcome.name == "huge local memory") {
      CHECK(outcome.status == OutcomeStatus::failed);
      REQUIRE(outcome.error);
      CHECK(outcome.error->kind() == ErrorKind::out_of_resources);
      CHECK(outcome.error->tunable() == outcome.name);
      CHECK_THAT(
          outcome.error->message(),
          Catch::Contains(outcome.name == "huge work-group" ? "exceeds" : "bytes local memory"));
    } else {
      CHECK(outcome.ok());
      CHECK(outcome.median > 0);
    }
  }
  CHECK_THAT(format_report(*report), Catch::Contains("not for this device (out of resources)"));
  CHECK_THAT(format_report(*report, ReportDetail::full),
             Catch::Contains("FAILED") && Catch::Contains("out of resources"));
}

}  // namespace tunekit::test
