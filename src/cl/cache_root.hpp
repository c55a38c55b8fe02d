// Where a Client keeps what it learns about its device across processes (program binaries,
// stored peaks): the result cache's directory. Defined in client.cpp.
#pragma once

#include <filesystem>
#include <optional>

namespace tunekit::cl {

/// The cache directory (Settings::resolved_cache_dir()), or nothing when the persistent cache is
/// off or there is none (then said once: "<what> are not kept").
std::optional<std::filesystem::path> client_cache_root(const char* what);

}  // namespace tunekit::cl
