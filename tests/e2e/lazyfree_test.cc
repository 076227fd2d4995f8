// Background freeing, with redis-server as the oracle (each test runs on both): UNLINK of a big
// value frees it on the background thread (INFO lazyfreed_objects counts it) and a small one at
// once; lazyfree-lazy-user-del makes DEL do the same; FLUSHALL / FLUSHDB ASYNC, and a plain flush
// under lazyfree-lazy-user-flush, free every key in the background; lazyfree-lazy-eviction
// evicts that way and memory still comes back within the limit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

int64_t LazyFreed(RespClient& c) {
  return std::atoll(InfoField(c, "memory", "lazyfreed_objects").c_str());
}

// A hash of `fields` fields of 100 bytes (a hashtable encoding past 128 of them). Returns the
// OOM errors (only where they are allowed).
int BigHash(RespClient& c, const std::string& key, int fields, bool allow_oom = false) {
  int oom = 0;
  for (int i = 0; i < fields; i += 500) {
    std::vector<std::string> cmd = {"HSET", key};
    for (int j = i; j < std::min(fields, i + 500); j++) {
      cmd.push_back("f" + std::to_string(j));
      cmd.push_back(std::string(100, 'x'));
    }
    Reply r = c.Call(cmd);
    if (allow_oom && r.str.rfind("OOM ", 0) == 0) {
      oom++;
      continue;
    }
    EXPECT_FALSE(r.is_error()) << r.Debug();
  }
  return oom;
}

class LazyFree : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

TEST_P(LazyFree, UnlinkFreesABigValueInTheBackground) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  BigHash(c, "big", 20000);
  ASSERT_EQ(c.Call({"SET", "small", "v"}).str, "OK");
  EXPECT_EQ(c.Call({"UNLINK", "small"}).integer, 1);
  EXPECT_EQ(LazyFreed(c), 0) << "a small value is freed at once";
  EXPECT_EQ(c.Call({"UNLINK", "big", "nosuchkey"}).integer, 1);
  EXPECT_EQ(c.Call({"EXISTS", "big"}).integer, 0);
  EXPECT_TRUE(WaitFor([&] { return LazyFreed(c) == 1; })) << LazyFreed(c);
  // DEL frees at once, unless lazyfree-lazy-user-del says otherwise.
  BigHash(c, "big", 20000);
  EXPECT_EQ(c.Call({"DEL", "big"}).integer, 1);
  EXPECT_EQ(LazyFreed(c), 1);
  ASSERT_EQ(c.Call({"CONFIG", "SET", "lazyfree-lazy-user-del", "yes"}).str, "OK");
  BigHash(c, "big", 20000);
  EXPECT_EQ(c.Call({"DEL", "big"}).integer, 1);
  EXPECT_TRUE(WaitFor([&] { return LazyFreed(c) == 2; })) << LazyFreed(c);
  ASSERT_EQ(c.Call({"CONFIG", "RESETSTAT"}).str, "OK");
  EXPECT_EQ(LazyFreed(c), 0);
}

// unit/lazyfree's first case: one SADD of 100,000 members, then UNLINK. used_memory comes
// back under twice what the fresh server used: the set is freed, and so are the request's
// argument lists (a client keeps no megabytes of them once the command ran).
TEST_P(LazyFree, UnlinkGivesTheMemoryBack) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  int64_t orig = InfoInt(c, "memory", "used_memory");
  std::vector<std::string> sadd = {"SADD", "myset"};
  for (int i = 0; i < 100000; i++) sadd.push_back(std::to_string(i));
  ASSERT_EQ(c.Call(sadd).integer, 100000);
  int64_t peak = InfoInt(c, "memory", "used_memory");
  ASSERT_GT(peak, orig + 1000000);
  EXPECT_EQ(c.Call({"UNLINK", "myset"}).integer, 1);
  EXPECT_TRUE(WaitFor([&] {
    int64_t now = InfoInt(c, "memory", "used_memory");
    return now < peak && now < orig * 2;
  })) << "fresh "
      << orig << ", peak " << peak << ", now " << InfoInt(c, "memory", "used_memory");
}

TEST_P(LazyFree, AsyncFlushesFreeEveryKeyInTheBackground) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "10000"}).str, "OK");
  ASSERT_EQ(c.Call({"FLUSHALL", "ASYNC"}).str, "OK");
  EXPECT_EQ(c.Call({"DBSIZE"}).integer, 0);
  EXPECT_TRUE(WaitFor([&] { return LazyFreed(c) == 10000; })) << LazyFreed(c);
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "5000"}).str, "OK");
  ASSERT_EQ(c.Call({"FLUSHDB", "ASYNC"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return LazyFreed(c) == 15000; })) << LazyFreed(c);
  // A plain flush is sync, unless lazyfree-lazy-user-flush says otherwise; SYNC always is.
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "100"}).str, "OK");
  ASSERT_EQ(c.Call({"FLUSHALL"}).str, "OK");
  EXPECT_EQ(LazyFreed(c), 15000);
  ASSERT_EQ(c.Call({"CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"}).str, "OK");
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "100"}).str, "OK");
  ASSERT_EQ(c.Call({"FLUSHALL"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return LazyFreed(c) == 15100; })) << LazyFreed(c);
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "100"}).str, "OK");
  ASSERT_EQ(c.Call({"FLUSHALL", "SYNC"}).str, "OK");
  EXPECT_EQ(LazyFreed(c), 15100);
  EXPECT_EQ(c.Call({"DBSIZE"}).integer, 0);
}

// Big hashes past an 8 MB limit under lazyfree-lazy-eviction: evicted keys are freed in the
// background and memory comes back within the limit. Writes may be refused meanwhile (both
// servers refuse some here: an evicted hash's memory comes back only once the background has
// freed it, and a pass waits for that no longer than maxmemory-eviction-tenacity allows).
TEST_P(LazyFree, LazyEvictionFreesInTheBackgroundAndKeepsTheLimit) {
  const int64_t limit = 8 << 20;
  ServerProcess s(GetParam(), {"--maxmemory", std::to_string(limit), "--maxmemory-policy",
                               "allkeys-random", "--lazyfree-lazy-eviction", "yes"});
  RespClient c(s.port(), 30000);
  int oom = 0;
  for (int i = 0; i < 200; i++) oom += BigHash(c, "h" + std::to_string(i), 1000, true);
  EXPECT_LT(oom, 200) << "every write was refused";
  EXPECT_GT(std::atoll(InfoField(c, "stats", "evicted_keys").c_str()), 10);
  EXPECT_GT(LazyFreed(c), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        int64_t used = std::atoll(InfoField(c, "memory", "used_memory").c_str()) -
                       std::atoll(InfoField(c, "memory", "mem_not_counted_for_evict").c_str());
        return used <= limit * 105 / 100;
      },
      5000));
}

INSTANTIATE_TEST_SUITE_P(Servers, LazyFree, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
