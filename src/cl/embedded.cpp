// Lookup of the kernel sources that the build embedded (see cmake/TunekitEmbedKernels.cmake).
#include "tunekit/cl/embedded.hpp"

#include <algorithm>
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

}  // namespace tunekit::cl
