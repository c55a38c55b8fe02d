// Embedded into tunekit_cl_tests by tunekit_embed_kernels (tests/cl/CMakeLists.txt), with the
// header it includes: found by name from any directory (test_user_path.cpp).
#include "common/scale.h"

__kernel void scale(__global float* x) { x[get_global_id(0)] *= SCALE; }
