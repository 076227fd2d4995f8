// How the errors of the commands a script calls are counted (INFO errorstats,
// total_error_replies, commandstats' failed and rejected calls), as Redis 7.0 counts them: a
// command refused inside a script (OOM, a write from EVAL_RO, an unknown command) counts as an
// error where it is refused, even when redis.pcall catches it; a command that fails counts as
// its own error; and the script that raises or returns such an error fails without counting it
// a second time. Each case runs on kvstore and redis-server (Redis' unit/scripting "Consistent
// eval error reporting"), and the two must agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Argv = std::vector<std::string>;

TEST(ScriptErrorStats, ACommandsErrorCountsOnceWhereItArose) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  struct Case {
    bool oom;  // with maxmemory 1
    Argv script;
  };
  const std::vector<Case> cases = {
      {true, {"EVAL", "return redis.call('set','x','y')", "1", "x"}},
      {true, {"EVAL", "local t = redis.pcall('set','x','y') return 1", "1", "x"}},
      {true, {"EVAL", "return redis.pcall('set','x','y')", "1", "x"}},
      {false, {"EVAL", "return redis.call('select',99)", "0"}},
      {false, {"EVAL", "local t = redis.pcall('select',99) return 1", "0"}},
      {false, {"EVAL_RO", "return redis.call('set','x','y')", "1", "x"}},
      {false, {"EVAL_RO", "local t = redis.pcall('set','x','y') return 1", "1", "x"}},
      {false, {"EVAL", "return redis.call('geoadd','Sicily','13.36','38.11','Palermo')", "0"}},
      {false, {"EVAL", "return redis.call('nosuchcommand')", "0"}},
      {false, {"EVAL", "local t = redis.pcall('nosuchcommand') return 1", "0"}},
      {false, {"EVAL", "return redis.call('get')", "0"}},
      {false, {"EVAL", "return redis.error_reply('MY own error')", "0"}},
  };
  std::vector<std::string> seen[2];
  int i = 0;
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    ServerProcess s(kind);
    RespClient c(s.port());
    ASSERT_EQ(c.Call({"SET", "Sicily", "1"}).str, "OK");
    for (const Case& k : cases) {
      c.Call({"CONFIG", "SET", "maxmemory", k.oom ? "1" : "0"});
      ASSERT_EQ(c.Call({"CONFIG", "RESETSTAT"}).str, "OK");
      seen[i].push_back(c.Call(k.script).raw);
      for (const auto& l : InfoLines(c, "errorstats", {"errorstat_"})) seen[i].push_back(l);
      for (const auto& l : InfoLines(c, "commandstats",
                                     {"cmdstat_eval", "cmdstat_set:", "cmdstat_select",
                                      "cmdstat_geoadd", "cmdstat_get:"})) {
        seen[i].push_back(l);
      }
      seen[i].push_back("total_error_replies:" + InfoField(c, "stats", "total_error_replies"));
    }
    i++;
  }
  // Redis' own figures for two of the cases, so that a change on its side is seen as such.
  auto has = [&](const std::string& line) {
    return std::find(seen[1].begin(), seen[1].end(), line) != seen[1].end();
  };
  EXPECT_TRUE(has("cmdstat_eval_ro:calls=1,rejected_calls=0,failed_calls=0")) << "redis changed";
  EXPECT_TRUE(has("errorstat_WRONGTYPE:count=1")) << "redis changed";
  // Compared line by line (gtest's container diff cuts long vectors short).
  for (size_t j = 0; j < std::max(seen[0].size(), seen[1].size()); j++) {
    EXPECT_EQ(j < seen[0].size() ? seen[0][j] : "(none)",
              j < seen[1].size() ? seen[1][j] : "(none)")
        << "line " << j;
  }
}

}  // namespace
}  // namespace kv::test
