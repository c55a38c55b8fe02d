// The op's index file (<op>.json): one small record per entry, parsed once and looked up by
// identity. The outcome tables live apart, one file per entry (<op>.tables/<hash>.json, the
// format of parse_cache_file), read only for the entry asked for: a cold start with a thousand
// keys of 1,700-candidate tables reads a few hundred KB, not half a gigabyte.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/cache.hpp"

namespace tunekit::detail {

/// What the index says of one entry: its identity and winner. The entry's table (which carries
/// the checksum of the whole entry) must agree with it.
struct IndexRecord {
  EntryId id;
  std::string winner;
  std::uint32_t winner_index = 0;
};

/// The records of an index file, plus one line per record that was rejected.
struct ParsedIndex {
  std::string op;
  std::vector<IndexRecord> records;
  std::vector<std::string> problems;
};

class IndexedFile {
 public:
  virtual ~IndexedFile() = default;
  /// Parses one op's index file. Throws AutotuneError(cache) when `bytes` are not an index file
  /// of this format version (truncated, garbage, foreign version).
  static std::unique_ptr<IndexedFile> parse(std::string bytes);

  virtual const std::string& op() const = 0;
  /// Records that could not even be indexed (not an object, no device/key/set_checksum).
  virtual const std::vector<std::string>& index_problems() const = 0;
  /// The record for `id`, converted and checked. A record that is there but bad gives nothing
  /// and sets `problem` (the same text that all() lists for it).
  virtual std::optional<IndexRecord> find(const EntryId& id, std::string& problem) const = 0;
  /// Every record, converted and checked.
  virtual ParsedIndex all() const = 0;
};

/// The text of an index file.
std::string write_cache_index(std::string_view op, const std::vector<IndexRecord>& records);

/// The index record of a whole entry.
IndexRecord record_of(const CacheEntry& entry);

}  // namespace tunekit::detail
