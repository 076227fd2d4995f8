// The bitmap commands end to end, on kvstore and redis-server side by side: the keyspace events
// each write fires (and the writes that change nothing fire none), and the writes replicated
// to a redis-server replica of kvstore, which ends with kvstore's digest.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

const std::vector<Cmd> kWrites = {
    {"SETBIT", "b", "7", "1"},    // new key: setbit
    {"SETBIT", "b", "7", "1"},    // nothing changes: no event
    {"SETBIT", "b", "100", "0"},  // grows: setbit
    {"BITFIELD", "f", "SET", "u8", "0", "200", "INCRBY", "i5", "100", "3", "GET", "u4", "0"},
    {"BITFIELD", "f", "GET", "u8", "0"},                              // read only: no event
    {"BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"},  // fails: no event
    {"BITFIELD", "f", "SET", "u8", "0", "200"},                       // the same value: no event
    {"BITOP", "OR", "dest", "b", "f"},                                // new key: set
    {"BITOP", "AND", "dest", "b", "f"},                               // set
    {"BITOP", "XOR", "dest", "none1", "none2"},                       // empty result: del
    {"SET", "s", "12"},
    {"SETBIT", "s", "0", "1"},  // an integer string made raw
};

// The events the writes fire, as "event:key" in order.
std::vector<std::string> Events(Kind kind) {
  ServerProcess s(kind, {"--notify-keyspace-events", "KEA"});
  RespClient sub(s.port()), c(s.port());
  sub.Call({"PSUBSCRIBE", "__keyevent@0__:*"});
  for (const Cmd& cmd : kWrites) EXPECT_FALSE(c.Call(cmd).is_error()) << cmd[0];
  c.Call({"SET", "end", "1"});
  std::vector<std::string> events;
  for (;;) {
    Reply r = sub.Read();
    std::string ev = r.elems[2].str.substr(r.elems[2].str.find(':') + 1);
    if (r.elems[3].str == "end") break;
    events.push_back(ev + ":" + r.elems[3].str);
  }
  EXPECT_EQ(c.Call({"OBJECT", "ENCODING", "s"}).str, "raw");
  return events;
}

TEST(Bitmaps, KeyspaceEventsMatchRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> ours = Events(Kind::kKvstore);
  EXPECT_EQ(ours, Events(Kind::kRedis));
  EXPECT_EQ(ours.size(), 8u);
}

TEST(Bitmaps, RedisReplicaOfKvstoreEndsIdentical) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess primary(Kind::kKvstore);
  ServerProcess replica(Kind::kRedis, {"--replicaof", "127.0.0.1", std::to_string(primary.port())});
  RespClient p(primary.port()), r(replica.port());
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "replication", "master_link_status") == "up"; }));
  for (const Cmd& cmd : kWrites) ASSERT_FALSE(p.Call(cmd).is_error()) << cmd[0];
  std::string digest = p.Call({"DEBUG", "DIGEST"}).str;
  EXPECT_TRUE(WaitFor([&] { return r.Call({"DEBUG", "DIGEST"}).str == digest; }));
  EXPECT_EQ(r.Call({"BITFIELD_RO", "f", "GET", "u8", "0"}).elems[0].integer,
            p.Call({"BITFIELD_RO", "f", "GET", "u8", "0"}).elems[0].integer);
}

}  // namespace
}  // namespace kv::test
