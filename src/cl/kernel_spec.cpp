// KernelSpec: resolving a source name or text, and the fingerprint that enters set checksums.
#include "tunekit/cl/kernel_spec.hpp"

#include "kernel_file.hpp"
#include "tunekit/cl/embedded.hpp"
#include "tunekit/error.hpp"

namespace tunekit::cl {

namespace {
// One line ending in ".cl" names a file; anything else is source text.
bool names_a_file(std::string_view text) {
  return text.size() > 3 && text.ends_with(".cl") && text.find('\n') == std::string_view::npos;
}
}  // namespace

KernelSpec::KernelSpec(std::string_view source, std::string build_options, std::string kernel_name)
    : options_(std::move(build_options)), kernel_name_(std::move(kernel_name)) {
  if (names_a_file(source)) {
    origin_ = std::string(source);
    set_text(embedded_source(source), nullptr);
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
  spec.set_text(embedded_source(file_name), nullptr);
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

KernelSpec KernelSpec::from_file(const std::filesystem::path& path, std::string build_options,
                                 std::string kernel_name,
                                 const std::vector<std::filesystem::path>& include_dirs) {
  std::string text;
  try {
    text = detail::read_kernel_file(path, include_dirs);
  } catch (const AutotuneError& error) {
    return unavailable(error.message(), std::move(build_options), std::move(kernel_name),
                       path.string());
  }
  return from_text(std::move(text), std::move(build_options), std::move(kernel_name),
                   path.string());
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
  source_hash_ = std::hash<std::string_view>{}(text);
}

std::string KernelSpec::fingerprint() const {
  // The origin is left out: moving a kernel between files changes nothing that runs.
  std::string text = "kernel " + kernel_name_ + "\noptions " + options_ + "\nsource ";
  // A kernel that cannot be read: its reason stands for the text, so that the file's arrival
  // changes the checksum (a remembered failure of the set is not served for ever).
  if (!problem_.empty()) return text + "unavailable " + problem_ + '\n';
  text += std::to_string(source_.size());
  text += '\n';
  text += source_;
  text += '\n';
  return text;
}

}  // namespace tunekit::cl
