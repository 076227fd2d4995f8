#include "tests/support/cluster.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>

#include "net/socket.h"
#include "tests/support/wait.h"

namespace kv::test {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kRedisCli[] = "/usr/bin/redis-cli";

// Forks and runs args[0] with stdin on /dev/null and stdout and stderr on `out_fd`. The argv is
// built before the fork so that the child only makes async-signal-safe calls: the test may have
// other threads.
pid_t SpawnTo(std::vector<std::string> args, int out_fd) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(null, 0);
    dup2(out_fd, 1);
    dup2(out_fd, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(null);
  return pid;
}

// `s` without its ANSI colour sequences (redis-cli --cluster colours its lines even in a pipe).
std::string WithoutColours(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t end = s.find('m', i);
      if (end != std::string::npos) {
        i = end;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::string Joined(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// The last `n` lines of `text`.
std::string Tail(const std::string& text, size_t n) {
  std::vector<std::string> lines = Split(text, '\n');
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - n);
  return Joined(lines, "\n");
}

// One node's view of one node, without what changes from one moment to the next (pings).
std::string Canonical(const ClusterNodeEntry& e) {
  std::vector<std::string> flags;
  for (const std::string& f : e.flags) {
    if (f != "myself") flags.push_back(f);
  }
  return e.id + " " + e.addr + " " + Joined(flags, ",") + " " + e.primary_id + " " +
         std::to_string(e.config_epoch) + " " + e.link + " " + Joined(e.slots, " ");
}

// The entry of the node at `port` in `view`; nullptr when it lists none.
const ClusterNodeEntry* ByPort(const std::vector<ClusterNodeEntry>& view, int port) {
  for (const ClusterNodeEntry& e : view) {
    if (e.port == port) return &e;
  }
  return nullptr;
}

// "" when `e` is neither failing nor in doubt, else why.
std::string Unsure(const ClusterNodeEntry& e) {
  for (const char* bad : {"fail", "fail?", "handshake", "noaddr"}) {
    if (e.HasFlag(bad)) return e.addr + " is " + bad;
  }
  return "";
}

}  // namespace

CliResult RunRedisCli(const std::vector<std::string>& args, int timeout_ms) {
  CliResult result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return result;
  std::vector<std::string> argv = {kRedisCli};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = SpawnTo(argv, fds[1]);
  close(fds[1]);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  bool timed_out = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[65536];
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;  // EOF: redis-cli is done (or closed its output)
    result.output.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  result.output = WithoutColours(result.output);
  if (timed_out) {
    result.output += "\n(redis-cli killed after " + std::to_string(timeout_ms) + " ms)\n";
  } else if (WIFEXITED(status)) {
    result.status = WEXITSTATUS(status);
  }
  return result;
}

std::vector<std::string> ClusterNodeArgs(int bus_port) {
  return {"--cluster-enabled",      "yes",  "--cluster-config-file", "nodes.conf",
          "--cluster-node-timeout", "2000", "--cluster-port",        std::to_string(bus_port)};
}

bool ClusterNodeEntry::HasFlag(const std::string& f) const {
  return std::find(flags.begin(), flags.end(), f) != flags.end();
}

std::vector<ClusterNodeEntry> ParseClusterNodes(const std::string& text) {
  std::vector<ClusterNodeEntry> out;
  for (const std::string& line : Split(text, '\n')) {
    std::vector<std::string> f =
        Split(line.back() == '\r' ? line.substr(0, line.size() - 1) : line, ' ');
    if (f.size() < 8) continue;
    ClusterNodeEntry e;
    e.id = f[0];
    e.addr = f[1];
    std::string hostport = e.addr.substr(0, e.addr.find('@'));
    size_t colon = hostport.rfind(':');
    if (colon != std::string::npos) e.port = atoi(hostport.c_str() + colon + 1);
    e.flags = Split(f[2], ',');
    e.primary_id = f[3];
    e.config_epoch = atoll(f[6].c_str());
    e.link = f[7];
    for (size_t i = 8; i < f.size(); i++) (f[i][0] == '[' ? e.open_slots : e.slots).push_back(f[i]);
    out.push_back(std::move(e));
  }
  return out;
}

TestCluster::TestCluster(const std::vector<Kind>& kinds,
                         const std::function<std::vector<std::string>(Kind)>& extra_args) {
  for (Kind k : kinds) {
    // Chosen just before the node starts, so that no other node's ports can be picked.
    int bus_port = FreePort();
    std::vector<std::string> args = ClusterNodeArgs(bus_port);
    if (extra_args) {
      std::vector<std::string> more = extra_args(k);
      args.insert(args.end(), more.begin(), more.end());
    }
    nodes_.push_back({k, bus_port, std::make_unique<ServerProcess>(k, std::move(args))});
  }
}

int TestCluster::IndexOf(int port) const {
  for (size_t i = 0; i < nodes_.size(); i++) {
    if (this->port(i) == port) return static_cast<int>(i);
  }
  return -1;
}

std::unique_ptr<RespClient> TestCluster::Connect(size_t i) {
  if (!node(i).Alive() || !net::ConnectTcp("127.0.0.1", port(i), 2000).ok()) return nullptr;
  return std::make_unique<RespClient>(port(i));
}

::testing::AssertionResult TestCluster::Create(int replicas) {
  std::vector<std::string> args = {"--cluster", "create"};
  for (size_t i = 0; i < size(); i++) args.push_back(Addr(i));
  args.insert(args.end(), {"--cluster-replicas", std::to_string(replicas), "--cluster-yes"});
  CliResult r = RunRedisCli(args);
  if (r.status != 0) {
    return ::testing::AssertionFailure()
           << "redis-cli --cluster create exited with " << r.status << ":\n"
           << r.output << Describe();
  }
  return WaitHealthy();
}

::testing::AssertionResult TestCluster::WaitHealthy(int timeout_ms) {
  std::string why;
  if (WaitFor([&] { return (why = Disagreement()).empty(); }, timeout_ms, 100)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "the cluster did not settle: " << why << "\n"
                                       << Describe();
}

std::string TestCluster::Disagreement() {
  std::string first_view;
  for (size_t i = 0; i < size(); i++) {
    auto c = Connect(i);
    if (!c) return Addr(i) + " is not running or refuses connections";
    std::string info = c->Call({"CLUSTER", "INFO"}).str;
    if (info.find("cluster_state:ok") == std::string::npos) {
      return Addr(i) + " CLUSTER INFO: " + info.substr(0, info.find('\n'));
    }
    std::string text = c->Call({"CLUSTER", "NODES"}).str;
    std::vector<ClusterNodeEntry> entries = ParseClusterNodes(text);
    std::set<std::string> ids;
    std::vector<std::string> lines;
    for (const ClusterNodeEntry& e : entries) {
      for (const char* bad : {"fail", "fail?", "handshake", "noaddr"}) {
        if (e.HasFlag(bad)) return Addr(i) + " sees " + e.addr + " " + bad;
      }
      if (e.link != "connected") return Addr(i) + " sees " + e.addr + " " + e.link;
      if (!e.open_slots.empty()) return Addr(i) + " has open slots " + Joined(e.open_slots, " ");
      if (IndexOf(e.port) < 0) return Addr(i) + " knows a stranger, " + e.addr;
      ids.insert(e.id);
      lines.push_back(Canonical(e));
    }
    if (ids.size() != size() || entries.size() != size()) {
      return Addr(i) + " knows " + std::to_string(entries.size()) + " nodes:\n" + text;
    }
    std::sort(lines.begin(), lines.end());
    std::string view = Joined(lines, "\n");
    if (i == 0) {
      first_view = view;
    } else if (view != first_view) {
      return "CLUSTER NODES of " + Addr(i) + ":\n" + view + "\ndiffers from " + Addr(0) + "'s:\n" +
             first_view;
    }
  }
  return "";
}

CliResult TestCluster::Check(size_t via) { return RunRedisCli({"--cluster", "check", Addr(via)}); }

CliResult TestCluster::Reshard(size_t from, size_t to, int slots, size_t via) {
  return RunRedisCli({"--cluster", "reshard", Addr(via), "--cluster-from", NodeId(from),
                      "--cluster-to", NodeId(to), "--cluster-slots", std::to_string(slots),
                      "--cluster-yes"});
}

std::string TestCluster::NodeId(size_t i) {
  auto c = Connect(i);
  return c ? c->Call({"CLUSTER", "MYID"}).str : "";
}

std::vector<ClusterNodeEntry> TestCluster::Nodes(size_t i) {
  auto c = Connect(i);
  return c ? ParseClusterNodes(c->Call({"CLUSTER", "NODES"}).str) : std::vector<ClusterNodeEntry>{};
}

std::vector<size_t> TestCluster::Primaries(size_t via) {
  std::vector<size_t> out;
  for (const ClusterNodeEntry& e : Nodes(via)) {
    int i = IndexOf(e.port);
    if (e.is_primary() && i >= 0) out.push_back(static_cast<size_t>(i));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string TestCluster::Describe() {
  std::string out;
  for (size_t i = 0; i < size(); i++) {
    out += "--- node " + std::to_string(i) + " (" +
           (kind(i) == Kind::kKvstore ? "kvstore" : "redis") + ", " + Addr(i) + ", bus " +
           std::to_string(nodes_[i].bus_port) + ")";
    auto c = Connect(i);
    out += c ? ", CLUSTER NODES:\n" + c->Call({"CLUSTER", "NODES"}).str : ", not answering\n";
    out += "log, last lines:\n" + Tail(node(i).LogText(), 25) + "\n";
  }
  return out;
}

void TestCluster::Kill(size_t i) {
  pid_t pid = node(i).pid();
  if (pid <= 0) return;
  kill(pid, SIGKILL);
  WaitFor([&] { return !node(i).Alive(); }, 10000, 10);
}

::testing::AssertionResult TestCluster::WaitEveryView(
    const std::string& what,
    const std::function<std::string(size_t, const std::vector<ClusterNodeEntry>&)>& want,
    int timeout_ms) {
  std::string why;
  auto content = [&] {
    for (size_t j = 0; j < size(); j++) {
      if (!node(j).Alive()) continue;
      auto c = Connect(j);
      if (!c) return (why = Addr(j) + " refuses connections"), false;
      why = want(j, ParseClusterNodes(c->Call({"CLUSTER", "NODES"}).str));
      if (!why.empty()) return (why = Addr(j) + ": " + why), false;
    }
    return true;
  };
  if (WaitFor(content, timeout_ms, 100)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "not every node sees " << what << ": " << why << "\n"
                                       << Describe();
}

::testing::AssertionResult TestCluster::WaitFailed(size_t i, int timeout_ms) {
  return WaitEveryView(
      Addr(i) + " failed",
      [&](size_t, const std::vector<ClusterNodeEntry>& view) -> std::string {
        const ClusterNodeEntry* e = ByPort(view, port(i));
        if (!e) return "it does not list " + Addr(i);
        return e->HasFlag("fail") ? "" : "flags " + Joined(e->flags, ",");
      },
      timeout_ms);
}

::testing::AssertionResult TestCluster::WaitPrimary(size_t i, const std::vector<std::string>& slots,
                                                    int timeout_ms) {
  return WaitEveryView(
      Addr(i) + " as the primary of " + Joined(slots, " "),
      [&](size_t j, const std::vector<ClusterNodeEntry>& view) -> std::string {
        const ClusterNodeEntry* e = ByPort(view, port(i));
        if (!e) return "it does not list " + Addr(i);
        if (!e->is_primary()) return "flags " + Joined(e->flags, ",");
        if (std::string unsure = Unsure(*e); !unsure.empty()) return unsure;
        if (e->slots != slots) return "slots " + Joined(e->slots, " ");
        auto c = Connect(j);
        std::string info = c ? c->Call({"CLUSTER", "INFO"}).str : "";
        return info.find("cluster_state:ok") != std::string::npos
                   ? ""
                   : "CLUSTER INFO: " + info.substr(0, info.find('\n'));
      },
      timeout_ms);
}

::testing::AssertionResult TestCluster::WaitReplicaOf(size_t replica, size_t primary,
                                                      int timeout_ms) {
  return WaitEveryView(
      Addr(replica) + " as a replica of " + Addr(primary),
      [&](size_t, const std::vector<ClusterNodeEntry>& view) -> std::string {
        const ClusterNodeEntry* r = ByPort(view, port(replica));
        const ClusterNodeEntry* p = ByPort(view, port(primary));
        if (!r || !p) return "it does not list both";
        if (!r->HasFlag("slave") || r->primary_id != p->id) {
          return "flags " + Joined(r->flags, ",") + ", primary " + r->primary_id;
        }
        return Unsure(*r);
      },
      timeout_ms);
}

}  // namespace kv::test
