// Security basics end to end: protected mode, bind, rename-command.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <cstdlib>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

// An IPv4 address of this machine that is not loopback, or "" if there is none.
std::string NonLoopbackAddress() {
  ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) != 0) return "";
  std::string found;
  for (ifaddrs* i = ifs; i && found.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof(buf));
    if (std::string(buf).rfind("127.", 0) != 0) found = buf;
  }
  freeifaddrs(ifs);
  return found;
}

// Connects to addr:port and returns the first reply line (or "" if none comes).
std::string FirstReply(const std::string& addr, int port) {
  auto fd = net::ConnectTcp(addr, port, 2000);
  if (!fd.ok()) return "connect failed: " + fd.status().message();
  const char ping[] = "*1\r\n$4\r\nPING\r\n";
  if (write(fd->get(), ping, sizeof(ping) - 1) < 0) return "";
  pollfd p{fd->get(), POLLIN, 0};
  if (poll(&p, 1, 2000) <= 0) return "";
  char buf[1024];
  ssize_t n = read(fd->get(), buf, sizeof(buf));
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

TEST(Security, DefaultBindIsLoopbackOnly) {
  std::string ext = NonLoopbackAddress();
  if (ext.empty()) GTEST_SKIP() << "no non-loopback IPv4 address on this machine";
  ServerProcess s(ServerProcess::Kind::kKvstore);
  EXPECT_EQ(FirstReply("127.0.0.1", s.port()), "+PONG\r\n");
  EXPECT_NE(FirstReply(ext, s.port()).find("connect failed"), std::string::npos);
}

TEST(Security, ProtectedModeRefusesRemoteClientsWithoutPassword) {
  std::string ext = NonLoopbackAddress();
  if (ext.empty()) GTEST_SKIP() << "no non-loopback IPv4 address on this machine";
  {
    ServerProcess s(ServerProcess::Kind::kKvstore, {"--bind", "0.0.0.0"});
    EXPECT_EQ(FirstReply(ext, s.port()).rfind("-DENIED", 0), 0u);
    EXPECT_EQ(FirstReply("127.0.0.1", s.port()), "+PONG\r\n");
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
