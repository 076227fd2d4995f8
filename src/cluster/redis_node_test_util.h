// Debian's redis-server 7.0 in cluster mode, for the interop tests of src/cluster: a process
// started on a free loopback port in its own temporary directory and killed at the end, a small
// blocking RESP client to send it commands, and the socket, file and waiting helpers both need.
// Test-only (it reports through GoogleTest). Sockets here are blocking unless a test polls.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "net/socket.h"

namespace kv::cluster::test_util {

inline constexpr char kRedisServer[] = "/usr/bin/redis-server";

// kvstore-server of the build tree (ctest sets KVSTORE_BUILD_DIR), for the same tests.
inline std::string KvstoreServer() {
  const char* dir = getenv("KVSTORE_BUILD_DIR");
  return std::string(dir ? dir : ".") + "/kvstore-server";
}

using Clock = std::chrono::steady_clock;
using net::Fd;

// --- Sockets on loopback ---

inline sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// A listener on 127.0.0.1:port (0: one the kernel picks); an invalid Fd when bind fails.
inline Fd Listen(int port) {
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a = Loopback(port);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd.get(), 8) != 0)
    return Fd();
  return fd;
}

// A connection to 127.0.0.1:port; an invalid Fd when nothing accepts there.
inline Fd Connect(int port) {
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a = Loopback(port);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return Fd();
  return fd;
}

inline bool SendAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    s.remove_prefix(n);
  }
  return true;
}

// True when 127.0.0.1:port could be bound a moment ago. With SO_REUSEADDR, as Redis binds, so
// that a port whose old connections linger in TIME_WAIT counts as free.
inline bool PortFree(int port) {
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a = Loopback(port);
  return bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
}

// A client port that was free a moment ago with its cluster bus port (port + 10000) free too;
// 0 when none was found. Another process may take either before redis-server binds them.
inline int FreeClusterPort() {
  static std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> pick(20000, 29999);
  for (int i = 0; i < 1000; i++) {
    int p = pick(rng);
    if (PortFree(p) && PortFree(p + 10000)) return p;
  }
  return 0;
}

// --- Files and waiting ---

// A file's whole contents ("" when it cannot be read).
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Asks `cond` every 20 ms until it holds or `timeout` has passed; its last answer.
inline bool WaitUntil(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

// A fresh directory under the system's temporary directory, removed with its contents (made
// writable first, for tests that take the permission away). Throws when none can be made, which
// fails the test, rather than leave the path empty and have files land in "/".
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "kv_cluster_test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path_ = tmpl;
  }
  ~TempDir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// --- RESP ---

// A reply, as far as these tests need one.
struct Reply {
  char type = 0;  // '+', '-', ':', '$', '*', or 0 when the connection failed or timed out
  std::string str;
  int64_t integer = 0;
  std::vector<Reply> elems;
};

// A blocking RESP connection to 127.0.0.1; each receive waits at most the timeout given to
// Connect, after which the reply reads as failed (type 0).
class RespClient {
 public:
  bool Connect(int port, std::chrono::seconds timeout = std::chrono::seconds(10)) {
    fd_ = test_util::Connect(port);
    if (!fd_.valid()) return false;
    timeval tv = {static_cast<time_t>(timeout.count()), 0};
    setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    in_.clear();
    return true;
  }

  // Sends `args` as a RESP array of bulk strings and reads the reply.
  Reply Command(const std::vector<std::string>& args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    if (!fd_.valid() || !SendAll(fd_.get(), out)) return {};
    return Read();
  }

 private:
  bool Fill() {
    char buf[16384];
    ssize_t n = recv(fd_.get(), buf, sizeof(buf), 0);
    if (n <= 0) return false;
    in_.append(buf, static_cast<size_t>(n));
    return true;
  }

  bool Line(std::string* line) {
    size_t end;
    while ((end = in_.find("\r\n")) == std::string::npos) {
      if (!Fill()) return false;
    }
    *line = in_.substr(0, end);
    in_.erase(0, end + 2);
    return true;
  }

  Reply Read() {
    Reply r;
    std::string line;
    if (!Line(&line) || line.empty()) return {};
    r.type = line[0];
    std::string rest = line.substr(1);
    if (r.type == '+' || r.type == '-') {
      r.str = rest;
    } else if (r.type == ':') {
      r.integer = std::stoll(rest);
    } else if (r.type == '$') {
      long len = std::stol(rest);
      if (len < 0) return r;
      while (in_.size() < static_cast<size_t>(len) + 2) {
        if (!Fill()) return {};
      }
      r.str = in_.substr(0, len);
      in_.erase(0, len + 2);
    } else if (r.type == '*') {
      long count = std::stol(rest);
      for (long i = 0; i < count; i++) r.elems.push_back(Read());
    }
    return r;
  }

  Fd fd_;
  std::string in_;  // received and not parsed yet
};

// --- The server ---

// One redis-server in cluster mode on 127.0.0.1, with its own directory for nodes.conf and its
// log, and one connection kept open for commands. SIGKILLed when the object goes away: a test's
// node has nothing worth saving. Call from the test's thread only.
class RedisClusterNode {
 public:
  // `extra_args`: further "--name value" arguments, after those every node gets; `binary`:
  // redis-server, or KvstoreServer() (which takes the same arguments).
  explicit RedisClusterNode(std::vector<std::string> extra_args = {},
                            std::string binary = kRedisServer)
      : extra_args_(std::move(extra_args)), binary_(std::move(binary)) {}
  ~RedisClusterNode() { Kill(); }
  RedisClusterNode(const RedisClusterNode&) = delete;
  RedisClusterNode& operator=(const RedisClusterNode&) = delete;

  // Starts the server and waits until it answers PING. On `port` when the caller names one (a
  // nodes.conf it wrote at conf_path() names the port); otherwise on a free one, trying others
  // when one is taken between the check and Redis binding it. False, with the test failed and
  // the log in its message, when the server did not come up.
  bool Start(int port = 0) {
    for (int attempt = 0; attempt < 5; attempt++) {
      port_ = port ? port : FreeClusterPort();
      if (port_ != 0 && Launch()) return true;
      if (port) break;
    }
    ADD_FAILURE() << binary_ << " did not start on port " << port_ << "; log:\n" << LogText();
    return false;
  }

  // A command on the kept connection.
  Reply Command(const std::vector<std::string>& args) { return conn_.Command(args); }

  // A command that must answer a simple or bulk string (the test fails otherwise); its text.
  std::string Ok(const std::vector<std::string>& args) {
    Reply r = Command(args);
    EXPECT_TRUE(r.type == '+' || r.type == '$')
        << Joined(args) << ": " << (r.type ? std::string(1, r.type) + r.str : "no reply");
    return r.str;
  }

  int port() const { return port_; }
  int bus_port() const { return port_ + 10000; }
  // The process is still running.
  bool Alive() { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
  std::string conf_path() const { return dir_.File("nodes.conf"); }
  std::string LogText() const { return ReadFile(dir_.File("redis.log")); }

 private:
  static std::string Joined(const std::vector<std::string>& args) {
    std::string s;
    for (const std::string& a : args) s += (s.empty() ? "" : " ") + a;
    return s;
  }

  // Forks the server and waits for PING; false (and no process left) when it exited meanwhile,
  // as it does when the port was taken, or did not answer in time.
  bool Launch() {
    std::vector<std::string> args = {binary_,
                                     "--port",
                                     std::to_string(port_),
                                     "--bind",
                                     "127.0.0.1",
                                     "--cluster-enabled",
                                     "yes",
                                     "--cluster-config-file",
                                     conf_path(),
                                     "--dir",
                                     dir_.path(),
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--logfile",
                                     dir_.File("redis.log")};
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      // The log goes to the file; stderr stays, for what Redis says before it opens the log
      // (a bad argument).
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0), dup2(null, 1);
      execv(argv[0], argv.data());
      _exit(127);
    }
    if (pid_ < 0) return false;
    bool exited = false;
    // Generous, for a loaded machine; a server that exits ends the wait at once.
    bool up = WaitUntil(
        [&] {
          exited = exited || waitpid(pid_, nullptr, WNOHANG) == pid_;
          if (exited) return true;
          RespClient probe;
          if (!probe.Connect(port_, std::chrono::seconds(2))) return false;
          Reply pong = probe.Command({"PING"});
          return pong.type == '+' && pong.str == "PONG";
        },
        std::chrono::seconds(30));
    if (exited) pid_ = -1;
    if (up && !exited && conn_.Connect(port_)) return true;
    Kill();
    return false;
  }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::vector<std::string> extra_args_;
  std::string binary_;
  TempDir dir_{"kv_redis_cluster_node"};
  int port_ = 0;
  pid_t pid_ = -1;
  RespClient conn_;
};

}  // namespace kv::cluster::test_util
