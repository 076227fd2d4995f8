#include "tests/support/process.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <sys/socket.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "net/socket.h"
#include "tests/support/resp_client.h"

namespace kv::test {

int64_t RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int FreePort() {
  auto fd = net::ListenTcp("127.0.0.1", 0, 1);
  if (!fd.ok()) abort();
  return net::LocalPort(fd->get());
}

std::string BuildPath(const std::string& name) {
  const char* dir = getenv("KVSTORE_BUILD_DIR");
  return std::string(dir ? dir : ".") + "/" + name;
}

bool HaveRedisServer() { return access("/usr/bin/redis-server", X_OK) == 0; }

namespace {
bool Answers(int port) {
  auto fd = net::ConnectTcp("127.0.0.1", port, 200);
  if (!fd.ok()) return false;
  const char ping[] = "*1\r\n$4\r\nPING\r\n";
  if (send(fd->get(), ping, sizeof(ping) - 1, MSG_NOSIGNAL) < 0) return false;
  pollfd p{fd->get(), POLLIN, 0};
  if (poll(&p, 1, 1000) <= 0) return false;
  char buf[64];
  ssize_t n = read(fd->get(), buf, sizeof(buf));
  // Any reply means the server is serving ("-NOAUTH" when a password is set).
  return n > 0 && (buf[0] == '+' || buf[0] == '-');
}
}  // namespace

std::string NonLoopbackAddress() {
  if (const char* env = std::getenv("KV_TEST_RDMA_ADDR"); env != nullptr && *env != 0) return env;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP)) continue;
    char ip[INET_ADDRSTRLEN];
    auto* sin = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
    if (inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof ip)) found = ip;
  }
  freeifaddrs(list);
  return found;
}

namespace {

// Starts args[0] with the arguments; returns its pid.
pid_t Spawn(std::vector<std::string> args) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

std::string ExpectRefusesToStart(const std::string& dir, std::vector<std::string> extra_args,
                                 bool redis) {
  std::string log = dir + "/refused.log";
  [[maybe_unused]] int rc = truncate(log.c_str(), 0);
  std::vector<std::string> args = {redis ? "/usr/bin/redis-server" : BuildPath("kvstore-server"),
                                   "--port",
                                   std::to_string(FreePort()),
                                   "--dir",
                                   dir,
                                   "--save",
                                   "",
                                   "--logfile",
                                   log};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  pid_t pid = Spawn(args);
  int status = 0;
  for (int i = 0; i < 500 && waitpid(pid, &status, WNOHANG) != pid; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (i == 499) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "the server started; its log:\n" << ReadFile(log);
    }
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << ReadFile(log);
  return ReadFile(log);
}

ServerProcess::ServerProcess(Kind kind, std::vector<std::string> extra_args)
    : kind_(kind), extra_args_(std::move(extra_args)) {
  char tmpl[] = "/tmp/kvstore-test-XXXXXX";
  dir_ = mkdtemp(tmpl);
  log_ = dir_ + "/server.log";
  for (int attempt = 0; attempt < 5; attempt++) {
    [[maybe_unused]] int rc = truncate(log_.c_str(), 0);  // a failed attempt's lines go
    if (Launch(FreePort())) return;
  }
  fprintf(stderr, "ServerProcess: could not start %s; log:\n%s\n",
          kind == Kind::kKvstore ? "kvstore-server" : "redis-server", LogText().c_str());
  abort();
}

bool ServerProcess::Launch(int port) {
  port_ = port;
  std::vector<std::string> args;
  if (kind_ == Kind::kKvstore) {
    // DEBUG is refused by default, as in Redis 7.0; the tests use it on both servers.
    args = {BuildPath("kvstore-server"), "--enable-debug-command", "yes"};
  } else {
    args = {"/usr/bin/redis-server", "--appendonly", "no", "--enable-debug-command", "yes"};
  }
  std::vector<std::string> base = {"--port", std::to_string(port_), "--dir", dir_, "--save",
                                   "",       "--logfile",           log_};
  // A config file comes first, as both servers want it; the options override it.
  auto options = extra_args_.begin();
  if (options != extra_args_.end() && options->rfind("--", 0) != 0) {
    args.insert(args.begin() + 1, *options++);
  }
  args.insert(args.end(), base.begin(), base.end());
  args.insert(args.end(), options, extra_args_.end());
  size_t log_from = LogText().size();  // a restart's log goes on after the earlier run's
  pid_ = Spawn(args);
  for (int i = 0; i < 200; i++) {
    // Another test's server may hold the port we picked (ours then fails to bind and exits):
    // only our own process, having logged that it listens, counts.
    if (!Alive()) break;
    if (Answers(port_) &&
        LogText().find("Ready to accept connections", log_from) != std::string::npos) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  Stop(1000);
  return false;
}

bool ServerProcess::Restart(std::vector<std::string> extra_args) {
  Stop();
  extra_args_.insert(extra_args_.end(), extra_args.begin(), extra_args.end());
  // The port was ours a moment ago; a server still closing it may hold it briefly.
  for (int attempt = 0; attempt < 20; attempt++) {
    if (Launch(port_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

ServerProcess::~ServerProcess() {
  Stop();
  std::string cmd = "rm -rf '" + dir_ + "'";
  [[maybe_unused]] int rc = system(cmd.c_str());
}

bool ServerProcess::Alive() {
  if (pid_ <= 0) return false;
  int status;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

int ServerProcess::Stop(int timeout_ms) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  return -1;
}

std::string ServerProcess::LogText() const {
  std::ifstream f(log_);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

InProcessServer::InProcessServer(std::vector<std::pair<std::string, std::string>> overrides) {
  Status s;
  // A free port another test may take before we bind it: a few tries.
  for (int attempt = 0; attempt < 5; attempt++) {
    auto config = std::make_unique<server::Config>();
    std::vector<ConfigDirective> d = {{"port", {std::to_string(FreePort())}, "test"},
                                      {"io-threads", {"2"}, "test"},
                                      {"enable-debug-command", {"yes"}, "test"}};
    for (auto& [k, v] : overrides) d.push_back({k, {v}, "test"});
    s = config->Load(d);
    if (!s.ok()) break;
    server_ = std::make_unique<server::Server>(std::move(config));
    s = server_->Start();
    if (s.ok()) return;
    server_.reset();
  }
  fprintf(stderr, "InProcessServer: %s\n", s.message().c_str());
  abort();
}

InProcessServer::~InProcessServer() { server_->Stop(); }

}  // namespace kv::test
