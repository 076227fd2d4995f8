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
