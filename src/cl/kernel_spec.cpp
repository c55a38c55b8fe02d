// KernelSpec: resolving a source name or text, and the fingerprint that enters set checksums.
#include "tunekit/cl/kernel_spec.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "../warnings.hpp"
#include "kernel_file.hpp"
#include "tunekit/cl/embedded.hpp"
#include "tunekit/error.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/stable_hash.hpp"

namespace tunekit::cl {

namespace {
// One line ending in ".cl" names a file; anything else is source text.
bool names_a_file(std::string_view text) {
  return text.size() > 3 && text.ends_with(".cl") && text.find('\n') == std::string_view::npos;
}

// What is compiled for kernels/<file_name>: its embedded text, or where it #includes another of
// kernels/ (the tensor-core GEMMs share tensor_core.cl) that text with the includes expanded; and
// its hash. Worked out once per file and process: specs are made for every candidate of every op
// (matmul's ~14,000 candidates, three storages each), and hashing the text for each of them cost
// more than a whole cached call.
struct LibraryText {
  std::shared_ptr<const std::string> expanded;  // empty where the embedded text is compiled as is
  std::string_view text;
  std::uint64_t hash = 0;
};

const LibraryText& library_text(std::string_view file_name) {
  static std::mutex mutex;
  static std::map<std::string, LibraryText, std::less<>> known;
  const std::lock_guard lock(mutex);
  auto found = known.find(file_name);
  if (found == known.end()) {
    LibraryText text;
    text.text = embedded_source(file_name);  // lives as long as the program
    if (detail::has_include_directive(text.text)) {
      text.expanded = std::make_shared<const std::string>(detail::read_library_kernel(file_name));
      text.text = *text.expanded;
    }
    text.hash = stable_hash(text.text);
    found = known.emplace(std::string(file_name), std::move(text)).first;
  }
  return found->second;  // a std::map's elements stay where they are
}
}  // namespace

void KernelSpec::set_library_text(std::string_view file_name) {
  const LibraryText& library = library_text(file_name);
  owned_ = library.expanded;
  source_ = library.text;
  source_hash_ = library.hash;
}

KernelSpec::KernelSpec(std::string_view source, std::string build_options, std::string kernel_name)
    : options_(std::move(build_options)), kernel_name_(std::move(kernel_name)) {
  if (names_a_file(source)) {
    origin_ = std::string(source);
    set_library_text(source);
  } else {
    origin_ = "<inline source>";
    auto owned = std::make_shared<const std::string>(source);
    const std::string_view text = *owned;
    set_text(text, std::move(owned));
  }
}

KernelSpec KernelSpec::embedded(std::string_view file_name, std::string build_options,
                                std::string kernel_name) {
  KernelSpec spec;
  spec.options_ = std::move(build_options);
  spec.kernel_name_ = std::move(kernel_name);
  spec.origin_ = std::string(file_name);
  spec.set_library_text(file_name);
  return spec;
}

KernelSpec KernelSpec::from_text(std::string text, std::string build_options,
                                 std::string kernel_name, std::string label) {
  KernelSpec spec;
  spec.options_ = std::move(build_options);
  spec.kernel_name_ = std::move(kernel_name);
  spec.origin_ = std::move(label);
  auto owned = std::make_shared<const std::string>(std::move(text));
  const std::string_view view = *owned;
  spec.set_text(view, std::move(owned));
  return spec;
}

namespace {
std::vector<std::filesystem::path> paths_of(const std::vector<PathText>& dirs) {
  std::vector<std::filesystem::path> paths;
  paths.reserve(dirs.size());
  for (const auto& dir : dirs) paths.emplace_back(dir.text);
  return paths;
}
}  // namespace

KernelSpec KernelSpec::from_file(const PathText& path, std::string build_options,
                                 std::string kernel_name,
                                 const std::vector<PathText>& include_dirs) {
  std::string text;
  try {
    text = detail::read_kernel_file(path.text, paths_of(include_dirs));
  } catch (const AutotuneError& error) {
    return unavailable(error.message(), std::move(build_options), std::move(kernel_name),
                       path.text);
  }
  return from_text(std::move(text), std::move(build_options), std::move(kernel_name), path.text);
}

KernelSpec KernelSpec::from_embedded(std::string_view name, std::string build_options,
                                     std::string kernel_name) {
  std::string text;
  try {
    text = detail::read_embedded_kernel(name);
  } catch (const AutotuneError& error) {
    return unavailable(error.message(), std::move(build_options), std::move(kernel_name),
                       std::string(name));
  }
  return from_text(std::move(text), std::move(build_options), std::move(kernel_name),
                   std::string(name));
}

std::vector<std::string> kernel_search_path() {
  std::vector<std::string> dirs;
  if (const char* value = std::getenv("TUNEKIT_KERNEL_PATH"); value && *value) {
    const std::string_view text(value);
    for (std::size_t at = 0; at <= text.size();) {
      auto end = text.find(':', at);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view entry = text.substr(at, end - at);
      at = end + 1;
      if (entry.empty()) continue;
      const bool plain = std::none_of(entry.begin(), entry.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      });
      if (entry.front() != '/' || !plain || entry.size() > 4096 || dirs.size() >= 64) {
        warn_once("tunekit: TUNEKIT_KERNEL_PATH: '" + printable(entry, 200) +
                  "' is left out: the path holds at most 64 absolute directories");
        continue;
      }
      dirs.emplace_back(entry);
    }
  }
  std::error_code error;
  const auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error && executable.has_parent_path()) dirs.push_back(executable.parent_path().string());
  return dirs;
}

KernelSpec KernelSpec::from_search_path(std::string_view name, std::string build_options,
                                        std::string kernel_name,
                                        const std::vector<PathText>& include_dirs) {
  const std::filesystem::path relative(name);
  std::string tried;
  if (name.empty() || relative.is_absolute()) {
    tried = "none: '" + printable(name, 200) + "' is not a relative path";
  } else {
    for (const auto& dir : kernel_search_path()) {
      const auto path = std::filesystem::path(dir) / relative;
      std::error_code error;
      if (std::filesystem::is_regular_file(path, error)) {
        return from_file(path, std::move(build_options), std::move(kernel_name), include_dirs);
      }
      tried += (tried.empty() ? "" : ", ") + path.string();
    }
  }
  return unavailable("the kernel file " + std::string(name) +
                         " is not on the kernel search path (tried: " +
                         (tried.empty() ? std::string("nothing") : tried) +
                         "; set TUNEKIT_KERNEL_PATH to the directory that holds it, or embed it "
                         "with tunekit_embed_kernels)",
                     std::move(build_options), std::move(kernel_name), std::string(name));
}

KernelSpec KernelSpec::unavailable(std::string problem, std::string build_options,
                                   std::string kernel_name, std::string origin) {
  KernelSpec spec;
  spec.options_ = std::move(build_options);
  spec.kernel_name_ = std::move(kernel_name);
  spec.origin_ = std::move(origin);
  spec.problem_ = std::move(problem);
  spec.set_text({}, nullptr);
  return spec;
}

void KernelSpec::set_text(std::string_view text, std::shared_ptr<const std::string> owner) {
  owned_ = std::move(owner);
  source_ = text;
  source_hash_ = stable_hash(text);
}

std::string KernelSpec::fingerprint() const {
  // The origin is left out: moving a kernel between files changes nothing that runs.
  std::string text = "kernel " + kernel_name_ + "\noptions " + options_ + "\nsource ";
  // A kernel that cannot be read: its reason stands for the text, so that the file's arrival
  // changes the checksum (a remembered failure of the set is not served for ever).
  if (!problem_.empty()) return text + "unavailable " + problem_ + '\n';
  // The text's size and stable hash stand for it: a set of thousands of candidates would
  // otherwise copy its kernels' whole text into the checksum once per candidate and storage.
  text += std::to_string(source_.size());
  text += ' ';
  text += std::to_string(source_hash_);
  text += '\n';
  return text;
}

}  // namespace tunekit::cl
