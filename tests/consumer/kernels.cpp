// A static library whose only content the program uses is the kernel file embedded into it
// (tests/consumer/CMakeLists.txt): nothing refers to this function.
int consumer_kernels_version() { return 1; }
