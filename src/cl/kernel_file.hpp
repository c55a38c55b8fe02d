// Reading a user's OpenCL C file into one self-contained source text (see KernelSpec::from_file).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::cl::detail {

/// The text of `file` with every `#include "name"` / `#include <name>` replaced by the included
/// file's text (looked up beside the including file for "name", then in `include_dirs` in order),
/// and `#line` directives that keep the compiler's messages pointing at the user's files and
/// lines. The result is what gets compiled, hashed into the set's checksum and keyed in the
/// program-binary cache, so that editing any file read invalidates both. A file with
/// `#pragma once` is read once. Throws AutotuneError(build) naming the file (and the line of the
/// #include) when a file cannot be read, an include is not found, includes nest too deep, or
/// the text grows past 64 MiB.
std::string read_kernel_file(const std::filesystem::path& file,
                             const std::vector<std::filesystem::path>& include_dirs);

/// The same for a file the program embedded (tunekit_embed_kernels) under `name`: its includes
/// are looked up among the embedded files, beside the including one, then by their own name.
/// Throws AutotuneError(build) naming the file and the embedded ones when it is not embedded.
std::string read_embedded_kernel(std::string_view name);

/// Whether a line of `text` is an `#include "name"` or `#include <name>` that the expansion
/// above replaces (one that does not start inside a block comment).
bool has_include_directive(std::string_view text);

/// The same as read_embedded_kernel for tunekit's own kernels/<name> (embedded in the library:
/// embedded_source), its includes looked up among them. What KernelSpec::embedded compiles for a
/// kernel that includes another (matmul_tc.cl and matmul_wgmma.cl include tensor_core.cl).
std::string read_library_kernel(std::string_view name);

/// A string literal for a #line directive: `path` with `\` and `"` escaped, control bytes
/// replaced by '?'.
std::string quoted_file_name(std::string_view path);

/// What is compiled for `source`: `source` itself when it starts with a #line directive (a
/// user's file: read_kernel_file), else `source` under `#line 1 "<origin>"`, so that build logs
/// name the kernel's origin ("reduce.cl", a from_text label) instead of a temporary file of the
/// driver. Only the compiled text changes: caches stay keyed by `source`.
std::string named_source(std::string_view source, std::string_view origin);

/// `log` (a build log of `source`) with every `<kernel>:LINE:` and `<source>:LINE:` (how NVIDIA
/// names the source it was given: it ignores #line) replaced by the file and line that the
/// #line directives of `source` give for that line, as PoCL writes them. Unchanged where
/// `source` has no #line directive before that line.
std::string with_source_lines(std::string_view source, std::string log);

/// The line of a build log that a person reads first: the first that reports an error (Clang's
/// and NVIDIA's "file:line:col: error: ...", PoCL's "error: file:line:col: ..."), else the first
/// line that is not blank; empty for an empty log. It leads the build error's message, so that
/// a table row (AutotuneError::summary()) names the file and line, and candidates that hit the
/// same compiler error are grouped.
std::string_view first_error(std::string_view log);

}  // namespace tunekit::cl::detail
