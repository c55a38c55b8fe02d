// A separate process for the program-binary tests: builds (and keeps) test programs through a
// Client whose cache directory is given, and says how many it compiled and how many it loaded
// from binaries.
//
//   program_child DIR|off OPTIONS...   (one program of the test kernels per OPTIONS string)
//
// Prints "builds=N loads=M" and exits 0; exits 2 on a usage error, 1 on a failure.
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
    for (int i = 2; i < argc; ++i) {
      const auto spec = tunekit::test::test_kernel("add", argv[i]);
      (void)client.kernel(spec);
      client.programs().keep(spec);  // stored on every device (a CPU stores kept programs only)
    }
    std::cout << "builds=" << client.programs().builds()
              << " loads=" << client.programs().binary_loads() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "program_child: " << e.what() << "\n";
    return 1;
  }
}
