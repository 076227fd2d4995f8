// A replica that is pointed at another primary keeps its own replicas until it has something new
// for them, as Redis 7.0 does: their link goes only when it loads another primary's snapshot or
// its history changes. A switch that comes to nothing (the new primary dies before its snapshot
// arrives, and the replica goes back) costs the sub-replicas no resync at all. Redis'
// integration/replication "Don't disconnect with replicas before loading transferred RDB when full
// sync" and "Discard cache master before loading transferred RDB when full sync". Each case runs
// with every node kvstore, then every node redis-server.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

class ReplicationSwitch : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  }
  static std::string Port(const ServerProcess& s) { return std::to_string(s.port()); }
  // A node that starts its snapshots for replicas at once.
  static Cmd Node(Cmd extra = {}) {
    Cmd args = {"--repl-diskless-sync-delay", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  // The chain m1 -> r -> s, in sync.
  void Chain(const ServerProcess& m1, RespClient& c1) {
    r_ =
        std::make_unique<ServerProcess>(GetParam(), Node({"--replicaof", "127.0.0.1 " + Port(m1)}));
    cr_ = std::make_unique<RespClient>(r_->port());
    ASSERT_TRUE(InSync(c1, *cr_));
    s_ = std::make_unique<ServerProcess>(GetParam(), Cmd{"--replicaof", "127.0.0.1 " + Port(*r_)});
    cs_ = std::make_unique<RespClient>(s_->port());
    ASSERT_TRUE(InSync(*cr_, *cs_));
  }
  std::unique_ptr<ServerProcess> r_, s_;
  std::unique_ptr<RespClient> cr_, cs_;
};

TEST_P(ReplicationSwitch, AnAbandonedSwitchKeepsTheSubReplicasLink) {
  ServerProcess m1(GetParam(), Node());
  RespClient c1(m1.port());
  ASSERT_EQ(c1.Raw({"SET", "a", "b"}), "+OK\r\n");
  // The second primary's snapshot takes 10 s (a second per key): the switch to it is abandoned
  // long before it could arrive.
  ServerProcess m2(GetParam(), {"--repl-diskless-sync", "no"});
  RespClient c2(m2.port());
  ASSERT_EQ(c2.Raw({"DEBUG", "POPULATE", "10", "m2", "10"}), "+OK\r\n");
  ASSERT_EQ(c2.Raw({"CONFIG", "SET", "rdb-key-save-delay", "1000000"}), "+OK\r\n");

  ASSERT_NO_FATAL_FAILURE(Chain(m1, c1));
  ServerProcess& s = *s_;
  RespClient &cr = *cr_, &cs = *cs_;
  EXPECT_EQ(cs.Raw({"GET", "a"}), "$1\r\nb\r\n");
  std::string replid = InfoField(c1, "replication", "master_replid");
  EXPECT_EQ(InfoField(cs, "replication", "master_replid"), replid);

  ASSERT_EQ(cr.Raw({"REPLICAOF", "127.0.0.1", Port(m2)}), "+OK\r\n");
  ASSERT_TRUE(WaitFor([&] { return InfoField(c2, "persistence", "rdb_bgsave_in_progress") == "1"; },
                      30000));
  c2.Send({"SHUTDOWN", "NOSAVE"});
  ASSERT_TRUE(WaitFor([&] { return !m2.Alive(); }, 30000));
  EXPECT_EQ(s.LogText().find("Connection with master lost"), std::string::npos) << s.LogText();
  EXPECT_EQ(InfoField(cr, "replication", "master_replid"), replid);
  EXPECT_EQ(InfoField(cs, "replication", "master_replid"), replid);

  // Back to the first primary: a partial resync, and the sub-replica never noticed.
  std::string full = InfoField(c1, "stats", "sync_full");
  std::string partial = InfoField(c1, "stats", "sync_partial_ok");
  ASSERT_EQ(cr.Raw({"REPLICAOF", "127.0.0.1", Port(m1)}), "+OK\r\n");
  ASSERT_EQ(c1.Raw({"SET", "a", "c"}), "+OK\r\n");
  ASSERT_TRUE(InSync(c1, cr));
  ASSERT_TRUE(InSync(cr, cs));
  EXPECT_EQ(cs.Raw({"GET", "a"}), "$1\r\nc\r\n");
  EXPECT_EQ(InfoField(c1, "stats", "sync_full"), full);
  EXPECT_EQ(InfoField(c1, "stats", "sync_partial_ok"), std::to_string(std::stoi(partial) + 1));
  EXPECT_EQ(InfoField(cs, "replication", "master_replid"), replid);
  EXPECT_EQ(s.LogText().find("Connection with master lost"), std::string::npos) << s.LogText();
  EXPECT_EQ(InfoField(cr, "stats", "sync_full"), "1");  // the sub-replica's one full sync
  EXPECT_EQ(InfoField(cr, "stats", "sync_partial_ok"), "0");
}

// The same switch carried through: the sub-replica's link goes once the new primary's snapshot
// is loaded (it followed a history its primary no longer has), and it resyncs with the new data.
TEST_P(ReplicationSwitch, ACompletedSwitchResyncsTheSubReplicas) {
  ServerProcess m1(GetParam(), Node());
  RespClient c1(m1.port());
  ASSERT_EQ(c1.Raw({"SET", "a", "b"}), "+OK\r\n");
  ServerProcess m2(GetParam(), Node());
  RespClient c2(m2.port());
  ASSERT_EQ(c2.Raw({"SET", "a", "m2"}), "+OK\r\n");
  ASSERT_NO_FATAL_FAILURE(Chain(m1, c1));
  RespClient &cr = *cr_, &cs = *cs_;

  ASSERT_EQ(cr.Raw({"REPLICAOF", "127.0.0.1", Port(m2)}), "+OK\r\n");
  ASSERT_TRUE(InSync(c2, cr));
  ASSERT_TRUE(WaitFor([&] { return cs.Raw({"GET", "a"}) == "$2\r\nm2\r\n"; }, 30000));
  ASSERT_TRUE(InSync(cr, cs));
  EXPECT_EQ(InfoField(cs, "replication", "master_replid"),
            InfoField(c2, "replication", "master_replid"));
  EXPECT_EQ(InfoField(cr, "stats", "sync_full"), "2");
}

INSTANTIATE_TEST_SUITE_P(Servers, ReplicationSwitch,
                         ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
