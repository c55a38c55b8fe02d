// HostClient's identity: the CPU model and its thread count, so results from another host differ.
#include <fstream>
#include <string>
#include <thread>

#include "tunekit/timing_client.hpp"

namespace tunekit {

namespace {
std::string host_identity() {
  std::string model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      if (auto colon = line.find(':'); colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  return "host | " + model + " | " + std::to_string(std::thread::hardware_concurrency()) +
         " threads";
}
}  // namespace

HostClient::HostClient() : id_(host_identity()) {}

}  // namespace tunekit
