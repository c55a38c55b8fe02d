// A parsed cache file whose entries are converted (and checked against their checksum) only when
// asked for: a cold start that needs one entry of a thousand pays for one conversion.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/cache.hpp"

namespace tunekit::detail {

class IndexedFile {
 public:
  virtual ~IndexedFile() = default;
  /// Parses one op's cache file. Throws AutotuneError(cache) when `bytes` are not a cache file
  /// of this format version (truncated, garbage, foreign version).
  static std::unique_ptr<IndexedFile> parse(std::string bytes);

  virtual const std::string& op() const = 0;
  /// Entries that could not even be indexed (not an object, no device/key/set_checksum).
  virtual const std::vector<std::string>& index_problems() const = 0;
  /// The result stored for `id`, converted and checked. An entry that is there but bad gives
  /// nothing and sets `problem` (the same text that all() lists for it).
  virtual std::optional<StoredResult> find(const EntryId& id, std::string& problem) const = 0;
  /// Every entry, converted and checked.
  virtual ParsedFile all() const = 0;
};

}  // namespace tunekit::detail
