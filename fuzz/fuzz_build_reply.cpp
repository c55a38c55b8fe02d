// libFuzzer target for what a build helper sends back (src/cl/build_protocol.hpp): read_message
// over any bytes, then read_build_reply over the fields it gives. A message read is within the
// bounds and encodes back to the bytes it was read from; a reply is a binary or a failure, never
// both, never neither, and never without its problem when refused.
// Build and run: fuzz/run.sh build_reply [seconds]   (or cmake -DTUNEKIT_FUZZ=ON with clang++)
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "../src/cl/build_protocol.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace d = tunekit::cl::detail;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::size_t at = 0;
  const d::ByteSource source = [&](char* into, std::size_t n, std::string& problem) {
    if (bytes.size() - at < n) {
      problem = "the other side closed";
      return false;
    }
    std::copy_n(bytes.data() + at, n, into);
    at += n;
    return true;
  };
  std::string problem;
  const auto fields = d::read_message(source, problem);
  require(fields.empty() != problem.empty());
  if (fields.empty()) return 0;
  require(fields.size() <= d::max_message_fields);
  std::vector<std::string_view> views(fields.begin(), fields.end());
  require(d::encode_message(views) == bytes.substr(0, at));
  problem.clear();
  auto copy = fields;
  const auto reply = d::read_build_reply(std::move(copy), "1", problem);
  require(reply.has_value() == problem.empty());
  if (reply) {
    require(fields.size() > 1 && fields[1] == "1");  // an answer to this request only
    require(reply->binary.empty() == reply->failure.has_value());
    require(reply->binary.size() <= tunekit::cl::ProgramBinaries::max_binary_bytes);
  }
  return 0;
}
