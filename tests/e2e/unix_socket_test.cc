// unixsocket and unixsocketperm, checked against redis-server as the oracle: the server listens
// on a Unix socket with the file mode it is given (octal, as redis.conf writes it), lists its
// clients there as Redis does (addr=PATH:0, flag U, MONITOR's "unix:PATH"), counts them as local
// (protected mode admits them, enable-debug-command local allows DEBUG), replaces a stale file
// at start and removes its own at shutdown; `port 0` listens on the socket alone.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

extern char** environ;

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

std::string Binary(Kind kind) {
  return kind == Kind::kKvstore ? BuildPath("kvstore-server")
                                : std::string("/usr/bin/redis-server");
}

// The output of a shell command.
std::string Output(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "<popen failed>";
  char buf[512];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

class UnixSocket : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    char tmpl[] = "/tmp/kvstore-unix-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/server.sock";
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    [[maybe_unused]] int rc = system(("rm -rf '" + dir_ + "'").c_str());
  }
  // Starts the server with these arguments alone (ServerProcess insists on a TCP port).
  void Spawn(std::vector<std::string> args) {
    args.insert(args.begin(), Binary(GetParam()));
    args.insert(args.end(), {"--dir", dir_, "--logfile", log(), "--save", ""});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  }
  // The spawned server's exit status once it has exited; -1 while it runs.
  int Exited() {
    int status = 0;
    if (pid_ <= 0 || waitpid(pid_, &status, WNOHANG) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }
  std::string log() const { return dir_ + "/server.log"; }

  std::string dir_, path_;
  pid_t pid_ = -1;
};

TEST_P(UnixSocket, ServesWithTheGivenPermissionsAndListsItsClientsAsRedisDoes) {
  ServerProcess server(GetParam(), {"--unixsocket", path_, "--unixsocketperm", "700",
                                    "--enable-debug-command", "local"});
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0) << server.LogText();
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u) << std::oct << (st.st_mode & 0777);

  // protected-mode is on and no password is set: loopback and the socket alone are admitted.
  RespClient u(path_);
  EXPECT_EQ(u.Call({"PING"}).str, "PONG");
  EXPECT_EQ(u.Call({"SET", "k", "over the socket"}).str, "OK");
  RespClient tcp(server.port());
  EXPECT_EQ(tcp.Call({"GET", "k"}).str, "over the socket");

  std::string info = u.Call({"CLIENT", "INFO"}).str;
  EXPECT_NE(info.find(" addr=" + path_ + ":0 laddr=" + path_ + ":0 "), std::string::npos) << info;
  EXPECT_NE(info.find(" flags=U "), std::string::npos) << info;
  std::string tcp_info = tcp.Call({"CLIENT", "INFO"}).str;
  EXPECT_NE(tcp_info.find(" flags=N "), std::string::npos) << tcp_info;
  // enable-debug-command local: a Unix socket client is local.
  EXPECT_EQ(u.Call({"DEBUG", "SLEEP", "0"}).str, "OK");

  Reply perm = u.Call({"CONFIG", "GET", "unixsocketperm"});
  ASSERT_EQ(perm.elems.size(), 2u) << perm.Debug();
  EXPECT_EQ(perm.elems[1].str, "700");
  Reply sock = u.Call({"CONFIG", "GET", "unixsocket"});
  ASSERT_EQ(sock.elems.size(), 2u) << sock.Debug();
  EXPECT_EQ(sock.elems[1].str, path_);
  EXPECT_EQ(u.Call({"CONFIG", "SET", "unixsocket", dir_ + "/other.sock"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'unixsocket') - can't set "
            "immutable config");

  // MONITOR names a socket client "unix:PATH".
  RespClient mon(server.port());
  ASSERT_EQ(mon.Call({"MONITOR"}).str, "OK");
  EXPECT_EQ(u.Call({"GET", "k"}).str, "over the socket");
  Reply fed = mon.Read();
  EXPECT_NE(fed.str.find(" [0 unix:" + path_ + "] \"GET\" \"k\""), std::string::npos) << fed.str;

  // What users run: redis-cli and redis-benchmark with -s.
  if (access("/usr/bin/redis-cli", X_OK) == 0) {
    EXPECT_EQ(Output("/usr/bin/redis-cli -s " + path_ + " GET k"), "over the socket\n");
  }
  if (access("/usr/bin/redis-benchmark", X_OK) == 0) {
    std::string out = Output("/usr/bin/redis-benchmark -s " + path_ + " -n 2000 -t set -q 2>&1");
    EXPECT_NE(out.find("SET: "), std::string::npos) << out;
  }
}

// A file left at the path (a crashed server's socket, say) is replaced; SHUTDOWN removes the
// server's own socket file, so no stale socket refuses the next clients.
TEST_P(UnixSocket, AStaleFileIsReplacedAndShutdownRemovesTheSocket) {
  { std::ofstream(path_) << "left over"; }
  ServerProcess server(GetParam(), {"--unixsocket", path_});
  {
    RespClient u(path_);
    EXPECT_EQ(u.Call({"PING"}).str, "PONG");
    u.Send({"SHUTDOWN", "NOSAVE"});
    EXPECT_TRUE(u.WaitClosed(5000));
  }
  EXPECT_TRUE(WaitFor([&] { return !server.Alive(); }));
  EXPECT_NE(access(path_.c_str(), F_OK), 0) << "the socket file outlived the server";
}

// port 0 listens on no TCP port: the Unix socket alone serves. With no socket either, the
// server says so and exits.
TEST_P(UnixSocket, PortZeroListensOnTheSocketAlone) {
  Spawn({"--port", "0", "--unixsocket", path_});
  ASSERT_TRUE(WaitFor([&] { return net::ConnectUnix(path_, 100).ok() || Exited() >= 0; }));
  ASSERT_LT(Exited(), 0) << ReadFile(log());
  RespClient u(path_);
  EXPECT_EQ(u.Call({"PING"}).str, "PONG");
  std::string info = u.Call({"INFO", "server"}).str;
  EXPECT_NE(info.find("\r\ntcp_port:0\r\n"), std::string::npos) << info;
  EXPECT_NE(ReadFile(log()).find("The server is now ready to accept connections at " + path_),
            std::string::npos)
      << ReadFile(log());
  u.Send({"SHUTDOWN", "NOSAVE"});
  EXPECT_TRUE(WaitFor([&] { return Exited() >= 0; }));

  Spawn({"--port", "0"});
  int rc = -1;
  EXPECT_TRUE(WaitFor([&] { return (rc = Exited()) >= 0; })) << "it runs, listening nowhere";
  EXPECT_EQ(rc, 1);
  EXPECT_NE(ReadFile(log()).find("Configured to not listen anywhere, exiting."), std::string::npos)
      << ReadFile(log());
}

// bind "" (as redis.conf and CONFIG REWRITE write it) listens on no TCP address: the socket
// alone serves, and CONFIG SET bind brings TCP back and takes it away again.
TEST_P(UnixSocket, AnEmptyBindListensOnTheSocketAlone) {
  int port = FreePort();
  Spawn({"--port", std::to_string(port), "--bind", "", "--unixsocket", path_});
  ASSERT_TRUE(WaitFor([&] { return net::ConnectUnix(path_, 100).ok() || Exited() >= 0; }));
  ASSERT_LT(Exited(), 0) << ReadFile(log());
  RespClient u(path_);
  EXPECT_EQ(u.Call({"CONFIG", "GET", "bind"}).elems.at(1).str, "");
  EXPECT_FALSE(net::ConnectTcp("127.0.0.1", port, 500).ok());
  ASSERT_EQ(u.Call({"CONFIG", "SET", "bind", "127.0.0.1"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return net::ConnectTcp("127.0.0.1", port, 500).ok(); }));
  ASSERT_EQ(u.Call({"CONFIG", "SET", "bind", ""}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return !net::ConnectTcp("127.0.0.1", port, 500).ok(); }));
  u.Send({"SHUTDOWN", "NOSAVE"});
  EXPECT_TRUE(WaitFor([&] { return Exited() >= 0; }));

  Spawn({"--port", std::to_string(port), "--bind", ""});
  int rc = -1;
  EXPECT_TRUE(WaitFor([&] { return (rc = Exited()) >= 0; })) << "it runs, listening nowhere";
  EXPECT_EQ(rc, 1);
  EXPECT_NE(ReadFile(log()).find("Configured to not listen anywhere, exiting."), std::string::npos)
      << ReadFile(log());
}

INSTANTIATE_TEST_SUITE_P(Servers, UnixSocket, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
