// End-to-end tests of replication with real processes on loopback. So far the primary side:
// Debian's redis-server follows a kvstore primary (full diskless sync with writes running during
// the sync, the live stream, expirations, partial resync after a dropped link).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

std::string InfoField(RespClient& c, const std::string& section, const std::string& name) {
  std::string info = c.Call({"INFO", section}).str;
  size_t at = info.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  at += name.size() + 3;
  return info.substr(at, info.find("\r\n", at) - at);
}

bool WaitFor(const std::function<bool()>& cond, int timeout_ms = 20000) {
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

// The replica has applied everything the primary produced.
bool InSync(RespClient& primary, RespClient& replica) {
  return WaitFor([&] {
    return InfoField(replica, "replication", "master_link_status") == "up" &&
           InfoField(replica, "replication", "slave_repl_offset") ==
               InfoField(primary, "replication", "master_repl_offset");
  });
}

void Populate(RespClient& c, int keys) {
  Cmd mset = {"MSET"};
  for (int i = 0; i < keys; i++) {
    mset.push_back("key:" + std::to_string(i));
    mset.push_back(std::string(100 + i % 50, static_cast<char>('a' + i % 26)));
  }
  ASSERT_EQ(c.Call(mset).str, "OK");
  for (int db : {0, 5}) {
    c.Call({"SELECT", std::to_string(db)});
    c.Call({"RPUSH", "list", "a", "b", "c"});
    c.Call({"SADD", "set", "1", "2", "x"});
    c.Call({"ZADD", "zset", "1", "a", "2.5", "b"});
    c.Call({"HSET", "hash", "f", "v", "g", "12"});
    c.Call({"SET", "volatile", "v", "EX", "1000"});
  }
  c.Call({"SELECT", "0"});
}

// Writes of every kind, including ones Redis rewrites for replicas (relative TTLs, INCRBYFLOAT,
// SPOP, blocking pops served later) and transactions.
void Writes(RespClient& c, int round) {
  std::string r = std::to_string(round);
  c.Call({"SET", "w:" + r, r, "PX", "500000"});
  c.Call({"INCRBYFLOAT", "float", "1.5"});
  c.Call({"LPUSH", "list", r});
  c.Call({"SADD", "spop-set", "a" + r, "b" + r, "c" + r});
  c.Call({"SPOP", "spop-set"});
  c.Call({"ZINCRBY", "zset", "1", "m" + r});
  c.Call({"HINCRBY", "hash", "n", "1"});
  c.Call({"EXPIRE", "key:" + r, "1000"});
  c.Call({"DEL", "key:" + std::to_string(round + 500)});
  c.Call({"MULTI"});
  c.Call({"INCR", "tx"});
  c.Call({"SELECT", "5"});
  c.Call({"INCR", "tx"});
  c.Call({"EXEC"});
  c.Call({"SELECT", "0"});
}

class KvstorePrimary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    primary_ = std::make_unique<ServerProcess>(Kind::kKvstore, Cmd{"--repl-diskless-sync-delay", "0"});
  }
  std::unique_ptr<ServerProcess> primary_;
};

TEST_F(KvstorePrimary, RedisReplicaFullSyncWithWritesRunning) {
  RespClient p(primary_->port());
  Populate(p, 20000);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    RespClient w(primary_->port());
    for (int i = 0; !stop; i++) Writes(w, i);
  });
  ServerProcess replica(Kind::kRedis, {"--replicaof", "127.0.0.1 " + std::to_string(primary_->port())});
  RespClient r(replica.port());
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "replication", "master_link_status") == "up"; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop = true;
  writer.join();
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(InfoField(p, "replication", "connected_slaves"), "1");
  EXPECT_NE(InfoField(p, "replication", "slave0").find("state=online"), std::string::npos);
  // Expirations reach the replica as DELs.
  p.Call({"SET", "short", "v", "PX", "50"});
  ASSERT_TRUE(WaitFor([&] { return p.Call({"EXISTS", "short"}).integer == 0; }));
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
}

TEST_F(KvstorePrimary, DroppedLinkResyncsPartially) {
  RespClient p(primary_->port());
  Populate(p, 1000);
  ServerProcess replica(Kind::kRedis, {"--replicaof", "127.0.0.1 " + std::to_string(primary_->port())});
  RespClient r(replica.port());
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(p.Call({"CLIENT", "KILL", "TYPE", "replica"}).integer, 1);
  for (int i = 0; i < 20; i++) Writes(p, i);
  ASSERT_TRUE(WaitFor([&] { return InfoField(p, "replication", "connected_slaves") == "1"; }));
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_NE(replica.LogText().find("Successful partial resynchronization"), std::string::npos)
      << replica.LogText();
  EXPECT_NE(primary_->LogText().find("Partial resynchronization request"), std::string::npos);
}

}  // namespace
}  // namespace kv::test

namespace kv::test {
namespace {

class KvstoreReplica : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
  static Cmd Follow(const ServerProcess& primary) {
    return {"--replicaof", "127.0.0.1 " + std::to_string(primary.port()),
            "--repl-diskless-sync-delay", "0"};
  }
};

TEST_F(KvstoreReplica, FollowsRedisPrimaryAndResyncsPartially) {
  ServerProcess primary(Kind::kRedis, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 20000);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    RespClient w(primary.port());
    for (int i = 0; !stop; i++) Writes(w, i);
  });
  ServerProcess replica(Kind::kKvstore, Follow(primary));
  RespClient r(replica.port());
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "replication", "master_link_status") == "up"; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop = true;
  writer.join();
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(r.Call({"SET", "x", "1"}).str, "READONLY You can't write against a read only replica.");
  Reply role = r.Call({"ROLE"});
  ASSERT_EQ(role.elems.size(), 5u);
  EXPECT_EQ(role.elems[0].str, "slave");
  EXPECT_EQ(role.elems[3].str, "connected");
  // Drop the link from the primary's side: the replica comes back with PSYNC and continues.
  EXPECT_EQ(p.Call({"CLIENT", "KILL", "TYPE", "replica"}).integer, 1);
  for (int i = 0; i < 20; i++) Writes(p, 1000 + i);
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_NE(replica.LogText().find("Master accepted a Partial Resynchronization"),
            std::string::npos)
      << replica.LogText();
}

// kvstore -> kvstore -> kvstore, then a failover: the middle replica is promoted and the last one
// keeps following it without a full resync; a second replica re-pointed to it resyncs partially.
TEST_F(KvstoreReplica, ChainedReplicasAndFailover) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 5000);
  ServerProcess r1(Kind::kKvstore, Follow(primary));
  ServerProcess r2(Kind::kKvstore, Follow(primary));
  RespClient c1(r1.port()), c2(r2.port());
  ASSERT_TRUE(InSync(p, c1));
  ServerProcess r3(Kind::kKvstore, Follow(r1));
  RespClient c3(r3.port());
  for (int i = 0; i < 30; i++) Writes(p, i);
  ASSERT_TRUE(InSync(p, c1));
  ASSERT_TRUE(InSync(p, c2));
  ASSERT_TRUE(InSync(c1, c3));
  std::string digest = p.Call({"DEBUG", "DIGEST"}).str;
  EXPECT_EQ(c1.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(c2.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(c3.Call({"DEBUG", "DIGEST"}).str, digest);
  // Failover to r1.
  ASSERT_EQ(c1.Call({"REPLICAOF", "NO", "ONE"}).str, "OK");
  EXPECT_EQ(InfoField(c1, "replication", "role"), "master");
  ASSERT_EQ(c2.Call({"REPLICAOF", "127.0.0.1", std::to_string(r1.port())}).str, "OK");
  for (int i = 0; i < 30; i++) Writes(c1, 100 + i);
  ASSERT_TRUE(InSync(c1, c2)) << c2.Call({"INFO", "replication"}).str << "\n---- r1:\n"
                              << c1.Call({"INFO", "replication"}).str;
  ASSERT_TRUE(InSync(c1, c3)) << r3.LogText();
  digest = c1.Call({"DEBUG", "DIGEST"}).str;
  EXPECT_EQ(c2.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(c3.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(r2.LogText().find("Full resync from master", r2.LogText().find("Connecting to MASTER 127.0.0.1:" + std::to_string(r1.port()))),
            std::string::npos)
      << r2.LogText();
  EXPECT_NE(r1.LogText().find("Partial resynchronization request"), std::string::npos);
}

}  // namespace
}  // namespace kv::test
