// A separate process for the program-binary and stored-peak tests: builds (and keeps) test
// programs through a Client whose cache directory is given, or asks it for its device's peak,
// and says how many programs it compiled and how many it loaded from binaries.
//
//   program_child DIR|off OPTIONS...   (one program of the test kernels per OPTIONS string)
//   program_child DIR|off --peak       (Client::peak(): "peak_bytes=B peak_read=R
//                                       peak_flops=F " first)
//   program_child DIR|off --peak-now   (Client::peak(), then the same of Client::peak_now())
//
// Prints "builds=N loads=M" and exits 0; exits 2 on a usage error, 1 on a failure.
#include <charconv>
#include <exception>
#include <iostream>
#include <string>

#include "support_cl.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: program_child DIR|off OPTIONS...\n";
    return 2;
  }
  try {
    tunekit::Settings settings = tunekit::Settings::from_environment();
    const std::string dir = argv[1];
    settings.persistent_cache = dir != "off";
    if (settings.persistent_cache) settings.cache_dir = dir;
    tunekit::set_global_settings(settings);
    tunekit::cl::Client client;
    const std::string mode = argv[2];
    if (mode == "--peak" || mode == "--peak-now") {
      // --peak-now as a tuning asks: the peak first (for its bound), then again before a stop.
      auto peak = client.peak();
      if (mode == "--peak-now") peak = client.peak_now();
      // Exact (shortest round-trip) text, so that two processes' peaks compare equal.
      const auto exact = [](double value) {
        char text[64];
        return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
      };
      std::cout << "peak_bytes=" << exact(peak.bytes_per_second)
                << " peak_read=" << exact(peak.read_bytes_per_second)
                << " peak_flops=" << exact(peak.flops_per_second) << " ";
    } else {
      for (int i = 2; i < argc; ++i) {
        const auto spec = tunekit::test::test_kernel("add", argv[i]);
        (void)client.kernel(spec);
        client.programs().keep(spec);  // stored on every device (a CPU stores kept programs only)
      }
    }
    std::cout << "builds=" << client.programs().builds()
              << " loads=" << client.programs().binary_loads() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "program_child: " << e.what() << "\n";
    return 1;
  }
}
