// End-to-end tests of the connection layer: a real kvstore-server process, real sockets.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

class ConnectionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServerProcess(ServerProcess::Kind::kKvstore); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static int port() { return server_->port(); }
  static ServerProcess* server_;
};
ServerProcess* ConnectionTest::server_ = nullptr;

TEST_F(ConnectionTest, PingAndEcho) {
  RespClient c(port());
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  EXPECT_EQ(c.Raw({"ECHO", "hello"}), "$5\r\nhello\r\n");
}

TEST_F(ConnectionTest, InlineCommands) {
  RespClient c(port());
  c.SendRaw("PING\r\n");
  EXPECT_EQ(c.Read().raw, "+PONG\r\n");
  c.SendRaw("ECHO \"a b\"\n");
  EXPECT_EQ(c.Read().raw, "$3\r\na b\r\n");
}

TEST_F(ConnectionTest, PipelineRepliesInOrder) {
  RespClient c(port());
  std::string batch;
  for (int i = 0; i < 1000; i++) batch += RespClient::Encode({"ECHO", std::to_string(i)});
  c.SendRaw(batch);
  for (int i = 0; i < 1000; i++) ASSERT_EQ(c.Read().str, std::to_string(i));
}

TEST_F(ConnectionTest, RequestSplitAcrossWrites) {
  RespClient c(port());
  std::string req = RespClient::Encode({"ECHO", std::string(100000, 'x')});
  for (size_t off = 0; off < req.size(); off += 7777) {
    c.SendRaw(req.substr(off, 7777));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(c.Read().str.size(), 100000u);
}

TEST_F(ConnectionTest, ProtocolErrorClosesOnlyThatConnection) {
  RespClient good(port());
  RespClient bad(port());
  bad.SendRaw("*1\r\n$-5\r\n");
  EXPECT_EQ(bad.Read().raw, "-ERR Protocol error: invalid bulk length\r\n");
  EXPECT_TRUE(bad.WaitClosed(2000));
  EXPECT_EQ(good.Raw({"PING"}), "+PONG\r\n");
}

TEST_F(ConnectionTest, HelloSwitchesProtocol) {
  RespClient c(port());
  Reply r = c.Call({"HELLO", "3"});
  ASSERT_EQ(r.type, '%');
  EXPECT_EQ(c.Raw({"HELLO", "4"}), "-NOPROTO unsupported protocol version\r\n");
  EXPECT_EQ(c.Raw({"CLIENT", "GETNAME"}), "_\r\n");
  r = c.Call({"HELLO", "2"});
  EXPECT_EQ(r.type, '*');
  EXPECT_EQ(c.Raw({"CLIENT", "GETNAME"}), "$-1\r\n");
}

TEST_F(ConnectionTest, NothingRunsAfterQuitInAPipeline) {
  RespClient c(port());
  c.SendRaw(RespClient::Encode({"SET", "before-quit", "1"}) + RespClient::Encode({"QUIT"}) +
            RespClient::Encode({"SET", "after-quit", "1"}) + "*2\r\n$3\r\nGET\r\n$2\r\nab");
  EXPECT_EQ(c.Read().raw, "+OK\r\n");
  EXPECT_EQ(c.Read().raw, "+OK\r\n");
  EXPECT_TRUE(c.WaitClosed(2000));
  RespClient check(port());
  EXPECT_EQ(check.Raw({"EXISTS", "before-quit", "after-quit"}), ":1\r\n");
}

TEST_F(ConnectionTest, MixedPipelineWithPartialTail) {
  // Multibulk and inline requests in one write, the last one split across two writes.
  RespClient c(port());
  std::string batch;
  for (int i = 0; i < 100; i++) {
    batch += i % 3 == 0 ? "ECHO inline" + std::to_string(i) + "\r\n"
                        : RespClient::Encode({"ECHO", "m" + std::to_string(i)});
  }
  std::string tail = RespClient::Encode({"ECHO", "tail"});
  c.SendRaw(batch + tail.substr(0, 9));
  for (int i = 0; i < 100; i++) {
    ASSERT_EQ(c.Read().str, (i % 3 == 0 ? "inline" : "m") + std::to_string(i));
  }
  c.SendRaw(tail.substr(9));
  EXPECT_EQ(c.Read().str, "tail");
}

TEST_F(ConnectionTest, QuitClosesAfterReply) {
  RespClient c(port());
  EXPECT_EQ(c.Raw({"QUIT"}), "+OK\r\n");
  EXPECT_TRUE(c.WaitClosed(2000));
}

TEST(ConnectionAuth, RequirePass) {
  ServerProcess s(ServerProcess::Kind::kKvstore, {"--requirepass", "s3cret"});
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"GET", "k"}), "-NOAUTH Authentication required.\r\n");
  EXPECT_EQ(c.Raw({"AUTH", "wrong"}),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  EXPECT_EQ(c.Raw({"AUTH", "s3cret"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  RespClient h(s.port());
  EXPECT_EQ(h.Call({"HELLO", "3", "AUTH", "default", "s3cret"}).type, '%');
}

// The established IPv4 TCP sockets of this machine, as /proc/net/tcp lists them: local port,
// remote port and the timer armed ("tr": 0 none, 1 retransmit, 2 keepalive or another).
struct TcpSocket {
  int local, remote, timer;
};
std::vector<TcpSocket> EstablishedSockets() {
  std::vector<TcpSocket> out;
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // the header
  auto port = [](const std::string& a) {
    return std::stoi(a.substr(a.find(':') + 1), nullptr, 16);
  };
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string sl, laddr, raddr, st, queues, timer;
    f >> sl >> laddr >> raddr >> st >> queues >> timer;
    if (st != "01") continue;
    int tr = std::stoi(timer.substr(0, timer.find(':')), nullptr, 16);
    out.push_back({port(laddr), port(raddr), tr});
  }
  return out;
}

int LocalPort(const RespClient& c) {
  sockaddr_in me{};
  socklen_t len = sizeof(me);
  if (getsockname(c.fd(), reinterpret_cast<sockaddr*>(&me), &len) != 0) return -1;
  return ntohs(me.sin_port);
}

// Whether the established socket from port `local` to port `remote` settles with timer
// `timer` (data in flight shows the retransmit timer for a moment).
bool TimerSettlesAt(int local, int remote, int timer) {
  return WaitFor([&] {
    for (const TcpSocket& s : EstablishedSockets()) {
      if (s.local == local && s.remote == remote) return s.timer == timer;
    }
    return false;
  }, 5000);
}

// tcp-keepalive (300 s by default), as in Redis: the server's end of a client connection and a
// replica's end of its link to the primary have keepalive probes armed, so a peer whose host
// went away without closing is found; 0 turns them off for new connections.
TEST(ConnectionKeepalive, ClientAndReplicaSocketsProbeTheirPeer) {
  for (auto kind : {ServerProcess::Kind::kKvstore, ServerProcess::Kind::kRedis}) {
    SCOPED_TRACE(kind == ServerProcess::Kind::kKvstore ? "kvstore" : "redis");
    ServerProcess primary(kind, {"--repl-diskless-sync-delay", "0"});
    RespClient c(primary.port());
    ASSERT_EQ(c.Raw({"PING"}), "+PONG\r\n");
    int client_port = LocalPort(c);
    EXPECT_TRUE(TimerSettlesAt(primary.port(), client_port, 2)) << "the server's end of a client";
    EXPECT_TRUE(TimerSettlesAt(client_port, primary.port(), 0)) << "the test's own end";

    std::vector<std::string> args;
    if (kind == ServerProcess::Kind::kKvstore) args = {"--repl-transport", "tcp"};
    ServerProcess replica(kind, args);
    RespClient r(replica.port());
    ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(r, "replication", "master_link_status") == "up";
    }));
    // The replica's end: the connection to the primary's port that is not the test's.
    std::vector<int> links;
    for (const TcpSocket& s : EstablishedSockets()) {
      if (s.remote == primary.port() && s.local != client_port) links.push_back(s.local);
    }
    ASSERT_EQ(links.size(), 1u);
    EXPECT_TRUE(TimerSettlesAt(links[0], primary.port(), 2)) << "the replica's end of its link";

    ASSERT_EQ(c.Call({"CONFIG", "SET", "tcp-keepalive", "0"}).str, "OK");
    RespClient off(primary.port());
    ASSERT_EQ(off.Raw({"PING"}), "+PONG\r\n");
    EXPECT_TRUE(TimerSettlesAt(primary.port(), LocalPort(off), 0)) << "tcp-keepalive 0";
  }
}

}  // namespace
}  // namespace kv::test
