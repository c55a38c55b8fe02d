# Turns one OpenCL file of a program into a C++ file that holds its text as bytes and registers
# it under NAME before main (tunekit::cl::KernelSpec::from_embedded). Used by
# tunekit_embed_kernels (TunekitProgramKernels.cmake). Run as:
#   cmake -DINPUT=a.cl -DOUTPUT=a.cpp -DNAME=a.cl -DSYMBOL=x -P tunekit_embed_program_kernel.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){24})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${NAME} by tunekit_embed_kernels: do not edit.\n"
  "#include <cstddef>\n"
  "namespace tunekit::cl::detail {\n"
  "void register_program_source(const char* name, const unsigned char* text,\n"
  "                             std::size_t size) noexcept;\n"
  "}  // namespace tunekit::cl::detail\n"
  "// Named by the link option of a static library (its users keep this file).\n"
  "extern \"C\" const char ${SYMBOL};\n"
  "extern \"C\" const char ${SYMBOL} = 0;\n"
  "namespace {\n"
  "// One trailing zero: the text can also be handed to C APIs as a string.\n"
  "const unsigned char text[] = {\n${bytes}0x00};\n"
  "struct Registration {\n"
  "  Registration() { tunekit::cl::detail::register_program_source(\"${NAME}\", text, ${size}); }\n"
  "} const registration;\n"
  "}  // namespace\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
