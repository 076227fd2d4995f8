// Streams end to end: XREAD BLOCK served by a later XADD (on an existing key, on a key that does
// not exist yet, across clients) or timing out, and stream values moving between kvstore and
// redis-server: DUMP payloads (consumer groups and PELs included) restored both ways and dumped
// again byte for byte, RDB files loaded by the other server, and kvstore's AOF rewrite (XADD,
// XSETID, XGROUP, XCLAIM) loaded back; blocking XREADGROUP; blocked reads woken as redis-server
// wakes them; consumer groups on replicas.
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
using Clock = std::chrono::steady_clock;
using Cmd = std::vector<std::string>;

TEST(Streams, BlockedXreadIsServedByALaterXadd) {
  ServerProcess kv(Kind::kKvstore);
  RespClient a(kv.port()), b(kv.port());
  ASSERT_EQ(b.Call({"XADD", "s", "1-1", "f", "old"}).str, "1-1");
  // "$": only what comes after the block.
  a.Send({"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(b.Call({"XADD", "s", "2-1", "f", "new"}).str, "2-1");
  Reply r = a.Read();
  ASSERT_EQ(r.type, '*') << r.Debug();
  ASSERT_EQ(r.elems.size(), 1u);
  EXPECT_EQ(r.elems[0].elems[0].str, "s");
  ASSERT_EQ(r.elems[0].elems[1].elems.size(), 1u);
  EXPECT_EQ(r.elems[0].elems[1].elems[0].elems[0].str, "2-1");
  EXPECT_EQ(r.elems[0].elems[1].elems[0].elems[1].elems[1].str, "new");

  // A key that does not exist yet, in RESP3 (a map), with COUNT.
  ASSERT_EQ(a.Call({"HELLO", "3"}).type, '%');
  a.Send({"XREAD", "COUNT", "1", "BLOCK", "5000", "STREAMS", "later", "other", "$", "$"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(b.Call({"XADD", "later", "7-0", "a", "1"}).str, "7-0");
  r = a.Read();
  ASSERT_EQ(r.type, '%') << r.Debug();
  EXPECT_EQ(r.elems[0].str, "later");
  EXPECT_EQ(r.elems[1].elems[0].elems[0].str, "7-0");

  // A write that adds nothing (XDEL) does not wake it; the timeout answers null.
  auto start = Clock::now();
  a.Send({"XREAD", "BLOCK", "300", "STREAMS", "s", "$"});
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(b.Call({"XDEL", "s", "1-1"}).integer, 1);
  r = a.Read();
  EXPECT_TRUE(r.is_null) << r.Debug();
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(290));
  // Inside MULTI it does not block.
  ASSERT_EQ(b.Call({"MULTI"}).str, "OK");
  b.Call({"XREAD", "BLOCK", "0", "STREAMS", "s", "$"});
  r = b.Call({"EXEC"});
  ASSERT_EQ(r.elems.size(), 1u);
  EXPECT_TRUE(r.elems[0].is_null);
}

// A stream with several nodes, tombstones, a last ID past its entries, two groups with pending
// entries and consumers (one without any), built on redis-server.
void BuildOnRedis(RespClient& r) {
  ASSERT_EQ(r.Call({"CONFIG", "SET", "stream-node-max-entries", "4"}).str, "OK");
  for (int i = 1; i <= 20; i++) {
    std::vector<std::string> cmd = {"XADD", "st", std::to_string(i) + "-0", "f", std::to_string(i)};
    if (i % 3 == 0) cmd.insert(cmd.end(), {"g", "x"});
    ASSERT_EQ(r.Call(cmd).type, '$');
  }
  ASSERT_EQ(r.Call({"XDEL", "st", "2-0", "9-0", "20-0"}).integer, 3);
  ASSERT_EQ(r.Call({"XGROUP", "CREATE", "st", "g1", "0"}).str, "OK");
  ASSERT_EQ(r.Call({"XGROUP", "CREATE", "st", "g0", "5-0"}).str, "OK");
  ASSERT_EQ(r.Call({"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "st", ">"}).type,
            '*');
  ASSERT_EQ(r.Call({"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "st", ">"}).type,
            '*');
  ASSERT_EQ(r.Call({"XGROUP", "CREATECONSUMER", "st", "g0", "carol"}).integer, 1);
  ASSERT_EQ(r.Call({"XSETID", "st", "99-0"}).str, "OK");
}

TEST(Streams, DumpPayloadsRestoreBothWaysUnchanged) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess kv(Kind::kKvstore, {"--rdbcompression", "no"});
  ServerProcess redis(Kind::kRedis, {"--rdbcompression", "no"});
  RespClient k(kv.port()), r(redis.port());
  BuildOnRedis(r);
  std::string payload = r.Call({"DUMP", "st"}).str;
  ASSERT_EQ(k.Call({"RESTORE", "st", "0", payload}).str, "OK");
  EXPECT_EQ(k.Call({"DUMP", "st"}).str, payload);  // groups, PELs and consumers included
  EXPECT_EQ(k.Call({"XLEN", "st"}).integer, 17);
  EXPECT_EQ(k.Call({"XRANGE", "st", "-", "+"}).raw, r.Call({"XRANGE", "st", "-", "+"}).raw);
  EXPECT_EQ(k.Call({"DEBUG", "DIGEST"}).str, r.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(k.Call({"TYPE", "st"}).str, "stream");
  EXPECT_EQ(k.Call({"OBJECT", "ENCODING", "st"}).str, "stream");
  // The same stream built on kvstore (no groups: those commands come later) dumps as Redis'.
  ASSERT_EQ(k.Call({"CONFIG", "SET", "stream-node-max-entries", "4"}).str, "OK");
  ASSERT_EQ(r.Call({"DEL", "st"}).integer, 1);
  for (RespClient* c : {&k, &r}) {
    for (int i = 1; i <= 30; i++) {
      c->Call({"XADD", "built", std::to_string(i) + "-" + std::to_string(i % 2), "f",
               std::to_string(i * 7), i % 4 ? "g" : "h", std::string(i, 'v')});
    }
    c->Call({"XDEL", "built", "3-1", "4-0", "30-0"});
    c->Call({"XTRIM", "built", "MAXLEN", "20"});
  }
  std::string built = k.Call({"DUMP", "built"}).str;
  EXPECT_EQ(built, r.Call({"DUMP", "built"}).str);
  ASSERT_EQ(r.Call({"RESTORE", "copy", "0", built}).str, "OK");
  EXPECT_EQ(r.Call({"XRANGE", "copy", "-", "+"}).raw, k.Call({"XRANGE", "built", "-", "+"}).raw);
  // A corrupt payload is refused and changes nothing.
  std::string bad = payload;
  bad[30] = static_cast<char>(bad[30] ^ 0x40);
  EXPECT_TRUE(k.Call({"RESTORE", "bad", "0", bad}).is_error());
  EXPECT_EQ(k.Call({"EXISTS", "bad"}).integer, 0);
}

// stream-node-max-entries and -bytes, given as configuration lines (here on the command line),
// cut nodes where Redis cuts them: the same node count and the same payload.
TEST(Streams, NodeLimitsFromTheConfigurationApply) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  const std::vector<std::string> conf = {
      "--stream-node-max-entries", "3", "--stream-node-max-bytes", "200", "--rdbcompression", "no"};
  ServerProcess kv(Kind::kKvstore, conf), redis(Kind::kRedis, conf);
  RespClient k(kv.port()), r(redis.port());
  for (RespClient* c : {&k, &r}) {
    EXPECT_EQ(c->Call({"CONFIG", "GET", "stream-node-max-entries"}).elems[1].str, "3");
    for (int i = 1; i <= 10; i++) {
      c->Call({"XADD", "s", std::to_string(i) + "-0", "f", std::string(i * 6, 'x')});
    }
  }
  Reply info = k.Call({"XINFO", "STREAM", "s"});
  ASSERT_GE(info.elems.size(), 4u);
  EXPECT_EQ(info.elems[2].str, "radix-tree-keys");
  EXPECT_GT(info.elems[3].integer, 3);  // split by the entry limit and the byte limit
  EXPECT_EQ(info.raw, r.Call({"XINFO", "STREAM", "s"}).raw);
  EXPECT_EQ(k.Call({"DUMP", "s"}).str, r.Call({"DUMP", "s"}).str);
}

TEST(Streams, RdbFilesCarryThemBothWays) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  // redis-server writes (groups included), kvstore loads, saves, and redis-server loads again.
  ServerProcess redis(Kind::kRedis);
  RespClient r(redis.port());
  BuildOnRedis(r);
  std::string info = r.Call({"XINFO", "STREAM", "st", "FULL"}).raw;
  std::string digest = r.Call({"DEBUG", "DIGEST"}).str;
  ASSERT_EQ(r.Call({"SAVE"}).str, "OK");
  ServerProcess kv(Kind::kKvstore, {"--dir", redis.dir()});
  RespClient k(kv.port());
  EXPECT_EQ(k.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(k.Call({"XLEN", "st"}).integer, 17);
  ASSERT_EQ(k.Call({"SAVE"}).str, "OK");
  ServerProcess back(Kind::kRedis, {"--dir", redis.dir()});  // where kvstore saved
  RespClient rb(back.port());
  EXPECT_EQ(rb.Call({"DEBUG", "DIGEST"}).str, digest);
  // Everything Redis keeps about the stream came back (the seen times are the saved ones).
  EXPECT_EQ(rb.Call({"XINFO", "STREAM", "st", "FULL"}).raw, info);
}

TEST(Streams, AofRewriteRebuildsTheStream) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess kv(Kind::kKvstore, {"--appendonly", "yes", "--aof-use-rdb-preamble", "no"});
  RespClient k(kv.port());
  for (int i = 1; i <= 10; i++) {
    k.Call({"XADD", "st", std::to_string(i) + "-0", "f", std::to_string(i)});
  }
  k.Call({"XDEL", "st", "10-0", "3-0"});
  k.Call({"XADD", "empty", "1-0", "a", "b"});
  k.Call({"XDEL", "empty", "1-0"});
  ASSERT_EQ(k.Call({"XGROUP", "CREATE", "st", "g", "0"}).str, "OK");
  ASSERT_EQ(k.Call({"XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "st", ">"}).type,
            '*');
  ASSERT_EQ(k.Call({"XGROUP", "CREATECONSUMER", "st", "g", "idle"}).integer, 1);
  std::string pending = k.Call({"XPENDING", "st", "g"}).raw;
  std::string digest = k.Call({"DEBUG", "DIGEST"}).str;
  ASSERT_EQ(k.Call({"BGREWRITEAOF"}).type, '+');
  ASSERT_TRUE(WaitFor([&] {
    return InfoField(k, "persistence", "aof_rewrite_in_progress") == "0" &&
           InfoField(k, "persistence", "aof_rewrite_scheduled") == "0";
  }));
  // redis-server loads kvstore's rewritten AOF: the same entries, last ID and counters.
  ServerProcess redis(Kind::kRedis, {"--dir", kv.dir(), "--appendonly", "yes"});
  RespClient r(redis.port());
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, digest);
  Reply info = r.Call({"XINFO", "STREAM", "st"});
  ASSERT_EQ(info.type, '*') << info.Debug();
  std::vector<std::string> want = {
      "length",        "8", "last-generated-id", "10-0", "max-deleted-entry-id", "10-0",
      "entries-added", "10"};
  for (size_t i = 0; i + 1 < info.elems.size(); i += 2) {
    for (size_t j = 0; j < want.size(); j += 2) {
      if (info.elems[i].str == want[j]) {
        EXPECT_EQ(info.elems[i + 1].raw.find(want[j + 1]) != std::string::npos, true)
            << want[j] << ": " << info.elems[i + 1].Debug();
      }
    }
  }
  EXPECT_EQ(r.Call({"XPENDING", "st", "g"}).raw, pending);
  EXPECT_EQ(r.Call({"XLEN", "empty"}).integer, 0);
  EXPECT_EQ(r.Call({"TYPE", "empty"}).str, "stream");
  // And kvstore restarted on its own AOF.
  kv.Stop();
  ServerProcess again(Kind::kKvstore, {"--dir", kv.dir(), "--appendonly", "yes"});
  RespClient a(again.port());
  EXPECT_EQ(a.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(a.Call({"XPENDING", "st", "g"}).raw, pending);  // the group came back too
  EXPECT_EQ(a.Call({"XGROUP", "CREATECONSUMER", "st", "g", "idle"}).integer, 0);
  EXPECT_EQ(a.Call({"XADD", "st", "10-0", "x", "y"}).str,
            "ERR The ID specified in XADD is equal or smaller than the target stream top item");
}

TEST(Streams, BlockedXreadgroupGetsTheGroupsNextEntry) {
  ServerProcess kv(Kind::kKvstore);
  RespClient a(kv.port()), b(kv.port()), w(kv.port());
  ASSERT_EQ(w.Call({"XGROUP", "CREATE", "q", "workers", "$", "MKSTREAM"}).str, "OK");
  a.Send({"XREADGROUP", "GROUP", "workers", "alice", "BLOCK", "0", "STREAMS", "q", ">"});
  b.Send({"XREADGROUP", "GROUP", "workers", "bob", "BLOCK", "0", "STREAMS", "q", ">"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(w.Call({"XADD", "q", "1-0", "job", "one"}).str, "1-0");
  ASSERT_EQ(w.Call({"XADD", "q", "2-0", "job", "two"}).str, "2-0");
  // First come, first served: alice gets 1-0, bob 2-0, each once.
  Reply ra = a.Read(), rb = b.Read();
  ASSERT_EQ(ra.type, '*') << ra.Debug();
  ASSERT_EQ(rb.type, '*') << rb.Debug();
  EXPECT_EQ(ra.elems[0].elems[1].elems[0].elems[0].str, "1-0");
  EXPECT_EQ(rb.elems[0].elems[1].elems[0].elems[0].str, "2-0");
  Reply pending = w.Call({"XPENDING", "q", "workers"});
  ASSERT_EQ(pending.elems.size(), 4u);
  EXPECT_EQ(pending.elems[0].integer, 2);
  EXPECT_EQ(w.Call({"XACK", "q", "workers", "1-0", "2-0"}).integer, 2);
  EXPECT_EQ(w.Call({"XPENDING", "q", "workers"}).elems[0].integer, 0);
  // A group destroyed while a client waits on it: the client gets an error, not a hang.
  a.Send({"XREADGROUP", "GROUP", "workers", "alice", "BLOCK", "0", "STREAMS", "q", ">"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(w.Call({"XGROUP", "DESTROY", "q", "workers"}).integer, 1);
  Reply err = a.Read();
  EXPECT_EQ(err.type, '-') << err.Debug();
  EXPECT_EQ(err.str.rfind("NOGROUP", 0), 0u) << err.str;
}

// Blocked XREAD and XREADGROUP woken as redis-server wakes them, replies compared byte for
// byte: by the one stream that got entries (the first of several made ready at once), each
// waiter after its own ID (one waiting past the top does not hold back the others), with an
// empty reply for entries deleted before it woke, by a destroyed group (-NOGROUP in the woken
// wording), and by a stream that is deleted, replaced by another type, expired, flushed or
// renamed away (-UNBLOCKED for group readers; plain readers keep waiting).
TEST(Streams, BlockedReadsWakeAsRedisDoes) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  using Cmds = std::vector<Cmd>;
  struct Case {
    const char* name;
    Cmds setup, waiters, trigger;
    bool resp3 = false;
  };
  const Cmd group = {"XGROUP", "CREATE", "a", "g", "$", "MKSTREAM"};
  const Cmd wait_group = {"XREADGROUP", "GROUP", "g", "c", "BLOCK", "1000", "STREAMS", "a", ">"};
  const std::vector<Case> cases = {
      {"two ready at once",
       {{"XADD", "a", "1-1", "f", "v"}, {"XADD", "b", "1-1", "f", "v"}},
       {{"XREAD", "BLOCK", "1000", "STREAMS", "a", "b", "$", "$"}},
       {{"MULTI"}, {"XADD", "b", "2-1", "f", "v"}, {"XADD", "a", "2-1", "f", "v"}, {"EXEC"}}},
      {"RESP3, the second key",
       {{"XADD", "a", "1-1", "f", "v"}, {"XADD", "b", "1-1", "f", "v"}},
       {{"XREAD", "BLOCK", "1000", "STREAMS", "a", "b", "$", "$"}},
       {{"XADD", "b", "2-1", "f", "v"}},
       true},
      {"a waiter past the top first",
       {{"XADD", "a", "5-1", "f", "v"}},
       {{"XREAD", "BLOCK", "700", "STREAMS", "a", "99-0"},
        {"XREAD", "BLOCK", "1000", "STREAMS", "a", "$"}},
       {{"XADD", "a", "6-1", "f", "v"}}},
      {"the same key twice",
       {{"XADD", "a", "3-1", "f", "v"}},
       {{"XREAD", "BLOCK", "1000", "STREAMS", "a", "a", "3-1", "4-0"}},
       {{"MULTI"}, {"XADD", "a", "3-5", "f", "v"}, {"XADD", "a", "4-1", "f", "v"}, {"EXEC"}}},
      {"deleted before it woke",
       {{"XADD", "a", "3-1", "f", "v"}},
       {{"XREAD", "BLOCK", "1000", "STREAMS", "a", "$"}},
       {{"MULTI"}, {"XADD", "a", "4-1", "f", "v"}, {"XDEL", "a", "4-1"}, {"EXEC"}}},
      {"two groups",
       {group, {"XGROUP", "CREATE", "a", "g2", "$"}},
       {wait_group,
        {"XREADGROUP", "GROUP", "g", "d", "BLOCK", "700", "STREAMS", "a", ">"},
        {"XREADGROUP", "GROUP", "g2", "c", "BLOCK", "1000", "STREAMS", "a", ">"}},
       {{"XADD", "a", "1-1", "f", "v"}}},
      {"group destroyed", {group}, {wait_group}, {{"XGROUP", "DESTROY", "a", "g"}}},
      {"group destroyed, then an entry",
       {group},
       {wait_group},
       {{"MULTI"}, {"XGROUP", "DESTROY", "a", "g"}, {"XADD", "a", "*", "f", "v"}, {"EXEC"}}},
      {"key deleted",
       {group},
       {{"XREAD", "BLOCK", "700", "STREAMS", "a", "$"}, wait_group},
       {{"DEL", "a"}}},
      {"key replaced", {group}, {wait_group}, {{"SET", "a", "x"}}},
      {"key expired",
       {group, {"PEXPIRE", "a", "100"}},
       {{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "3000", "STREAMS", "a", ">"}},
       {}},
      {"flushed", {group}, {wait_group}, {{"FLUSHALL"}}},
      {"renamed away", {group}, {wait_group}, {{"RENAME", "a", "z"}}},
  };
  ServerProcess redis(Kind::kRedis), kvstore(Kind::kKvstore);
  auto run = [&](ServerProcess& server, const Case& c) {
    RespClient admin(server.port());
    admin.Call({"FLUSHALL"});
    for (const Cmd& cmd : c.setup) admin.Call(cmd);
    std::vector<std::unique_ptr<RespClient>> waiters;
    for (const Cmd& cmd : c.waiters) {
      waiters.push_back(std::make_unique<RespClient>(server.port()));
      if (c.resp3) waiters.back()->Call({"HELLO", "3"});
      waiters.back()->Send(cmd);
      // Blocked before the next one comes, in this order.
      EXPECT_TRUE(WaitFor([&] {
        return admin.Call({"INFO", "clients"})
                   .str.find("blocked_clients:" + std::to_string(waiters.size())) !=
               std::string::npos;
      }));
    }
    for (const Cmd& cmd : c.trigger) admin.Call(cmd);
    std::vector<std::string> replies;
    for (auto& w : waiters) replies.push_back(w->Read().raw);
    EXPECT_NE(admin.Call({"INFO", "clients"}).str.find("blocked_clients:0\r\n"), std::string::npos);
    return replies;
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto want = run(redis, c);
    auto got = run(kvstore, c);
    EXPECT_EQ(got, want);
    for (const auto& r : want) EXPECT_FALSE(r.empty()) << "a waiter got no reply from redis";
  }
}

// What a group's reads, claims and acks change reaches a kvstore replica and a redis-server
// replica of kvstore: the same pending entries, owners, delivery counts and next entries.
TEST(Streams, ConsumerGroupsReachReplicas) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  const std::string of = "127.0.0.1 " + std::to_string(primary.port());
  ServerProcess replica(Kind::kKvstore, {"--replicaof", of});
  RespClient p(primary.port()), r(replica.port());
  for (int i = 1; i <= 6; i++) p.Call({"XADD", "s", std::to_string(i) + "-0", "f", "v"});
  ASSERT_EQ(p.Call({"XGROUP", "CREATE", "s", "g", "0"}).str, "OK");
  p.Call({"XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "STREAMS", "s", ">"});
  p.Call({"XREADGROUP", "GROUP", "g", "bob", "NOACK", "COUNT", "1", "STREAMS", "s", ">"});
  p.Call({"XCLAIM", "s", "g", "carol", "0", "2-0"});
  p.Call({"XACK", "s", "g", "1-0"});
  p.Call({"XDEL", "s", "3-0"});
  p.Call({"XAUTOCLAIM", "s", "g", "dave", "0", "0", "JUSTID"});
  auto shape = [](RespClient& c) {
    std::string out = c.Call({"XPENDING", "s", "g"}).raw;
    for (const Reply& e : c.Call({"XPENDING", "s", "g", "-", "+", "10"}).elems) {
      out += e.elems[0].str + "/" + e.elems[1].str + "/" + std::to_string(e.elems[3].integer);
    }
    // The group's next entry for a new reader tells its last ID.
    return out;
  };
  std::string want = shape(p);
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(shape(r), want);
  if (HaveRedisServer()) {
    ServerProcess redis(Kind::kRedis, {"--replicaof", of});
    RespClient rr(redis.port());
    ASSERT_TRUE(InSync(p, rr));
    EXPECT_EQ(shape(rr), want);
    // Later reads replicate too, and the group's last ID agrees everywhere.
    p.Call({"XREADGROUP", "GROUP", "g", "erin", "STREAMS", "s", ">"});
    ASSERT_TRUE(InSync(p, rr));
    ASSERT_TRUE(InSync(p, r));
    std::string after = shape(p);
    EXPECT_EQ(shape(rr), after);
    EXPECT_EQ(shape(r), after);
    Reply groups = rr.Call({"XINFO", "GROUPS", "s"});
    ASSERT_EQ(groups.type, '*') << groups.Debug();
    std::string info = groups.elems[0].raw;
    EXPECT_NE(info.find("6-0"), std::string::npos) << groups.Debug();  // last-delivered-id
  }
}

}  // namespace
}  // namespace kv::test
