// Real server processes for end-to-end tests: kvstore-server from the build tree and Debian's
// redis-server, each started on a free loopback port and stopped when the object goes away.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/server.h"

namespace kv::test {

// A file's whole contents ("" when it cannot be read).
std::string ReadFile(const std::string& path);

// A process' resident set in KiB (VmRSS of /proc/<pid>/status), or -1.
int64_t RssKb(pid_t pid);

// A port that was free a moment ago.
int FreePort();
// Path of a binary in the build tree (KVSTORE_BUILD_DIR, set by ctest).
std::string BuildPath(const std::string& name);
// True when Debian's redis-server is installed (the differential tests need it).
bool HaveRedisServer();
// An IPv4 address of this machine other than loopback: KV_TEST_RDMA_ADDR where it is set (the
// Soft-RoCE guest's rxe0), else the first an interface has; empty when there is none.
std::string NonLoopbackAddress();

// Starts a server on `dir` with `extra_args` expecting it to exit with status 1 without ever
// serving (a corrupt file, a bad setting); returns its log. A server that keeps running is
// killed and the test fails.
std::string ExpectRefusesToStart(const std::string& dir, std::vector<std::string> extra_args = {},
                                 bool redis = false);

class ServerProcess {
 public:
  enum class Kind { kKvstore, kRedis };

  // Starts the server with extra "--name value" arguments (a first one that is not an option
  // is a config file) and waits until it answers PING.
  ServerProcess(Kind kind, std::vector<std::string> extra_args = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  const std::string& log_path() const { return log_; }
  // Sends SIGTERM and waits; returns the exit status (or -1 if it had to be killed).
  int Stop(int timeout_ms = 5000);
  bool Alive();
  std::string LogText() const;
  // Stops the server (SIGTERM: it saves if it has save points) and starts it again on the same
  // port and directory with the same options, then `extra_args`; false if it did not come up.
  // The log goes on in the same file.
  bool Restart(std::vector<std::string> extra_args = {});

 private:
  bool Launch(int port);

  Kind kind_;
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_, log_;
};

// A kvstore Server running inside the test process on a free port (faster than a process for
// testing server commands over real sockets).
class InProcessServer {
 public:
  explicit InProcessServer(std::vector<std::pair<std::string, std::string>> overrides = {});
  ~InProcessServer();
  int port() const { return server_->port(); }
  server::Server& server() { return *server_; }

 private:
  std::unique_ptr<server::Server> server_;
};

}  // namespace kv::test
