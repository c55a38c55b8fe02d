// A tunekit-compiler that misbehaves as it is told: the device identity in its HELO names how
// (test_compiler_processes.cpp). It never builds anything.
#include <unistd.h>

#include <string>
#include <thread>

#include "../../src/cl/compiler_protocol.hpp"

using namespace tunekit::cl::detail;

namespace {
void say(std::string_view tag, const std::vector<std::string_view>& fields) {
  (void)write_frame(1, encode_frame(tag, fields), CompilerClock::now() + std::chrono::seconds(10));
}
void hang() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(60));
}
}  // namespace

int main() {
  const auto hello = read_frame(0, "HELO", 2, 1 << 20, CompilerClock::now() + std::chrono::seconds(10));
  if (hello.status != Io::ok) return 1;
  const std::string mode = hello.frame.fields[1];
  if (mode == "hang") hang();
  if (mode == "old") {
    say("HERE", {"it speaks tunekit-compiler 0"});
    return 1;
  }
  say("HERE", {"ok"});
  for (;;) {
    const auto request =
        read_frame(0, "MAKE", 2, compiler_frame_limit, CompilerClock::now() + std::chrono::seconds(30));
    if (request.status != Io::ok) return 0;
    if (mode == "hang-build") hang();
    if (mode == "leave") return 3;
    if (mode == "garbage") {
      say("MADE", {"ok", "\x7f" "ELF not really a program binary at all"});
    } else if (mode == "huge") {
      // A header that claims more than the limit, and nothing after it.
      std::string frame = encode_frame("MADE", {"ok", ""});
      frame.resize(frame.size() - 8);
      for (int i = 0; i < 8; ++i) frame += static_cast<char>(i == 7 ? 0x40 : 0);
      (void)write_frame(1, frame, CompilerClock::now() + std::chrono::seconds(10));
    } else {
      say("MADE", {"maybe", ""});
    }
  }
}
