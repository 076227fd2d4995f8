// End-to-end tests of the connection layer: a real kvstore-server process, real sockets.
#include <gtest/gtest.h>

#include <thread>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

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

}  // namespace
}  // namespace kv::test
