// Queues on OpenCL 1.x and 2.0+ platforms: each gets the call its platform has
// (src/cl/command_queue.hpp).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../../src/cl/command_queue.hpp"
#include "support_cl.hpp"

namespace tunekit::test {

TEST_CASE("a platform's version says whether it has clCreateCommandQueueWithProperties",
          "[opencl][queue]") {
  using cl::detail::has_queue_with_properties;
  CHECK(has_queue_with_properties("OpenCL 3.0 PoCL 6.0+debian  Linux, ..."));
  CHECK(has_queue_with_properties("OpenCL 3.0 CUDA 13.0.88"));
  CHECK(has_queue_with_properties("OpenCL 2.1 AMD-APP (3513.0)"));
  CHECK(has_queue_with_properties("OpenCL 10.0 future"));
  CHECK_FALSE(has_queue_with_properties("OpenCL 1.2 CUDA 11.2.0"));
  CHECK_FALSE(has_queue_with_properties("OpenCL 1.1 Mesa"));
  // What does not read as a version takes the call every platform has.
  CHECK_FALSE(has_queue_with_properties(""));
  CHECK_FALSE(has_queue_with_properties("OpenCL"));
  CHECK_FALSE(has_queue_with_properties("OpenCL 3"));
  CHECK_FALSE(has_queue_with_properties("OpenCL x.0"));
  CHECK_FALSE(has_queue_with_properties("opencl 3.0"));
  CHECK_FALSE(has_queue_with_properties("OpenCL 99999.0"));
  CHECK_FALSE(has_queue_with_properties("OpenCL 2x.0"));
  using cl::detail::opencl_version;
  REQUIRE(opencl_version("OpenCL 1.2 CUDA 11.2.0"));
  CHECK(opencl_version("OpenCL 1.2 CUDA")->minor == 2);
  CHECK(opencl_version("OpenCL 3.0")->major == 3);
  CHECK(*opencl_version("OpenCL 1.1 Mesa") < cl::detail::oldest_opencl);
  CHECK_FALSE(*opencl_version("OpenCL 1.2") < cl::detail::oldest_opencl);
  CHECK_FALSE(opencl_version("OpenCL 1."));
  CHECK_FALSE(opencl_version("OpenCL 1.x"));
}

TEST_CASE("both queue calls give an in-order profiling queue that runs and times a kernel",
          "[opencl][queue]") {
  auto& client = shared_client();
  const ::cl::Device device = client.device().device;
  const ::cl::Program program = client.program(test_kernel("add"));
  for (const bool with_properties : {true, false}) {
    CAPTURE(with_properties);
    cl_int code = CL_SUCCESS;
    ::cl::CommandQueue queue = cl::detail::command_queue(
        client.context(), device, CL_QUEUE_PROFILING_ENABLE, with_properties, &code);
    REQUIRE(code == CL_SUCCESS);
    REQUIRE(queue() != nullptr);
    cl_command_queue_properties properties = 0;
    REQUIRE(queue.getInfo(CL_QUEUE_PROPERTIES, &properties) == CL_SUCCESS);
    CHECK(properties == CL_QUEUE_PROFILING_ENABLE);
    float data[64] = {};
    ::cl::Buffer buffer(client.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data,
                        data);
    ::cl::Kernel kernel(program, "add");
    kernel.setArg(0, buffer);
    kernel.setArg(1, 2.5f);
    ::cl::Event done;
    REQUIRE(queue.enqueueNDRangeKernel(kernel, ::cl::NullRange, ::cl::NDRange(64), ::cl::NullRange,
                                       nullptr, &done) == CL_SUCCESS);
    REQUIRE(queue.enqueueReadBuffer(buffer, CL_TRUE, 0, sizeof data, data) == CL_SUCCESS);
    CHECK(data[0] == 2.5f);
    CHECK(data[63] == 2.5f);
    cl_ulong start = 0, end = 0;
    CHECK(done.getProfilingInfo(CL_PROFILING_COMMAND_START, &start) == CL_SUCCESS);
    CHECK(done.getProfilingInfo(CL_PROFILING_COMMAND_END, &end) == CL_SUCCESS);
    CHECK(end >= start);
  }
}

// Run with opencl_1_2_shim preloaded (its own CTest entry): the platform says OpenCL 1.2, and
// clCreateCommandQueueWithProperties fails, writing a line to TUNEKIT_TEST_QUEUE_CALLS.
TEST_CASE("on an OpenCL 1.2 platform a client's queue comes from clCreateCommandQueue",
          "[.][opencl-1-2]") {
  const char* calls = std::getenv("TUNEKIT_TEST_QUEUE_CALLS");
  REQUIRE(calls != nullptr);
  std::filesystem::remove(calls);
  cl::Client client;
  REQUIRE(client.device().platform_version.rfind("OpenCL 1.2", 0) == 0);
  auto kernel = client.kernel(test_kernel("busy"));
  const auto input = ramp(256);
  auto data = client.upload(input);
  client.measure(
      [&] { client.launch_with(kernel, ::cl::NDRange(256), ::cl::NDRange(64), data, 10); }, 1);
  CHECK(client.last_measure_source() == cl::MeasureSource::events);
  std::vector<float> want(input);
  for (float& x : want) x = busy_reference(x, 10);
  CHECK(max_error(client.download<float>(data, 256), want) < 1e-5);
  // A queue made on the device's own platform's version, as the ops' read-back makes it.
  cl_int code = CL_SUCCESS;
  CHECK(cl::detail::command_queue(client.context(), client.device().device, 0, &code)() != nullptr);
  CHECK(code == CL_SUCCESS);
  CHECK_FALSE(std::filesystem::exists(calls));  // the 2.0 call was never made
}

}  // namespace tunekit::test

namespace tunekit::test {

// Run with opencl_1_2_shim preloaded and TUNEKIT_TEST_OPENCL_VERSION "OpenCL 1.1 ..." (its own
// CTest entry): a client is refused before anything is made, naming what the platform lacks.
TEST_CASE("an OpenCL 1.1 platform is refused, naming what it lacks", "[.][opencl-1-1]") {
  try {
    cl::Client client;
    FAIL("a client was made on " << client.device().platform_version);
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::device);
    CHECK_THAT(e.message(), Catch::Contains("OpenCL 1.1") &&
                                Catch::Contains("tunekit needs OpenCL 1.2 or later") &&
                                Catch::Contains("clEnqueueFillBuffer"));
  }
}

}  // namespace tunekit::test
