// CONFIG SET port and bind at runtime, as Redis 7.0 does them: the server listens on the new
// port (or addresses) at once and stops listening on the old, the Unix socket and open
// connections stay; a port or address that cannot be bound is refused with Redis' error and
// changes nothing. Both servers run every case.
#include <gtest/gtest.h>

#include <string>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

bool Answers(int port) {
  auto fd = net::ConnectTcp("127.0.0.1", port, 500);
  if (!fd.ok()) return false;
  RespClient c(port);
  return c.Call({"PING"}).str == "PONG";
}

bool Refuses(int port) { return !net::ConnectTcp("127.0.0.1", port, 500).ok(); }

class ConfigListen : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  }
};

TEST_P(ConfigListen, PortMovesTheListener) {
  ServerProcess server(GetParam());
  RespClient old_conn(server.port());
  int port = FreePort();
  ASSERT_EQ(old_conn.Call({"CONFIG", "SET", "port", std::to_string(port)}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return Answers(port) && Refuses(server.port()); }));
  // The connection that asked goes on.
  EXPECT_EQ(old_conn.Call({"CONFIG", "GET", "port"}).elems.at(1).str, std::to_string(port));
  EXPECT_EQ(InfoField(old_conn, "server", "tcp_port"), std::to_string(port));
}

TEST_P(ConfigListen, ABusyPortIsRefusedAndChangesNothing) {
  ServerProcess server(GetParam());
  RespClient c(server.port());
  int busy = FreePort();
  auto holder = net::ListenTcp("127.0.0.1", busy, 1);
  ASSERT_TRUE(holder.ok());
  EXPECT_EQ(c.Call({"CONFIG", "SET", "port", std::to_string(busy)}).str,
            "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on "
            "this port. Check server logs.");
  EXPECT_EQ(c.Call({"CONFIG", "GET", "port"}).elems.at(1).str, std::to_string(server.port()));
  EXPECT_TRUE(Answers(server.port()));
}

TEST_P(ConfigListen, BindListensOnTheNewAddresses) {
  ServerProcess server(GetParam());
  RespClient c(server.port());
  ASSERT_EQ(c.Call({"CONFIG", "SET", "bind", "127.0.0.1"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return Answers(server.port()); }));
  EXPECT_EQ(c.Call({"CONFIG", "GET", "bind"}).elems.at(1).str, "127.0.0.1");
  // An address of no interface here (TEST-NET-1) cannot be bound.
  EXPECT_EQ(c.Call({"CONFIG", "SET", "bind", "192.0.2.1"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to "
            "specified addresses.");
  EXPECT_EQ(c.Call({"CONFIG", "GET", "bind"}).elems.at(1).str, "127.0.0.1");
  EXPECT_TRUE(Answers(server.port()));
}

INSTANTIATE_TEST_SUITE_P(Servers, ConfigListen, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return std::string(info.param == Kind::kKvstore ? "kvstore" : "redis");
                         });

}  // namespace
}  // namespace kv::test
