// The configuration forms Redis users write, checked against redis-server as the oracle:
// `replicaof HOST PORT` (and `slaveof`) in a config file and as two arguments on the command
// line; REPLICAOF at runtime reflected in CONFIG GET replicaof and written by CONFIG REWRITE
// (which Sentinel runs after every failover), so a node restarted from its file rejoins the
// primary it followed last; a replica's log lines carry role letter S; daemonize and pidfile;
// the process title (set-proc-title, proc-title-template).
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// The replicaof directives of a config file, one string a line.
std::vector<std::string> ReplicaOfLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("replicaof", 0) == 0 || line.rfind("slaveof", 0) == 0) out.push_back(line);
  }
  return out;
}

std::string ConfigValue(RespClient& c, const std::string& name) {
  Reply r = c.Call({"CONFIG", "GET", name});
  return r.elems.size() == 2 ? r.elems[1].str : "<" + r.Debug() + ">";
}

class RedisConfForms : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
  std::string Dir() {
    char tmpl[] = "/tmp/kvstore-conf-XXXXXX";
    dirs_.push_back(mkdtemp(tmpl));
    return dirs_.back();
  }
  void TearDown() override {
    for (const auto& d : dirs_) {
      [[maybe_unused]] int rc = system(("rm -rf '" + d + "'").c_str());
    }
  }
  std::vector<std::string> dirs_;
};

// `replicaof HOST PORT` and `slaveof HOST PORT` in a config file, and `--replicaof HOST PORT`
// as two arguments: each replica follows its primary.
TEST_P(RedisConfForms, ReplicaofAsRedisWritesIt) {
  ServerProcess primary(GetParam(), {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  p.Call({"SET", "k", "v"});
  std::string port = std::to_string(primary.port());
  std::string dir = Dir();
  for (const char* directive : {"replicaof", "slaveof"}) {
    SCOPED_TRACE(directive);
    std::string conf = dir + "/" + directive + ".conf";
    WriteFile(conf, std::string("# a replica\n") + directive + " 127.0.0.1 " + port + "\n");
    ServerProcess replica(GetParam(), {conf});
    RespClient r(replica.port());
    ASSERT_TRUE(InSync(p, r)) << replica.LogText();
    EXPECT_EQ(r.Call({"GET", "k"}).str, "v");
    EXPECT_EQ(ConfigValue(r, "replicaof"), "127.0.0.1 " + port);
    EXPECT_EQ(ConfigValue(r, "slaveof"), "127.0.0.1 " + port);
  }
  ServerProcess cli(GetParam(), {"--replicaof", "127.0.0.1", port});
  RespClient r(cli.port());
  ASSERT_TRUE(InSync(p, r)) << cli.LogText();
  EXPECT_EQ(ConfigValue(r, "replicaof"), "127.0.0.1 " + port);
  // A replica logs as one: role letter S (Redis' "pid:S").
  EXPECT_NE(cli.LogText().find(":S "), std::string::npos) << cli.LogText();
}

// A malformed replicaof line stops the server at startup, as in Redis.
TEST_P(RedisConfForms, ReplicaofWithoutAPortIsFatal) {
  std::string dir = Dir();
  WriteFile(dir + "/bad.conf", "replicaof 127.0.0.1\n");
  std::string bin = GetParam() == Kind::kKvstore ? BuildPath("kvstore-server")
                                                 : std::string("/usr/bin/redis-server");
  std::string cmd = bin + " " + dir + "/bad.conf --port " + std::to_string(FreePort()) +
                    " > " + dir + "/out.txt 2>&1";
  int rc = system(cmd.c_str());
  EXPECT_NE(rc, 0);
  EXPECT_NE(ReadFile(dir + "/out.txt").find("FATAL CONFIG FILE ERROR"), std::string::npos)
      << ReadFile(dir + "/out.txt");
}

// REPLICAOF at runtime is what CONFIG GET replicaof shows and what CONFIG REWRITE writes: after
// REPLICAOF NO ONE the line goes, after REPLICAOF another primary it names that one, and the
// node restarted from its file follows it.
TEST_P(RedisConfForms, RuntimeReplicaofIsWhatConfigRewriteWrites) {
  ServerProcess first(GetParam(), {"--repl-diskless-sync-delay", "0"});
  ServerProcess second(GetParam(), {"--repl-diskless-sync-delay", "0"});
  RespClient p1(first.port()), p2(second.port());
  p1.Call({"SET", "from", "first"});
  p2.Call({"SET", "from", "second"});
  std::string dir = Dir();
  std::string conf = dir + "/replica.conf";
  WriteFile(conf, "# managed by Sentinel\nreplicaof 127.0.0.1 " + std::to_string(first.port()) +
                      "\nappendonly no\n");
  std::string second_at = "127.0.0.1 " + std::to_string(second.port());
  // CONFIG REWRITE writes `dir` too: one that outlives the first process (Redis changes into
  // it while it reads the file, before the command line's options).
  const std::vector<std::string> args = {conf, "--dir", dir};
  {
    ServerProcess replica(GetParam(), args);
    RespClient r(replica.port());
    ASSERT_TRUE(InSync(p1, r)) << replica.LogText();

    ASSERT_EQ(r.Call({"REPLICAOF", "NO", "ONE"}).str, "OK");
    EXPECT_EQ(ConfigValue(r, "replicaof"), "");
    ASSERT_EQ(r.Call({"CONFIG", "REWRITE"}).str, "OK");
    EXPECT_TRUE(ReplicaOfLines(ReadFile(conf)).empty()) << ReadFile(conf);
    EXPECT_NE(ReadFile(conf).find("# managed by Sentinel"), std::string::npos);

    ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(second.port())}).str, "OK");
    EXPECT_EQ(ConfigValue(r, "replicaof"), second_at);
    ASSERT_TRUE(InSync(p2, r)) << replica.LogText();
    ASSERT_EQ(r.Call({"CONFIG", "REWRITE"}).str, "OK");
    EXPECT_EQ(ReplicaOfLines(ReadFile(conf)), std::vector<std::string>{"replicaof " + second_at})
        << ReadFile(conf);
  }
  // Restarted from the rewritten file: it follows the second primary.
  ServerProcess replica(GetParam(), args);
  RespClient r(replica.port());
  ASSERT_TRUE(InSync(p2, r)) << replica.LogText();
  EXPECT_EQ(r.Call({"GET", "from"}).str, "second");
  EXPECT_EQ(ConfigValue(r, "replicaof"), second_at);
}

// maxmemory-clients as a redis.conf line, a percentage of maxmemory or a size, and what CONFIG
// REWRITE writes for each form: the percentage as it was given, a size in Redis' units (as for
// every size: maxmemory stays 100mb).
TEST_P(RedisConfForms, MaxmemoryClientsLineAndItsRewrite) {
  std::string dir = Dir();
  std::string conf = dir + "/clients.conf";
  WriteFile(conf, "maxmemory 100mb\nmaxmemory-clients 5%\n");
  ServerProcess s(GetParam(), {conf, "--dir", dir});
  RespClient c(s.port());
  EXPECT_EQ(ConfigValue(c, "maxmemory-clients"), "5%");
  auto clients_lines = [&] {
    std::vector<std::string> out;
    std::istringstream in(ReadFile(conf));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("maxmemory-clients", 0) == 0) out.push_back(line);
    }
    return out;
  };
  ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory-clients", "10mb"}).str, "OK");
  ASSERT_EQ(c.Call({"CONFIG", "REWRITE"}).str, "OK");
  EXPECT_EQ(clients_lines(), std::vector<std::string>{"maxmemory-clients 10mb"}) << ReadFile(conf);
  ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory-clients", "7%"}).str, "OK");
  ASSERT_EQ(c.Call({"CONFIG", "REWRITE"}).str, "OK");
  EXPECT_EQ(clients_lines(), std::vector<std::string>{"maxmemory-clients 7%"}) << ReadFile(conf);
  ASSERT_EQ(c.Call({"CONFIG", "SET", "maxmemory-clients", "0"}).str, "OK");
  ASSERT_EQ(c.Call({"CONFIG", "REWRITE"}).str, "OK");
  // The default, on a line the file had: the line stays, with the value.
  EXPECT_EQ(clients_lines(), std::vector<std::string>{"maxmemory-clients 0"}) << ReadFile(conf);
  EXPECT_EQ(ReadFile(conf).rfind("maxmemory 100mb\n", 0), 0u) << ReadFile(conf);
}

// daemonize yes with a pidfile, as Debian's redis.conf runs the server: the command returns at
// once, the daemon (a session leader of its own) writes its pid to the file, serves, and removes
// the file when it shuts down.
TEST_P(RedisConfForms, DaemonizeWritesThePidFileAndShutdownRemovesIt) {
  std::string dir = Dir();
  int port = FreePort();
  std::string pidfile = dir + "/server.pid";
  std::string bin = GetParam() == Kind::kKvstore ? BuildPath("kvstore-server")
                                                 : std::string("/usr/bin/redis-server");
  std::string cmd = bin + " --port " + std::to_string(port) + " --dir " + dir +
                    " --daemonize yes --pidfile " + pidfile + " --logfile " + dir +
                    "/server.log --save ''";
  ASSERT_EQ(system(cmd.c_str()), 0) << cmd;
  pid_t pid = 0;
  ASSERT_TRUE(WaitFor([&] {
    pid = std::atoi(ReadFile(pidfile).c_str());
    return pid > 0 && net::ConnectTcp("127.0.0.1", port, 200).ok();
  })) << ReadFile(dir + "/server.log");
  EXPECT_EQ(getsid(pid), pid) << "not in a session of its own";
  EXPECT_NE(getppid(), pid);
  {
    RespClient c(port);
    EXPECT_EQ(c.Call({"PING"}).str, "PONG");
    c.Send({"SHUTDOWN", "NOSAVE"});
    EXPECT_TRUE(c.WaitClosed(5000));
  }
  EXPECT_TRUE(WaitFor([&] { return kill(pid, 0) != 0 && access(pidfile.c_str(), F_OK) != 0; }))
      << "the pid file outlived the server";
}

// client-output-buffer-limit normal: a client whose reply would pass the hard limit is closed
// without it, and the server goes on serving the others.
TEST_P(RedisConfForms, NormalClientsOutputLimitClosesAClientPastIt) {
  ServerProcess server(GetParam());
  RespClient admin(server.port());
  const size_t kBig = 2 << 20;
  ASSERT_EQ(admin.Call({"SET", "big", std::string(kBig, 'x')}).str, "OK");
  ASSERT_EQ(admin.Call({"SET", "small", "v"}).str, "OK");
  ASSERT_EQ(admin.Call({"CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"}).str, "OK");
  Reply limits = admin.Call({"CONFIG", "GET", "client-output-buffer-limit"});
  ASSERT_EQ(limits.elems.size(), 2u);
  EXPECT_EQ(limits.elems[1].str.rfind("normal 1048576 0 0 ", 0), 0u) << limits.elems[1].str;
  RespClient c(server.port());
  EXPECT_EQ(c.Call({"GET", "small"}).str, "v");
  c.Send({"GET", "big"});
  std::string received;
  EXPECT_TRUE(c.WaitClosed(5000, &received));
  EXPECT_LT(received.size(), kBig) << "the whole reply went out";
  EXPECT_TRUE(WaitFor([&] {
    return server.LogText().find("overcoming of output buffer limits") != std::string::npos;
  })) << server.LogText();
  EXPECT_EQ(admin.Call({"GET", "small"}).str, "v");  // the others are served
  // The admin connection's own big reply is not exempt either.
  admin.Send({"GET", "big"});
  EXPECT_TRUE(admin.WaitClosed(5000));
  RespClient after(server.port());
  EXPECT_EQ(after.Call({"CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0"}).str, "OK");
  EXPECT_EQ(after.Call({"GET", "big"}).str.size(), kBig);
}

// replica-announce-ip and replica-announce-port: the primary lists the replica under them (in
// INFO and ROLE, where Sentinel finds replicas), for a primary of either kind.
TEST_P(RedisConfForms, ReplicaAnnouncesTheAddressItIsToldTo) {
  std::vector<Kind> primaries = {GetParam()};
  if (GetParam() != Kind::kRedis) primaries.push_back(Kind::kRedis);
  for (Kind primary_kind : primaries) {
    SCOPED_TRACE(primary_kind == Kind::kRedis ? "redis primary" : "kvstore primary");
    ServerProcess primary(primary_kind, {"--repl-diskless-sync-delay", "0"});
    RespClient p(primary.port());
    ServerProcess replica(GetParam(), {"--replicaof", "127.0.0.1", std::to_string(primary.port()),
                                       "--replica-announce-ip", "10.1.2.3",
                                       "--replica-announce-port", "1234"});
    RespClient r(replica.port());
    ASSERT_TRUE(InSync(p, r)) << replica.LogText();
    EXPECT_EQ(InfoField(p, "replication", "slave0").rfind("ip=10.1.2.3,port=1234,", 0), 0u)
        << InfoField(p, "replication", "slave0");
    // ROLE lists a replica once it is online, which may come a moment after its offset caught up.
    Reply role;
    EXPECT_TRUE(WaitFor([&] {
      role = p.Call({"ROLE"});
      return role.elems.size() == 3 && role.elems[2].elems.size() == 1;
    })) << role.Debug();
    ASSERT_EQ(role.elems.size(), 3u);
    ASSERT_EQ(role.elems[2].elems.size(), 1u);
    EXPECT_EQ(role.elems[2].elems[0].elems[0].str, "10.1.2.3");
    EXPECT_EQ(role.elems[2].elems[0].elems[1].str, "1234");
  }
}

// bind-source-addr: a replica connects to its primary from the address it is given, so the
// primary sees it there (in INFO and CLIENT LIST), for a primary of either kind.
TEST_P(RedisConfForms, ReplicaConnectsFromItsBindSourceAddr) {
  std::vector<Kind> primaries = {GetParam()};
  if (GetParam() != Kind::kRedis) primaries.push_back(Kind::kRedis);
  for (Kind primary_kind : primaries) {
    SCOPED_TRACE(primary_kind == Kind::kRedis ? "redis primary" : "kvstore primary");
    // Protected mode admits 127.0.0.1 and ::1 alone.
    ServerProcess primary(primary_kind,
                          {"--repl-diskless-sync-delay", "0", "--protected-mode", "no"});
    RespClient p(primary.port());
    ServerProcess replica(GetParam(), {"--replicaof", "127.0.0.1", std::to_string(primary.port()),
                                       "--bind-source-addr", "127.0.0.2"});
    RespClient r(replica.port());
    ASSERT_TRUE(InSync(p, r)) << replica.LogText();
    EXPECT_EQ(InfoField(p, "replication", "slave0").rfind("ip=127.0.0.2,", 0), 0u)
        << InfoField(p, "replication", "slave0");
    std::string replicas = p.Call({"CLIENT", "LIST", "TYPE", "replica"}).str;
    EXPECT_NE(replicas.find(" addr=127.0.0.2:"), std::string::npos) << replicas;
  }
}

// supervised systemd: once it serves, the server tells systemd READY=1 on $NOTIFY_SOCKET.
TEST_P(RedisConfForms, SupervisedSystemdSaysReadyOnTheNotifySocket) {
  std::string path = Dir() + "/notify.sock";
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  setenv("NOTIFY_SOCKET", path.c_str(), 1);
  ServerProcess server(GetParam(), {"--supervised", "systemd"});
  unsetenv("NOTIFY_SOCKET");
  // Status messages may come first (Redis says it is loading); READY=1 must follow.
  std::string said;
  pollfd pfd{fd, POLLIN, 0};
  while (said.find("READY=1") == std::string::npos && poll(&pfd, 1, 5000) == 1) {
    char buf[512];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    said.append(buf, n).append("|");
  }
  close(fd);
  EXPECT_NE(said.find("READY=1"), std::string::npos) << said << server.LogText();
  RespClient c(server.port());
  EXPECT_EQ(c.Call({"PING"}).str, "PONG");
}

// The command line /proc shows for `pid`, its NULs as spaces, trailing ones dropped.
std::string CmdLine(pid_t pid) {
  std::string s = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& ch : s) {
    if (ch == '\0') ch = ' ';
  }
  return s.substr(0, s.find_last_not_of(' ') + 1);
}

// A child process of `parent`, or 0.
pid_t ChildOf(pid_t parent) {
  std::ifstream list("/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) +
                     "/children");
  pid_t child = 0;
  if (list >> child) return child;
  // The fork may come from another of the server's threads: scan every process' parent.
  for (int pid = 2; pid < 4194304; pid++) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) continue;
    std::string line;
    std::getline(stat, line);
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t ppid;
    if (rest >> state >> ppid && ppid == parent) return pid;
  }
  return 0;
}

// set-proc-title and proc-title-template: ps shows the server, and its snapshot child, under
// the template's expansion; CONFIG SET changes it at once and refuses an unknown variable.
TEST_P(RedisConfForms, TheProcessTitleFollowsTheTemplate) {
  const bool kv = GetParam() == Kind::kKvstore;
  const std::string binary = kv ? BuildPath("kvstore-server") : "/usr/bin/redis-server";
  ServerProcess server(GetParam(), {"--bind", "127.0.0.1", "--rdb-key-save-delay", "100000"});
  const std::string port = std::to_string(server.port());
  EXPECT_TRUE(WaitFor([&] { return CmdLine(server.pid()) == binary + " 127.0.0.1:" + port; }))
      << CmdLine(server.pid());
  RespClient c(server.port());
  EXPECT_EQ(c.Call({"CONFIG", "SET", "proc-title-template", "kv{{ {port}:{tls-port} {title}"}).str,
            "OK");
  EXPECT_EQ(CmdLine(server.pid()), "kv{ " + port + ":0 " + binary);
  EXPECT_EQ(c.Call({"CONFIG", "SET", "proc-title-template", "{title} {bogus}"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'proc-title-template') - "
            "template format is invalid or contains unknown variables");
  EXPECT_TRUE(c.Call({"CONFIG", "SET", "proc-title-template", "{port"}).is_error());
  // A snapshot child shows its own name as {title}.
  ASSERT_EQ(c.Call({"CONFIG", "SET", "proc-title-template", "{title} {port}"}).str, "OK");
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "100"}).str, "OK");
  ASSERT_EQ(c.Call({"BGSAVE"}).str, "Background saving started");
  pid_t child = 0;
  EXPECT_TRUE(WaitFor([&] { return (child = ChildOf(server.pid())) > 0; }));
  const std::string child_title = kv ? "kvstore-rdb-bgsave " : "redis-rdb-bgsave ";
  EXPECT_TRUE(WaitFor([&] { return CmdLine(child) == child_title + port; })) << CmdLine(child);
  EXPECT_EQ(CmdLine(server.pid()), binary + " " + port);
  c.Send({"SHUTDOWN", "NOSAVE"});
  EXPECT_TRUE(c.WaitClosed(5000));
}

// set-proc-title no: the command line stays as it was started.
TEST_P(RedisConfForms, SetProcTitleNoKeepsTheCommandLine) {
  ServerProcess server(GetParam(), {"--set-proc-title", "no"});
  EXPECT_NE(CmdLine(server.pid()).find(" --port " + std::to_string(server.port())),
            std::string::npos)
      << CmdLine(server.pid());
}

INSTANTIATE_TEST_SUITE_P(Servers, RedisConfForms, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
