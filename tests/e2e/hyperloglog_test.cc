// HyperLogLogs move between kvstore and redis-server as plain strings: one written by either
// server (PFADD, PFMERGE) is read, counted, merged and extended identically by the other, over
// DUMP/RESTORE and over an RDB file, sparse and dense.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

void Add(RespClient& c, const std::string& key, int from, int to) {
  std::vector<std::string> cmd = {"PFADD", key};
  for (int i = from; i < to; i++) cmd.push_back("el-" + std::to_string(i));
  ASSERT_EQ(c.Call(cmd).type, ':');
}

TEST(HyperLogLog, ValuesMoveBetweenServersAndStayIdentical) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess kv(Kind::kKvstore), redis(Kind::kRedis);
  RespClient k(kv.port()), r(redis.port());
  for (RespClient* c : {&k, &r}) {
    Add(*c, "sparse", 0, 100);
    Add(*c, "dense", 0, 20000);
  }
  for (const char* key : {"sparse", "dense"}) {
    SCOPED_TRACE(key);
    EXPECT_EQ(k.Call({"GET", key}).str, r.Call({"GET", key}).str);  // the same bytes
    EXPECT_EQ(k.Call({"PFDEBUG", "ENCODING", key}).str, r.Call({"PFDEBUG", "ENCODING", key}).str);
    // Each server's HLL restored into the other: counted, merged and extended alike.
    for (auto [from, to] : {std::pair{&k, &r}, std::pair{&r, &k}}) {
      std::string payload = from->Call({"DUMP", key}).str;
      ASSERT_EQ(to->Call({"RESTORE", std::string("moved-") + key, "0", payload}).str, "OK");
    }
    for (RespClient* c : {&k, &r}) {
      Add(*c, std::string("moved-") + key, 50, 150);
      c->Call({"PFMERGE", std::string("merged-") + key, key, std::string("moved-") + key});
    }
    for (const std::string& name : {std::string("moved-") + key, std::string("merged-") + key}) {
      EXPECT_EQ(k.Call({"PFCOUNT", name}).integer, r.Call({"PFCOUNT", name}).integer) << name;
      EXPECT_EQ(k.Call({"GET", name}).str, r.Call({"GET", name}).str) << name;
    }
  }
  EXPECT_EQ(k.Call({"PFCOUNT", "sparse", "dense", "nokey"}).integer,
            r.Call({"PFCOUNT", "sparse", "dense", "nokey"}).integer);
  EXPECT_EQ(k.Call({"PFSELFTEST"}).str, "OK");
}

TEST(HyperLogLog, RdbFilesCarryThemBothWays) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (Kind writer : {Kind::kKvstore, Kind::kRedis}) {
    Kind reader = writer == Kind::kKvstore ? Kind::kRedis : Kind::kKvstore;
    ServerProcess w(writer);
    RespClient wc(w.port());
    Add(wc, "small", 0, 30);
    Add(wc, "big", 0, 50000);
    int64_t big = wc.Call({"PFCOUNT", "big"}).integer;  // caches the count in the value
    std::string digest = wc.Call({"DEBUG", "DIGEST"}).str;
    ASSERT_EQ(wc.Call({"SAVE"}).str, "OK");
    ServerProcess r(reader, {"--dir", w.dir()});
    RespClient rc(r.port());
    EXPECT_EQ(rc.Call({"DEBUG", "DIGEST"}).str, digest);
    EXPECT_EQ(rc.Call({"PFCOUNT", "big"}).integer, big);
    // A corrupted HLL is refused with Redis' error, by both.
    rc.Call({"SETRANGE", "small", "17", std::string(3, '\xff')});
    EXPECT_EQ(rc.Call({"PFCOUNT", "small"}).str, "INVALIDOBJ Corrupted HLL object detected");
  }
}

}  // namespace
}  // namespace kv::test
