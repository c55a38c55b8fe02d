// The OpenCL sources of kernels/*.cl, compiled into the library at build time and found by file
// name, so that a program never depends on where kernel files are installed.
#pragma once

#include <string_view>
#include <vector>

namespace tunekit::cl {

/// The text of kernels/<file_name> as it was at build time, e.g. embedded_source("matmul.cl").
/// Throws AutotuneError(build) naming the embedded files when there is no such file.
std::string_view embedded_source(std::string_view file_name);

/// Whether kernels/<file_name> was embedded.
bool has_embedded_source(std::string_view file_name);

/// The file names of every embedded source, sorted.
std::vector<std::string_view> embedded_sources();

}  // namespace tunekit::cl
