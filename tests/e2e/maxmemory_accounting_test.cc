// What maxmemory counts, with redis-server as the oracle: each test runs on both servers and
// checks the behaviour Redis 7.0 shows (the figures themselves differ between allocators).
// - The replicas' share of the shared replication buffer is left out of what maxmemory counts
//   (mem_not_counted_for_evict), to the byte as used_memory counts it, also once the replica
//   is gone and before its buffer is trimmed: a stopped replica's stream neither evicts keys nor
//   shows in used_memory less mem_not_counted_for_evict.
// - Measuring memory does not grow it: a first INFO does not make the scripting interpreters, so
//   100 KiB over the usage of a fresh server takes keys instead of refusing the first write.
// - Invalidations an eviction sends to tracking clients do not make eviction go on until the
//   keyspace is empty (the suite's "client tracking don't cause eviction feedback loop").
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

class MaxmemoryAccounting : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

// used_memory less mem_not_counted_for_evict: what maxmemory is checked against.
// From one INFO: the replica's buffer may be freed between two.
int64_t Counted(RespClient& c) {
  std::string info = c.Call({"INFO", "memory"}).str;
  auto field = [&](const std::string& name) {
    size_t at = info.find("\r\n" + name + ":");
    return at == std::string::npos ? -1 : std::stoll(info.substr(at + name.size() + 3));
  };
  return field("used_memory") - field("mem_not_counted_for_evict");
}

// A primary's replica stops reading while 100,000 writes that leave the data set's size alone
// pile up in the shared replication buffer: as in Redis, maxmemory (set 32 KiB above what it
// counts) evicts nothing, and used_memory less mem_not_counted_for_evict and the normal
// clients stays put, before and after the replica is killed.
TEST_P(MaxmemoryAccounting, AStoppedReplicasBufferIsNotCounted) {
  ServerProcess primary(GetParam());
  ServerProcess replica(GetParam());
  RespClient p(primary.port()), r(replica.port());
  for (int i = 0; i < 100; i++) {
    ASSERT_FALSE(p.Call({"SETRANGE", "key:" + std::to_string(i), "100000", "asdf"}).is_error());
  }
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"slowlog-log-slower-than", "-1"},
           {"repl-timeout", "1200"},
           {"maxmemory-policy", "allkeys-random"},
           {"client-output-buffer-limit", "replica 100000000 100000000 300"},
           {"repl-backlog-size", "10240"},
           {"latency-tracking", "no"}}) {
    ASSERT_EQ(p.Call({"CONFIG", "SET", name, value}).str, "OK") << name;
  }
  ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  ASSERT_TRUE(InSync(p, r));
  const int64_t orig = Counted(p) - InfoInt(p, "memory", "mem_clients_normal");
  ASSERT_EQ(p.Call({"CONFIG", "SET", "maxmemory", std::to_string(Counted(p) + 32 * 1024)}).str,
            "OK");

  kill(replica.pid(), SIGSTOP);
  // Batches small enough that the query and reply buffers stay far below the 32 KiB margin.
  const int kCommands = 100000, kBatch = 100;
  const std::string payload(100, 'A');
  for (int i = 0; i < kCommands; i += kBatch) {
    for (int j = 0; j < kBatch; j++) p.Send({"SETRANGE", "key:0", "0", payload});
    for (int j = 0; j < kBatch; j++) ASSERT_EQ(p.Read().integer, 100004);
  }
  const int64_t allowed = kCommands / 2;  // the suite's bound: half a byte a command
  EXPECT_EQ(p.Call({"DBSIZE"}).integer, 100);
  EXPECT_EQ(InfoInt(p, "stats", "evicted_keys"), 0);
  EXPECT_GT(InfoInt(p, "memory", "mem_clients_slaves"), 2 * 1024 * 1024);
  const int64_t piled = Counted(p) - InfoInt(p, "memory", "mem_clients_normal");
  EXPECT_LT(std::abs(piled - orig), allowed) << "before " << orig << " after " << piled;

  // The replica's buffer is past the backlog's size still, until trimmed: not counted either.
  ASSERT_EQ(p.Call({"CLIENT", "KILL", "TYPE", "replica"}).integer, 1);
  const int64_t killed = Counted(p) - InfoInt(p, "memory", "mem_clients_normal");
  EXPECT_LT(std::abs(killed - piled), allowed) << "before " << piled << " after " << killed;
  EXPECT_EQ(InfoInt(p, "memory", "mem_clients_slaves"), 0);
  EXPECT_EQ(p.Call({"DBSIZE"}).integer, 100);
  kill(replica.pid(), SIGCONT);
}

// The suite's "is the memory limit honoured?" on a fresh server: the first INFO is the first
// measure, and the limit 100 KiB above it. Writes evict keys, none is refused, and memory ends
// within the limit.
TEST_P(MaxmemoryAccounting, AFreshServerHonoursALimitSetFromItsFirstInfo) {
  for (const char* policy : {"allkeys-random", "allkeys-lru"}) {
    ServerProcess s(GetParam());
    RespClient c(s.port());
    const int64_t limit = InfoInt(c, "memory", "used_memory") + 100 * 1024;
    ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory", std::to_string(limit)}).str, "OK");
    ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory-policy", policy}).str, "OK");
    std::mt19937_64 rng(7);
    auto setex = [&] {
      Reply rep = c.Call({"SETEX", std::to_string(rng() % 1000000000000ull), "10000", "x"});
      return rep.is_error() ? rep.str : "";
    };
    int keys = 0;
    for (;;) {
      ASSERT_EQ(setex(), "") << policy << " after " << keys << " keys";
      keys++;
      if (InfoInt(c, "memory", "used_memory") + 4096 > limit) break;
    }
    EXPECT_GT(keys, 10) << policy;
    for (int i = 0; i < keys; i++) ASSERT_EQ(setex(), "") << policy;
    EXPECT_LT(InfoInt(c, "memory", "used_memory"), limit + 4096) << policy;
    EXPECT_GT(InfoInt(c, "stats", "evicted_keys"), 0) << policy;
  }
}

// Ten RESP3 clients track 300 keys with 1000-byte names; maxmemory 40 KB under the usage
// evicts a few dozen of them, whose invalidations go to all ten: Redis stops there (the
// invalidations' memory is sent and freed), and so must kvstore, not evict for it on and on.
TEST_P(MaxmemoryAccounting, TrackingInvalidationsDoNotDrainTheKeyspace) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  ASSERT_EQ(c.Call({"CONFIG", "SET", "latency-tracking", "no"}).str, "OK");
  ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}).str, "OK");
  ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory-eviction-tenacity", "100"}).str, "OK");
  std::vector<std::unique_ptr<RespClient>> trackers;
  for (int i = 0; i < 10; i++) {
    trackers.push_back(std::make_unique<RespClient>(s.port()));
    ASSERT_FALSE(trackers.back()->Call({"HELLO", "3"}).is_error());
    ASSERT_EQ(trackers.back()->Call({"CLIENT", "TRACKING", "on"}).str, "OK");
  }
  for (int j = 0; j < 300; j++) {
    std::string key = std::to_string(j) + std::string(1000, 'x');
    ASSERT_EQ(c.Call({"SET", key, "x"}).str, "OK");
    for (auto& t : trackers) ASSERT_EQ(t->Call({"GET", key}).str, "x");
  }
  // As the suite: past the cron's trimming of the query buffers.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const int64_t limit = InfoInt(c, "memory", "used_memory") - 40000;
  ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory", std::to_string(limit)}).str, "OK");
  const int64_t evicted = InfoInt(c, "stats", "evicted_keys");
  const int64_t dbsize = c.Call({"DBSIZE"}).integer;
  EXPECT_GE(dbsize, 200);
  EXPECT_LE(dbsize, 300);
  EXPECT_GE(evicted, 10);
  EXPECT_LE(evicted, 50);
  for (auto& t : trackers) {  // each was told of the evicted keys
    Reply push = t->Read();
    ASSERT_EQ(push.type, '>') << push.Debug();
    EXPECT_EQ(push.elems.at(0).str, "invalidate");
  }
}

INSTANTIATE_TEST_SUITE_P(Servers, MaxmemoryAccounting,
                         ::testing::Values(Kind::kKvstore, Kind::kRedis), [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
