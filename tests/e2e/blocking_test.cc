// Blocking list and sorted-set commands end to end: several real clients, on different poll
// groups, waiting and being served in order, timing out, disconnecting while blocked.
#include <gtest/gtest.h>

#include <thread>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

class Blocking : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess(ServerProcess::Kind::kKvstore, {"--io-threads", "3"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { RespClient(port()).Raw({"FLUSHALL"}); }
  static int port() { return server_->port(); }
  // Waits until INFO reports `n` blocked clients (blocking is asynchronous to the test).
  static void WaitBlocked(int n) {
    RespClient c(port());
    std::string want = "blocked_clients:" + std::to_string(n) + "\r\n";
    for (int i = 0; i < 200; i++) {
      if (c.Call({"INFO", "clients"}).str.find(want) != std::string::npos) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "never saw " << want;
  }
  static ServerProcess* server_;
};
ServerProcess* Blocking::server_ = nullptr;

TEST_F(Blocking, ServesWaitersFirstComeFirstServed) {
  std::vector<std::unique_ptr<RespClient>> waiters;
  for (int i = 0; i < 4; i++) {
    waiters.push_back(std::make_unique<RespClient>(port()));
    waiters.back()->Send({"BLPOP", "queue", "other", "0"});
    WaitBlocked(i + 1);  // so the arrival order is known
  }
  RespClient pusher(port());
  EXPECT_EQ(pusher.Raw({"RPUSH", "queue", "a", "b", "c", "d"}), ":4\r\n");
  const char* expect[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; i++) {
    Reply r = waiters[i]->Read();
    ASSERT_EQ(r.elems.size(), 2u) << r.Debug();
    EXPECT_EQ(r.elems[0].str, "queue");
    EXPECT_EQ(r.elems[1].str, expect[i]);
  }
  EXPECT_EQ(pusher.Raw({"EXISTS", "queue"}), ":0\r\n");
}

TEST_F(Blocking, TimeoutsAnswerNullInEachProtocol) {
  RespClient c2(port()), c3(port());
  EXPECT_EQ(c2.Raw({"BLPOP", "nothing", "0.1"}), "*-1\r\n");
  ASSERT_EQ(c3.Call({"HELLO", "3"}).type, '%');
  EXPECT_EQ(c3.Raw({"BRPOP", "nothing", "0.1"}), "_\r\n");
  // A null array for BLMOVE too, as Redis 7.0 answers every timeout (not MULTI's null bulk).
  EXPECT_EQ(c2.Raw({"BLMOVE", "nothing", "dst", "LEFT", "RIGHT", "0.1"}), "*-1\r\n");
  EXPECT_EQ(c2.Raw({"BZPOPMIN", "nothing", "0.1"}), "*-1\r\n");
  EXPECT_EQ(c2.Raw({"BLPOP", "k", "-1"}), "-ERR timeout is negative\r\n");
  EXPECT_EQ(c2.Raw({"BLPOP", "k", "abc"}), "-ERR timeout is not a float or out of range\r\n");
}

TEST_F(Blocking, PipelinedCommandsWaitBehindTheBlockedOne) {
  RespClient c(port());
  c.SendRaw(RespClient::Encode({"BLPOP", "pl", "0"}) + RespClient::Encode({"ECHO", "after"}));
  WaitBlocked(1);
  RespClient(port()).Raw({"LPUSH", "pl", "x"});
  EXPECT_EQ(c.Read().raw, "*2\r\n$2\r\npl\r\n$1\r\nx\r\n");
  EXPECT_EQ(c.Read().raw, "$5\r\nafter\r\n");
}

TEST_F(Blocking, MoveChainsWakeTheNextWaiter) {
  RespClient a(port()), b(port());
  b.Send({"BLPOP", "stage2", "0"});
  WaitBlocked(1);
  a.Send({"BLMOVE", "stage1", "stage2", "LEFT", "RIGHT", "0"});
  WaitBlocked(2);
  RespClient(port()).Raw({"RPUSH", "stage1", "job"});
  EXPECT_EQ(a.Read().raw, "$3\r\njob\r\n");
  EXPECT_EQ(b.Read().raw, "*2\r\n$6\r\nstage2\r\n$3\r\njob\r\n");
}

TEST_F(Blocking, DatabasesAreSeparate) {
  RespClient w(port());
  ASSERT_EQ(w.Raw({"SELECT", "1"}), "+OK\r\n");
  w.Send({"BLPOP", "dbkey", "0"});
  WaitBlocked(1);
  RespClient p(port());
  EXPECT_EQ(p.Raw({"RPUSH", "dbkey", "in-db0"}), ":1\r\n");  // db 0: not its key
  ASSERT_EQ(p.Raw({"SELECT", "1"}), "+OK\r\n");
  EXPECT_EQ(p.Raw({"RPUSH", "dbkey", "in-db1"}), ":1\r\n");
  EXPECT_EQ(w.Read().raw, "*2\r\n$5\r\ndbkey\r\n$6\r\nin-db1\r\n");
}

TEST_F(Blocking, OtherTypesDoNotWakeAListWaiter) {
  RespClient w(port());
  w.Send({"BLPOP", "typed", "0.3"});
  WaitBlocked(1);
  EXPECT_EQ(RespClient(port()).Raw({"SET", "typed", "str"}), "+OK\r\n");
  EXPECT_EQ(w.Read().raw, "*-1\r\n");  // timed out, as in Redis
}

TEST_F(Blocking, DisconnectWhileBlocked) {
  {
    RespClient gone(port());
    gone.Send({"BLPOP", "dq", "0"});
    WaitBlocked(1);
  }
  WaitBlocked(0);
  RespClient stay(port());
  stay.Send({"BLPOP", "dq", "0"});
  WaitBlocked(1);
  RespClient(port()).Raw({"RPUSH", "dq", "v"});
  EXPECT_EQ(stay.Read().raw, "*2\r\n$2\r\ndq\r\n$1\r\nv\r\n");
}

TEST_F(Blocking, InsideMultiNothingBlocks) {
  RespClient c(port());
  EXPECT_EQ(c.Raw({"MULTI"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"BLPOP", "empty", "0"}), "+QUEUED\r\n");
  EXPECT_EQ(c.Raw({"BZPOPMAX", "empty", "0"}), "+QUEUED\r\n");
  EXPECT_EQ(c.Raw({"BLMOVE", "empty", "x", "LEFT", "LEFT", "0"}), "+QUEUED\r\n");
  EXPECT_EQ(c.Raw({"EXEC"}), "*3\r\n*-1\r\n*-1\r\n$-1\r\n");
}

TEST_F(Blocking, SortedSetWaiters) {
  RespClient w(port());
  w.Send({"BZPOPMIN", "zq", "0"});
  WaitBlocked(1);
  RespClient(port()).Raw({"ZADD", "zq", "2", "b", "1", "a"});
  EXPECT_EQ(w.Read().raw, "*3\r\n$2\r\nzq\r\n$1\r\na\r\n$1\r\n1\r\n");
  w.Send({"BZMPOP", "0", "1", "zq2", "MAX", "COUNT", "5"});
  WaitBlocked(1);
  RespClient(port()).Raw({"ZADD", "zq2", "1", "x", "3", "y"});
  EXPECT_EQ(w.Read().raw,
            "*2\r\n$3\r\nzq2\r\n*2\r\n*2\r\n$1\r\ny\r\n$1\r\n3\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n");
}

TEST(BlockingVsRedis, ImmediateRepliesMatch) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess kv(ServerProcess::Kind::kKvstore), redis(ServerProcess::Kind::kRedis);
  std::vector<std::vector<std::string>> script = {
      {"RPUSH", "l", "a", "b", "c"}, {"BLPOP", "none", "l", "1"}, {"BRPOP", "l", "1"},
      {"BLMPOP", "1", "2", "none", "l", "LEFT", "COUNT", "5"}, {"BLMPOP", "0", "0", "l", "LEFT"},
      {"BLMPOP", "0", "1", "l", "UP"}, {"SET", "s", "x"}, {"BLPOP", "s", "1"},
      {"ZADD", "z", "1", "a", "2", "b"}, {"BZPOPMAX", "z", "1"}, {"BZMPOP", "0", "1", "z", "MIN"},
      {"RPUSH", "src", "1", "2"}, {"BRPOPLPUSH", "src", "dst", "0"},
      {"BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"}, {"LRANGE", "dst", "0", "-1"},
      {"BLMOVE", "src", "dst", "UP", "LEFT", "0"}, {"DEBUG", "DIGEST"}};
  RespClient kc(kv.port()), rc(redis.port());
  for (const auto& cmd : script) EXPECT_EQ(kc.Raw(cmd), rc.Raw(cmd)) << cmd[0];
}

}  // namespace
}  // namespace kv::test
