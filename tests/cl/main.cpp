// The OpenCL runtime's test executable (tests labelled `opencl`).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
