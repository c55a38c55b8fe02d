// Lookup of the kernel sources that the build embedded (see cmake/TunekitEmbedKernels.cmake).
#include "tunekit/cl/embedded.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "tunekit/error.hpp"

namespace tunekit::cl {

namespace embedded {
// Defined in the generated registry.cpp.
std::optional<std::string_view> find(std::string_view name);
std::vector<std::string_view> names();
}  // namespace embedded

std::string_view embedded_source(std::string_view file_name) {
  if (auto text = embedded::find(file_name)) return *text;
  std::string known;
  for (std::string_view name : embedded_sources()) {
    known += known.empty() ? "" : ", ";
    known += name;
  }
  throw AutotuneError(ErrorKind::build,
                      "no embedded kernel source '" + std::string(file_name) +
                          "' (embedded: " + (known.empty() ? std::string("none") : known) +
                          "; kernels/*.cl are embedded when the library is built)");
}

bool has_embedded_source(std::string_view file_name) {
  return embedded::find(file_name).has_value();
}

std::vector<std::string_view> embedded_sources() {
  std::vector<std::string_view> names = embedded::names();
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// The files the program embedded with tunekit_embed_kernels: registered before main by static
// objects of the generated files (of the executable and of any shared library it loads), so the
// registry is a function-local static, made on first use whatever the order of initialisation.
struct ProgramSources {
  std::mutex mutex;
  std::map<std::string_view, std::vector<std::string_view>> texts;  // name -> distinct texts
};

ProgramSources& program_sources_registry() {
  static ProgramSources registry;
  return registry;
}

}  // namespace

namespace detail {
void register_program_source(const char* name, const unsigned char* text,
                             std::size_t size) noexcept {
  try {
    auto& registry = program_sources_registry();
    const std::string_view view(reinterpret_cast<const char*>(text), size);
    std::lock_guard lock(registry.mutex);
    auto& texts = registry.texts[name];
    // The same file embedded into two libraries of one program is one file.
    if (std::find(texts.begin(), texts.end(), view) == texts.end()) texts.push_back(view);
  } catch (...) {
    // Out of memory before main: the name stays unknown, and using it says so.
  }
}
}  // namespace detail

std::optional<std::string_view> program_source(std::string_view name) {
  auto& registry = program_sources_registry();
  std::lock_guard lock(registry.mutex);
  const auto found = registry.texts.find(name);
  if (found == registry.texts.end()) return std::nullopt;
  if (found->second.size() > 1) {
    throw AutotuneError(ErrorKind::build,
                        "the kernel file '" + std::string(name) + "' was embedded " +
                            std::to_string(found->second.size()) +
                            " times with different texts (tunekit_embed_kernels of several "
                            "targets of one program): give them different names or BASE_DIRs");
  }
  return found->second.front();
}

std::vector<std::string_view> program_sources() {
  auto& registry = program_sources_registry();
  std::lock_guard lock(registry.mutex);
  std::vector<std::string_view> names;
  for (const auto& [name, texts] : registry.texts) names.push_back(name);
  return names;  // sorted: a std::map's order
}

}  // namespace tunekit::cl
