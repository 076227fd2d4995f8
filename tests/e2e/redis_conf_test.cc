// The configuration forms Redis users write, checked against redis-server as the oracle:
// `replicaof HOST PORT` (and `slaveof`) in a config file and as two arguments on the command
// line; REPLICAOF at runtime reflected in CONFIG GET replicaof and written by CONFIG REWRITE
// (which Sentinel runs after every failover), so a node restarted from its file rejoins the
// primary it followed last; a replica's log lines carry role letter S; daemonize and pidfile.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

INSTANTIATE_TEST_SUITE_P(Servers, RedisConfForms, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
