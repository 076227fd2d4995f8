// Security basics end to end: protected mode, bind, rename-command.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <cstdlib>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

// Connects to addr:port (from source when given) and returns the first reply line (or "" if
// none comes).
std::string FirstReply(const std::string& addr, int port, const std::string& source = "") {
  auto fd = net::ConnectTcp(addr, port, 2000, source);
  if (!fd.ok()) return "connect failed: " + fd.status().message();
  const char ping[] = "*1\r\n$4\r\nPING\r\n";
  if (write(fd->get(), ping, sizeof(ping) - 1) < 0) return "";
  pollfd p{fd->get(), POLLIN, 0};
  if (poll(&p, 1, 2000) <= 0) return "";
  char buf[1024];
  ssize_t n = read(fd->get(), buf, sizeof(buf));
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// As Redis 7.0: the default bind is every address ("* -::*"), and protected mode is what keeps
// a server with no password to its loopback clients.
TEST(Security, DefaultBindIsEveryAddressGuardedByProtectedMode) {
  for (auto kind : {ServerProcess::Kind::kKvstore, ServerProcess::Kind::kRedis}) {
    if (kind == ServerProcess::Kind::kRedis && !HaveRedisServer()) continue;
    ServerProcess s(kind);
    RespClient c(s.port());
    EXPECT_EQ(c.Call({"CONFIG", "GET", "bind"}).elems.at(1).str, "* -::*");
    EXPECT_EQ(FirstReply("127.0.0.1", s.port()), "+PONG\r\n");
    std::string ext = NonLoopbackAddress();
    if (!ext.empty()) EXPECT_EQ(FirstReply(ext, s.port()).rfind("-DENIED", 0), 0u);
  }
}

TEST(Security, ProtectedModeRefusesRemoteClientsWithoutPassword) {
  std::string ext = NonLoopbackAddress();
  if (ext.empty()) GTEST_SKIP() << "no non-loopback IPv4 address on this machine";
  {
    ServerProcess s(ServerProcess::Kind::kKvstore, {"--bind", "0.0.0.0"});
    EXPECT_EQ(FirstReply(ext, s.port()).rfind("-DENIED", 0), 0u);
    EXPECT_EQ(FirstReply("127.0.0.1", s.port()), "+PONG\r\n");
    // As Redis 7.0: loopback means 127.0.0.1 and ::1, not the rest of 127.0.0.0/8.
    EXPECT_EQ(FirstReply("127.0.0.1", s.port(), "127.0.0.2").rfind("-DENIED", 0), 0u);
  }
  {
    ServerProcess s(ServerProcess::Kind::kKvstore,
                    {"--bind", "0.0.0.0", "--protected-mode", "no"});
    EXPECT_EQ(FirstReply(ext, s.port()), "+PONG\r\n");
  }
  {
    ServerProcess s(ServerProcess::Kind::kKvstore, {"--bind", "0.0.0.0", "--requirepass", "pw"});
    EXPECT_EQ(FirstReply(ext, s.port()), "-NOAUTH Authentication required.\r\n");
  }
}

TEST(Security, RenameCommand) {
  ServerProcess s(ServerProcess::Kind::kKvstore,
                  {"--rename-command", "flushall", "", "--rename-command", "get", "fetch"});
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"SET", "k", "v"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"FETCH", "k"}), "$1\r\nv\r\n");
  EXPECT_EQ(c.Raw({"GET", "k"}),
            "-ERR unknown command 'GET', with args beginning with: 'k' \r\n");
  EXPECT_EQ(c.Raw({"FLUSHALL"}), "-ERR unknown command 'FLUSHALL', with args beginning with: \r\n");
}

TEST(Security, BadConfigRefusesToStart) {
  // A config error is reported and the process exits non-zero, as redis-server does.
  std::string cmd = BuildPath("kvstore-server") + " --port notaport > /dev/null 2>&1";
  int rc = system(cmd.c_str());
  EXPECT_NE(rc, 0);
}

}  // namespace
}  // namespace kv::test
