// Sentinel over kvstore, as users run it: a primary and two replicas, each started from its own
// redis.conf-style file, watched by three real Sentinels (`redis-server --sentinel`). The primary
// is killed with SIGKILL; the Sentinels promote a replica and repoint the other, and CONFIG
// REWRITE (which they send with every change) leaves each node's file with the new topology.
// Everything is then stopped and started again from its files: the nodes come back in the new
// layout, the old primary is turned into a replica of the new one, and no data is lost.
// redis-server nodes run the same test as the oracle.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/tls_certs.h"
#include "tests/support/wait.h"

extern char** environ;

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

// The replicaof lines of a config file.
std::vector<std::string> ReplicaOfLines(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("replicaof ", 0) == 0 || line.rfind("slaveof ", 0) == 0) out.push_back(line);
  }
  return out;
}

bool Answers(int port) { return net::ConnectTcp("127.0.0.1", port, 200).ok(); }

// One server process started from its config file alone, so that a restart reads back what
// CONFIG REWRITE wrote there.
class Node {
 public:
  // `auth`: "user password" that Connect() authenticates with, for nodes whose default user
  // is off. `tls`: the node listens on a TLS port alone (port 0) and replicates over TLS.
  Node(std::string binary, std::string dir, std::string conf_text, bool sentinel = false,
       std::string auth = "", bool tls = false)
      : binary_(std::move(binary)),
        dir_(std::move(dir)),
        sentinel_(sentinel),
        auth_(std::move(auth)),
        tls_(tls) {
    port_ = FreePort();
    conf_ = dir_ + "/server.conf";
    std::ofstream out(conf_);
    if (tls) {
      const TestCerts& c = Certs();
      out << "port 0\ntls-port " << port_ << "\ntls-replication yes\ntls-cert-file "
          << c.server_cert << "\ntls-key-file " << c.server_key << "\ntls-ca-cert-file "
          << c.ca_cert << "\n";
    } else {
      out << "port " << port_ << "\n";
    }
    out << "dir " << dir_ << "\nlogfile " << log() << "\n" << conf_text;
  }
  ~Node() { Kill(); }

  void Start() {
    std::vector<std::string> args = {binary_, conf_};
    if (sentinel_) args.emplace_back("--sentinel");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    ASSERT_TRUE(WaitFor([&] { return Answers(port_); })) << ReadFile(log());
  }
  // SHUTDOWN SAVE: the dataset is in the node's dump when it starts again.
  void Shutdown() {
    {
      auto c = Connect();
      c->Send({"SHUTDOWN", "SAVE"});
      c->WaitClosed(10000);
    }
    Reap();
  }
  void Terminate() {
    if (pid_ > 0) kill(pid_, SIGTERM);
    Reap();
  }
  void Kill() {
    if (pid_ > 0) kill(pid_, SIGKILL);
    Reap();
  }
  std::unique_ptr<RespClient> Connect() {
    std::unique_ptr<RespClient> c;
    if (tls_) {
      const TestCerts& certs = Certs();
      auto ctx =
          net::TlsContext::CreateClientOnly(certs.ca_cert, certs.client_cert, certs.client_key);
      std::string error;
      c = ctx.ok() ? RespClient::ConnectTls(port_, *ctx, &error) : nullptr;
      EXPECT_NE(c, nullptr) << error;
      if (c == nullptr) c = std::make_unique<RespClient>(port_);  // fails the calls, visibly
    } else {
      c = std::make_unique<RespClient>(port_);
    }
    if (!auth_.empty()) {
      size_t space = auth_.find(' ');
      EXPECT_EQ(c->Call({"AUTH", auth_.substr(0, space), auth_.substr(space + 1)}).str, "OK");
    }
    return c;
  }

  int port() const { return port_; }
  const std::string& conf() const { return conf_; }
  std::string log() const { return dir_ + "/server.log"; }

 private:
  void Reap() {
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string binary_, dir_, conf_;
  bool sentinel_;
  std::string auth_;
  bool tls_;
  int port_ = 0;
  pid_t pid_ = -1;
};

class SentinelFailover : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    char tmpl[] = "/tmp/kvstore-sentinel-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    nodes_.clear();
    sentinels_.clear();
    [[maybe_unused]] int rc = system(("rm -rf '" + root_ + "'").c_str());
  }
  std::string Dir(const std::string& name) {
    std::string d = root_ + "/" + name;
    mkdir(d.c_str(), 0700);
    return d;
  }
  // The port every Sentinel names as the primary (-1 until all agree).
  int AgreedPrimary() {
    int agreed = -1;
    for (auto& s : sentinels_) {
      Reply r = s->Connect()->Call({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "kv"});
      if (r.elems.size() != 2) return -1;
      int port = std::atoi(r.elems[1].str.c_str());
      if (agreed != -1 && port != agreed) return -1;
      agreed = port;
    }
    return agreed;
  }
  // Every Sentinel sees `replicas` replicas and the two other Sentinels.
  bool SentinelsSeeEveryone(size_t replicas) {
    for (auto& s : sentinels_) {
      auto c = s->Connect();
      if (c->Call({"SENTINEL", "REPLICAS", "kv"}).elems.size() != replicas) return false;
      if (c->Call({"SENTINEL", "SENTINELS", "kv"}).elems.size() != 2) return false;
    }
    return true;
  }
  // The node at `port` is a replica of `primary` with its link up and the primary's data.
  bool Follows(Node& replica, Node& primary) {
    if (!Answers(replica.port())) return false;
    auto r = replica.Connect();
    auto p = primary.Connect();
    return InfoField(*r, "replication", "master_port") == std::to_string(primary.port()) &&
           InSync(*p, *r) && r->Call({"GET", "written-before"}).str == "survives";
  }
  // A primary (nodes_[0]) and two replicas of it, each started from its own file with the
  // `common` lines (`auth` and `tls` as Node takes them), once the replicas have the primary's
  // "written-before".
  void StartGroup(const std::string& common, const std::string& auth = "", bool tls = false) {
    const std::string binary =
        GetParam() == Kind::kKvstore ? BuildPath("kvstore-server") : "/usr/bin/redis-server";
    nodes_.push_back(std::make_unique<Node>(binary, Dir("n0"), common, false, auth, tls));
    Node& first = *nodes_[0];
    for (int i = 1; i <= 2; i++) {
      nodes_.push_back(std::make_unique<Node>(
          binary, Dir("n" + std::to_string(i)),
          common + "replicaof 127.0.0.1 " + std::to_string(first.port()) + "\n", false, auth, tls));
    }
    for (auto& n : nodes_) ASSERT_NO_FATAL_FAILURE(n->Start());
    ASSERT_EQ(first.Connect()->Call({"SET", "written-before", "survives"}).str, "OK");
    ASSERT_TRUE(WaitFor([&] { return Follows(*nodes_[1], first) && Follows(*nodes_[2], first); },
                        30000, 100))
        << Logs();
  }
  // Kills the primary (nodes_[0]) and, once every Sentinel names the same new one, checks that
  // it is a primary and that the other replica follows it.
  void FailOver(Node** primary, Node** other) {
    int promoted = -1;
    ASSERT_NO_FATAL_FAILURE(KillAndAwaitPromotion(*nodes_[0], &promoted));
    *primary = nodes_[promoted == nodes_[1]->port() ? 1 : 2].get();
    *other = nodes_[promoted == nodes_[1]->port() ? 2 : 1].get();
    ASSERT_EQ(InfoField(*(*primary)->Connect(), "replication", "role"), "master");
    ASSERT_TRUE(WaitFor([&] { return Follows(**other, **primary); }, 30000, 100)) << Logs();
  }
  // Three Sentinels watching `first` as "kv" (with `extra` configuration lines), once each sees
  // the two replicas and the other Sentinels.
  void StartSentinels(Node& first, const std::string& extra, bool tls = false) {
    for (int i = 0; i < 3; i++) {
      sentinels_.push_back(std::make_unique<Node>(
          "/usr/bin/redis-server", Dir("s" + std::to_string(i)),
          "sentinel monitor kv 127.0.0.1 " + std::to_string(first.port()) + " 2\n" + extra +
              "sentinel down-after-milliseconds kv 1000\nsentinel failover-timeout kv 10000\n",
          /*sentinel=*/true, "", tls));
      ASSERT_NO_FATAL_FAILURE(sentinels_.back()->Start());
    }
    ASSERT_TRUE(WaitFor([&] { return SentinelsSeeEveryone(2); }, 30000, 200)) << Logs();
  }
  // Kills `first` and waits for every Sentinel to name the same new primary (*promoted).
  void KillAndAwaitPromotion(Node& first, int* promoted) {
    first.Kill();
    ASSERT_TRUE(WaitFor(
        [&] {
          *promoted = AgreedPrimary();
          return *promoted > 0 && *promoted != first.port();
        },
        60000, 200))
        << Logs();
  }
  std::string Logs() {
    std::string all;
    for (auto& n : nodes_) all += "---- " + n->log() + "\n" + ReadFile(n->log());
    for (auto& s : sentinels_) all += "---- " + s->log() + "\n" + ReadFile(s->log());
    return all;
  }

  std::string root_;
  std::vector<std::unique_ptr<Node>> nodes_, sentinels_;
};

TEST_P(SentinelFailover, KilledPrimaryIsReplacedAndEveryNodeRestartsInTheNewLayout) {
  ASSERT_NO_FATAL_FAILURE(
      StartGroup("save \"\"\nrepl-diskless-sync-delay 0\nenable-debug-command yes\n"));
  Node& first = *nodes_[0];
  ASSERT_EQ(first.Connect()->Call({"WAIT", "2", "5000"}).integer, 2);
  ASSERT_NO_FATAL_FAILURE(StartSentinels(first, ""));
  Node *p = nullptr, *o = nullptr;
  ASSERT_NO_FATAL_FAILURE(FailOver(&p, &o));
  Node& primary = *p;
  Node& other = *o;
  ASSERT_EQ(primary.Connect()->Call({"SET", "written-after", "too"}).str, "OK");

  // CONFIG REWRITE left the promoted node's file without a replicaof line and the other's
  // pointing at it.
  EXPECT_TRUE(WaitFor([&] { return ReplicaOfLines(primary.conf()).empty(); }, 10000))
      << ReadFile(primary.conf());
  const std::string follow = "replicaof 127.0.0.1 " + std::to_string(primary.port());
  EXPECT_TRUE(WaitFor([&] { return ReplicaOfLines(other.conf()) == std::vector{follow}; }, 10000))
      << ReadFile(other.conf());

  // Stop everything and start it again from the files.
  for (auto& s : sentinels_) s->Terminate();
  other.Shutdown();
  primary.Shutdown();
  // The data nodes first: Sentinels that came up first would count a node that is still
  // starting (slow on a loaded machine) as down after a second and fail over again.
  primary.Start();
  other.Start();
  first.Start();  // its file still says it is a primary: the Sentinels turn it into a replica
  for (auto& s : sentinels_) s->Start();
  ASSERT_TRUE(WaitFor([&] { return AgreedPrimary() == primary.port(); }, 30000, 200)) << Logs();
  EXPECT_EQ(InfoField(*primary.Connect(), "replication", "role"), "master");
  EXPECT_EQ(primary.Connect()->Call({"GET", "written-after"}).str, "too");
  EXPECT_TRUE(WaitFor([&] { return Follows(other, primary); }, 30000, 100)) << Logs();
  EXPECT_TRUE(WaitFor([&] { return Follows(first, primary); }, 60000, 200)) << Logs();
  EXPECT_TRUE(WaitFor([&] { return ReplicaOfLines(first.conf()) == std::vector{follow}; }, 10000))
      << ReadFile(first.conf());
  EXPECT_EQ(first.Connect()->Call({"GET", "written-after"}).str, "too");
  EXPECT_EQ(ReplicaOfLines(other.conf()), std::vector{follow});
  EXPECT_TRUE(ReplicaOfLines(primary.conf()).empty()) << ReadFile(primary.conf());
}

// The same failover where the nodes' default user is off: the replicas replicate as a user with
// only the replication rights (masteruser), and the Sentinels monitor as a user with the rights
// Redis' Sentinel docs list (sentinel auth-user).
TEST_P(SentinelFailover, UnderAclUsers) {
  const std::string common =
      "save \"\"\nrepl-diskless-sync-delay 0\n"
      "user default off\n"
      "user admin on >adminpw ~* &* +@all\n"
      "user repl on >rp +psync +replconf +ping\n"
      "user sentinel on >sp allchannels +multi +slaveof +ping +exec +subscribe +config|rewrite "
      "+role +publish +info +client|setname +client|kill +script|kill\n"
      "masteruser repl\nmasterauth rp\n";
  ASSERT_NO_FATAL_FAILURE(StartGroup(common, "admin adminpw"));
  Node& first = *nodes_[0];
  ASSERT_NO_FATAL_FAILURE(
      StartSentinels(first, "sentinel auth-user kv sentinel\nsentinel auth-pass kv sp\n"));
  Node *p = nullptr, *o = nullptr;
  ASSERT_NO_FATAL_FAILURE(FailOver(&p, &o));
  Node& primary = *p;
  Node& other = *o;
  // Nothing the Sentinels or the replicas sent was refused.
  for (Node* n : {&primary, &other}) {
    Reply log = n->Connect()->Call({"ACL", "LOG"});
    EXPECT_TRUE(log.elems.empty()) << log.raw;
  }
}

// The failover with TLS everywhere: the nodes listen on TLS ports alone and replicate over TLS
// (a replica announces its TLS port), and the Sentinels (TLS too) monitor, talk to each other
// and reconfigure the nodes through TLS.
TEST_P(SentinelFailover, OverTls) {
  ASSERT_NO_FATAL_FAILURE(StartGroup("save \"\"\nrepl-diskless-sync-delay 0\n", "", /*tls=*/true));
  Node& first = *nodes_[0];
  ASSERT_NO_FATAL_FAILURE(StartSentinels(first, "", /*tls=*/true));
  Node *p = nullptr, *o = nullptr;
  ASSERT_NO_FATAL_FAILURE(FailOver(&p, &o));
  Node& primary = *p;
  Node& other = *o;
  EXPECT_EQ(primary.Connect()->Call({"SET", "written-after", "too"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] {
    return other.Connect()->Call({"GET", "written-after"}).str == "too";
  })) << Logs();
}

INSTANTIATE_TEST_SUITE_P(Servers, SentinelFailover, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
