// Scripts and the copies of the data: what a script writes reaches a kvstore and a redis-server
// replica of kvstore, and a kvstore replica of redis-server, as the commands it ran (random
// values included: the replicas get the values, not the script), and kvstore's AOF replays it
// after a restart, on kvstore and on redis-server. The same DEBUG DIGEST everywhere.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

// Scripts of every kind of write: several commands in one script, random values, a SELECT, a
// write rewritten for replication (SPOP, INCRBYFLOAT, EXPIRE), a loop of EVALSHAs, a write
// after a failed command, and one kept local with redis.set_repl(REPL_NONE) (deleted at the
// end, so the datasets can be compared).
void Workload(RespClient& c, std::string* sha_out = nullptr) {
  ASSERT_EQ(c.Call({"EVAL",
                    "for i = 1, 50 do redis.call('hset', KEYS[1], 'f' .. i, math.random()) end "
                    "return redis.call('hlen', KEYS[1])",
                    "1", "h"})
                .integer,
            50);
  ASSERT_EQ(c.Call({"EVAL",
                    "for i = 1, 20 do redis.call('sadd', 's', i) end "
                    "return #redis.call('spop', 's', 5)",
                    "0"})
                .integer,
            5);
  c.Call({"EVAL",
          "redis.call('select', 3) redis.call('lpush', 'l', 'a', 'b') "
          "redis.call('incrbyfloat', 'fl', '2.5') return redis.call('expire', 'l', 1000)",
          "0"});
  std::string sha = c.Call({"SCRIPT", "LOAD",
                            "redis.call('incr', KEYS[1]) "
                            "return redis.call('zincrby', 'z', ARGV[1], KEYS[1])"})
                        .str;
  ASSERT_EQ(sha.size(), 40u);
  if (sha_out) *sha_out = sha;
  for (int i = 0; i < 100; i++) {
    c.Call({"EVALSHA", sha, "1", "k" + std::to_string(i % 7), std::to_string(i)});
  }
  c.Call({"EVAL", "redis.call('set', 'a', '1') return redis.pcall('lpush', 'a', 'x')", "0"});
  c.Call({"EVAL",
          "redis.set_repl(redis.REPL_NONE) redis.call('set', 'local', 1) "
          "redis.set_repl(redis.REPL_ALL) return redis.call('set', 'shared', 1)",
          "0"});
}

TEST(ScriptingReplication, ReplicasOfBothKindsGetTheEffects) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  std::string of = "127.0.0.1 " + std::to_string(primary.port());
  ServerProcess kv_replica(Kind::kKvstore, {"--replicaof", of});
  ServerProcess redis_replica(Kind::kRedis, {"--replicaof", of});
  RespClient p(primary.port()), rk(kv_replica.port()), rr(redis_replica.port());
  ASSERT_TRUE(InSync(p, rk));
  ASSERT_TRUE(InSync(p, rr));
  std::string sha;
  ASSERT_NO_FATAL_FAILURE(Workload(p, &sha));
  ASSERT_EQ(p.Call({"WAIT", "2", "5000"}).integer, 2);
  // The local write stayed on the primary.
  EXPECT_EQ(p.Call({"EXISTS", "local"}).integer, 1);
  EXPECT_EQ(rk.Call({"EXISTS", "local"}).integer, 0);
  EXPECT_EQ(rr.Call({"EXISTS", "local"}).integer, 0);
  EXPECT_EQ(rk.Call({"EXISTS", "shared"}).integer, 1);
  ASSERT_EQ(p.Call({"DEL", "local"}).integer, 1);
  ASSERT_EQ(p.Call({"WAIT", "2", "5000"}).integer, 2);
  std::string digest = p.Call({"DEBUG", "DIGEST"}).str;
  EXPECT_EQ(rk.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(rr.Call({"DEBUG", "DIGEST"}).str, digest);
  // The script cache is not replicated (Redis 7.0 replicates effects, not scripts).
  EXPECT_EQ(p.Call({"SCRIPT", "EXISTS", sha}).elems.at(0).integer, 1);
  EXPECT_EQ(rk.Call({"SCRIPT", "EXISTS", sha}).elems.at(0).integer, 0);
}

TEST(ScriptingReplication, KvstoreReplicaOfRedisGetsTheEffects) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess primary(Kind::kRedis, {"--repl-diskless-sync-delay", "0"});
  ServerProcess replica(Kind::kKvstore,
                        {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  RespClient p(primary.port()), r(replica.port());
  ASSERT_TRUE(InSync(p, r));
  ASSERT_NO_FATAL_FAILURE(Workload(p));
  ASSERT_EQ(p.Call({"DEL", "local"}).integer, 1);
  ASSERT_EQ(p.Call({"WAIT", "1", "5000"}).integer, 1);
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(r.Call({"EXISTS", "shared"}).integer, 1);
}

TEST(ScriptingReplication, TheAofReplaysTheEffects) {
  ServerProcess s(Kind::kKvstore, {"--appendonly", "yes", "--appendfsync", "always"});
  RespClient c(s.port());
  ASSERT_NO_FATAL_FAILURE(Workload(c));
  // REPL_NONE keeps the local write from the AOF too: it does not come back.
  ASSERT_EQ(c.Call({"DEL", "local"}).integer, 1);
  std::string digest = c.Call({"DEBUG", "DIGEST"}).str;
  ASSERT_EQ(s.Stop(), 0);
  ServerProcess again(Kind::kKvstore, {"--dir", s.dir(), "--appendonly", "yes"});
  RespClient a(again.port());
  EXPECT_EQ(a.Call({"DEBUG", "DIGEST"}).str, digest);
  if (!HaveRedisServer()) return;
  ASSERT_EQ(again.Stop(), 0);
  ServerProcess redis(Kind::kRedis, {"--dir", s.dir(), "--appendonly", "yes"});
  RespClient r(redis.port());
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, digest);
}

// INFO memory counts the interpreter's memory and the cached scripts as Redis does.
TEST(ScriptingInfo, MemoryCountsTheCache) {
  ServerProcess s(Kind::kKvstore);
  RespClient c(s.port());
  EXPECT_EQ(InfoField(c, "memory", "number_of_cached_scripts"), "0");
  c.Call({"SCRIPT", "LOAD", "return 1"});
  c.Call({"EVAL", "return 2", "0"});
  EXPECT_EQ(InfoField(c, "memory", "number_of_cached_scripts"), "2");
  EXPECT_GT(std::stoll(InfoField(c, "memory", "used_memory_lua")), 10000);
  EXPECT_GT(std::stoll(InfoField(c, "memory", "used_memory_scripts")), 0);
  EXPECT_EQ(InfoField(c, "memory", "used_memory_vm_eval"), InfoField(c, "memory", "used_memory_lua"));
  EXPECT_EQ(c.Call({"SCRIPT", "FLUSH"}).str, "OK");
  EXPECT_EQ(InfoField(c, "memory", "number_of_cached_scripts"), "0");
  EXPECT_EQ(InfoField(c, "memory", "used_memory_scripts_eval"), "0");
  // Functions: their own interpreter and libraries; used_memory_scripts counts both kinds.
  EXPECT_EQ(InfoField(c, "memory", "number_of_functions"), "0");
  int64_t fn_before = std::stoll(InfoField(c, "memory", "used_memory_functions"));
  ASSERT_EQ(c.Call({"FUNCTION", "LOAD",
                    "#!lua name=l\nredis.register_function('a', function() return 1 end) "
                    "redis.register_function('b', function() return 2 end)"})
                .str,
            "l");
  EXPECT_EQ(InfoField(c, "memory", "number_of_functions"), "2");
  int64_t fn_mem = std::stoll(InfoField(c, "memory", "used_memory_functions"));
  EXPECT_GT(fn_mem, fn_before);
  EXPECT_EQ(std::stoll(InfoField(c, "memory", "used_memory_scripts")), fn_mem);
  int64_t vm_fn = std::stoll(InfoField(c, "memory", "used_memory_vm_functions"));
  EXPECT_GT(vm_fn, 10000);
  EXPECT_EQ(std::stoll(InfoField(c, "memory", "used_memory_vm_total")),
            vm_fn + std::stoll(InfoField(c, "memory", "used_memory_vm_eval")));
}

// A redis.call that raises (an unknown command, a failing command, bad arguments) leaves nothing
// behind: a Lua error unwinds past the C function that raised it without running C++
// destructors, so nothing it built may live in its frame.
TEST(ScriptingMemory, RaisingCallsDoNotLeak) {
  ServerProcess s(Kind::kKvstore);
  RespClient c(s.port());
  ASSERT_EQ(c.Call({"SET", "str", "x"}).str, "OK");
  const std::vector<std::string> bodies = {
      "return redis.call('nosuchcommand', 'with an argument long enough to be on the heap')",
      "return redis.call('lpush', 'str', 'a value long enough to be kept on the heap')",
      "return redis.call('get')",
      "return redis.acl_check_cmd('nosuchcommand', 'another argument kept on the heap')",
  };
  auto round = [&] {
    std::string batch;
    for (int i = 0; i < 5000; i++) {
      for (const std::string& b : bodies) batch += RespClient::Encode({"EVAL", b, "0"});
    }
    c.SendRaw(batch);
    for (int i = 0; i < 5000 * static_cast<int>(bodies.size()); i++) {
      ASSERT_TRUE(c.Read().is_error());
    }
  };
  ASSERT_NO_FATAL_FAILURE(round());  // the script cache and buffers settle
  int64_t before = std::stoll(InfoField(c, "memory", "used_memory"));
  for (int r = 0; r < 5; r++) ASSERT_NO_FATAL_FAILURE(round());
  int64_t after = std::stoll(InfoField(c, "memory", "used_memory"));
  // 100,000 raising calls: leaking their arguments and errors would be several MB.
  EXPECT_LT(after - before, 1 << 20) << "before " << before << ", after " << after;
}

}  // namespace
}  // namespace kv::test
