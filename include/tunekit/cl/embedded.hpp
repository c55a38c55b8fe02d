// The OpenCL sources of kernels/*.cl, compiled into the library at build time and found by file
// name, so that a program never depends on where kernel files are installed.
#pragma once

#include <cstddef>
#include <optional>
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

/// The text of a file that this program embedded with the CMake function
/// `tunekit_embed_kernels(<target> FILES ...)` (cmake/TunekitProgramKernels.cmake, installed with
/// the package), by the name it was embedded under; nothing when there is none. Throws
/// AutotuneError(build) when two different texts were embedded under that name.
std::optional<std::string_view> program_source(std::string_view name);

/// The names of every file this program embedded with tunekit_embed_kernels, sorted.
std::vector<std::string_view> program_sources();

namespace detail {
/// Called before main by the files tunekit_embed_kernels generates: `text` (`size` bytes, static
/// storage) is the file embedded as `name` (a string literal).
void register_program_source(const char* name, const unsigned char* text,
                             std::size_t size) noexcept;
}  // namespace detail

}  // namespace tunekit::cl
