// A real redis-server for the Redis store's tests (and its benchmark): started on a free
// loopback port, in a temporary directory, without persistence; killed at the end.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace tunekit::test {

/// The redis-server program on PATH, or nothing.
inline std::optional<std::string> find_redis_server() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  dirs += ":/usr/bin:/usr/sbin:/usr/local/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const auto end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) continue;
    const std::string candidate = dir + "/redis-server";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("bind failed");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

/// Whether something accepts connections on 127.0.0.1:`port`.
inline bool accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

/// redis-server on a free loopback port, in its own temporary directory, saving nothing.
class RedisServer {
 public:
  /// Nothing when redis-server is not installed (the caller skips).
  /// `extra`: more arguments for redis-server (e.g. {"--requirepass", "secret"}).
  static std::optional<RedisServer> start_if_installed(std::vector<std::string> extra = {}) {
    auto program = find_redis_server();
    if (!program) return std::nullopt;
    return std::optional<RedisServer>(std::in_place, *program, std::move(extra));
  }

  explicit RedisServer(std::string program, std::vector<std::string> extra = {})
      : program_(std::move(program)), extra_(std::move(extra)) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tunekit-redis-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    for (int attempt = 0;; ++attempt) {
      port_ = free_loopback_port();
      if (launch()) break;
      if (attempt == 4) throw std::runtime_error("redis-server did not start");
    }
  }
  RedisServer(RedisServer&& other) noexcept
      : program_(std::move(other.program_)),
        extra_(std::move(other.extra_)),
        dir_(std::move(other.dir_)),
        port_(other.port_),
        pid_(std::exchange(other.pid_, -1)) {
    other.dir_.clear();
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  RedisServer& operator=(RedisServer&&) = delete;
  ~RedisServer() {
    kill();
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }

  int port() const noexcept { return port_; }
  std::string url(int db = 0) const {
    return "redis://127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
  }

  /// SIGKILL: a server lost without a word.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  /// Starts it again on the same port (empty: nothing was saved).
  bool restart() {
    kill();
    for (int attempt = 0; attempt < 20; ++attempt) {
      if (launch()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

 private:
  bool launch() {
    const std::string port = std::to_string(port_);
    std::vector<std::string> args{program_,
                                  "--port",
                                  port,
                                  "--bind",
                                  "127.0.0.1",
                                  "--save",
                                  "",
                                  "--appendonly",
                                  "no",
                                  "--dir",
                                  dir_.string(),
                                  "--daemonize",
                                  "no",
                                  "--logfile",
                                  (dir_ / "redis.log").string(),
                                  "--protected-mode",
                                  "yes"};
    args.insert(args.end(), extra_.begin(), extra_.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      // Killed with the test process, even one that crashed: no server is left behind (nor
      // holding the test's output pipe open).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      const int null = ::open("/dev/null", O_RDWR);
      if (null >= 0) {
        ::dup2(null, STDIN_FILENO);
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
      }
      ::execve(argv[0], argv.data(), environ);
      ::_exit(127);
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < end) {
      if (accepts(port_)) return true;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {  // exited: the port was taken meanwhile
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    kill();
    return false;
  }

  std::string program_;
  std::vector<std::string> extra_;
  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

/// A hostile "Redis" on a free loopback port: a thread accepts connections and gives each to
/// `behave` (the connected socket, and a flag that is raised when the test is over: a behaviour
/// loops only while it is down, and a bounded number of times). Stopped and joined at the end.
class FakeRedis {
 public:
  using Behaviour = std::function<void(int socket, const std::atomic<bool>& stop)>;
  explicit FakeRedis(Behaviour behave) : behave_(std::move(behave)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener_ < 0) throw std::runtime_error("socket failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ::close(listener_);
      throw std::runtime_error("cannot listen on loopback");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd wait{listener_, POLLIN, 0};
        if (::poll(&wait, 1, 20) <= 0) continue;
        const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) continue;
        ++connections_;
        behave_(client, stop_);
        ::close(client);
      }
    });
  }
  ~FakeRedis() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  FakeRedis(const FakeRedis&) = delete;
  FakeRedis& operator=(const FakeRedis&) = delete;

  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/0"; }
  int connections() const { return connections_; }

  /// Reads what the client sent so far (a command), waiting at most `ms` for it.
  static void read_command(int socket, int ms = 1000) {
    pollfd wait{socket, POLLIN, 0};
    if (::poll(&wait, 1, ms) <= 0) return;
    char buffer[65536];
    (void)!::recv(socket, buffer, sizeof buffer, MSG_DONTWAIT);
  }
  /// Sends `bytes`; false once the client is gone.
  static bool send_all(int socket, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

 private:
  Behaviour behave_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace tunekit::test
