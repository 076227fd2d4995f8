// What a snapshot child reports to its server while it runs, as Redis' child info pipe: INFO
// persistence's current_cow_size, current_fork_perc and current_save_keys_processed move
// during a BGSAVE (Redis' integration/rdb "Test child sending info"), go back to zero when it
// ends, and rdb_last_cow_size / aof_last_cow_size keep the finished child's copy-on-write size.
// Both servers run each case.
#include <gtest/gtest.h>

#include <string>

#include "tests/e2e/info_util.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

class ChildInfo : public ::testing::TestWithParam<Kind> {};

uint64_t Num(RespClient& c, const char* field) {
  return std::stoull(InfoField(c, "persistence", field));
}

bool Saving(RespClient& c) { return InfoField(c, "persistence", "rdb_bgsave_in_progress") == "1"; }

// 10,000 keys of 500 bytes saved at 500 us a key: a save of over 5 seconds. Each round
// rewrites 16 values in the parent (their pages are copied: at least two pages are the child's
// alone then) and waits for a report that shows it.
TEST_P(ChildInfo, ASaveReportsItsCopyOnWriteAndKeysWhileItRuns) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  ASSERT_EQ(Num(c, "current_cow_size"), 0u);
  ASSERT_EQ(Num(c, "current_save_keys_total"), 0u);
  ASSERT_EQ(Num(c, "rdb_last_cow_size"), 0u);
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "10000", "key", "500"}).str, "OK");
  ASSERT_EQ(c.Call({"CONFIG", "SET", "rdb-key-save-delay", "500"}).str, "OK");
  ASSERT_EQ(c.Call({"BGSAVE"}).str, "Background saving started");
  EXPECT_EQ(Num(c, "current_save_keys_total"), 10000u);
  std::string value(500, 'B');
  int rounds = 0, key = 0;
  while (rounds < 2) {
    uint64_t cow = Num(c, "current_cow_size"), keys = Num(c, "current_save_keys_processed");
    for (int i = 0; i < 16; i++) {
      ASSERT_EQ(c.Call({"SETRANGE", "key:" + std::to_string(key++), "0", value}).integer, 500);
    }
    bool reported = false;
    ASSERT_TRUE(WaitFor(
        [&] {
          if (!Saving(c)) return true;
          reported = Num(c, "current_cow_size") >= cow + 4096 &&
                     Num(c, "current_save_keys_processed") > keys &&
                     std::stod(InfoField(c, "persistence", "current_fork_perc")) > 0;
          return reported;
        },
        20000));
    if (!reported) break;  // the save ended first
    EXPECT_LE(Num(c, "current_save_keys_processed"), 10000u);
    EXPECT_GE(Num(c, "current_cow_peak"), Num(c, "current_cow_size"));
    rounds++;
  }
  EXPECT_EQ(rounds, 2) << "the save ended before its child reported twice\n" << s.LogText();
  ASSERT_TRUE(WaitFor([&] { return !Saving(c); }, 60000));
  EXPECT_EQ(InfoField(c, "persistence", "rdb_last_bgsave_status"), "ok");
  EXPECT_GT(Num(c, "rdb_last_cow_size"), 0u);
  for (const char* f : {"current_cow_size", "current_cow_peak", "current_save_keys_processed",
                        "current_save_keys_total"}) {
    EXPECT_EQ(Num(c, f), 0u) << f;
  }
  EXPECT_EQ(InfoField(c, "persistence", "current_fork_perc"), "0.00");
  // The child's final line, as Redis logs it.
  EXPECT_NE(s.LogText().find("Fork CoW for RDB: current "), std::string::npos) << s.LogText();
}

// An AOF rewrite's child reports its final copy-on-write size as aof_last_cow_size (and leaves
// rdb_last_cow_size alone).
TEST_P(ChildInfo, AnAofRewriteReportsItsCopyOnWrite) {
  ServerProcess s(GetParam(), {"--appendonly", "yes"});
  RespClient c(s.port());
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "2000", "key", "500"}).str, "OK");
  ASSERT_TRUE(
      WaitFor([&] { return InfoField(c, "persistence", "aof_rewrite_in_progress") == "0"; }));
  ASSERT_EQ(c.Call({"CONFIG", "SET", "rdb-key-save-delay", "1000"}).str, "OK");
  ASSERT_EQ(c.Call({"BGREWRITEAOF"}).str, "Background append only file rewriting started");
  std::string value(500, 'B');
  for (int i = 0; i < 64; i++) {
    ASSERT_EQ(c.Call({"SETRANGE", "key:" + std::to_string(i), "0", value}).integer, 500);
  }
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "aof_rewrite_in_progress") == "0"; },
                      60000));
  EXPECT_EQ(InfoField(c, "persistence", "aof_last_bgrewrite_status"), "ok");
  EXPECT_GT(Num(c, "aof_last_cow_size"), 0u);
  EXPECT_EQ(Num(c, "rdb_last_cow_size"), 0u);
  EXPECT_NE(s.LogText().find("Fork CoW for AOF rewrite: current "), std::string::npos)
      << s.LogText();
}

std::string KindName(const ::testing::TestParamInfo<Kind>& info) {
  return info.param == Kind::kKvstore ? "kvstore" : "redis";
}

INSTANTIATE_TEST_SUITE_P(Servers, ChildInfo, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         KindName);

}  // namespace
}  // namespace kv::test
