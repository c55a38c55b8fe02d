// The cache file format, reading side. Files are written with cereal's JSON archive
// (format.cpp); they are read here with rapidjson, the JSON library under that archive, used
// directly: cereal's input archive reads its stream 4 bytes at a time and converts every entry
// up front (60 ms for a file of 1,000 entries). Parsing the text in place into a DOM, numbers
// kept as text, and converting (and checking) only the entries asked for, keeps a cold start
// under 5 ms.
//
// rapidjson is compiled here into a namespace of its own, with its SSE2 scanning (x86-64
// baseline) and throwing assertions, so that nothing clashes with another copy of it in the
// program (cereal's JSON archive includes it too).
#if defined(__SSE2__)
#define RAPIDJSON_SSE2
#endif
#define RAPIDJSON_NAMESPACE tunekit_rapidjson
#define RAPIDJSON_NAMESPACE_BEGIN namespace tunekit_rapidjson {
#define RAPIDJSON_NAMESPACE_END }
#define RAPIDJSON_HAS_STDSTRING 0
#include <stdexcept>
#define RAPIDJSON_ASSERT_THROWS
#define RAPIDJSON_ASSERT(x) \
  if (!(x)) throw std::logic_error("rapidjson assertion failed: " #x)
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include "format_internal.hpp"
#include "indexed_file.hpp"
#include "tunekit/metric.hpp"
#include "tunekit/outcome.hpp"

namespace rj = tunekit_rapidjson;

namespace tunekit::detail {
namespace {

using Value = rj::Value;
constexpr unsigned parse_flags =
    rj::kParseInsituFlag | rj::kParseNumbersAsStringsFlag | rj::kParseNanAndInfFlag |
    rj::kParseIterativeFlag;  // iterative: no recursion, however deep the nesting

std::string_view text_of(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

/// The member `name` of `object`, or null. (Not FindMember: comparing rapidjson's member
/// iterators is ambiguous in C++20.)
const Value* find_member(const Value& object, std::string_view name) {
  if (!object.IsObject() || object.MemberCount() == 0) return nullptr;
  const auto* members = &*object.MemberBegin();
  for (rj::SizeType i = 0; i < object.MemberCount(); ++i) {
    if (text_of(members[i].name) == name) return &members[i].value;
  }
  return nullptr;
}

const Value& member(const Value& object, const char* name) {
  const Value* found = find_member(object, name);
  if (found == nullptr) {
    throw AutotuneError(ErrorKind::cache, std::string("no \"") + name + "\" field");
  }
  return *found;
}

/// A string field (numbers are kept as their text too, so "12" and 12 read alike).
std::string_view text_field(const Value& object, const char* name) {
  const Value& v = member(object, name);
  if (!v.IsString()) {
    throw AutotuneError(ErrorKind::cache, std::string("\"") + name + "\" is not a string");
  }
  return text_of(v);
}

std::string string_field(const Value& object, const char* name) {
  return std::string(text_field(object, name));
}

template <class T>
T integer_field(const Value& object, const char* name) {
  const auto text = text_field(object, name);
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw AutotuneError(ErrorKind::cache,
                        std::string("\"") + name + "\" is not an integer in range");
  }
  return value;
}

double number_text(std::string_view text, const char* name);

double number_field(const Value& object, const char* name) {
  return number_text(text_field(object, name), name);
}

double number_text(std::string_view text, const char* name) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "Infinity" || text == "Inf") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity" || text == "-Inf") return -std::numeric_limits<double>::infinity();
  double value = 0;
  // from_chars rounds correctly: the writer's shortest text reads back to the same bits.
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw AutotuneError(ErrorKind::cache, std::string("\"") + name + "\" is not a number");
  }
  return value;
}

std::uint64_t checked_hex(std::string_view text, const char* what) {
  auto value = parse_hex64(text);
  if (!value) throw AutotuneError(ErrorKind::cache, std::string(what) + " is not 16 hex digits");
  return *value;
}

// ---- what a number read from a file may be ----
// Every number of an entry is checked here, once, before anything (the tuner, `cache show`, the
// HTML report) uses it: a forged file must not make a chart loop forever, allocate without
// bound or index out of range.

/// Times in seconds: 0 (not measured), or between a picosecond and 11 days. A subnormal or
/// infinite time is not a measurement.
constexpr double min_seconds = 1e-12;
constexpr double max_seconds = 1e6;
/// Counts (samples, batch size) and candidate indices; outcomes per entry.
constexpr std::uint64_t max_count = std::uint64_t{1} << 32;
constexpr std::size_t max_outcomes = std::size_t{1} << 22;

// `name`'s value is not what `rule` says a number of an entry must be.
[[noreturn]] void refuse_number(double value, const char* name, const char* rule) {
  char text[48];
  std::snprintf(text, sizeof text, "%g", value);
  throw AutotuneError(ErrorKind::cache, std::string("\"") + name + "\" is " + text + ": " + rule);
}

void check_seconds(double value, const char* name) {
  if (!(value == 0 || (value >= min_seconds && value <= max_seconds))) {
    refuse_number(value, name, "not a time in seconds (0, or 1e-12 to 1e6)");
  }
}

/// A spread (a median absolute deviation of times): 0 up to the largest time, any size between
/// (samples that agree to the last digits give one below a picosecond); NaN where nothing was
/// measured.
void check_deviation(double value, const char* name) {
  if (!std::isnan(value) && !(value >= 0 && value <= max_seconds)) {
    refuse_number(value, name, "not a deviation in seconds (0 to 1e6)");
  }
}

void check_count(std::uint64_t value, const char* name) {
  if (value >= max_count) {
    throw AutotuneError(ErrorKind::cache, std::string("\"") + name + "\" is " +
                                              std::to_string(value) + ": out of range");
  }
}

void check_numbers(const AutotuneOutcome& o) {
  check_seconds(o.median, "median");
  check_deviation(o.spread, "spread");  // a skipped candidate's is NaN
  check_seconds(o.min, "min");
  check_seconds(o.max, "max");
  check_count(o.index, "index");
  check_count(o.samples, "samples");
  check_count(o.batch, "batch");
}

AutotuneOutcome read_outcome(const Value& v) {
  if (!v.IsObject()) throw AutotuneError(ErrorKind::cache, "an outcome is not an object");
  AutotuneOutcome o;
  o.name = string_field(v, "name");
  o.index = integer_field<std::size_t>(v, "index");
  const auto status = text_field(v, "status");
  const auto parsed_status = enum_from(all_statuses, status);
  if (!parsed_status) {
    throw AutotuneError(ErrorKind::cache, "unknown status '" + printable(status, 100) + "'");
  }
  o.status = *parsed_status;
  o.median = number_field(v, "median");
  o.spread = number_field(v, "spread");
  o.min = number_field(v, "min");
  o.max = number_field(v, "max");
  o.samples = integer_field<std::size_t>(v, "samples");
  o.batch = integer_field<std::size_t>(v, "batch");
  // "error_kind" and "error" are there only when the candidate has an error.
  const bool has_kind = find_member(v, "error_kind") != nullptr;
  const bool has_message = find_member(v, "error") != nullptr;
  const auto kind = has_kind ? text_field(v, "error_kind") : std::string_view();
  auto message = has_message ? string_field(v, "error") : std::string();
  if (has_kind || has_message) {
    const auto parsed_kind = error_kind_named(kind);
    if (!parsed_kind) {
      throw AutotuneError(ErrorKind::cache, "unknown error kind '" + printable(kind, 100) + "'");
    }
    o.error = AutotuneError(*parsed_kind, std::move(message), o.name);
  }
  if (const Value* metrics = find_member(v, "metrics")) {
    if (!metrics->IsArray() || metrics->Size() > max_metrics) {
      throw AutotuneError(ErrorKind::cache, "\"metrics\" is not an array of at most " +
                                                std::to_string(max_metrics) + " numbers");
    }
    for (const Value& value : metrics->GetArray()) {
      if (!value.IsString()) throw AutotuneError(ErrorKind::cache, "a metric is not a number");
      const double number = number_text(text_of(value), "metric");
      // NaN: not computable; else what a rate can be (no negative, no infinite one).
      if (!std::isnan(number) && !(number >= 0 && number <= 1e30)) {
        throw AutotuneError(ErrorKind::cache, "a metric is out of range (0 to 1e30, or NaN)");
      }
      o.metrics.push_back(number);
    }
  }
  // The median's interval: both bounds or neither (an older cache's outcomes have neither).
  const bool has_low = find_member(v, "low") != nullptr;
  if (has_low != (find_member(v, "high") != nullptr)) {
    throw AutotuneError(ErrorKind::cache, "an outcome has one bound of its interval, not both");
  }
  if (has_low) {
    o.low = number_field(v, "low");
    o.high = number_field(v, "high");
    check_seconds(o.low, "low");
    check_seconds(o.high, "high");
    if (!(o.low <= o.high && o.high > 0)) {
      throw AutotuneError(ErrorKind::cache, "an outcome's interval is not low <= high, high > 0");
    }
  }
  check_numbers(o);
  return o;
}

/// The optional "metrics" names of an entry: at most max_metrics, each a printable name of at
/// most max_metric_name bytes.
std::vector<std::string> read_metric_names(const Value& v) {
  std::vector<std::string> names;
  const Value* metrics = find_member(v, "metrics");
  if (metrics == nullptr) return names;
  if (!metrics->IsArray() || metrics->Size() > max_metrics) {
    throw AutotuneError(ErrorKind::cache, "\"metrics\" is not an array of at most " +
                                              std::to_string(max_metrics) + " names");
  }
  for (const Value& name : metrics->GetArray()) {
    if (!name.IsString() || name.GetStringLength() == 0 ||
        name.GetStringLength() > max_metric_name || printable(text_of(name)) != text_of(name)) {
      throw AutotuneError(ErrorKind::cache, "a metric's name is not a printable name of 1 to " +
                                                std::to_string(max_metric_name) + " bytes");
    }
    names.emplace_back(text_of(name));
  }
  return names;
}

/// One record of an index file (no outcomes: those, and the checksum over everything, are in the
/// entry's table, checked against the record when it is read).
IndexRecord read_record(const Value& v, const std::string& op) {
  IndexRecord r;
  r.id.op = op;
  r.id.device = string_field(v, "device");
  r.id.key = string_field(v, "key");
  r.id.checksum = checked_hex(text_field(v, "set_checksum"), "set_checksum");
  r.winner = string_field(v, "winner");
  r.winner_index = integer_field<std::uint32_t>(v, "winner_index");
  return r;
}

/// Converts one entry and checks it against its own checksum; throws on any problem.
CacheEntry read_entry(const Value& v, const std::string& op) {
  IndexRecord head = read_record(v, op);  // an entry is a record with its outcomes
  CacheEntry e{std::move(head.id), StoredResult{std::move(head.winner), head.winner_index, {}}};
  const Value& outcomes = member(v, "outcomes");
  if (!outcomes.IsArray()) throw AutotuneError(ErrorKind::cache, "\"outcomes\" is not an array");
  if (outcomes.Size() > max_outcomes) {
    throw AutotuneError(ErrorKind::cache,
                        "more than " + std::to_string(max_outcomes) + " outcomes");
  }
  for (const Value& o : outcomes.GetArray()) e.result.outcomes.push_back(read_outcome(o));
  e.result.metric_names = read_metric_names(v);
  for (const auto& o : e.result.outcomes) {
    if (!o.metrics.empty() && o.metrics.size() != e.result.metric_names.size()) {
      throw AutotuneError(ErrorKind::cache, "'" + printable(o.name, 200) + "' has " +
                                                std::to_string(o.metrics.size()) +
                                                " metrics where the entry names " +
                                                std::to_string(e.result.metric_names.size()));
    }
  }
  if (find_member(v, "imported_from") != nullptr) {
    e.result.imported_from = string_field(v, "imported_from");
    if (e.result.imported_from.size() > 4096) {
      throw AutotuneError(ErrorKind::cache, "\"imported_from\" is longer than 4096 bytes");
    }
  }
  const auto stored = checked_hex(text_field(v, "checksum"), "checksum");
  if (stored != entry_checksum(e)) {
    throw AutotuneError(ErrorKind::cache,
                        "its content does not match its checksum (edited by hand or corrupt)");
  }
  return e;
}

std::string entry_problem(std::size_t index, const std::string& op, const std::string& what) {
  return "entry " + std::to_string(index) + " of '" + printable(op, 100) + "': " + what;
}

/// The refused entries listed of one file, past which a single line says that more were: a
/// document of millions of bad entries must not cost a message each.
constexpr std::size_t max_listed_problems = 32;

/// Adds `problem` to `problems` while fewer than max_listed_problems are listed, then the line
/// that says there were more, then nothing.
void add_problem(std::vector<std::string>& problems, std::string problem) {
  if (problems.size() < max_listed_problems) {
    problems.push_back(std::move(problem));
  } else if (problems.size() == max_listed_problems) {
    problems.push_back("the file's further refused entries (only the first " +
                       std::to_string(max_listed_problems) + " are listed)");
  }
}

std::string describe_parse_error(const rj::Document& doc) {
  return std::string("not valid JSON (") + rj::GetParseError_En(doc.GetParseError()) + " at byte " +
         std::to_string(doc.GetErrorOffset()) + "): truncated or garbage";
}

/// Parses `buffer` in place; checks that it is a JSON object of `format`, this version.
void parse_document(std::string& buffer, rj::Document& doc, const char* format,
                    int oldest_version = FileStore::format_version) {
  if (buffer.find('\0') != std::string::npos) {
    throw AutotuneError(ErrorKind::cache, "contains NUL bytes: not a text file");
  }
  const auto first = buffer.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw AutotuneError(ErrorKind::cache, "the file is empty");
  if (buffer[first] != '{') throw AutotuneError(ErrorKind::cache, "not a JSON object");
  // rapidjson's DOM costs up to 32 bytes per value or member. Text dense in them (a bundle of
  // ten million zeros) would cost 16 times its size; every file tunekit writes costs about 3
  // (names and numbers of several bytes each). Refused before parsing, past 8 times and 64 MiB.
  const auto separators =
      static_cast<std::size_t>(std::count_if(buffer.begin(), buffer.end(), [](char c) {
        return c == ',' || c == ':' || c == '[' || c == '{';
      }));
  if (separators > (buffer.size() * 8 + (std::size_t{64} << 20)) / 32) {
    throw AutotuneError(ErrorKind::cache, std::to_string(separators) + " JSON values in " +
                                              std::to_string(buffer.size()) +
                                              " bytes: too dense for a file tunekit wrote");
  }
  // The SSE2 scanner reads whole aligned 16-byte blocks: keep those reads inside the buffer.
  buffer.append(16, '\0');
  doc.ParseInsitu<parse_flags>(buffer.data());
  if (doc.HasParseError()) throw AutotuneError(ErrorKind::cache, describe_parse_error(doc));
  if (!doc.IsObject()) throw AutotuneError(ErrorKind::cache, "not a JSON object");
  const Value* found = find_member(doc, "format");
  if (found == nullptr || !found->IsString()) {
    throw AutotuneError(ErrorKind::cache, "no \"format\" field: not a tunekit cache file");
  }
  if (text_of(*found) != format) {
    throw AutotuneError(ErrorKind::cache, "format is \"" + printable(text_of(*found), 200) +
                                              "\", expected \"" + format + "\"");
  }
  const Value* version = find_member(doc, "version");
  std::int64_t number = 0;
  const char* const end = version != nullptr && version->IsString()
                              ? version->GetString() + version->GetStringLength()
                              : nullptr;
  // The whole text must be the number: "2garbage" is not version 2.
  if (end == nullptr || version->GetStringLength() == 0 ||
      std::from_chars(version->GetString(), end, number) !=
          std::from_chars_result{end, std::errc()}) {
    throw AutotuneError(ErrorKind::cache, "no integer \"version\" field");
  }
  if (number < oldest_version || number > FileStore::format_version) {
    throw AutotuneError(ErrorKind::cache, "format version " + std::to_string(number) +
                                              ", this build reads version " +
                                              std::to_string(FileStore::format_version));
  }
}

/// The entries of one op in a DOM (a file, or one op of a bundle), indexed by identity.
class EntryIndex {
 public:
  EntryIndex(const Value& holder, std::string op) : op_(std::move(op)) {
    const Value& entries = member(holder, "entries");
    if (!entries.IsArray()) throw AutotuneError(ErrorKind::cache, "\"entries\" is not an array");
    std::size_t i = 0;
    for (const Value& e : entries.GetArray()) {
      try {
        if (!e.IsObject()) throw AutotuneError(ErrorKind::cache, "not a JSON object");
        const auto checksum = checked_hex(text_field(e, "set_checksum"), "set_checksum");
        index_.insert_or_assign(Key{text_field(e, "key"), text_field(e, "device"), checksum},
                                Slot{&e, i});
      } catch (const AutotuneError& error) {
        add_problem(problems_, entry_problem(i, op_, error.message()));
      }
      ++i;
    }
  }

  const std::string& op() const noexcept { return op_; }
  const std::vector<std::string>& problems() const noexcept { return problems_; }

  /// The index record for `id` (an index file's entries).
  std::optional<IndexRecord> find_record(const EntryId& id, std::string& problem) const {
    const auto it = index_.find(Key{id.key, id.device, id.checksum});
    if (it == index_.end()) return std::nullopt;
    try {
      return read_record(*it->second.value, op_);
    } catch (const std::exception& e) {
      problem = entry_problem(it->second.position, op_, message_of(e));
      return std::nullopt;
    }
  }

  /// Every index record, in file order.
  ParsedIndex all_records() const {
    ParsedIndex index{op_, {}, problems_};
    convert_all(read_record, index.records, index.problems);
    return index;
  }

  /// Every whole entry, in file order (a table file's or a bundle's entries).
  ParsedFile all() const {
    ParsedFile file{op_, {}, problems_};
    convert_all(read_entry, file.entries, file.problems);
    return file;
  }

 private:
  /// `read` applied to every slot in file order; a slot it throws on becomes a problem.
  template <class Read, class Item>
  void convert_all(Read read, std::vector<Item>& items, std::vector<std::string>& problems) const {
    for (const Slot& slot : slots()) {
      try {
        items.push_back(read(*slot.value, op_));
      } catch (const std::exception& e) {
        add_problem(problems, entry_problem(slot.position, op_, message_of(e)));
      }
    }
  }

  static std::string message_of(const std::exception& e) {
    if (const auto* a = dynamic_cast<const AutotuneError*>(&e)) return a->message();
    return e.what();
  }
  using Key = std::tuple<std::string_view, std::string_view, std::uint64_t>;  // key, device, set
  struct Slot {
    const Value* value;
    std::size_t position;
  };
  std::vector<Slot> slots() const {
    std::vector<Slot> slots;
    for (const auto& [key, slot] : index_) slots.push_back(slot);
    std::sort(slots.begin(), slots.end(),
              [](const Slot& a, const Slot& b) { return a.position < b.position; });
    return slots;
  }

  std::string op_;
  std::map<Key, Slot> index_;
  std::vector<std::string> problems_;
};

class DomFile final : public IndexedFile {
 public:
  explicit DomFile(std::string bytes) : buffer_(std::move(bytes)) {
    parse_document(buffer_, doc_, index_format);
    const Value* op = find_member(doc_, "op");
    if (op == nullptr || !op->IsString()) throw AutotuneError(ErrorKind::cache, "no \"op\" string");
    index_.emplace(doc_, std::string(text_of(*op)));
  }
  const std::string& op() const override { return index_->op(); }
  const std::vector<std::string>& index_problems() const override { return index_->problems(); }
  std::optional<IndexRecord> find(const EntryId& id, std::string& problem) const override {
    return index_->find_record(id, problem);
  }
  ParsedIndex all() const override { return index_->all_records(); }

 private:
  std::string buffer_;  // parsed in place: the DOM's strings point into it
  rj::Document doc_;
  std::optional<EntryIndex> index_;
};

template <class F>
auto guarded(F&& parse) {
  try {
    return parse();
  } catch (const AutotuneError&) {
    throw;
  } catch (const std::exception& e) {  // a rapidjson assertion (cereal makes them throw)
    throw AutotuneError(ErrorKind::cache, std::string("malformed cache file: ") + e.what());
  }
}

}  // namespace

ParsedFile parse_cache_file(std::string_view bytes) {
  return guarded([&] {
    std::string buffer(bytes);
    rj::Document doc;
    parse_document(buffer, doc, table_format);
    const Value* op = find_member(doc, "op");
    if (op == nullptr || !op->IsString()) throw AutotuneError(ErrorKind::cache, "no \"op\" string");
    return EntryIndex(doc, std::string(text_of(*op))).all();
  });
}

std::unique_ptr<IndexedFile> IndexedFile::parse(std::string bytes) {
  return guarded([&]() -> std::unique_ptr<IndexedFile> {
    return std::make_unique<DomFile>(std::move(bytes));
  });
}

std::vector<ParsedFile> parse_cache_bundle(std::string_view bytes) {
  return guarded([&] {
    std::string buffer(bytes);
    rj::Document doc;
    parse_document(buffer, doc, bundle_format, oldest_bundle_version);
    const Value& ops = member(doc, "ops");
    if (!ops.IsArray()) throw AutotuneError(ErrorKind::cache, "\"ops\" is not an array");
    std::vector<ParsedFile> files;
    for (const Value& op : ops.GetArray()) {
      if (!op.IsObject()) throw AutotuneError(ErrorKind::cache, "an op is not a JSON object");
      files.push_back(EntryIndex(op, string_field(op, "op")).all());
    }
    return files;
  });
}

}  // namespace tunekit::detail
