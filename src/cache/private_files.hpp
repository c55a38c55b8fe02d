// tunekit's files on disk (private): the one rule for its directories and the one way to write
// a file, shared by the result store and the program binaries.
#pragma once

#include <filesystem>
#include <string_view>

namespace tunekit::detail {

/// Creates `dir` (and missing parents, 0700) unless it exists, then checks it: owned by this
/// user, not writable by group or others, and no link unless `follow_link` (the cache root may
/// be reached through a link the user made; the folders tunekit makes inside it may not).
/// Throws AutotuneError(cache) naming the fix.
void prepare_private_cache_directory(const std::filesystem::path& dir, bool follow_link);

/// Writes `bytes` to `path` (0600) so that readers see the old file or the new one, never a
/// part: a new temporary "<path>.tmp.<pid>.<n>" (O_EXCL, O_NOFOLLOW), fsync, rename, fsync of
/// the directory. Throws AutotuneError(cache); the temporary file is removed on failure.
void write_private_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// Whether `name` is such a temporary file's name ("<file>.tmp.<pid>.<n>").
bool is_temporary_file_name(std::string_view name);

}  // namespace tunekit::detail
