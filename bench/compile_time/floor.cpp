// What user_matmul.cpp cannot compile faster than while the public API stays: OpenCL-CLHPP
// (::cl:: types in tunekit/cl.hpp's signatures) and Hana's struct reflection (MatmulKey).
// scripts/compile-time.sh BASE bench/compile_time/floor.cpp
#include <CL/opencl.hpp>
#include <boost/hana/define_struct.hpp>
#include <ostream>

int main() {
  cl::Context context;
  return 0;
}
