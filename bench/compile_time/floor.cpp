// What user_matmul.cpp cannot compile faster than while the public API stays: OpenCL-CLHPP,
// <filesystem> (KernelSpec::from_file takes std::filesystem::path) and Hana's struct reflection
// (MatmulKey). scripts/compile-time.sh BASE bench/compile_time/floor.cpp
#include <CL/opencl.hpp>
#include <boost/hana/define_struct.hpp>
#include <filesystem>
#include <ostream>

int main() {
  cl::Context context;
  return 0;
}
