// The differential runner of the scripting tests (scripting_test.cc, functions_test.cc): one
// redis-server and one kvstore, the same commands on both over fresh connections, and kvstore's
// reply bytes expected to be redis-server's.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {

using Cmd = std::vector<std::string>;

// A command as a trace line (long scripts cut).
inline std::string Describe(const Cmd& cmd) {
  std::string out;
  for (const std::string& a : cmd) out += (out.empty() ? "" : " ") + a;
  return out.substr(0, 300);
}

// One redis-server and one kvstore for a TEST.
struct DiffServers {
  ServerProcess redis{ServerProcess::Kind::kRedis};
  ServerProcess ours{ServerProcess::Kind::kKvstore};
};

// Runs `cmds` on both servers (RESP3 after HELLO 3 when `resp3`), expecting the same bytes.
inline void CompareReplies(DiffServers& s, const std::vector<Cmd>& cmds, bool resp3) {
  SCOPED_TRACE(resp3 ? "RESP3 client" : "RESP2 client");
  ASSERT_TRUE(s.ours.Alive()) << "kvstore-server is not running; log:\n" << s.ours.LogText();
  ASSERT_TRUE(s.redis.Alive()) << "redis-server is not running";
  RespClient r(s.redis.port()), k(s.ours.port());
  if (resp3) {
    ASSERT_EQ(r.Call({"HELLO", "3"}).type, '%');
    ASSERT_EQ(k.Call({"HELLO", "3"}).type, '%');
  }
  for (const Cmd& cmd : cmds) {
    SCOPED_TRACE(Describe(cmd));
    Reply want = r.Call(cmd);
    ASSERT_NE(want.type, 0) << "redis-server did not answer";
    Reply got = k.Call(cmd);
    ASSERT_NE(got.type, 0) << "kvstore did not answer (alive: " << s.ours.Alive() << ")";
    EXPECT_EQ(got.raw, want.raw);
  }
}

}  // namespace kv::test
