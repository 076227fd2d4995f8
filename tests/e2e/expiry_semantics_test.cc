// What a key whose TTL has passed means to WATCH and to replicas, run against kvstore and
// Debian's redis-server alike (each case expects Redis 7.0's answers from both):
// - WATCH of a key already expired ("stale") does not fail EXEC when the key then goes (DEL,
//   lazy expiry, FLUSHDB, SWAPDB with no key or another stale key), while a change to a live
//   watched key, its expiry included, does.
// - A replica leaves its primary's keys to the primary's DEL: its clients do not see them once
//   expired, the primary's own writes apply to them as they are, and PFCOUNT does not read
//   one. A writable replica's write commands remove the expired key they find, and the keys
//   its own clients wrote with a TTL expire on the replica.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::string KindName(const ::testing::TestParamInfo<Kind>& info) {
  return info.param == Kind::kKvstore ? "kvstore" : "redis";
}

class ExpirySemantics : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
    server_ = std::make_unique<ServerProcess>(GetParam());
    c_ = std::make_unique<RespClient>(server_->port());
    ASSERT_EQ(c_->Call({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}).str, "OK");
  }
  // A key whose TTL has passed but which active expiry (off) has not removed.
  void StaleKey(const std::string& key, const std::string& value = "foo") {
    ASSERT_EQ(c_->Call({"SET", key, value, "PX", "1"}).str, "OK");
    SleepMs(5);
  }
  // MULTI, PING, EXEC: "PONG" when the transaction ran, "null" when a watched key changed.
  std::string ExecPing() {
    EXPECT_EQ(c_->Call({"MULTI"}).str, "OK");
    EXPECT_EQ(c_->Call({"PING"}).str, "QUEUED");
    Reply r = c_->Call({"EXEC"});
    if (r.is_null) return "null";
    return r.elems.size() == 1 ? r.elems[0].str : r.Debug();
  }
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<RespClient> c_;
};

TEST_P(ExpirySemantics, WatchingAStaleKeyDoesNotFailExec) {
  StaleKey("x");
  c_->Call({"WATCH", "x"});
  EXPECT_EQ(ExecPing(), "PONG");
}

TEST_P(ExpirySemantics, DeletingAWatchedStaleKeyDoesNotFailExec) {
  StaleKey("x");
  c_->Call({"WATCH", "x"});
  EXPECT_EQ(c_->Call({"EXISTS", "x"}).integer, 0);  // lazy expiry removes it
  EXPECT_EQ(ExecPing(), "PONG");
  StaleKey("y");
  c_->Call({"WATCH", "y"});
  EXPECT_EQ(c_->Call({"DEL", "y"}).integer, 0);
  EXPECT_EQ(ExecPing(), "PONG");
}

TEST_P(ExpirySemantics, FlushingAWatchedStaleKeyDoesNotFailExec) {
  StaleKey("x");
  c_->Call({"WATCH", "x"});
  c_->Call({"FLUSHDB"});
  EXPECT_EQ(ExecPing(), "PONG");
  StaleKey("x");
  c_->Call({"WATCH", "x"});
  c_->Call({"FLUSHALL"});
  EXPECT_EQ(ExecPing(), "PONG");
}

TEST_P(ExpirySemantics, SwapdbTouchesOnlyWhatChangedLogically) {
  // A stale key replaced with no key.
  c_->Call({"SELECT", "1"});
  StaleKey("x");
  c_->Call({"WATCH", "x"});
  c_->Call({"SWAPDB", "0", "1"});
  EXPECT_EQ(ExecPing(), "PONG");
  // No key replaced with a stale key.
  c_->Call({"FLUSHALL"});
  c_->Call({"SELECT", "0"});
  StaleKey("x");
  c_->Call({"SELECT", "1"});
  c_->Call({"WATCH", "x"});
  c_->Call({"SWAPDB", "0", "1"});
  EXPECT_EQ(ExecPing(), "PONG");
  // A stale key replaced with another stale key.
  c_->Call({"FLUSHALL"});
  c_->Call({"SELECT", "1"});
  StaleKey("x", "foo");
  c_->Call({"SELECT", "0"});
  StaleKey("x", "bar");
  c_->Call({"SELECT", "1"});
  c_->Call({"WATCH", "x"});
  c_->Call({"SWAPDB", "0", "1"});
  EXPECT_EQ(ExecPing(), "PONG");
  // Live keys: swapped in, or swapped out.
  c_->Call({"FLUSHALL"});
  c_->Call({"SELECT", "0"});
  c_->Call({"SET", "x", "30"});
  c_->Call({"WATCH", "x"});
  c_->Call({"SWAPDB", "0", "1"});
  EXPECT_EQ(ExecPing(), "null");
  c_->Call({"FLUSHALL"});
  c_->Call({"SELECT", "1"});
  c_->Call({"SET", "x", "30"});
  c_->Call({"SELECT", "0"});
  c_->Call({"WATCH", "x"});
  c_->Call({"SWAPDB", "0", "1"});
  EXPECT_EQ(ExecPing(), "null");
  // A stale key replaced with a live one.
  c_->Call({"FLUSHALL"});
  c_->Call({"SELECT", "1"});
  c_->Call({"SET", "x", "live"});
  c_->Call({"SELECT", "0"});
  StaleKey("x");
  c_->Call({"WATCH", "x"});
  c_->Call({"SWAPDB", "0", "1"});
  EXPECT_EQ(ExecPing(), "null");
}

TEST_P(ExpirySemantics, ChangesToWatchedKeysFailExec) {
  // A stale key written again is a change.
  StaleKey("x");
  c_->Call({"WATCH", "x"});
  c_->Call({"SET", "x", "new"});
  EXPECT_EQ(ExecPing(), "null");
  // A live key that expires while watched, removed by lazy expiry.
  c_->Call({"SET", "y", "v", "PX", "50"});
  c_->Call({"WATCH", "y"});
  SleepMs(60);
  EXPECT_EQ(c_->Call({"EXISTS", "y"}).integer, 0);
  EXPECT_EQ(ExecPing(), "null");
  // A live key that expires while watched, still in memory at EXEC.
  c_->Call({"SET", "z", "v", "PX", "50"});
  c_->Call({"WATCH", "z"});
  SleepMs(60);
  EXPECT_EQ(ExecPing(), "null");
  // A stale key removed, then written again while still watched.
  StaleKey("w");
  c_->Call({"WATCH", "w"});
  c_->Call({"DEL", "w"});
  c_->Call({"SET", "w", "again"});
  EXPECT_EQ(ExecPing(), "null");
  // Active expiry of a watched live key.
  ASSERT_EQ(c_->Call({"DEBUG", "SET-ACTIVE-EXPIRE", "1"}).str, "OK");
  c_->Call({"SET", "v", "foo", "PX", "100"});
  c_->Call({"WATCH", "v"});
  ASSERT_TRUE(WaitFor([&] { return c_->Call({"DBSIZE"}).integer == 2; }));  // w and x remain
  EXPECT_EQ(ExecPing(), "null");
}

INSTANTIATE_TEST_SUITE_P(Servers, ExpirySemantics, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         KindName);

// A primary and a replica of the same kind.
class ReplicaExpiry : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
    primary_ = std::make_unique<ServerProcess>(GetParam(), Cmd{"--repl-diskless-sync-delay", "0"});
    replica_ = std::make_unique<ServerProcess>(
        GetParam(), Cmd{"--replicaof", "127.0.0.1 " + std::to_string(primary_->port())});
    p_ = std::make_unique<RespClient>(primary_->port());
    r_ = std::make_unique<RespClient>(replica_->port());
    ASSERT_TRUE(InSync(*p_, *r_)) << replica_->LogText();
    ASSERT_EQ(p_->Call({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}).str, "OK");
  }
  std::unique_ptr<ServerProcess> primary_, replica_;
  std::unique_ptr<RespClient> p_, r_;
};

TEST_P(ReplicaExpiry, AReplicaHidesThePrimarysExpiredKeysAndKeepsThem) {
  p_->Call({"SET", "key1", "5", "PX", "50"});
  p_->Call({"PFADD", "hll", "a", "b", "c"});
  p_->Call({"PEXPIRE", "hll", "50"});
  ASSERT_TRUE(InSync(*p_, *r_));
  ASSERT_TRUE(WaitFor([&] { return r_->Call({"EXISTS", "key1", "hll"}).integer == 0; }));
  EXPECT_TRUE(r_->Call({"GET", "key1"}).is_null);
  EXPECT_EQ(r_->Call({"PFCOUNT", "hll"}).integer, 0);  // the expired HLL is not used
  EXPECT_EQ(r_->Call({"DBSIZE"}).integer, 2);          // nor removed
  EXPECT_EQ(r_->Call({"TTL", "key1"}).integer, -2);
}

TEST_P(ReplicaExpiry, ThePrimarysWritesApplyToKeysExpiredOnlyOnTheReplica) {
  // The replica applies SET and INCR after their key's time has passed there (it sleeps while
  // the primary runs both, well within the TTL).
  r_->Send({"DEBUG", "SLEEP", "1.5"});
  SleepMs(100);
  p_->SendRaw(RespClient::Encode({"SET", "counter", "1", "PX", "1000"}) +
              RespClient::Encode({"INCR", "counter"}));
  EXPECT_EQ(p_->Read().str, "OK");
  EXPECT_EQ(p_->Read().integer, 2);
  EXPECT_EQ(r_->Read().str, "OK");
  ASSERT_TRUE(InSync(*p_, *r_));
  // The replica holds the key with the primary's value and TTL, hidden until the DEL comes.
  EXPECT_EQ(r_->Call({"EXISTS", "counter"}).integer, 0);
  EXPECT_EQ(r_->Call({"DBSIZE"}).integer, 1);
  Reply obj = r_->Call({"DEBUG", "OBJECT", "counter"});
  EXPECT_FALSE(obj.is_error()) << obj.Debug();
  // The primary's lazy expiry sends the DEL.
  EXPECT_EQ(p_->Call({"EXISTS", "counter"}).integer, 0);
  ASSERT_TRUE(InSync(*p_, *r_));
  EXPECT_EQ(r_->Call({"DBSIZE"}).integer, 0);
}

TEST_P(ReplicaExpiry, AWritableReplicasWritesRemoveExpiredKeys) {
  p_->Call({"SET", "key1", "5", "PX", "10"});
  p_->Call({"SET", "key2", "5", "PX", "10"});
  ASSERT_TRUE(InSync(*p_, *r_));
  ASSERT_TRUE(WaitFor([&] { return r_->Call({"EXISTS", "key1", "key2"}).integer == 0; }));
  ASSERT_EQ(r_->Call({"CONFIG", "SET", "replica-read-only", "no"}).str, "OK");
  EXPECT_EQ(r_->Call({"DBSIZE"}).integer, 2);
  EXPECT_EQ(r_->Call({"INCR", "key1"}).integer, 1);  // removes key1 and creates it afresh
  EXPECT_EQ(r_->Call({"TTL", "key1"}).integer, -1);
  EXPECT_TRUE(r_->Call({"GET", "key2"}).is_null);  // a read only hides key2
  EXPECT_EQ(r_->Call({"DBSIZE"}).integer, 2);
}

TEST_P(ReplicaExpiry, AWritableReplicaExpiresTheKeysItsClientsWrote) {
  ASSERT_EQ(r_->Call({"CONFIG", "SET", "replica-read-only", "no"}).str, "OK");
  r_->Call({"SELECT", "5"});
  for (const char* k : {"key1", "key2", "key3"}) {
    ASSERT_EQ(r_->Call({"SET", k, "1", "PX", "200"}).str, "OK");
  }
  r_->Call({"SET", "other", "1"});
  r_->Call({"EXPIRE", "other", "1"});
  r_->Call({"SET", "kept", "1"});
  EXPECT_EQ(r_->Call({"DBSIZE"}).integer, 5);
  // Nothing reads them: the replica's cron removes them.
  ASSERT_TRUE(WaitFor([&] { return r_->Call({"DBSIZE"}).integer == 1; }))
      << r_->Call({"DBSIZE"}).integer;
  EXPECT_EQ(r_->Call({"GET", "kept"}).str, "1");
  EXPECT_NE(InfoField(*r_, "stats", "expired_keys"), "0");
}

INSTANTIATE_TEST_SUITE_P(Servers, ReplicaExpiry, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         KindName);

}  // namespace
}  // namespace kv::test
