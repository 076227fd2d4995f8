// End-to-end tests of what a write propagates to replicas when Redis 7.0 replaces the command
// with others: SPOP with a count becomes one SREM per popped member (in MULTI/EXEC when more
// than one), or DEL when it empties the set. The stream a raw SYNC client reads from kvstore is
// compared with redis-server's, and a kvstore replica must end up with its primary's set. Scripts
// propagate their effects as Redis 7.0 does: the commands they ran (in MULTI/EXEC when more
// than one, with the SELECTs they made), never the EVAL, narrowed by redis.set_repl.
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

// The stream up to "SET marker end", with each run of SREMs of one member as "SREM xN" (the
// members are random) and the SELECTs left out.
std::vector<std::string> StreamShape(StreamReader& s) {
  std::vector<std::string> out;
  int srems = 0;
  for (;;) {
    Argv cmd = s.Next();
    if (cmd.empty()) {
      out.push_back("<stream ended>");
      return out;
    }
    std::transform(cmd[0].begin(), cmd[0].end(), cmd[0].begin(), ::toupper);
    if (cmd[0] == "SREM" && cmd.size() == 3) {
      srems++;
      continue;
    }
    if (srems) out.push_back("SREM x" + std::to_string(srems));
    srems = 0;
    if (cmd[0] == "SELECT") continue;
    std::string line = cmd[0];
    for (size_t i = 1; i < cmd.size() && i < 4; i++) line += " " + cmd[i];
    if (cmd.size() > 4) line += " ... (" + std::to_string(cmd.size()) + " args)";
    out.push_back(line);
    if (line == "SET marker end") return out;
  }
}

// Fills set `key` with members 0..n-1.
void FillSet(RespClient& c, const std::string& key, int n) {
  Argv add = {"SADD", key};
  for (int i = 0; i < n; i++) add.push_back(std::to_string(i));
  ASSERT_EQ(c.Call(add).integer, n);
}

void SpopWorkload(RespClient& c) {
  FillSet(c, "s", 5000);
  c.Call({"SET", "marker", "a"});
  EXPECT_EQ(c.Call({"SPOP", "s", "3000"}).elems.size(), 3000u);
  c.Call({"SET", "marker", "b"});
  c.Call({"SPOP", "s", "1"});
  c.Call({"SPOP", "s", "0"});      // nothing to propagate
  c.Call({"SPOP", "nokey", "5"});  // nor here
  c.Call({"SET", "marker", "c"});
  c.Call({"CONFIG", "SET", "lazyfree-lazy-server-del", "yes"});
  EXPECT_EQ(c.Call({"SPOP", "s", "5000"}).elems.size(), 1999u);  // the rest: DEL
  c.Call({"CONFIG", "SET", "lazyfree-lazy-server-del", "no"});
  FillSet(c, "t", 10);
  c.Call({"MULTI"});
  c.Call({"SPOP", "t", "4"});
  c.Call({"SET", "marker", "d"});
  EXPECT_EQ(c.Call({"EXEC"}).elems.size(), 2u);
  c.Call({"SET", "marker", "end"});
}

// What a raw replica of a fresh `kind` server reads while `workload` runs, as `read` renders it.
// Writes start once the snapshot is through, as they would for a real replica.
std::vector<std::string> StreamOf(Kind kind, void (*workload)(RespClient&),
                                  std::vector<std::string> (*read)(StreamReader&)) {
  ServerProcess s(kind);
  StreamReader stream(s.port());
  RespClient c(s.port());
  EXPECT_TRUE(WaitFor([&] {
    return InfoField(c, "replication", "slave0").find("state=online") != std::string::npos;
  }));
  workload(c);
  return read(stream);
}

TEST(Propagation, SpopWithCountStreamMatchesRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> shapes[2] = {StreamOf(Kind::kKvstore, SpopWorkload, StreamShape),
                                         StreamOf(Kind::kRedis, SpopWorkload, StreamShape)};
  const std::vector<std::string> kExpected = {
      "SADD s 0 1 ... (5002 args)", "SET marker a", "MULTI", "SREM x3000", "EXEC",
      "SET marker b", "SREM x1", "SET marker c", "DEL s", "SADD t 0 1 ... (12 args)",
      "MULTI", "SREM x4", "SET marker d", "EXEC", "SET marker end"};
  EXPECT_EQ(shapes[1], kExpected) << "redis-server's stream changed";
  EXPECT_EQ(shapes[0], shapes[1]);
}

// A new replica's stream starts with the first write's SELECT: the primary pings its replicas
// every repl-ping-replica-period, counted from its start, not at once for a new one.
TEST(Propagation, ANewReplicasStreamStartsWithTheFirstWrite) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    ServerProcess server(kind, {"--repl-diskless-sync-delay", "0"});
    // Past Redis' first replication cron, which pings at once when it finds replicas.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    StreamReader stream(server.port());
    RespClient c(server.port());
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "replication", "connected_slaves") == "1"; }));
    ASSERT_EQ(c.Call({"SET", "k", "v"}).str, "OK");
    EXPECT_EQ(stream.Next(true), (Argv{"SELECT", "0"}))
        << (kind == Kind::kKvstore ? "kvstore" : "redis");
    EXPECT_EQ(stream.Next(true), (Argv{"SET", "k", "v"}));
  }
}

TEST(Propagation, SpopWithCountKeepsAReplicaInSync) {
  ServerProcess primary(Kind::kKvstore);
  ServerProcess replica(Kind::kKvstore, {"--replicaof", "127.0.0.1 " +
                                                            std::to_string(primary.port())});
  RespClient p(primary.port()), r(replica.port());
  FillSet(p, "s", 5000);
  EXPECT_EQ(p.Call({"SPOP", "s", "3000"}).elems.size(), 3000u);
  ASSERT_TRUE(InSync(p, r));
  auto members = [](RespClient& c) {
    std::vector<std::string> out;
    for (const Reply& m : c.Call({"SMEMBERS", "s"}).elems) out.push_back(m.str);
    std::sort(out.begin(), out.end());
    return out;
  };
  std::vector<std::string> left = members(p);
  EXPECT_EQ(left.size(), 2000u);
  EXPECT_EQ(members(r), left);
  EXPECT_EQ(r.Call({"SCARD", "s"}).integer, 2000);
}

// The whole stream up to "SET marker end", one line per command.
std::vector<std::string> StreamLines(StreamReader& s) {
  std::vector<std::string> out;
  for (;;) {
    Argv cmd = s.Next();
    if (cmd.empty()) {
      out.push_back("<stream ended>");
      return out;
    }
    std::transform(cmd[0].begin(), cmd[0].end(), cmd[0].begin(), ::toupper);
    std::string line = cmd[0];
    for (size_t i = 1; i < cmd.size(); i++) line += " " + cmd[i];
    out.push_back(line);
    if (line == "SET marker end") return out;
  }
}

void ScriptWorkload(RespClient& c) {
  // Two writes: MULTI/EXEC. A read-only script: nothing.
  EXPECT_EQ(c.Call({"EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('incr', 'n')",
                    "1", "k", "v"}).integer, 1);
  EXPECT_EQ(c.Call({"EVAL", "return redis.call('get', 'k')", "0"}).str, "v");
  // The SELECTs the script made, inside the transaction; the caller's db stays 0.
  c.Call({"EVAL",
          "redis.call('select', 2) redis.call('set', 'x', '1') redis.call('select', 0) "
          "return redis.call('set', 'y', '2')",
          "0"});
  // One write, rewritten as the command rewrites it (INCRBYFLOAT as SET ... KEEPTTL).
  std::string sha = c.Call({"SCRIPT", "LOAD", "return redis.call('incrbyfloat', KEYS[1], ARGV[1])"}).str;
  EXPECT_EQ(c.Call({"EVALSHA", sha, "1", "f", "1.5"}).str, "1.5");
  // redis.set_repl(REPL_NONE) keeps a write from the replicas.
  c.Call({"EVAL",
          "redis.set_repl(redis.REPL_NONE) redis.call('set', 'hidden', 1) "
          "redis.set_repl(redis.REPL_ALL) return redis.call('set', 'shown', 1)",
          "0"});
  // A failed command after a write: the write still propagates.
  c.Call({"EVAL", "redis.call('set', 'a', '1') return redis.pcall('lpush', 'a', 'x')", "0"});
  EXPECT_TRUE(c.Call({"EVAL", "redis.call('set', 'b', '1') redis.call('nosuch')", "0"})
                  .is_error());
  // Numbers from Lua reach the stream as the command got them (%.17g).
  c.Call({"EVAL", "return redis.call('set', 'num', 0.1)", "0"});
  c.Call({"SET", "marker", "end"});
}

TEST(Propagation, ScriptEffectsStreamMatchesRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> lines[2] = {StreamOf(Kind::kKvstore, ScriptWorkload, StreamLines),
                                        StreamOf(Kind::kRedis, ScriptWorkload, StreamLines)};
  const std::vector<std::string> kExpected = {
      "SELECT 0", "MULTI", "SET k v", "INCR n", "EXEC",
      "SELECT 2", "MULTI", "SET x 1", "SELECT 0", "SET y 2", "EXEC",
      "SET f 1.5 KEEPTTL", "SET shown 1", "SET a 1", "SET b 1",
      "SET num 0.10000000000000001", "SET marker end"};
  EXPECT_EQ(lines[1], kExpected) << "redis-server's stream changed";
  EXPECT_EQ(lines[0], lines[1]);
}

}  // namespace
}  // namespace kv::test
