// maxmemory and the eviction policies, with redis-server as the oracle: each test runs on both
// servers. Past the limit, noeviction refuses writes with Redis' OOM error (and MULTI with it);
// allkeys-lru keeps a hot set read in a loop, allkeys-lfu one read often; volatile policies
// never evict a key without a TTL, volatile-ttl takes the nearest expiry first; memory in use
// stays within 5% of the limit; evictions reach replicas as DELs, and a replica does not evict
// on its own; CONFIG SET maxmemory below the usage evicts at once; the "evicted" event fires.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

constexpr int64_t kLimit = 8 << 20;  // 8 MiB
const std::string kValue(1000, 'v');


// SETs keys prefix0..prefix(n-1), pipelined; each `args` is appended (EX 100, say). Returns the
// number of error replies.
int Fill(RespClient& c, const std::string& prefix, int from, int n,
         const std::vector<std::string>& args = {}) {
  int errors = 0;
  const int kBatch = 200;
  for (int i = from; i < from + n; i += kBatch) {
    int m = std::min(kBatch, from + n - i);
    for (int j = 0; j < m; j++) {
      std::vector<std::string> cmd = {"SET", prefix + std::to_string(i + j), kValue};
      cmd.insert(cmd.end(), args.begin(), args.end());
      c.Send(cmd);
    }
    for (int j = 0; j < m; j++) errors += c.Read().is_error() ? 1 : 0;
  }
  return errors;
}

// How many of prefix0..prefix(n-1) exist.
int64_t Surviving(RespClient& c, const std::string& prefix, int n) {
  std::vector<std::string> cmd = {"EXISTS"};
  for (int i = 0; i < n; i++) cmd.push_back(prefix + std::to_string(i));
  return c.Call(cmd).integer;
}

class Eviction : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
  std::unique_ptr<ServerProcess> Start(const std::string& policy,
                                       std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--maxmemory", std::to_string(kLimit), "--maxmemory-policy",
                                     policy};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ServerProcess>(GetParam(), args);
  }
  // Memory in use is within 5% of the limit (what maxmemory counts: used less not counted).
  static bool WithinLimit(RespClient& c) {
    int64_t used = InfoInt(c, "memory", "used_memory");
    int64_t not_counted = InfoInt(c, "memory", "mem_not_counted_for_evict");
    return used - not_counted <= kLimit * 105 / 100;
  }
  void ExpectWithinLimit(RespClient& c) {
    EXPECT_TRUE(WithinLimit(c)) << "used_memory " << InfoInt(c, "memory", "used_memory");
  }
};

TEST_P(Eviction, NoevictionRefusesWritesWithTheOomError) {
  auto s = Start("noeviction");
  RespClient c(s->port());
  ASSERT_GT(Fill(c, "k", 0, 20000), 0) << "20 MB went into an 8 MB server";
  EXPECT_EQ(InfoInt(c, "stats", "evicted_keys"), 0);
  const std::string oom = "OOM command not allowed when used memory > 'maxmemory'.";
  Reply r = c.Call({"SET", "one-more", "v"});
  EXPECT_EQ(r.str, oom) << r.Debug();
  // Reads and deletions still run; so do writes that cannot grow memory.
  EXPECT_EQ(c.Call({"GET", "k0"}).str, kValue);
  EXPECT_EQ(c.Call({"EXPIRE", "k0", "100"}).integer, 1);
  // In MULTI anything queued is refused, and EXEC then discards the transaction.
  EXPECT_EQ(c.Call({"MULTI"}).str, "OK");
  EXPECT_EQ(c.Call({"GET", "k0"}).str, oom);
  EXPECT_EQ(c.Call({"EXEC"}).str, "EXECABORT Transaction discarded because of previous errors.");
  int64_t keys = c.Call({"DBSIZE"}).integer;
  EXPECT_EQ(c.Call({"DEL", "k0", "k1", "k2", "k3"}).integer, 4);
  EXPECT_EQ(c.Call({"DBSIZE"}).integer, keys - 4);
  ExpectWithinLimit(c);
  // Once the limit is raised, writes go in again.
  EXPECT_EQ(c.Call({"CONFIG", "SET", "maxmemory", "0"}).str, "OK");
  EXPECT_EQ(c.Call({"SET", "one-more", "v"}).str, "OK");
}

// A hot set read in a loop while twice the limit is written survives allkeys-lru; what goes is
// the oldest writes. The LRU clock ticks once a second (as in Redis), so the writes are paced:
// a key lives about three seconds before it is evicted, the hot set is never a second old.
TEST_P(Eviction, AllkeysLruKeepsTheHotSet) {
  auto s = Start("allkeys-lru");
  RespClient c(s->port(), 30000);
  const int kHot = 500, kRounds = 60, kPerRound = 250;
  ASSERT_EQ(Fill(c, "hot", 0, kHot), 0);
  std::vector<std::string> read_hot = {"MGET"};
  for (int i = 0; i < kHot; i++) read_hot.push_back("hot" + std::to_string(i));
  for (int round = 0; round < kRounds; round++) {
    ASSERT_EQ(Fill(c, "cold", round * kPerRound, kPerRound), 0) << "allkeys-lru refused a write";
    c.Call(read_hot);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GT(InfoInt(c, "stats", "evicted_keys"), 5000);
  EXPECT_GE(Surviving(c, "hot", kHot), kHot * 99 / 100);
  EXPECT_LT(Surviving(c, "cold", 4000), 200) << "the oldest writes should have gone";
  ExpectWithinLimit(c);
}

// Keys read often survive allkeys-lfu; keys written once go.
TEST_P(Eviction, AllkeysLfuKeepsTheFrequentlyRead) {
  auto s = Start("allkeys-lfu");
  RespClient c(s->port(), 30000);
  const int kHot = 500;
  ASSERT_EQ(Fill(c, "hot", 0, kHot), 0);
  std::vector<std::string> read_hot = {"MGET"};
  for (int i = 0; i < kHot; i++) read_hot.push_back("hot" + std::to_string(i));
  for (int i = 0; i < 50; i++) c.Call(read_hot);
  Reply freq = c.Call({"OBJECT", "FREQ", "hot0"});
  EXPECT_GT(freq.integer, 5) << freq.Debug();
  ASSERT_EQ(Fill(c, "cold", 0, 30000), 0);
  EXPECT_GT(InfoInt(c, "stats", "evicted_keys"), 20000);
  EXPECT_GE(Surviving(c, "hot", kHot), kHot * 99 / 100);
  ExpectWithinLimit(c);
}

// allkeys-random evicts; memory stays within the limit. With no time for a pass
// (maxmemory-eviction-tenacity 0: 16 keys) the rest is evicted from the cron's loop, while
// writes come in on two IO threads.
TEST_P(Eviction, AllkeysRandomStaysWithinTheLimit) {
  auto s = Start("allkeys-random", {"--maxmemory-eviction-tenacity", "0", "--io-threads", "2"});
  RespClient c(s->port(), 30000);
  RespClient c2(s->port(), 30000);  // on the other IO thread
  ASSERT_EQ(Fill(c, "k", 0, 15000), 0);
  ASSERT_EQ(Fill(c2, "j", 0, 15000), 0);
  EXPECT_GT(InfoInt(c, "stats", "evicted_keys"), 20000);
  EXPECT_TRUE(WaitFor([&] { return WithinLimit(c); }, 5000));
}

// The volatile policies take keys with a TTL only: the persistent keys all survive, and once
// only they are left, writes are refused.
TEST_P(Eviction, VolatilePoliciesNeverEvictPersistentKeys) {
  for (const char* policy : {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}) {
    SCOPED_TRACE(policy);
    auto s = Start(policy);
    RespClient c(s->port(), 30000);
    ASSERT_EQ(Fill(c, "keep", 0, 3000), 0);
    ASSERT_EQ(Fill(c, "ttl", 0, 20000, {"EX", "1000"}), 0);
    EXPECT_GT(InfoInt(c, "stats", "evicted_keys"), 10000);
    EXPECT_EQ(Surviving(c, "keep", 3000), 3000);
    ExpectWithinLimit(c);
    // Persistent writes now: nothing evictable is left at some point.
    EXPECT_GT(Fill(c, "more", 0, 10000), 0);
    EXPECT_EQ(Surviving(c, "keep", 3000), 3000);
  }
}

// volatile-ttl evicts the nearest expiry first.
TEST_P(Eviction, VolatileTtlTakesTheNearestExpiryFirst) {
  auto s = Start("volatile-ttl");
  RespClient c(s->port(), 30000);
  for (int round = 0; round < 10; round++) {
    ASSERT_EQ(Fill(c, "soon", round * 1000, 1000, {"EX", "1000"}), 0);
    ASSERT_EQ(Fill(c, "late", round * 1000, 1000, {"EX", "100000"}), 0);
  }
  EXPECT_GT(InfoInt(c, "stats", "evicted_keys"), 5000);
  int64_t soon = Surviving(c, "soon", 10000), late = Surviving(c, "late", 10000);
  EXPECT_LT(soon * 3, late) << soon << " near expiries survived, " << late << " far ones";
}

// CONFIG SET maxmemory below the usage evicts at once, without waiting for a write.
TEST_P(Eviction, LoweringMaxmemoryEvictsAtOnce) {
  auto s = Start("allkeys-random", {"--maxmemory", "0"});
  RespClient c(s->port(), 30000);
  ASSERT_EQ(Fill(c, "k", 0, 20000), 0);
  ASSERT_EQ(c.Call({"DBSIZE"}).integer, 20000);
  ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory", std::to_string(kLimit)}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return c.Call({"DBSIZE"}).integer < 10000; }, 5000));
  EXPECT_TRUE(WaitFor([&] { return WithinLimit(c); }, 5000));
  EXPECT_GT(InfoInt(c, "stats", "evicted_keys"), 10000);
}

// Keyspace notifications: each eviction is an "evicted" event.
TEST_P(Eviction, EvictionsAreNotified) {
  auto s = Start("allkeys-random", {"--notify-keyspace-events", "Ee"});
  RespClient sub(s->port());
  ASSERT_EQ(sub.Call({"SUBSCRIBE", "__keyevent@0__:evicted"}).elems.size(), 3u);
  RespClient c(s->port(), 30000);
  ASSERT_EQ(Fill(c, "k", 0, 15000), 0);
  Reply msg = sub.Read();
  ASSERT_EQ(msg.elems.size(), 3u) << msg.Debug();
  EXPECT_EQ(msg.elems[0].str, "message");
  EXPECT_EQ(msg.elems[1].str, "__keyevent@0__:evicted");
  EXPECT_EQ(msg.elems[2].str.rfind("k", 0), 0u);
}

// Evictions go to the replicas as DELs, so they end identical; a replica (replica-ignore-
// maxmemory yes, the default) does not evict on its own even past its own limit. Both kinds of
// replica, under both kinds of primary.
TEST_P(Eviction, ReplicasEndIdenticalAndDoNotEvictThemselves) {
  for (Kind replica_kind : {Kind::kKvstore, Kind::kRedis}) {
    SCOPED_TRACE(replica_kind == Kind::kRedis ? "redis replica" : "kvstore replica");
    auto primary = Start("allkeys-lru", {"--repl-diskless-sync-delay", "0"});
    RespClient p(primary->port(), 30000);
    ServerProcess replica(
        replica_kind, {"--replicaof", "127.0.0.1", std::to_string(primary->port()), "--maxmemory",
                       std::to_string(kLimit / 2)});
    RespClient r(replica.port(), 30000);
    ASSERT_TRUE(InSync(p, r)) << replica.LogText();
    ASSERT_EQ(Fill(p, "k", 0, 20000), 0);
    EXPECT_GT(InfoInt(p, "stats", "evicted_keys"), 10000);
    // Any command may evict while memory sits at the limit (a reply's buffer is enough): no
    // more evictions while the two are compared.
    ASSERT_EQ(p.Call({"CONFIG", "SET", "maxmemory", "0"}).str, "OK");
    ASSERT_TRUE(InSync(p, r)) << replica.LogText();
    EXPECT_EQ(InfoInt(r, "stats", "evicted_keys"), 0);
    EXPECT_EQ(r.Call({"DBSIZE"}).integer, p.Call({"DBSIZE"}).integer);
    EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  }
}

INSTANTIATE_TEST_SUITE_P(Servers, Eviction, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
