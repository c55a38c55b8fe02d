// Where a Client keeps what it learns about its device across processes (program binaries,
// stored peaks): the result cache's directory. Defined in client.cpp.
#pragma once

#include <filesystem>
#include <optional>

namespace tunekit::cl {

/// The cache directory (Settings::resolved_cache_dir()), or nothing when the persistent cache is
/// off, there is none (then said once: "<what> are not kept"), or it is unusable (another user's,
/// writable by others: said once, in the results' store's words, unusable_cache_root_warning).
std::optional<std::filesystem::path> client_cache_root(const char* what);

}  // namespace tunekit::cl
