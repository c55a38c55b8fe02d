# Turns one OpenCL source file into a C++ file holding its text as bytes, so that the library
# never looks for kernel files at run time. Run as: cmake -DINPUT=a.cl -DOUTPUT=a.cpp -DSYMBOL=x -P
# (bytes, not a raw string literal: any text, whatever delimiters it contains, embeds unchanged).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# Line breaks every 24 bytes keep the generated file readable by a compiler's diagnostics.
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){24})" "\\1\n" bytes "${bytes}")
get_filename_component(name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from kernels/${name} by cmake/tunekit_embed_kernel.cmake: do not edit.\n"
  "#include <cstddef>\n"
  "namespace tunekit::cl::embedded {\n"
  "extern const unsigned char ${SYMBOL}[];\n"
  "extern const std::size_t ${SYMBOL}_size;\n"
  "// One trailing zero: the text can also be handed to C APIs as a string.\n"
  "const unsigned char ${SYMBOL}[] = {\n${bytes}0x00};\n"
  "const std::size_t ${SYMBOL}_size = ${size};\n"
  "}  // namespace tunekit::cl::embedded\n")
# Only touch the output when it changed, so that an unchanged kernel recompiles nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
