// One cluster node, and a pair of nodes moving a slot by hand, compared with redis-server in
// cluster mode reply for reply: the CLUSTER subcommands' replies and errors, what cluster mode
// refuses (SELECT, MOVE, SWAPDB, COPY's DB, REPLICAOF, FAILOVER), CROSSSLOT in commands,
// transactions and scripts, and the ASK, TRYAGAIN and ASKING dance of a slot being migrated.
// Node IDs and ports differ between the two servers; they are replaced by placeholders first.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Cmd = std::vector<std::string>;
using Kind = ServerProcess::Kind;

std::unique_ptr<ServerProcess> StartNode(Kind kind) {
  return std::make_unique<ServerProcess>(
      kind, std::vector<std::string>{"--cluster-enabled", "yes", "--cluster-config-file",
                                     "nodes.conf", "--cluster-node-timeout", "3000", "--save", ""});
}

// The reply with node IDs and the given ports replaced, so that two servers' replies compare.
std::string Normalize(std::string raw, const std::vector<std::string>& ids,
                      const std::vector<int>& ports) {
  for (size_t i = 0; i < ids.size(); i++) {
    raw = std::regex_replace(raw, std::regex(ids[i]), "<id" + std::to_string(i) + ">");
  }
  for (size_t i = 0; i < ports.size(); i++) {
    std::string p = std::to_string(ports[i]);
    raw = std::regex_replace(raw, std::regex(":" + p + "\r\n"),
                             ":<port" + std::to_string(i) + ">\r\n");
    raw = std::regex_replace(raw, std::regex(":" + p + "\\b"), ":<port" + std::to_string(i) + ">");
    raw =
        std::regex_replace(raw, std::regex("\\$" + std::to_string(p.size()) + "\r\n" + p + "\r\n"),
                           "<port" + std::to_string(i) + ">");
  }
  return raw;
}

bool StateOk(RespClient& c) {
  return c.Call({"CLUSTER", "INFO"}).str.find("cluster_state:ok") != std::string::npos;
}

class ClusterNode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    kv_ = StartNode(Kind::kKvstore);
    redis_ = StartNode(Kind::kRedis);
  }

  std::unique_ptr<ServerProcess> kv_, redis_;
};

TEST_F(ClusterNode, OneNodeAnswersAsRedis) {
  RespClient c(kv_->port()), r(redis_->port());
  std::string kid = c.Call({"CLUSTER", "MYID"}).str, rid = r.Call({"CLUSTER", "MYID"}).str;
  ASSERT_EQ(kid.size(), 40u);
  ASSERT_TRUE(std::regex_match(kid, std::regex("[0-9a-f]{40}")));
  // Before any slot: the node is down and serves no key.
  auto same = [&](const Cmd& cmd) {
    std::string a = Normalize(c.Call(cmd).raw, {kid}, {kv_->port()});
    std::string b = Normalize(r.Call(cmd).raw, {rid}, {redis_->port()});
    EXPECT_EQ(a, b) << cmd[0] << " " << (cmd.size() > 1 ? cmd[1] : "") << " "
                    << (cmd.size() > 2 ? cmd[2] : "");
  };
  same({"SET", "foo", "bar"});
  same({"GET", "foo"});
  same({"CLUSTER", "SLOTS"});
  for (const Cmd& cmd : std::vector<Cmd>{
           {"CLUSTER", "ADDSLOTS", "100000"},
           {"CLUSTER", "ADDSLOTS", "x"},
           {"CLUSTER", "ADDSLOTS", "5", "5"},
           {"CLUSTER", "ADDSLOTSRANGE", "10", "5"},
           {"CLUSTER", "ADDSLOTSRANGE", "10"},
           {"CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"},
           {"CLUSTER", "DELSLOTS", "100"},
           {"CLUSTER", "DELSLOTSRANGE", "100", "200"},
           {"CLUSTER", "COUNTKEYSINSLOT", "-1"},
           {"CLUSTER", "COUNTKEYSINSLOT", "x"},
           {"CLUSTER", "GETKEYSINSLOT", "1", "-1"},
           {"CLUSTER", "GETKEYSINSLOT", "16384", "1"},
           {"CLUSTER", "SETSLOT", "1", "MIGRATING", "abc"},
           {"CLUSTER", "SETSLOT", "1", "NODE", "abc"},
           {"CLUSTER", "SETSLOT", "1", "BOGUS"},
           {"CLUSTER", "SETSLOT", "99999", "STABLE"},
           {"CLUSTER", "FORGET", "abc"},
           {"CLUSTER", "REPLICATE", "abc"},
           {"CLUSTER", "REPLICAS", "abc"},
           {"CLUSTER", "COUNT-FAILURE-REPORTS", "abc"},
           {"CLUSTER", "MEET", "127.0.0.1", "x"},
           {"CLUSTER", "MEET", "nosuchhost", "7000"},
           {"CLUSTER", "MEET", "127.0.0.1", "7000", "y"},
           {"CLUSTER", "FAILOVER"},
           {"CLUSTER", "FAILOVER", "bogus"},
           {"CLUSTER", "RESET", "bogus"},
           {"CLUSTER", "SET-CONFIG-EPOCH", "-1"},
           {"CLUSTER", "KEYSLOT", "{user1000}.following"},
           {"CLUSTER", "NOSUCH"},
           {"SELECT", "1"},
           {"SELECT", "0"},
           {"SELECT", "x"},
           {"SWAPDB", "0", "1"},
           {"MOVE", "foo", "1"},
           {"COPY", "a", "b", "DB", "1"},
           {"REPLICAOF", "127.0.0.1", "1"},
           {"FAILOVER"},
           {"READONLY"},
           {"READWRITE"},
           {"ASKING"},
       }) {
    same(cmd);
  }
  same({"CLUSTER", "SET-CONFIG-EPOCH", "5"});
  same({"CLUSTER", "SET-CONFIG-EPOCH", "6"});
  same({"CLUSTER", "BUMPEPOCH"});
  same({"CLUSTER", "ADDSLOTSRANGE", "0", "8000", "8001", "16383"});
  same({"CLUSTER", "ADDSLOTS", "3"});
  ASSERT_TRUE(WaitFor([&] { return StateOk(c) && StateOk(r); }, 30000));
  same({"CLUSTER", "INFO"});
  same({"CLUSTER", "SLOTS"});
  same({"CLUSTER", "SHARDS"});
  // Per server: its own ID.
  auto same_own = [&](const Cmd& head) {
    Cmd a = head, b = head;
    a.push_back(kid);
    b.push_back(rid);
    EXPECT_EQ(Normalize(c.Call(a).raw, {kid}, {kv_->port()}),
              Normalize(r.Call(b).raw, {rid}, {redis_->port()}))
        << head[1];
  };
  same_own({"CLUSTER", "REPLICAS"});
  same_own({"CLUSTER", "COUNT-FAILURE-REPORTS"});
  same_own({"CLUSTER", "FORGET"});
  same_own({"CLUSTER", "REPLICATE"});
  std::string ts = std::to_string(c.Call({"CLUSTER", "KEYSLOT", "{t}"}).integer);
  same({"MSET", "{t}a", "1", "{t}b", "2"});
  same({"MSET", "a", "1", "b", "2"});
  same({"CLUSTER", "COUNTKEYSINSLOT", ts});
  same({"CLUSTER", "GETKEYSINSLOT", ts, "1"});
  same({"CLUSTER", "GETKEYSINSLOT", ts, "5"});
  same_own({"CLUSTER", "SETSLOT", ts, "NODE"});
  same_own({"CLUSTER", "SETSLOT", ts, "MIGRATING"});
  same_own({"CLUSTER", "SETSLOT", ts, "IMPORTING"});
  same({"CLUSTER", "SETSLOT", ts, "STABLE"});
  // Transactions: a cross-slot command is refused when queued, and EXEC aborts.
  same({"MULTI"});
  same({"SET", "{t}a", "x"});
  same({"MGET", "a", "b"});
  same({"EXEC"});
  // Scripts: declared keys must share a slot; keys a script reaches are checked too, unless it
  // runs in the compatible mode (no shebang), which may cross slots.
  same({"EVAL", "return 1", "2", "a", "b"});
  same({"EVAL", "return redis.call('mget', KEYS[1], 'b')", "1", "a"});
  same({"EVAL", "#!lua\nreturn redis.call('mget', KEYS[1], 'b')", "1", "a"});
  same({"EVAL", "#!lua\nredis.call('get', KEYS[1]) return redis.call('get', 'b')", "1", "a"});
  same({"EVAL",
        "#!lua flags=allow-cross-slot-keys\nredis.call('get', KEYS[1]) return redis.call('get', "
        "'b')",
        "1", "a"});
  same({"EVAL", "#!lua flags=no-cluster\nreturn 1", "0"});
  same({"CLUSTER", "FLUSHSLOTS"});
  same({"CLUSTER", "RESET"});
  same({"FLUSHALL"});
  same({"CLUSTER", "RESET", "SOFT"});
  same({"CLUSTER", "INFO"});
  // RESET HARD gives the node a new name.
  same({"CLUSTER", "RESET", "HARD"});
  EXPECT_NE(c.Call({"CLUSTER", "MYID"}).str, kid);
  EXPECT_EQ(c.Call({"CLUSTER", "NODES"}).str.find(kid), std::string::npos);
}

// A client blocked on a key whose slot this node stops serving is unblocked with the error
// Redis gives: the cluster is down (full coverage required), the slot is not served (not
// required).
TEST_F(ClusterNode, BlockedClientsLeaveWhenTheirSlotGoes) {
  for (const char* coverage : {"yes", "no"}) {
    std::vector<std::string> replies;
    for (ServerProcess* p : {kv_.get(), redis_.get()}) {
      RespClient admin(p->port()), blocked(p->port());
      ASSERT_EQ(admin.Call({"CONFIG", "SET", "cluster-require-full-coverage", coverage}).raw,
                "+OK\r\n");
      admin.Call({"CLUSTER", "ADDSLOTSRANGE", "0", "16383"});
      ASSERT_TRUE(WaitFor([&] { return StateOk(admin); }, 30000));
      std::string slot = std::to_string(admin.Call({"CLUSTER", "KEYSLOT", "list"}).integer);
      blocked.Send({"BLPOP", "list", "0"});
      ASSERT_TRUE(WaitFor([&] { return InfoInt(admin, "clients", "blocked_clients") == 1; }));
      ASSERT_EQ(admin.Call({"CLUSTER", "DELSLOTS", slot}).raw, "+OK\r\n");
      replies.push_back(blocked.Read().raw);
      admin.Call({"CLUSTER", "FLUSHSLOTS"});
    }
    EXPECT_EQ(replies[0], replies[1]) << coverage;
    EXPECT_EQ(replies[1], std::string(coverage) == std::string("yes")
                              ? "-CLUSTERDOWN The cluster is down\r\n"
                              : "-CLUSTERDOWN Hash slot not served\r\n");
  }
}

// Subscribers of a shard channel whose slot the node stops serving are let go with a
// sunsubscribe message, as Redis tells them; their other shard channels stay.
TEST_F(ClusterNode, ShardSubscribersLeaveWithTheirSlot) {
  std::vector<std::string> got;
  for (ServerProcess* p : {kv_.get(), redis_.get()}) {
    RespClient admin(p->port()), sub(p->port());
    ASSERT_EQ(admin.Call({"CONFIG", "SET", "cluster-require-full-coverage", "no"}).raw, "+OK\r\n");
    admin.Call({"CLUSTER", "ADDSLOTSRANGE", "0", "16383"});
    ASSERT_TRUE(WaitFor([&] { return StateOk(admin); }, 30000));
    got.push_back(sub.Call({"SSUBSCRIBE", "news"}).raw);
    got.push_back(sub.Call({"SSUBSCRIBE", "sports"}).raw);
    std::string slot = std::to_string(admin.Call({"CLUSTER", "KEYSLOT", "news"}).integer);
    got.push_back(admin.Call({"CLUSTER", "DELSLOTS", slot}).raw);
    got.push_back(sub.Read().raw);
    got.push_back(admin.Call({"SPUBLISH", "sports", "goal"}).raw);
    got.push_back(sub.Read().raw);
    got.push_back(admin.Call({"SPUBLISH", "news", "x"}).raw);
  }
  ASSERT_EQ(got.size(), 14u);
  for (size_t i = 0; i < 7; i++) EXPECT_EQ(got[i], got[i + 7]) << i;
  EXPECT_EQ(got[3], "*3\r\n$12\r\nsunsubscribe\r\n$4\r\nnews\r\n:1\r\n");
}

// A cluster replica's CONFIG REWRITE writes no replicaof line (nodes.conf says whom it follows),
// and it restarts from its files as the same replica, as a redis-server replica does.
TEST_F(ClusterNode, AReplicaRestartsAsAReplica) {
  for (ServerProcess* primary : {kv_.get(), redis_.get()}) {
    Kind kind = primary == kv_.get() ? Kind::kKvstore : Kind::kRedis;
    SCOPED_TRACE(kind == Kind::kKvstore ? "kvstore" : "redis");
    char tmpl[] = "/tmp/kv_cluster_conf_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    std::string conf = std::string(tmpl) + "/replica.conf";
    {
      std::ofstream f(conf);
      f << "cluster-enabled yes\ncluster-config-file nodes.conf\ncluster-node-timeout 3000\n";
    }
    ServerProcess replica(kind, {conf, "--save", ""});
    RespClient p(primary->port()), r(replica.port());
    std::string pid = p.Call({"CLUSTER", "MYID"}).str;
    ASSERT_EQ(p.Call({"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}).raw, "+OK\r\n");
    ASSERT_EQ(r.Call({"CLUSTER", "MEET", "127.0.0.1", std::to_string(primary->port())}).raw,
              "+OK\r\n");
    ASSERT_TRUE(WaitFor([&] {
      std::string n = r.Call({"CLUSTER", "NODES"}).str;
      return n.find(pid) != std::string::npos && n.find("handshake") == std::string::npos;
    }));
    ASSERT_EQ(r.Call({"CLUSTER", "REPLICATE", pid}).raw, "+OK\r\n");
    ASSERT_TRUE(WaitFor([&] { return StateOk(p); }, 30000));
    ASSERT_EQ(p.Call({"SET", "k", "v"}).raw, "+OK\r\n");
    auto synced = [&](RespClient& x) {
      x.Call({"READONLY"});
      return InfoField(x, "replication", "master_link_status") == "up" &&
             x.Call({"GET", "k"}).str == "v";
    };
    ASSERT_TRUE(WaitFor([&] { return synced(r); }, 30000)) << replica.LogText();
    ASSERT_EQ(r.Call({"CONFIG", "REWRITE"}).raw, "+OK\r\n");
    std::ifstream in(conf);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("replicaof"), std::string::npos) << text;
    EXPECT_EQ(text.find("slaveof"), std::string::npos) << text;
    ASSERT_TRUE(replica.Restart()) << replica.LogText();
    RespClient r2(replica.port());
    EXPECT_TRUE(WaitFor([&] { return synced(r2); }, 30000)) << replica.LogText();
    EXPECT_NE(r2.Call({"CLUSTER", "NODES"}).str.find("myself,slave " + pid), std::string::npos);
    p.Call({"CLUSTER", "RESET", "SOFT"});
    p.Call({"FLUSHALL"});
    p.Call({"CLUSTER", "RESET", "SOFT"});
    [[maybe_unused]] int rc = system(("rm -rf '" + std::string(tmpl) + "'").c_str());
  }
}

// INFO's dump_payload_sanitizations counts the RESTOREs of packed values (listpacks, intsets,
// quicklists, streams) that sanitize-dump-payload asks to check, as Redis counts them (Redis'
// cluster tests check that migrations skip them with the default, "no").
TEST_F(ClusterNode, DumpSanitizationsCountAsRedis) {
  std::vector<std::string> got;
  for (ServerProcess* p : {kv_.get(), redis_.get()}) {
    RespClient c(p->port());
    c.Call({"CLUSTER", "ADDSLOTSRANGE", "0", "16383"});
    ASSERT_TRUE(WaitFor([&] { return StateOk(c); }, 30000));
    c.Call({"HSET", "{t}h", "a", "1"});
    c.Call({"SET", "{t}x", "1"});
    c.Call({"SADD", "{t}s", "1", "2"});
    c.Call({"XADD", "{t}st", "*", "a", "1"});
    for (const char* mode : {"no", "yes", "clients"}) {
      c.Call({"CONFIG", "SET", "sanitize-dump-payload", mode});
      for (const char* k : {"{t}h", "{t}x", "{t}s", "{t}st"}) {
        std::string payload = c.Call({"DUMP", k}).str;
        c.Call({"RESTORE", std::string(k) + mode, "0", payload});
      }
      got.push_back(InfoField(c, "stats", "dump_payload_sanitizations"));
    }
  }
  EXPECT_EQ(got, (std::vector<std::string>{"0", "3", "6", "0", "3", "6"}));
}

// A slot moved by hand from one node to the other (what redis-cli --cluster reshard does),
// once from kvstore to redis-server and once the other way: ASK for keys already gone, the
// source's answers and the target's ASKING and TRYAGAIN replies, then MOVED once it is done.
TEST_F(ClusterNode, SlotMigrationRedirectsAsRedisBothWays) {
  RespClient c(kv_->port()), r(redis_->port());
  std::string kid = c.Call({"CLUSTER", "MYID"}).str, rid = r.Call({"CLUSTER", "MYID"}).str;
  ASSERT_EQ(c.Call({"CLUSTER", "ADDSLOTSRANGE", "0", "8191"}).raw, "+OK\r\n");
  ASSERT_EQ(r.Call({"CLUSTER", "ADDSLOTSRANGE", "8192", "16383"}).raw, "+OK\r\n");
  ASSERT_EQ(c.Call({"CLUSTER", "MEET", "127.0.0.1", std::to_string(redis_->port())}).raw,
            "+OK\r\n");
  auto converged = [&] {
    for (RespClient* x : {&c, &r}) {
      Reply n = x->Call({"CLUSTER", "NODES"});
      if (n.str.find(kid) == std::string::npos || n.str.find(rid) == std::string::npos ||
          n.str.find("handshake") != std::string::npos || !StateOk(*x)) {
        return false;
      }
    }
    return true;
  };
  ASSERT_TRUE(WaitFor(converged, 30000)) << c.Call({"CLUSTER", "NODES"}).str;
  std::vector<std::string> ids{kid, rid};
  std::vector<int> ports{kv_->port(), redis_->port()};
  struct Dir {
    RespClient* src;
    RespClient* dst;
    std::string src_id, dst_id, tag;
  };
  // A hash tag of a slot of each node.
  std::string kv_tag, redis_tag;
  for (int i = 0; kv_tag.empty() || redis_tag.empty(); i++) {
    std::string tag = "{x" + std::to_string(i) + "}";
    int64_t slot = c.Call({"CLUSTER", "KEYSLOT", tag}).integer;
    (slot < 8192 ? kv_tag : redis_tag) = tag;
  }
  for (const Dir& d : {Dir{&r, &c, rid, kid, "{a}"}, Dir{&c, &r, kid, rid, "{b}"}}) {
    int slot = static_cast<int>(d.src->Call({"CLUSTER", "KEYSLOT", d.tag}).integer);
    std::string s = std::to_string(slot);
    ASSERT_EQ(d.src->Call({"MSET", d.tag + "1", "v1", d.tag + "2", "v2"}).raw, "+OK\r\n");
    auto raw = [&](RespClient* x, const Cmd& cmd) {
      return Normalize(x->Call(cmd).raw, ids, ports);
    };
    std::vector<std::string> got;
    got.push_back(raw(d.dst, {"CLUSTER", "SETSLOT", s, "IMPORTING", d.src_id}));
    got.push_back(raw(d.src, {"CLUSTER", "SETSLOT", s, "MIGRATING", d.dst_id}));
    got.push_back(raw(
        d.src, {"MIGRATE", "127.0.0.1", std::to_string(d.dst == &c ? kv_->port() : redis_->port()),
                "", "0", "5000", "KEYS", d.tag + "1"}));
    got.push_back(raw(d.src, {"GET", d.tag + "1"}));                // gone: ASK
    got.push_back(raw(d.src, {"GET", d.tag + "2"}));                // still here
    got.push_back(raw(d.src, {"MGET", d.tag + "1", d.tag + "2"}));  // one gone: TRYAGAIN
    got.push_back(raw(d.dst, {"GET", d.tag + "1"}));                // MOVED without ASKING
    got.push_back(raw(d.dst, {"ASKING"}));
    got.push_back(raw(d.dst, {"GET", d.tag + "1"}));  // served
    got.push_back(raw(d.dst, {"GET", d.tag + "1"}));  // ASKING lasted one command
    got.push_back(raw(d.dst, {"ASKING"}));
    got.push_back(raw(d.dst, {"MGET", d.tag + "1", d.tag + "2"}));  // TRYAGAIN
    got.push_back(raw(d.dst, {"RESTORE-ASKING", d.tag + "9", "0", "bad"}));
    got.push_back(raw(
        d.src, {"MIGRATE", "127.0.0.1", std::to_string(d.dst == &c ? kv_->port() : redis_->port()),
                "", "0", "5000", "KEYS", d.tag + "2"}));
    got.push_back(raw(d.dst, {"CLUSTER", "SETSLOT", s, "NODE", d.dst_id}));
    got.push_back(raw(d.src, {"CLUSTER", "SETSLOT", s, "NODE", d.dst_id}));
    got.push_back(raw(d.src, {"GET", d.tag + "1"}));  // MOVED
    got.push_back(raw(d.dst, {"MGET", d.tag + "1", d.tag + "2"}));
    // The expected replies: what each step answers on Redis (source and target alike).
    std::string ask = "-ASK " + s + " 127.0.0.1:<port" + (d.dst == &c ? "0" : "1") + ">\r\n";
    std::string moved_to_src =
        "-MOVED " + s + " 127.0.0.1:<port" + (d.src == &c ? "0" : "1") + ">\r\n";
    std::string moved_to_dst =
        "-MOVED " + s + " 127.0.0.1:<port" + (d.dst == &c ? "0" : "1") + ">\r\n";
    std::string tryagain = "-TRYAGAIN Multiple keys request during rehashing of slot\r\n";
    std::vector<std::string> want = {"+OK\r\n",
                                     "+OK\r\n",
                                     "+OK\r\n",
                                     ask,
                                     "$2\r\nv2\r\n",
                                     tryagain,
                                     moved_to_src,
                                     "+OK\r\n",
                                     "$2\r\nv1\r\n",
                                     moved_to_src,
                                     "+OK\r\n",
                                     "-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
                                     "-ERR DUMP payload version or checksum are wrong\r\n",
                                     "+OK\r\n",
                                     "+OK\r\n",
                                     "+OK\r\n",
                                     moved_to_dst,
                                     "*2\r\n$2\r\nv1\r\n$2\r\nv2\r\n"};
    EXPECT_EQ(got, want) << "from " << (d.src == &c ? "kvstore" : "redis");
  }
}

}  // namespace
}  // namespace kv::test
