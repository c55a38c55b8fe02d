// The cache file format, writing side: cereal's JSON archive. (Reading: reader.cpp.)
#include <bit>
#include <cereal/archives/json.hpp>
#include <charconv>
#include <cmath>
#include <sstream>

#include "format_internal.hpp"
#include "indexed_file.hpp"

namespace tunekit::detail {
namespace {

// ---- the entry checksum: XXH3 over a canonical, unambiguous text of the entry ----

// Formatted on the stack, not through std::to_string: a cold start checks an entry of 1,700
// outcomes (~17,000 fields).
void put_decimal(std::string& out, std::uint64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}
void put(std::string& out, std::string_view text) {
  put_decimal(out, text.size());
  out += ':';
  out += text;
  out += ';';
}
void put(std::string& out, std::uint64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  put(out, std::string_view(digits, static_cast<std::size_t>(end - digits)));
}
void put(std::string& out, double value) {
  // Bit-exact: the JSON archive writes the shortest text that reads back to the same double.
  if (std::isnan(value)) return put(out, std::string_view("nan"));
  char text[16];
  hex64_to(text, std::bit_cast<std::uint64_t>(value));
  put(out, std::string_view(text, 16));
}

// ---- writing ----

using Out = cereal::JSONOutputArchive;

void write_record(Out& ar, const IndexRecord& record) {
  ar.startNode();
  ar(cereal::make_nvp("device", record.id.device));
  ar(cereal::make_nvp("key", record.id.key));
  ar(cereal::make_nvp("set_checksum", hex64(record.id.checksum)));
  ar(cereal::make_nvp("winner", record.winner));
  ar(cereal::make_nvp("winner_index", record.winner_index));
  ar.finishNode();
}

void write_entry(Out& ar, const CacheEntry& entry) {
  ar.startNode();
  ar(cereal::make_nvp("device", entry.id.device));
  ar(cereal::make_nvp("key", entry.id.key));
  ar(cereal::make_nvp("set_checksum", hex64(entry.id.checksum)));
  ar(cereal::make_nvp("winner", entry.result.winner));
  ar(cereal::make_nvp("winner_index", entry.result.winner_index));
  // Optional fields, written only when there is something: older readers' files stay the same.
  if (!entry.result.imported_from.empty()) {
    ar(cereal::make_nvp("imported_from", entry.result.imported_from));
  }
  if (!entry.result.metric_names.empty()) {
    ar.setNextName("metrics");
    ar.startNode();
    ar.makeArray();
    for (const auto& name : entry.result.metric_names) ar(name);
    ar.finishNode();
  }
  ar.setNextName("outcomes");
  ar.startNode();
  ar.makeArray();
  for (const auto& o : entry.result.outcomes) {
    ar.startNode();
    ar(cereal::make_nvp("name", o.name));
    ar(cereal::make_nvp("index", static_cast<std::uint64_t>(o.index)));
    ar(cereal::make_nvp("status", std::string(to_string(o.status))));
    ar(cereal::make_nvp("median", o.median));
    ar(cereal::make_nvp("spread", o.spread));
    ar(cereal::make_nvp("min", o.min));
    ar(cereal::make_nvp("max", o.max));
    ar(cereal::make_nvp("samples", static_cast<std::uint64_t>(o.samples)));
    ar(cereal::make_nvp("batch", static_cast<std::uint64_t>(o.batch)));
    if (o.has_interval()) {  // the median's 95% interval, as the tuning's table showed it
      ar(cereal::make_nvp("low", o.low));
      ar(cereal::make_nvp("high", o.high));
    }
    if (o.error) {  // only failed and skipped candidates have one
      ar(cereal::make_nvp("error_kind", std::string(to_string(o.error->kind()))));
      ar(cereal::make_nvp("error", o.error->message()));
    }
    if (!o.metrics.empty()) {
      ar.setNextName("metrics");
      ar.startNode();
      ar.makeArray();
      for (const double value : o.metrics) ar(value);
      ar.finishNode();
    }
    ar.finishNode();
  }
  ar.finishNode();
  ar(cereal::make_nvp("checksum", hex64(entry_checksum(entry))));
  ar.finishNode();
}

void write_entries(Out& ar, const std::vector<CacheEntry>& entries) {
  ar.setNextName("entries");
  ar.startNode();
  ar.makeArray();
  for (const auto& entry : entries) write_entry(ar, entry);
  ar.finishNode();
}

Out::Options json_options() {
  // Full precision: the shortest text that reads back to the same double.
  return Out::Options(
      RAPIDJSON_NAMESPACE::Writer<RAPIDJSON_NAMESPACE::OStreamWrapper>::kDefaultMaxDecimalPlaces,
      Out::Options::IndentChar::space, 1);
}

}  // namespace

std::uint64_t entry_checksum(const CacheEntry& entry) {
  std::string text = "tunekit-entry-v1;";
  text.reserve(256 + entry.result.outcomes.size() * 200);
  put(text, entry.id.device);
  put(text, entry.id.op);
  put(text, entry.id.key);
  put(text, entry.id.checksum);
  put(text, entry.result.winner);
  put(text, std::uint64_t{entry.result.winner_index});
  put(text, std::uint64_t{entry.result.outcomes.size()});
  for (const auto& o : entry.result.outcomes) {
    put(text, o.name);
    put(text, std::uint64_t{o.index});
    put(text, to_string(o.status));
    put(text, o.median);
    put(text, o.spread);
    put(text, o.min);
    put(text, o.max);
    put(text, std::uint64_t{o.samples});
    put(text, std::uint64_t{o.batch});
    put(text, o.error ? to_string(o.error->kind()) : std::string_view());
    put(text, o.error ? std::string_view(o.error->message()) : std::string_view());
    if (!o.metrics.empty()) {  // absent from older entries: their checksums stay the same
      put(text, std::string_view("metrics"));
      put(text, std::uint64_t{o.metrics.size()});
      for (const double value : o.metrics) put(text, value);
    }
    if (o.has_interval()) {  // absent from older entries too
      put(text, std::string_view("interval"));
      put(text, o.low);
      put(text, o.high);
    }
  }
  if (!entry.result.metric_names.empty()) {
    put(text, std::string_view("metric names"));
    put(text, std::uint64_t{entry.result.metric_names.size()});
    for (const auto& name : entry.result.metric_names) put(text, name);
  }
  if (!entry.result.imported_from.empty()) {
    put(text, std::string_view("imported from"));
    put(text, entry.result.imported_from);
  }
  return stable_hash(text);
}

IndexRecord record_of(const CacheEntry& entry) {
  return IndexRecord{entry.id, entry.result.winner, entry.result.winner_index};
}

std::string write_cache_index(std::string_view op, const std::vector<IndexRecord>& records) {
  std::ostringstream os;
  {
    Out ar(os, json_options());
    ar(cereal::make_nvp("format", std::string(index_format)));
    ar(cereal::make_nvp("version", FileStore::format_version));
    ar(cereal::make_nvp("op", std::string(op)));
    ar.setNextName("entries");
    ar.startNode();
    ar.makeArray();
    for (const auto& record : records) write_record(ar, record);
    ar.finishNode();
  }
  os << '\n';
  return std::move(os).str();
}

std::string write_cache_file(std::string_view op, const std::vector<CacheEntry>& entries) {
  std::ostringstream os;
  {
    // No indentation: a table of 1,700 outcomes is read at a cold start, and a third of an
    // indented one is spaces. (Still one field per line.)
    Out ar(os, Out::Options(RAPIDJSON_NAMESPACE::Writer<
                                RAPIDJSON_NAMESPACE::OStreamWrapper>::kDefaultMaxDecimalPlaces,
                            Out::Options::IndentChar::space, 0));
    ar(cereal::make_nvp("format", std::string(table_format)));
    ar(cereal::make_nvp("version", FileStore::format_version));
    ar(cereal::make_nvp("op", std::string(op)));
    write_entries(ar, entries);
  }
  os << '\n';
  return std::move(os).str();
}

std::string write_cache_bundle(const std::vector<ParsedFile>& ops) {
  std::ostringstream os;
  {
    Out ar(os, json_options());
    ar(cereal::make_nvp("format", std::string(bundle_format)));
    ar(cereal::make_nvp("version", FileStore::format_version));
    ar.setNextName("ops");
    ar.startNode();
    ar.makeArray();
    for (const auto& file : ops) {
      ar.startNode();
      ar(cereal::make_nvp("op", file.op));
      write_entries(ar, file.entries);
      ar.finishNode();
    }
    ar.finishNode();
  }
  os << '\n';
  return std::move(os).str();
}

std::string op_file_name(std::string_view op) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string name;
  for (std::size_t i = 0; i < op.size(); ++i) {
    const auto c = static_cast<unsigned char>(op[i]);
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || (c == '.' && i > 0);
    if (safe) {
      name += static_cast<char>(c);
    } else {
      name += '%';
      name += digits[c >> 4];
      name += digits[c & 15];
    }
  }
  if (name.empty()) name = "%";  // the empty op name
  if (name.size() > 180) {       // stay well under NAME_MAX with the suffixes added
    name = name.substr(0, 160) + "~" + hex64(stable_hash(std::string(op)));
  }
  return name + ".json";
}

}  // namespace tunekit::detail
