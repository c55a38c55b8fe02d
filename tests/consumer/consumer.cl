// The consumer's own kernel, embedded with tunekit_embed_kernels (the installed package's CMake
// function): main_cl.cpp runs it after its source directory is gone.
__kernel void twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }
