// End-to-end tests of the shape of what Redis 7.0 propagates around a command: lazy expiry by
// SCAN and RANDOMKEY and eviction go out as plain DELs (a write that expires a key first is
// wrapped with it in MULTI/EXEC); RESTORE with a relative TTL goes out with the absolute time
// and ABSTTL; CONFIG SET maxmemory inside EXEC evicts after the transaction; REPLICAOF inside
// EXEC lets the transaction finish; EXEC's commands' errors count as theirs, not EXEC's. Each
// scenario runs against kvstore and redis-server, and the two must agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/stream_reader.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Argv = std::vector<std::string>;

// The stream up to "SET marker end", one line per command, the SELECTs left out. Keys whose
// order of deletion is the server's choice end in '*' ("DEL foo*"), absolute times (13 digits
// or more) read "<ms>", and a DUMP payload reads "<payload>".
std::vector<std::string> Shape(StreamReader& s) {
  std::vector<std::string> out;
  for (;;) {
    Argv cmd = s.Next();
    if (cmd.empty()) {
      out.push_back("<stream ended>");
      return out;
    }
    std::transform(cmd[0].begin(), cmd[0].end(), cmd[0].begin(), ::toupper);
    if (cmd[0] == "SELECT") continue;
    std::string line = cmd[0];
    for (size_t i = 1; i < cmd.size(); i++) {
      std::string a = cmd[i];
      bool digits = !a.empty() && std::all_of(a.begin(), a.end(), ::isdigit);
      if (digits && a.size() >= 13) a = "<ms>";
      if (cmd[0] == "RESTORE" && i == 3) a = "<payload>";
      if ((cmd[0] == "DEL" || cmd[0] == "UNLINK") && a.size() > 1 &&
          (a.rfind("foo", 0) == 0 || a.rfind("asdf", 0) == 0)) {
        a = a.substr(0, a.size() - 1) + "*";
      }
      line += " " + a;
    }
    out.push_back(line);
    if (line == "SET marker end") return out;
  }
}

struct Outcome {
  std::vector<std::string> stream;
  std::vector<std::string> replies;  // what the workload chose to record
};

// A fresh `kind` server with a raw replica attached; `workload` runs once it is online.
Outcome RunWorkload(Kind kind, void (*workload)(RespClient&, std::vector<std::string>*)) {
  ServerProcess s(kind, {"--enable-debug-command", "yes"});
  StreamReader stream(s.port());
  RespClient c(s.port());
  EXPECT_TRUE(WaitFor([&] {
    return InfoField(c, "replication", "slave0").find("state=online") != std::string::npos;
  }));
  Outcome run;
  workload(c, &run.replies);
  c.Call({"SET", "marker", "end"});
  run.stream = Shape(stream);
  return run;
}

void WaitEmpty(RespClient& c) {
  EXPECT_TRUE(WaitFor([&] { return c.Call({"DBSIZE"}).integer == 0; }));
}

void ExpireWorkload(RespClient& c, std::vector<std::string>* replies) {
  c.Call({"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
  auto two_expired = [&] {
    c.Call({"SET", "foo1", "bar", "PX", "1"});
    c.Call({"SET", "foo2", "bar", "PX", "1"});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  two_expired();
  replies->push_back(c.Call({"SCAN", "0"}).raw);  // plain DELs
  two_expired();
  replies->push_back(c.Call({"RANDOMKEY"}).raw);  // plain DELs
  two_expired();
  replies->push_back(c.Call({"MGET", "foo1", "foo2"}).raw);  // not arbitrary keys: wrapped
  two_expired();
  c.Call({"MULTI"});
  c.Call({"SCAN", "0"});
  replies->push_back(c.Call({"EXEC"}).raw);  // inside a transaction: wrapped
  c.Call({"SET", "foo1", "bar", "PX", "1"});
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  replies->push_back(c.Call({"SET", "foo1", "new"}).raw);  // a write expiring first: wrapped
  c.Call({"DEL", "foo1"});
  c.Call({"SET", "marker", "evict"});
  c.Call({"DEL", "marker"});  // every key is evicted below: only the asdf ones are there
  // Eviction: plain DELs, whether by CONFIG SET's timer or before a command.
  for (const char* k : {"asdf1", "asdf2", "asdf3"}) c.Call({"SET", k, "1"});
  c.Call({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"});
  c.Call({"CONFIG", "SET", "maxmemory", "1"});
  WaitEmpty(c);
  c.Call({"CONFIG", "SET", "maxmemory", "0"});
  // Inside EXEC: its commands all run before anything is evicted.
  c.Call({"MULTI"});
  c.Call({"INCR", "x"});
  c.Call({"CONFIG", "SET", "maxmemory", "1"});
  c.Call({"INCR", "x"});
  replies->push_back(c.Call({"EXEC"}).raw);
  WaitEmpty(c);
  c.Call({"CONFIG", "SET", "maxmemory", "0"});
  c.Call({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
}

TEST(PropagationShape, LazyExpiryAndEvictionStreamMatchesRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Outcome kv = RunWorkload(Kind::kKvstore, ExpireWorkload);
  Outcome redis = RunWorkload(Kind::kRedis, ExpireWorkload);
  const std::vector<std::string> kExpected = {"SET foo1 bar PXAT <ms>",
                                              "SET foo2 bar PXAT <ms>",
                                              "DEL foo*",
                                              "DEL foo*",
                                              "SET foo1 bar PXAT <ms>",
                                              "SET foo2 bar PXAT <ms>",
                                              "DEL foo*",
                                              "DEL foo*",
                                              "SET foo1 bar PXAT <ms>",
                                              "SET foo2 bar PXAT <ms>",
                                              "MULTI",
                                              "DEL foo*",
                                              "DEL foo*",
                                              "EXEC",
                                              "SET foo1 bar PXAT <ms>",
                                              "SET foo2 bar PXAT <ms>",
                                              "MULTI",
                                              "DEL foo*",
                                              "DEL foo*",
                                              "EXEC",
                                              "SET foo1 bar PXAT <ms>",
                                              "MULTI",
                                              "DEL foo*",
                                              "SET foo1 new",
                                              "EXEC",
                                              "DEL foo*",
                                              "SET marker evict",
                                              "DEL marker",
                                              "SET asdf1 1",
                                              "SET asdf2 1",
                                              "SET asdf3 1",
                                              "DEL asdf*",
                                              "DEL asdf*",
                                              "DEL asdf*",
                                              "MULTI",
                                              "INCR x",
                                              "INCR x",
                                              "EXEC",
                                              "DEL x",
                                              "SET marker end"};
  EXPECT_EQ(redis.stream, kExpected) << "redis-server's stream changed";
  EXPECT_EQ(kv.stream, redis.stream);
  EXPECT_EQ(redis.replies.back(), "*3\r\n:1\r\n+OK\r\n:2\r\n");
  EXPECT_EQ(kv.replies, redis.replies);
}

void RestoreWorkload(RespClient& c, std::vector<std::string>* replies) {
  c.Call({"SET", "src", "value"});
  std::string payload = c.Call({"DUMP", "src"}).str;
  c.Call({"DEL", "src"});
  replies->push_back(c.Call({"RESTORE", "foo6", "100000", payload}).raw);
  replies->push_back(
      c.Call({"RESTORE", "foo6", "200000", payload, "REPLACE", "IDLETIME", "5"}).raw);
  replies->push_back(c.Call({"RESTORE", "foo7", "0", payload}).raw);  // no TTL: as given
  // Already absolute: as given.
  replies->push_back(c.Call({"RESTORE", "foo8", "99999999999999", payload, "ABSTTL"}).raw);
  int64_t pttl = c.Call({"PTTL", "foo6"}).integer;
  replies->push_back(pttl > 190000 && pttl <= 200000 ? "pttl ok" : std::to_string(pttl));
}

TEST(PropagationShape, RestoreWithATtlPropagatesTheAbsoluteTime) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Outcome kv = RunWorkload(Kind::kKvstore, RestoreWorkload);
  Outcome redis = RunWorkload(Kind::kRedis, RestoreWorkload);
  const std::vector<std::string> kExpected = {
      "SET src value",
      "DEL src",
      "RESTORE foo6 <ms> <payload> ABSTTL",
      "RESTORE foo6 <ms> <payload> REPLACE IDLETIME 5 ABSTTL",
      "RESTORE foo7 0 <payload>",
      "RESTORE foo8 <ms> <payload> ABSTTL",
      "SET marker end"};
  EXPECT_EQ(redis.stream, kExpected) << "redis-server's stream changed";
  EXPECT_EQ(kv.stream, redis.stream);
  EXPECT_EQ(kv.replies, redis.replies);
}

TEST(PropagationShape, ErrorsInsideExecCountAsTheCommandsNotExecs) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> seen[2];
  int i = 0;
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    ServerProcess s(kind);
    RespClient c(s.port());
    c.Call({"CONFIG", "RESETSTAT"});
    c.Call({"MULTI"});
    c.Call({"SET", "a", "b"});
    c.Call({"AUTH", "a"});
    seen[i].push_back(c.Call({"EXEC"}).raw);
    c.Call({"SET", "s", "x"});
    c.Call({"MULTI"});
    c.Call({"INCR", "s"});
    c.Call({"SET", "a", "b"});
    c.Call({"LPUSH", "s", "1"});
    c.Call({"SET", "a", "b"});
    seen[i].push_back(c.Call({"EXEC"}).raw);
    for (const auto& l : InfoLines(c, "errorstats", {"errorstat_"})) seen[i].push_back(l);
    for (const auto& l : InfoLines(
             c, "commandstats",
             {"cmdstat_exec", "cmdstat_auth", "cmdstat_set:", "cmdstat_incr", "cmdstat_lpush"})) {
      seen[i].push_back(l);
    }
    seen[i].push_back(InfoField(c, "stats", "total_error_replies"));
    i++;
  }
  EXPECT_NE(std::find(seen[1].begin(), seen[1].end(), "errorstat_ERR:count=2"), seen[1].end());
  EXPECT_NE(std::find(seen[1].begin(), seen[1].end(),
                      "cmdstat_exec:calls=2,rejected_calls=0,failed_calls=0"),
            seen[1].end())
      << "redis-server's accounting changed";
  EXPECT_EQ(seen[0], seen[1]);
}

TEST(PropagationShape, ReplicaofInsideExecLetsTheTransactionFinish) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> seen[2];
  int i = 0;
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    ServerProcess s(kind);
    StreamReader stream(s.port());
    RespClient c(s.port());
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(c, "replication", "slave0").find("state=online") != std::string::npos;
    }));
    c.Call({"SET", "foo", "bar"});
    c.Call({"MULTI"});
    c.Call({"SET", "foo2", "bar"});
    c.Call({"REPLICAOF", "localhost", "9999"});
    c.Call({"SET", "foo3", "bar"});
    seen[i].push_back(c.Call({"EXEC"}).raw);
    seen[i].push_back(c.Call({"SET", "foo4", "bar"}).raw);
    // The transaction never reaches the replicas: the link closes with the SET before it.
    for (;;) {
      Argv cmd = stream.Next();
      if (cmd.empty()) break;
      std::string line;
      for (const auto& a : cmd) line += (line.empty() ? "" : " ") + a;
      seen[i].push_back(line);
    }
    seen[i].push_back(c.Call({"REPLICAOF", "NO", "ONE"}).raw);
    seen[i].push_back(c.Call({"MGET", "foo2", "foo3"}).raw);
    i++;
  }
  ASSERT_GE(seen[1].size(), 2u);
  EXPECT_EQ(seen[1][0], "*3\r\n+OK\r\n+OK\r\n+OK\r\n") << "redis-server's reply changed";
  EXPECT_EQ(seen[0], seen[1]);
}

}  // namespace
}  // namespace kv::test
