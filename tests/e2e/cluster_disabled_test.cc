// Outside cluster mode (kvstore has none yet), the cluster commands answer as a redis-server
// without cluster-enabled does: CLUSTER and its subcommands, ASKING, READONLY and READWRITE
// refuse with "cluster support disabled", and RESTORE-ASKING (what MIGRATE sends to a cluster
// node) is RESTORE under another name. Replies compared byte for byte.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/resp_client.h"
#include "tests/support/suite_servers.h"

namespace kv::test {
namespace {

using Cmd = std::vector<std::string>;

class ClusterDisabled : public KvstoreAndRedisSuite {
 protected:
  void SetUp() override {
    if (!redis_) GTEST_SKIP() << "redis-server is not installed";
  }
};

TEST_F(ClusterDisabled, ClusterCommandsAnswerAsRedis) {
  RespClient c(kv_->port()), r(redis_->port());
  for (const Cmd& cmd : std::vector<Cmd>{
           {"CLUSTER", "INFO"},
           {"CLUSTER", "KEYSLOT", "foo"},
           {"CLUSTER", "HELP"},
           {"CLUSTER", "NODES"},
           {"CLUSTER", "SLOTS"},
           {"CLUSTER", "SHARDS"},
           {"CLUSTER", "MYID"},
           {"CLUSTER", "ADDSLOTS", "1", "2"},
           {"CLUSTER", "SETSLOT", "1", "STABLE"},
           {"CLUSTER", "MEET", "127.0.0.1", "7000"},
           {"CLUSTER", "RESET", "HARD"},
           {"CLUSTER", "NOSUCH"},
           {"CLUSTER"},
           {"CLUSTER", "KEYSLOT"},
           {"ASKING"},
           {"READONLY"},
           {"READWRITE"},
       }) {
    EXPECT_EQ(c.Call(cmd).raw, r.Call(cmd).raw) << cmd[0] << " " << (cmd.size() > 1 ? cmd[1] : "");
  }
}

TEST_F(ClusterDisabled, RestoreAskingIsRestore) {
  RespClient c(kv_->port()), r(redis_->port());
  for (RespClient* x : {&c, &r}) {
    x->Call({"DEL", "src", "copy"});
    x->Call({"RPUSH", "src", "a", "b", "c"});
  }
  // Both servers write the same DUMP payload for a small list.
  std::string payload = r.Call({"DUMP", "src"}).str;
  ASSERT_EQ(c.Call({"DUMP", "src"}).str, payload);
  for (const Cmd& cmd : std::vector<Cmd>{
           {"RESTORE-ASKING", "copy", "0", payload},
           {"LRANGE", "copy", "0", "-1"},
           {"RESTORE-ASKING", "copy", "0", payload},  // BUSYKEY
           {"RESTORE-ASKING", "copy", "0", payload, "REPLACE"},
           {"RESTORE-ASKING", "copy", "0", "not a payload", "REPLACE"},
           {"RESTORE-ASKING", "copy"},
           {"COMMAND", "GETKEYS", "RESTORE-ASKING", "copy", "0", payload},
       }) {
    EXPECT_EQ(c.Call(cmd).raw, r.Call(cmd).raw) << cmd[0] << " " << cmd[1];
  }
}

}  // namespace
}  // namespace kv::test
