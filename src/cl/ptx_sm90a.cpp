// See ptx_sm90a.hpp.
#include "ptx_sm90a.hpp"

#include <algorithm>

#include "tunekit/cl/program_cache.hpp"
#include "tunekit/error.hpp"

namespace tunekit::cl::detail {

namespace {

AutotuneError not_ptx(const std::string& why) {
  return AutotuneError(ErrorKind::build,
                       "raising the program to sm_90a (" + std::string(ptx_sm90a_option) +
                           "): the driver's program binary " + why +
                           "; only NVIDIA's OpenCL, which gives PTX text, can do it");
}

}  // namespace

bool wants_ptx_sm90a(std::string_view options) {
  const auto separator = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (std::size_t at = options.find(ptx_sm90a_option); at != std::string_view::npos;
       at = options.find(ptx_sm90a_option, at + 1)) {
    const std::size_t end = at + ptx_sm90a_option.size();
    const bool starts = at == 0 || separator(options[at - 1]);
    const bool ends = end == options.size() || separator(options[end]);
    if (starts && ends) return true;
  }
  return false;
}

std::string raise_ptx_to_sm90a(std::string_view ptx) {
  // NVIDIA's binary may end in NULs; other control bytes are not PTX (bytes past ASCII are: a
  // UTF-8 file name in a debug directive).
  while (!ptx.empty() && ptx.back() == '\0') ptx.remove_suffix(1);
  const bool text = std::all_of(ptx.begin(), ptx.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u == '\n' || u == '\t' || u == '\r' || (u >= 0x20 && u != 0x7f);
  });
  if (ptx.empty() || !text) throw not_ptx("is not text");
  // Matched after a newline: a leading one makes the first line count too.
  std::string out = "\n" + std::string(ptx);
  if (out.find("\n.version ") == std::string::npos) throw not_ptx("has no PTX .version line");
  // The target line: `.target sm_90` followed by `,` (texmode_independent) or the line's end.
  constexpr std::string_view target = "\n.target sm_90";
  std::size_t found = std::string::npos, count = 0;
  for (std::size_t at = out.find(target); at != std::string::npos; at = out.find(target, at + 1)) {
    const std::size_t end = at + target.size();
    if (end < out.size() && out[end] != ',' && out[end] != '\n' && out[end] != '\r') continue;
    found = end;
    ++count;
  }
  if (count != 1) {
    throw not_ptx(count == 0 ? "has no `.target sm_90` line (another device or driver?)"
                             : "has more than one `.target sm_90` line");
  }
  out.insert(found, "a");
  std::string raised;
  raised.reserve(out.size());
  for (std::size_t at = 1;;) {  // past the newline added above
    const std::size_t marker = out.find(ptx_sm90a_marker, at);
    raised.append(out, at, marker == std::string::npos ? std::string::npos : marker - at);
    if (marker == std::string::npos) break;
    at = marker + ptx_sm90a_marker.size();
  }
  return raised;
}

}  // namespace tunekit::cl::detail
