// KernelSpec: which OpenCL kernel a candidate runs (source, build options, kernel name), and
// with_kernels(), which makes a candidate's kernels part of its tunable set's checksum.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/cl/opencl.hpp"

namespace tunekit::cl {

class Client;

/// A file or directory path as KernelSpec takes it: from a std::filesystem::path, a
/// std::filesystem::directory_entry, a string or a string view. Not a std::filesystem::path
/// itself, so that tunekit/cl.hpp costs a user's file no <filesystem> (issue 28: the compile
/// time of a user's file); kernel_spec.cpp turns it back into one.
struct PathText {
  std::string text;

  template <class Path>
  requires std::is_convertible_v<const Path&, std::string_view> || requires(const Path& path) {
    path.string();
  } || requires(const Path& path) {
    path.path().string();
  }
  PathText(const Path& path)  // NOLINT(google-explicit-constructor): a path converts implicitly
      : text(text_of(path)) {}

 private:
  template <class Path>
  static std::string text_of(const Path& path) {
    if constexpr (std::is_convertible_v<const Path&, std::string_view>) {
      return std::string(std::string_view(path));
    } else if constexpr (requires { path.string(); }) {
      return std::string(path.string());  // std::filesystem::path
    } else {
      return std::string(path.path().string());  // std::filesystem::directory_entry
    }
  }
};

/// A kernel to build and run: its source text, its build options and its name. Cheap to copy
/// (embedded sources are referenced, inline text is shared).
class KernelSpec {
 public:
  /// `source` is the file name of an embedded kernel ("reduce.cl": one line ending in ".cl"),
  /// or else the OpenCL C text itself. Throws AutotuneError(build) for an unknown file name.
  KernelSpec(std::string_view source, std::string build_options, std::string kernel_name);

  /// kernels/<file_name>, embedded at build time; an `#include "x.cl"` in it is replaced by
  /// kernels/x.cl (the text compiled, hashed and keyed is the expanded one).
  static KernelSpec embedded(std::string_view file_name, std::string build_options,
                             std::string kernel_name);
  /// OpenCL C text given by the caller; `label` names it in build errors.
  static KernelSpec from_text(std::string text, std::string build_options, std::string kernel_name,
                              std::string label = "<inline source>");
  /// The OpenCL C file `path` of the caller (read now, with every file it #includes: looked up
  /// beside the including file for "name", then in `include_dirs`). Build errors name these
  /// files and their lines; their whole text is part of the set's checksum and of the program
  /// binary's key, so editing any of them rebuilds and re-tunes. A file (or #include) that
  /// cannot be read or found does not throw here: the spec keeps the reason (problem()), and
  /// only the candidates that use it fail, with an AutotuneError(build) naming the file.
  static KernelSpec from_file(const PathText& path, std::string build_options,
                              std::string kernel_name,
                              const std::vector<PathText>& include_dirs = {});
  /// from_file with the include directories in a vector of another type (paths, strings).
  template <class Dir>
  requires(!std::is_same_v<Dir, PathText> &&
           std::is_constructible_v<PathText, const Dir&>) static KernelSpec
      from_file(const PathText& path, std::string build_options, std::string kernel_name,
                const std::vector<Dir>& include_dirs) {
    return from_file(path, std::move(build_options), std::move(kernel_name),
                     std::vector<PathText>(include_dirs.begin(), include_dirs.end()));
  }
  /// A kernel file that this program embedded with the CMake function
  /// `tunekit_embed_kernels(<target> FILES softmax.cl ...)`, by the name it was embedded under
  /// ("softmax.cl"; a path relative to BASE_DIR when one was given). The text is in the
  /// executable: it runs from any directory and on any machine. `#include "x.h"` is looked up
  /// among the embedded files, beside the including one, then by its name. Like from_file, a
  /// name that is not embedded fails only the candidates that use it (problem() says why and
  /// which names are embedded).
  static KernelSpec from_embedded(std::string_view name, std::string build_options,
                                  std::string kernel_name);
  /// A kernel file installed beside the program rather than embedded in it: `name` (a relative
  /// path such as "softmax.cl") is looked up in each directory of TUNEKIT_KERNEL_PATH
  /// (colon-separated absolute directories), then in the executable's directory, and the first
  /// regular file found is read as from_file reads it. None found: like from_file, only the
  /// candidates that use the spec fail, and problem() lists the paths tried.
  static KernelSpec from_search_path(std::string_view name, std::string build_options,
                                     std::string kernel_name,
                                     const std::vector<PathText>& include_dirs = {});
  /// from_search_path with the include directories in a vector of another type.
  template <class Dir>
  requires(!std::is_same_v<Dir, PathText> &&
           std::is_constructible_v<PathText, const Dir&>) static KernelSpec
      from_search_path(std::string_view name, std::string build_options, std::string kernel_name,
                       const std::vector<Dir>& include_dirs) {
    return from_search_path(name, std::move(build_options), std::move(kernel_name),
                            std::vector<PathText>(include_dirs.begin(), include_dirs.end()));
  }

  std::string_view source() const noexcept { return source_; }
  const std::string& build_options() const noexcept { return options_; }
  const std::string& kernel_name() const noexcept { return kernel_name_; }
  /// The file name, or the label of inline text: where a build error points.
  const std::string& origin() const noexcept { return origin_; }
  /// stable_hash of the source, computed once (once per file and process for the library's
  /// kernels): the program cache's key with the options, and the source's part of fingerprint().
  std::uint64_t source_hash() const noexcept { return source_hash_; }
  /// Why this kernel cannot be built (its file could not be read or found); empty when it can.
  /// Building it (Client::kernel, Client::program, ProgramCache) throws AutotuneError(build)
  /// with this message, so a tuning fails the candidates that use it and measures the others.
  const std::string& problem() const noexcept { return problem_; }

  /// Kernel name, build options and the source's size and stable hash: what a tunable set's
  /// checksum must cover so that editing the kernel invalidates cached results.
  std::string fingerprint() const;

 private:
  KernelSpec() = default;
  void set_text(std::string_view text, std::shared_ptr<const std::string> owner);
  void set_library_text(std::string_view file_name);  // kernels/<file_name>, includes expanded
  static KernelSpec unavailable(std::string problem, std::string build_options,
                                std::string kernel_name, std::string origin);

  std::shared_ptr<const std::string> owned_;  // empty where source_ is static storage
  std::string_view source_;
  std::string options_;
  std::string kernel_name_;
  std::string origin_;
  std::string problem_;
  std::uint64_t source_hash_ = 0;
};

/// Where KernelSpec::from_search_path looks for a kernel file, in order: each usable directory
/// of TUNEKIT_KERNEL_PATH (absolute; an entry that is not, or has control characters, is left
/// out with a warning), then the executable's directory.
std::vector<std::string> kernel_search_path();

/// A fresh kernel object for `spec` from `client`'s program cache (defined with Client).
::cl::Kernel make_kernel(Client& client, const KernelSpec& spec);
/// The program of `spec` from `client`'s program cache, built if it is not yet.
::cl::Program make_program(Client& client, const KernelSpec& spec);
/// The same, and its binary stored (ProgramCache::keep).
void keep_program(Client& client, const KernelSpec& spec);

namespace detail {
template <std::size_t>
using KernelRef = ::cl::Kernel&;

template <class Fn, class Indices, class... Args>
inline constexpr bool invocable_with_kernels = false;
template <class Fn, std::size_t... I, class... Args>
inline constexpr bool invocable_with_kernels<Fn, std::index_sequence<I...>, Args...> =
    std::is_invocable_v<const Fn&, Client&, KernelRef<I>..., Args...>;
}  // namespace detail

/// A candidate that runs OpenCL kernels: calls `fn(client, kernels..., inputs...)` with a fresh
/// ::cl::Kernel for each spec (from the client's program cache, so each program is built once),
/// and contributes every spec to the set's checksum through fingerprint(). See with_kernels().
template <class Fn, std::size_t N>
class KernelCandidate {
 public:
  KernelCandidate(Fn fn, std::array<KernelSpec, N> specs)
      : fn_(std::move(fn)), specs_(std::move(specs)) {}

  template <class... Args>
  requires detail::invocable_with_kernels<Fn, std::make_index_sequence<N>, Args...>
  decltype(auto) operator()(Client& client, Args&&... args) const {
    // Fresh kernel objects: clSetKernelArg on a shared one would race between threads.
    return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
      std::array<::cl::Kernel, N> kernels{make_kernel(client, specs_[I])...};
      return std::invoke(fn_, client, kernels[I]..., std::forward<Args>(args)...);
    }
    (std::make_index_sequence<N>{});
  }

  std::string fingerprint() const {
    std::string text;
    for (const auto& spec : specs_) text += spec.fingerprint();
    return text;
  }
  /// Builds the programs of every spec without running anything (Preparable): the tuner builds
  /// the candidates it is about to measure ahead, on other threads.
  template <class... Args>
  void prepare(Client& client, const Args&...) const {
    for (const auto& spec : specs_) (void)make_program(client, spec);
  }
  /// Stores the programs' binaries once this candidate won (Keepable).
  template <class... Args>
  void keep(Client& client, const Args&...) const {
    for (const auto& spec : specs_) keep_program(client, spec);
  }
  const std::array<KernelSpec, N>& specs() const noexcept { return specs_; }

 private:
  Fn fn_;
  std::array<KernelSpec, N> specs_;
};

/// Wraps `fn(Client&, ::cl::Kernel&... (one per spec), inputs&...)` into a candidate that
/// builds its kernels through the client's program cache and whose kernels are part of the set's
/// checksum: `Tunable{"tiled", cl::with_kernels(run_tiled, spec)}`.
template <class Fn, class... Specs>
requires(std::is_same_v<std::remove_cvref_t<Specs>, KernelSpec>&&...) auto with_kernels(
    Fn fn, Specs&&... specs) {
  return KernelCandidate<Fn, sizeof...(Specs)>(
      std::move(fn), std::array<KernelSpec, sizeof...(Specs)>{std::forward<Specs>(specs)...});
}

}  // namespace tunekit::cl
