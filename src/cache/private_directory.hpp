// The one rule for tunekit's directories on disk (private): created 0700 whatever the umask,
// owned by this user, not writable by group or others, and (below the cache root) no links.
#pragma once

#include <filesystem>

namespace tunekit::detail {

/// Creates `dir` (and missing parents, 0700) unless it exists, then checks it as above: throws
/// AutotuneError(cache) naming the fix. `follow_link`: `dir` may be reached through a link the
/// user made (the cache root); the folders tunekit makes inside it may not.
void prepare_private_cache_directory(const std::filesystem::path& dir, bool follow_link);

}  // namespace tunekit::detail
