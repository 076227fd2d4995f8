// Helpers shared by the RDMA replication tests: a starting dataset, a round of writes, an
// RDMA replica's options and the checks that a replica is linked and caught up. They live in
// their own namespace: tests/support/populate.h has a kv::test::Populate of its own.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/background_writes.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test::rdma_repl {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

inline void Populate(RespClient& c, int keys) {
  Cmd mset = {"MSET"};
  for (int i = 0; i < keys; i++) {
    mset.push_back("key:" + std::to_string(i));
    mset.push_back(std::string(200 + i % 100, static_cast<char>('a' + i % 26)));
  }
  ASSERT_EQ(c.Call(mset).str, "OK");
  c.Call({"RPUSH", "list", "a", "b"});
  c.Call({"ZADD", "zset", "1", "a"});
  c.Call({"HSET", "hash", "f", "v"});
  c.Call({"SADD", "set", "1", "x"});
}

inline void Writes(RespClient& c, int round) {
  std::string r = std::to_string(round);
  c.Call({"SET", "w:" + r, r, "EX", "1000"});
  c.Call({"INCR", "counter"});
  c.Call({"LPUSH", "list", r});
  c.Call({"ZINCRBY", "zset", "1", "m" + r});
  c.Call({"SELECT", "3"});
  c.Call({"HINCRBY", "hash", "n", "1"});
  c.Call({"SELECT", "0"});
}

// Lets the writes run a moment longer, stops them, and checks that the replica caught up with
// an identical dataset.
inline void ExpectCaughtUp(BackgroundWrites& writer, RespClient& p, RespClient& r,
                           const ServerProcess& replica) {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  writer.Stop();
  ASSERT_TRUE(InSync(p, r)) << replica.LogText();
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
}

inline Cmd RdmaReplica(const ServerProcess& primary, const std::string& provider,
                       const Cmd& extra = {}) {
  Cmd args = {"--replicaof",          "127.0.0.1 " + std::to_string(primary.port()),
              "--repl-transport",     "rdma",
              "--repl-rdma-provider", provider};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

inline bool LinkUp(RespClient& r) {
  return WaitFor([&] { return InfoField(r, "replication", "master_link_status") == "up"; });
}

}  // namespace kv::test::rdma_repl
