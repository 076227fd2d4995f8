// Cluster-aware client libraries against Redis Clusters with kvstore nodes, in two layouts: mixed
// (kvstore and Debian's redis-server 7.0 nodes, each kind both primary and replica) and all
// kvstore. redis-py's RedisCluster and ioredis' Cluster run a workload (keys across all slots,
// pipelines, MSET and MGET within a hash tag, INCR counters) while the test reshards 1000 slots
// from one primary to another and then fails a primary over with CLUSTER FAILOVER; the programs
// must finish without an error, and every key must end with its last written value.
// redis-benchmark --cluster runs SET and GET across the primaries. The programs are under
// tests/clients/; scripts/setup.sh installs the libraries (Debian's python3-redis, ioredis from
// npm).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

extern char** environ;

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
constexpr Kind K = Kind::kKvstore;
constexpr Kind R = Kind::kRedis;

const std::string kClients = std::string(KV_SOURCE_DIR) + "/tests/clients/";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The last `n` bytes of `text`.
std::string TailOf(const std::string& text, size_t n = 4000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// A directory of its own under /tmp, removed with everything in it when the object goes.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/kvstore-clients-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A program running beside the test (a client library's program, redis-benchmark), its stdout
// and stderr going to a file. Killed if it still runs when the object goes.
class Program {
 public:
  // args[0] is looked up on PATH when it has no '/'.
  Program(std::vector<std::string> args, std::string output_path)
      : output_path_(std::move(output_path)) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, output_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Program() {
    if (running()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  bool started() const { return pid_ > 0; }
  // False once it has exited (and was reaped).
  bool running() {
    if (pid_ <= 0 || exited_) return false;
    int st;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      exited_ = true;
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    return !exited_;
  }
  // Waits up to `timeout_ms` for it to exit; its exit status (128 + signal when killed by one),
  // or -1 when it still runs.
  int Wait(int timeout_ms) {
    WaitFor([&] { return !running(); }, timeout_ms, 50);
    return exited_ ? status_ : -1;
  }
  std::string Output() const { return ReadFile(output_path_); }

 private:
  std::string output_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = -1;
};

// ---- the fixture ----

class ClusterClients : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer() || access("/usr/bin/redis-cli", X_OK) != 0) {
      GTEST_SKIP() << "redis-server or redis-cli is not installed";
    }
    cluster_ = std::make_unique<TestCluster>(GetParam().kinds);
    ASSERT_TRUE(cluster_->Create(1));
  }

  void TearDown() override {
    if (HasFailure() && cluster_) {
      printf("The cluster at the end:\n%s\n", cluster_->Describe().c_str());
    }
  }

  // A primary of `kind` by node 0's view; `other_than` excluded; -1 when there is none.
  int PrimaryOfKind(Kind kind, int other_than = -1) {
    for (size_t p : cluster_->Primaries()) {
      if (cluster_->kind(p) == kind && static_cast<int>(p) != other_than) {
        return static_cast<int>(p);
      }
    }
    return -1;
  }

  // A replica of kind `kind` by node 0's view, preferring one whose primary is of the other kind
  // (so that the failover crosses kinds in the mixed layout); -1 when there is none.
  int ReplicaOfKind(Kind kind) {
    std::vector<ClusterNodeEntry> view = cluster_->Nodes(0);
    int found = -1;
    for (const ClusterNodeEntry& e : view) {
      int i = cluster_->IndexOf(e.port);
      if (e.is_primary() || i < 0 || cluster_->kind(i) != kind) continue;
      for (const ClusterNodeEntry& p : view) {
        int pi = cluster_->IndexOf(p.port);
        if (p.id == e.primary_id && pi >= 0 && cluster_->kind(pi) != kind) return i;
      }
      if (found < 0) found = i;
    }
    return found;
  }

  // The number of slots node `i` serves by node 0's view.
  int SlotsOf(size_t i) {
    int n = 0;
    for (const ClusterNodeEntry& e : cluster_->Nodes(0)) {
      if (e.port != cluster_->port(i)) continue;
      for (const std::string& s : e.slots) {
        size_t dash = s.find('-');
        n += dash == std::string::npos ? 1 : std::stoi(s.substr(dash + 1)) - std::stoi(s) + 1;
      }
    }
    return n;
  }

  // Whether node `via` sees node `i` as a primary that serves slots.
  bool ServesSlots(size_t i, size_t via) {
    for (const ClusterNodeEntry& e : cluster_->Nodes(via)) {
      if (e.port == cluster_->port(i)) return e.is_primary() && !e.slots.empty();
    }
    return false;
  }

  // Promotes replica `r` with CLUSTER FAILOVER (its primary hands over once it has caught up,
  // so no acknowledged write is lost) and waits for the cluster to agree again. A manual
  // failover that times out (5 s in Redis) is asked for again, twice at most.
  ::testing::AssertionResult Failover(size_t r) {
    for (int attempt = 0; attempt < 3 && !ServesSlots(r, r); attempt++) {
      Reply reply = RespClient(cluster_->port(r)).Call({"CLUSTER", "FAILOVER"});
      if (reply.raw != "+OK\r\n") {
        return ::testing::AssertionFailure()
               << "CLUSTER FAILOVER on node " << r << ": " << reply.Debug();
      }
      WaitFor([&] { return ServesSlots(r, r); }, 20000, 100);
    }
    if (!ServesSlots(r, r)) {
      return ::testing::AssertionFailure() << "node " << r << " was not promoted";
    }
    return cluster_->WaitHealthy();
  }

  // The index of replica `r`'s primary by node 0's view; -1 when there is none.
  int PrimaryOf(size_t r) {
    std::vector<ClusterNodeEntry> view = cluster_->Nodes(0);
    for (const ClusterNodeEntry& e : view) {
      if (e.port != cluster_->port(r)) continue;
      for (const ClusterNodeEntry& p : view) {
        if (p.id == e.primary_id) return cluster_->IndexOf(p.port);
      }
    }
    return -1;
  }

  // "node 3 (kvstore)", for the log.
  std::string Name(int i) {
    if (i < 0) return "no node";
    return "node " + std::to_string(i) +
           (cluster_->kind(i) == K ? " (kvstore)" : " (redis-server)");
  }

  // The sum of DBSIZE over the primaries.
  int64_t KeysOnPrimaries() {
    int64_t total = 0;
    for (size_t p : cluster_->Primaries()) {
      total += RespClient(cluster_->port(p)).Call({"DBSIZE"}).integer;
    }
    return total;
  }

  // Runs a client program `argv` + {seed port, work dir} (see tests/clients/*_cluster.*) while
  // resharding 1000 slots from a kvstore primary to a redis-server one (in the mixed layout) and
  // then failing over the primary of replica `promote`; expects it to finish cleanly.
  void RunAcrossReshardAndFailover(std::vector<std::string> argv, int promote);

  std::unique_ptr<TestCluster> cluster_;
};

void ClusterClients::RunAcrossReshardAndFailover(std::vector<std::string> argv, int promote) {
  TestCluster& c = *cluster_;
  ASSERT_GE(promote, 0);
  int from = PrimaryOfKind(K), to = PrimaryOfKind(R);
  if (to < 0) to = PrimaryOfKind(K, from);
  ASSERT_GE(from, 0);
  ASSERT_GE(to, 0);
  const int from_slots = SlotsOf(from), to_slots = SlotsOf(to);

  TempDir work;
  argv.push_back(std::to_string(c.port(0)));
  argv.push_back(work.path());
  Program program(argv, work / "output");
  ASSERT_TRUE(program.started()) << argv[0];
  auto rounds = [&] {
    std::string p = ReadFile(work / "progress");
    return p.empty() ? 0 : std::stoi(p);
  };
  // Waits for `n` more rounds of the workload (or for the program's end, a failure).
  auto wait_rounds = [&](int n) {
    int want = rounds() + n;
    return WaitFor([&] { return rounds() >= want || !program.running(); }, 120000, 50) &&
           program.running();
  };
  auto output = [&] { return "the program's output:\n" + TailOf(program.Output()); };

  // Every key written once, and the rounds begin.
  ASSERT_TRUE(
      WaitFor([&] { return access((work / "ready").c_str(), F_OK) == 0 || !program.running(); },
              120000, 50))
      << output();
  if (program.Wait(0) == 77) GTEST_SKIP() << program.Output();  // too old a library
  ASSERT_TRUE(program.running()) << output();
  ASSERT_TRUE(wait_rounds(1)) << output();

  // 1000 slots move while the program runs.
  int before = rounds();
  CliResult reshard = c.Reshard(from, to, 1000);
  int during = rounds() - before;
  ASSERT_EQ(reshard.status, 0) << reshard.output << output();
  ASSERT_TRUE(c.WaitHealthy());
  EXPECT_EQ(SlotsOf(from), from_slots - 1000);
  EXPECT_EQ(SlotsOf(to), to_slots + 1000);
  ASSERT_TRUE(wait_rounds(2)) << output();

  // A replica takes over its primary while the program runs.
  const int old_primary = PrimaryOf(promote);
  ASSERT_TRUE(Failover(promote)) << output();
  ASSERT_TRUE(wait_rounds(2)) << output();

  // The program stops, reads every key back and says what it did.
  int fd = open((work / "stop").c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  close(fd);
  int status = program.Wait(180000);
  std::string out = program.Output();
  ASSERT_EQ(status, 0) << out;
  EXPECT_TRUE(out.rfind("ok: ", 0) == 0) << out;
  printf("%s: 1000 slots from %s to %s during %d rounds; %s took over from %s\n%s", GetParam().name,
         Name(from).c_str(), Name(to).c_str(), during, Name(promote).c_str(),
         Name(old_primary).c_str(), out.c_str());

  // No key was left behind on a node that no longer serves its slot.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"((\d+) keys checked)"))) << out;
  EXPECT_EQ(KeysOnPrimaries(), std::stoll(m[1]));
  CliResult check = c.Check();
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_TRUE(Contains(check.output, "[OK] All 16384 slots covered.")) << check.output;
}

// ---- the tests ----

TEST_P(ClusterClients, RedisPyAcrossReshardAndFailover) {
  // A kvstore replica takes over (over a redis-server primary where there is one).
  RunAcrossReshardAndFailover({"/usr/bin/python3", kClients + "redis_py_cluster.py"},
                              ReplicaOfKind(K));
}

TEST_P(ClusterClients, IoredisAcrossReshardAndFailover) {
  // A redis-server replica takes over a kvstore primary in the mixed layout.
  int promote = ReplicaOfKind(R);
  RunAcrossReshardAndFailover({"node", kClients + "ioredis_cluster.js"},
                              promote >= 0 ? promote : ReplicaOfKind(K));
}

TEST_P(ClusterClients, RedisBenchmark) {
  TestCluster& c = *cluster_;
  TempDir work;
  Program bench({"/usr/bin/redis-benchmark", "--cluster", "-h", "127.0.0.1", "-p",
                 std::to_string(c.port(0)), "-t", "set,get", "-n", "20000", "-r", "100000", "-q"},
                work / "output");
  ASSERT_TRUE(bench.started());
  int status = bench.Wait(180000);
  std::string out = bench.Output();
  ASSERT_EQ(status, 0) << out;
  // One line per test once it is done ("SET: 12345.67 requests per second, p50=..."), after the
  // progress lines it overwrites with '\r'.
  for (const char* test : {"SET", "GET"}) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(
        out, m, std::regex(std::string(test) + R"(: [0-9.]+ requests per second[^\r\n]*)")))
        << test << " in:\n"
        << out;
    if (!m.empty()) printf("%s: %s\n", GetParam().name, m.str().c_str());
  }
  EXPECT_TRUE(Contains(out, "Cluster has 3 master nodes")) << out;
  for (const char* bad : {"ERR", "Error", "error", "MOVED", "ASK", "CLUSTERDOWN"}) {
    EXPECT_FALSE(Contains(out, bad)) << bad << " in:\n" << out;
  }
  // Each primary took its share of the keys.
  for (size_t p : c.Primaries()) {
    EXPECT_GT(RespClient(c.port(p)).Call({"DBSIZE"}).integer, 0) << "node " << p;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ClusterClients,
                         // Primaries K R K, replicas R K R.
                         ::testing::Values(Layout{"Mixed", {K, R, K, R, K, R}},
                                           Layout{"AllKvstore", {K, K, K, K, K, K}}),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace kv::test
