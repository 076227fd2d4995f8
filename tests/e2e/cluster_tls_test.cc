// Cluster mode over TLS, as Redis runs it with `tls-cluster yes` and `tls-replication yes`:
// kvstore and redis-server nodes in one cluster whose bus links, replication links and slot
// migrations all run over TLS. The plain ports stay open for the harness (redis-cli --cluster
// create over them), so the same cluster is seen two ways: a plain client gets the plain ports
// in CLUSTER NODES, SLOTS and -MOVED, a TLS client the TLS ones. The bus refuses a peer that
// does not speak TLS or presents no certificate, on both kinds of node, and goes on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "net/tls.h"
#include "tests/support/cluster.h"
#include "tests/support/cluster_client.h"
#include "tests/support/resp_client.h"
#include "tests/support/tls_certs.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
constexpr Kind K = Kind::kKvstore;
constexpr Kind R = Kind::kRedis;

class ClusterTls : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer() || access("/usr/bin/redis-cli", X_OK) != 0) {
      GTEST_SKIP() << "redis-server or redis-cli is not installed";
    }
    // Primaries kvstore, kvstore, redis-server; replicas kvstore, kvstore, redis-server, one per
    // primary by redis-cli's choice: some kvstore replica has a kvstore primary. kvstore nodes
    // have a data link (shm here).
    cluster_ = std::make_unique<TestCluster>(std::vector<Kind>{K, K, R, K, K, R}, [this](Kind k) {
      int tls_port = FreePort();
      tls_ports_.push_back(tls_port);
      std::vector<std::string> args = TlsServerArgs(tls_port);
      args.insert(args.end(), {"--tls-cluster", "yes", "--tls-replication", "yes"});
      if (k == K) args.insert(args.end(), {"--repl-rdma-provider", "shm"});
      return args;
    });
    ASSERT_TRUE(cluster_->Create(1));
    auto ctx =
        net::TlsContext::CreateClientOnly(Certs().ca_cert, Certs().client_cert, Certs().client_key);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    ctx_ = *ctx;
  }

  void TearDown() override {
    if (HasFailure() && cluster_) {
      printf("The cluster at the end:\n%s\n", cluster_->Describe().c_str());
    }
  }

  std::unique_ptr<RespClient> Tls(size_t i) {
    std::string error;
    auto c = RespClient::ConnectTls(tls_ports_[i], ctx_, &error);
    EXPECT_NE(c, nullptr) << "node " << i << ": " << error;
    return c;
  }

  // redis-cli's TLS options, with the client certificate.
  static std::vector<std::string> CliTls() {
    return {"--tls", "--cacert",        Certs().ca_cert, "--cert", Certs().client_cert,
            "--key", Certs().client_key};
  }

  // Waits until node `from`'s newest slot migration ends; its state and message.
  std::string WaitMigration(size_t from) {
    RespClient c(cluster_->port(from));
    std::string state, message;
    WaitFor(
        [&] {
          Reply r = c.Call({"CLUSTER", "GETSLOTMIGRATIONS"});
          if (r.elems.empty()) return false;
          const Reply& job = r.elems.back();
          for (size_t f = 0; f + 1 < job.elems.size(); f += 2) {
            if (job.elems[f].str == "state") state = job.elems[f + 1].str;
            if (job.elems[f].str == "message") message = job.elems[f + 1].str;
          }
          return state == "success" || state == "failed" || state == "cancelled";
        },
        120000, 20);
    // (A success's message says the source is still deleting its copy.)
    return state == "success" || message.empty() ? state : state + ": " + message;
  }

  std::unique_ptr<TestCluster> cluster_;
  std::vector<int> tls_ports_;  // node i's TLS port
  std::shared_ptr<net::TlsContext> ctx_;
};

TEST_F(ClusterTls, MixedClusterRunsOverTls) {
  TestCluster& c = *cluster_;
  CliResult check = c.Check();
  ASSERT_EQ(check.status, 0) << check.output;

  // The same cluster seen over TLS: every node lists the TLS ports, and redis-cli --cluster
  // check over TLS reaches every node through them.
  std::map<int, int> tls_of;  // plain port -> TLS port
  for (size_t i = 0; i < c.size(); i++) tls_of[c.port(i)] = tls_ports_[i];
  for (size_t i = 0; i < c.size(); i++) {
    std::vector<ClusterNodeEntry> plain = c.Nodes(i);
    auto t = Tls(i);
    ASSERT_NE(t, nullptr);
    std::vector<ClusterNodeEntry> over_tls = ParseClusterNodes(t->Call({"CLUSTER", "NODES"}).str);
    ASSERT_EQ(over_tls.size(), 6u) << "node " << i;
    ASSERT_EQ(plain.size(), 6u) << "node " << i;
    for (size_t e = 0; e < plain.size(); e++) {
      EXPECT_EQ(over_tls[e].id, plain[e].id) << "node " << i;
      EXPECT_EQ(over_tls[e].port, tls_of[plain[e].port]) << "node " << i << ": " << plain[e].id;
    }
    Reply slots = t->Call({"CLUSTER", "SLOTS"});
    ASSERT_FALSE(slots.elems.empty()) << slots.Debug();
    for (const Reply& range : slots.elems) {
      ASSERT_GE(range.elems.size(), 3u) << slots.Debug();
      EXPECT_EQ(tls_of.count(range.elems[2].elems[1].integer), 0u) << "a plain port over TLS";
    }
  }
  std::vector<std::string> args = CliTls();
  args.insert(args.end(), {"--cluster", "check", "127.0.0.1:" + std::to_string(tls_ports_[0])});
  CliResult tls_check = RunRedisCli(args);
  EXPECT_EQ(tls_check.status, 0) << tls_check.output;
  EXPECT_NE(tls_check.output.find("[OK] All 16384 slots covered."), std::string::npos)
      << tls_check.output;

  // -MOVED names the port of the client's kind.
  std::string key;
  for (int i = 0; key.empty(); i++) {
    if (KeySlot("k" + std::to_string(i)) > 11000) key = "k" + std::to_string(i);
  }
  int slot = KeySlot(key);
  {
    RespClient plain(c.port(0));
    auto t = Tls(0);
    ASSERT_NE(t, nullptr);
    std::string moved_plain = plain.Call({"GET", key}).str;
    std::string moved_tls = t->Call({"GET", key}).str;
    ASSERT_EQ(moved_plain.rfind("MOVED " + std::to_string(slot) + " 127.0.0.1:", 0), 0u)
        << moved_plain;
    int plain_port = std::stoi(moved_plain.substr(moved_plain.rfind(':') + 1));
    EXPECT_EQ(moved_tls,
              "MOVED " + std::to_string(slot) + " 127.0.0.1:" + std::to_string(tls_of[plain_port]));
  }

  // Every replica replicates its primary through the primary's TLS port.
  int data_links = 0;
  for (size_t i = 0; i < c.size(); i++) {
    std::string info, want;
    bool over_data_link = false;
    EXPECT_TRUE(WaitFor(
        [&] {
          RespClient conn(c.port(i));
          info = conn.Call({"INFO", "replication"}).str;
          if (InfoTextField(info, "role") != "slave") return true;
          std::string primary_id;
          for (const ClusterNodeEntry& e : c.Nodes(i)) {
            if (e.HasFlag("myself")) primary_id = e.primary_id;
          }
          want = "?";
          size_t primary = c.size();
          for (size_t j = 0; j < c.size(); j++) {
            if (c.NodeId(j) == primary_id) primary = j;
          }
          if (primary == c.size()) return false;
          want = std::to_string(tls_ports_[primary]);
          // A kvstore replica of a kvstore primary moves the data over the data link, its
          // setup through the TLS connection; of a redis-server primary, over TLS alone.
          std::string transport = InfoTextField(info, "master_link_transport");
          if (c.kind(i) == K) want += c.kind(primary) == K ? " rdma" : " tcp";
          over_data_link = c.kind(i) == K && c.kind(primary) == K;
          if (c.kind(i) == K) transport = " " + transport;
          return InfoTextField(info, "master_port") + transport == want &&
                 InfoTextField(info, "master_link_status") == "up";
        },
        60000))
        << "node " << i << " wants master_port (and transport) " << want << ":\n"
        << info;
    data_links += over_data_link ? 1 : 0;
  }
  EXPECT_GE(data_links, 1) << "no kvstore replica of a kvstore primary";

  // Keys written, then whole slots moved over TLS control connections: kvstore to kvstore
  // (the data link's setup goes through the TLS connection), then kvstore to redis-server
  // (RESTORE-ASKING through it).
  ClusterClient cc(c.port(0));
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 200; i++) {
    std::string k = "tls:" + std::to_string(i);
    if (KeySlot(k) >= 100) continue;
    keys.push_back(k);
    ASSERT_EQ(cc.Call({"SET", k, "v" + std::to_string(i)}).raw, "+OK\r\n") << k;
  }
  RespClient n0(c.port(0));
  ASSERT_EQ(n0.Raw({"CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", "0", "99", "NODE", c.NodeId(1)}),
            "+OK\r\n");
  ASSERT_EQ(WaitMigration(0), "success");
  RespClient n1(c.port(1));
  ASSERT_EQ(n1.Raw({"CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", "0", "49", "NODE", c.NodeId(2)}),
            "+OK\r\n");
  ASSERT_EQ(WaitMigration(1), "success");
  ASSERT_TRUE(c.WaitHealthy());
  for (size_t i = 0; i < keys.size(); i++) {
    EXPECT_EQ(cc.Call({"GET", keys[i]}).str, "v" + keys[i].substr(4)) << keys[i];
  }
  // Node 2 served none of these keys' slots before.
  RespClient n2(c.port(2));
  int64_t on_redis = 0;
  for (const std::string& k : keys) on_redis += KeySlot(k) < 50 ? 1 : 0;
  EXPECT_EQ(n2.Call({"DBSIZE"}).integer, on_redis);

  // A manual failover, its votes over the TLS bus: node 0's replica takes over.
  size_t replica = c.size();
  std::string id0 = c.NodeId(0);
  for (const ClusterNodeEntry& e : c.Nodes(0)) {
    if (e.primary_id == id0) replica = static_cast<size_t>(c.IndexOf(e.port));
  }
  ASSERT_LT(replica, c.size());
  std::vector<std::string> slots0;
  for (const ClusterNodeEntry& e : c.Nodes(0)) {
    if (e.id == id0) slots0 = e.slots;
  }
  RespClient r(c.port(replica));
  ASSERT_EQ(r.Raw({"CLUSTER", "FAILOVER"}), "+OK\r\n");
  ASSERT_TRUE(c.WaitPrimary(replica, slots0));
  ASSERT_TRUE(c.WaitHealthy());
  for (size_t i = 0; i < keys.size(); i++) {
    EXPECT_EQ(cc.Call({"GET", keys[i]}).str, "v" + keys[i].substr(4)) << keys[i];
  }
  check = c.Check();
  EXPECT_EQ(check.status, 0) << check.output;
}

// The bus takes TLS peers with a certificate the CA signed, on kvstore as on redis-server:
// plain bytes, even a well-formed header, and a TLS peer with no certificate are dropped, and
// the node keeps its view and its links.
TEST_F(ClusterTls, TheBusRefusesPeersWithoutTls) {
  TestCluster& c = *cluster_;
  auto anonymous = net::TlsContext::CreateClientOnly(Certs().ca_cert);
  ASSERT_TRUE(anonymous.ok());
  // A PING's header as a plain-text node would send it.
  std::string header = std::string("RCmb") + std::string("\0\0\x08\xd0\0\x01\0\0", 8);
  header.resize(2256, '\0');
  for (size_t i : {size_t{0}, size_t{2}}) {  // kvstore, redis-server
    SCOPED_TRACE(c.kind(i) == K ? "kvstore" : "redis-server");
    RespClient plain(c.bus_port(i));
    plain.SendRaw(header);
    EXPECT_TRUE(plain.WaitClosed(30000));
    std::string error;
    auto no_cert = RespClient::ConnectTls(c.bus_port(i), *anonymous, &error, 30000);
    // TLS 1.3 ends the client's handshake before the server checks its certificate: the
    // server's alert, or its close, comes next.
    if (no_cert) {
      EXPECT_TRUE(no_cert->WaitClosed(30000));
    }
  }
  EXPECT_TRUE(c.WaitHealthy());
  CliResult check = c.Check();
  EXPECT_EQ(check.status, 0) << check.output;
}

}  // namespace
}  // namespace kv::test
