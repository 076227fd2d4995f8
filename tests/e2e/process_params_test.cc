// The parameters that tune the process itself: syslog-enabled/-ident/-facility,
// oom-score-adj(-values), the cpulists, socket-mark-id, crash-memcheck-enabled and the shutdown
// ones. Each case runs against kvstore and Debian's redis-server where both can be watched the
// same way, reading what the kernel shows of the process (/proc, ss).
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

std::string KindName(const ::testing::TestParamInfo<Kind>& info) {
  return info.param == Kind::kKvstore ? "kvstore" : "redis";
}

std::string Binary(Kind kind) {
  return kind == Kind::kKvstore ? BuildPath("kvstore-server") : "/usr/bin/redis-server";
}

// Runs a shell command; its standard output and error together.
std::string Capture(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// What a server prints when it refuses `args` at start-up (a bad setting), from its last line.
std::string StartupError(Kind kind, const std::string& args) {
  std::string out = Capture(Binary(kind) + " --port 0 --save '' " + args);
  size_t end = out.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  size_t start = out.rfind('\n', end);
  return out.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start + 1));
}

std::string ProcField(const std::string& path, const std::string& field) {
  std::string text = ReadFile(path);
  size_t at = text.find(field + ":");
  if (at == std::string::npos) return "";
  at += field.size() + 1;
  while (at < text.size() && (text[at] == '\t' || text[at] == ' ')) at++;
  return text.substr(at, text.find('\n', at) - at);
}

std::string OomScore(pid_t pid) {
  std::string s = ReadFile("/proc/" + std::to_string(pid) + "/oom_score_adj");
  return s.substr(0, s.find('\n'));
}

// The threads of `pid` with their Cpus_allowed_list.
std::vector<std::pair<std::string, std::string>> ThreadCpus(pid_t pid) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string tid = e.path().filename();
    out.emplace_back(tid, ProcField(dir + "/" + tid + "/status", "Cpus_allowed_list"));
  }
  return out;
}

// The first child process of `pid` (a BGSAVE's, forked by whichever of its threads), or -1.
pid_t ChildOf(pid_t pid) {
  for (const auto& [tid, cpus] : ThreadCpus(pid)) {
    std::string kids = ReadFile("/proc/" + std::to_string(pid) + "/task/" + tid + "/children");
    if (!kids.empty()) return static_cast<pid_t>(std::stol(kids));
  }
  return -1;
}

// A BGSAVE that runs long enough to look at its child: returns the child's pid, or -1.
pid_t StartSlowBgsave(RespClient& c, pid_t server) {
  for (int i = 0; i < 20; i++) c.Call({"SET", "k" + std::to_string(i), "v"});
  c.Call({"CONFIG", "SET", "rdb-key-save-delay", "1000000"});
  c.Call({"BGSAVE"});
  pid_t child = -1;
  WaitFor([&] { return (child = ChildOf(server)) > 0; });
  return child;
}

class ProcessParams : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  }
  bool kvstore() const { return GetParam() == Kind::kKvstore; }
};

// ---- syslog ----

TEST_P(ProcessParams, ABadSyslogFacilityIsRefusedAtStartup) {
  EXPECT_EQ(StartupError(GetParam(), "--syslog-facility local9"),
            "argument(s) must be one of the following: user, local0, local1, local2, local3, "
            "local4, local5, local6, local7");
}

TEST_P(ProcessParams, SyslogSettingsCannotChangeAtRuntime) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  EXPECT_EQ(c.Call({"CONFIG", "SET", "syslog-enabled", "yes"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'syslog-enabled') - can't set "
            "immutable config");
  EXPECT_EQ(c.Call({"CONFIG", "GET", "syslog-ident"}).elems.at(1).str, "redis");
}

// Every line goes to syslog too, under the ident and facility, at the level's priority. syslog(3)
// writes to /dev/log: where no syslog daemon owns it, the test takes its place.
TEST(ProcessParamsSyslog, LogLinesReachSyslogWithIdentFacilityAndPriority) {
  struct stat st;
  if (stat("/dev/log", &st) == 0) GTEST_SKIP() << "a syslog daemon owns /dev/log";
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strcpy(addr.sun_path, "/dev/log");
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    GTEST_SKIP() << "cannot bind /dev/log";
  }
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string ident = "kvtest-" + std::to_string(std::random_device{}());
  std::string got;
  {
    ServerProcess s(Kind::kKvstore, {"--syslog-enabled", "yes", "--syslog-ident", ident,
                                     "--syslog-facility", "local3", "--loglevel", "verbose"});
    RespClient c(s.port());
    c.Call({"PING"});
    s.Stop();
    char buf[2048];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0) {
      got.append(buf, n).push_back('\n');
      if (got.find("ready to exit") != std::string::npos) break;
    }
  }
  close(fd);
  unlink("/dev/log");
  // <priority> is facility * 8 + severity: local3 is 19, notice 5, warning 4, info 6.
  EXPECT_NE(got.find("<157>"), std::string::npos) << got;  // a notice line
  EXPECT_NE(got.find("<156>"), std::string::npos) << got;  // the shutdown's warning
  EXPECT_NE(got.find(" " + ident + "["), std::string::npos) << got;
  EXPECT_NE(got.find("Server initialized"), std::string::npos) << got;
  EXPECT_EQ(got.find("<152>"), std::string::npos) << got;  // nothing at emergency
}

// ---- oom-score-adj ----

TEST_P(ProcessParams, OomScoreValuesAreValidatedAsRedisDoes) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "oom-score-adj-values", "0 abc 800"}),
            "-ERR CONFIG SET failed (possibly related to argument 'oom-score-adj-values') - "
            "Invalid oom-score-adj-values, elements must be between -2000 and 2000.\r\n");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "oom-score-adj-values", "0 200 2001"}),
            "-ERR CONFIG SET failed (possibly related to argument 'oom-score-adj-values') - "
            "Invalid oom-score-adj-values, elements must be between -2000 and 2000.\r\n");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "oom-score-adj-values", "0 200"}),
            "-ERR CONFIG SET failed (possibly related to argument 'oom-score-adj-values') - "
            "wrong number of arguments\r\n");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "oom-score-adj", "maybe"}),
            "-ERR CONFIG SET failed (possibly related to argument 'oom-score-adj') - argument(s) "
            "must be one of the following: no, yes, relative, absolute\r\n");
  EXPECT_EQ(StartupError(GetParam(), "--oom-score-adj-values '0 abc 800'"),
            "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
}

TEST_P(ProcessParams, OomScoreFollowsTheRoleTheSettingsAndTheChild) {
  int base = std::stoi(OomScore(getpid()));  // what the server starts with
  ServerProcess primary(GetParam());
  ServerProcess s(GetParam(),
                  {"--oom-score-adj", "absolute", "--oom-score-adj-values", "10 20 30"});
  RespClient c(s.port());
  EXPECT_EQ(OomScore(s.pid()), "10");
  c.Call({"CONFIG", "SET", "oom-score-adj-values", "11 21 31"});
  EXPECT_EQ(OomScore(s.pid()), "11");
  EXPECT_EQ(c.Call({"CONFIG", "GET", "oom-score-adj-values"}).elems.at(1).str, "11 21 31");
  c.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())});
  EXPECT_EQ(OomScore(s.pid()), "21");
  c.Call({"REPLICAOF", "NO", "ONE"});
  EXPECT_EQ(OomScore(s.pid()), "11");
  c.Call({"CONFIG", "SET", "oom-score-adj", "relative"});
  EXPECT_EQ(OomScore(s.pid()), std::to_string(base + 11));
  // Clamped to the kernel's range.
  c.Call({"CONFIG", "SET", "oom-score-adj-values", "1500 1600 1700"});
  EXPECT_EQ(OomScore(s.pid()), "1000");
  c.Call({"CONFIG", "SET", "oom-score-adj-values", "11 21 31"});
  pid_t child = StartSlowBgsave(c, s.pid());
  ASSERT_GT(child, 0);
  // The child sets its own score once forked.
  EXPECT_TRUE(WaitFor([&] { return OomScore(child) == std::to_string(base + 31); }))
      << OomScore(child);
  c.Call({"CONFIG", "SET", "rdb-key-save-delay", "0"});
  // "no" puts back the score the process had.
  c.Call({"CONFIG", "SET", "oom-score-adj", "no"});
  EXPECT_EQ(OomScore(s.pid()), std::to_string(base));
}

// ---- cpulists ----

TEST_P(ProcessParams, ThreadsAndChildrenArePinnedByTheirLists) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  cpu_set_t mine;
  sched_getaffinity(0, sizeof mine, &mine);
  if (!CPU_ISSET(0, &mine) || !CPU_ISSET(1, &mine)) GTEST_SKIP() << "needs CPUs 0 and 1";
  ServerProcess s(GetParam(), {"--server_cpulist", "0", "--bio_cpulist", "1", "--bgsave_cpulist",
                               "1-1:1", "--appendonly", "yes"});
  RespClient c(s.port());
  c.Call({"SET", "k", "v"});  // the AOF's background thread runs
  int server_threads = 0, bio_threads = 0;
  for (const auto& [tid, cpus] : ThreadCpus(s.pid())) {
    if (tid == std::to_string(s.pid())) EXPECT_EQ(cpus, "0") << "the main thread";
    // (Redis' jemalloc background thread keeps the process' CPUs: kvstore has none.)
    if (kvstore()) EXPECT_TRUE(cpus == "0" || cpus == "1") << "thread " << tid << ": " << cpus;
    server_threads += cpus == "0";
    bio_threads += cpus == "1";
  }
  EXPECT_GE(server_threads, 1);
  EXPECT_GE(bio_threads, 1);
  pid_t child = StartSlowBgsave(c, s.pid());
  ASSERT_GT(child, 0);
  std::string status = "/proc/" + std::to_string(child) + "/status";
  EXPECT_TRUE(WaitFor([&] { return ProcField(status, "Cpus_allowed_list") == "1"; }))
      << ProcField(status, "Cpus_allowed_list");
  c.Call({"CONFIG", "SET", "rdb-key-save-delay", "0"});
  EXPECT_EQ(c.Call({"CONFIG", "SET", "server_cpulist", "1"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'server_cpulist') - can't set "
            "immutable config");
}

// A malformed list changes nothing, as in Redis (which does not refuse it either).
TEST_P(ProcessParams, AMalformedCpuListLeavesTheAffinityAlone) {
  std::string mine = ProcField("/proc/self/status", "Cpus_allowed_list");
  for (const char* bad : {"0-x", "3-1", "0-1:0", "0,", "a"}) {
    ServerProcess s(GetParam(), {"--server_cpulist", bad});
    EXPECT_EQ(ProcField("/proc/" + std::to_string(s.pid()) + "/status", "Cpus_allowed_list"), mine)
        << bad;
  }
}

// ---- socket-mark-id ----

TEST_P(ProcessParams, SocketMarkIdMarksTheListenersAndTheirConnections) {
  if (Capture("ss -V").find("iproute2") == std::string::npos) GTEST_SKIP() << "no ss";
  ServerProcess s(GetParam(), {"--socket-mark-id", "77"});
  RespClient c(s.port());
  c.Call({"PING"});
  std::string port = std::to_string(s.port());
  std::string listening = Capture("ss -tlne 'sport = :" + port + "'");
  EXPECT_NE(listening.find("fwmark:0x4d"), std::string::npos) << listening;
  std::string accepted = Capture("ss -tne state established 'sport = :" + port + "'");
  EXPECT_NE(accepted.find("fwmark:0x4d"), std::string::npos) << accepted;
  EXPECT_EQ(c.Call({"CONFIG", "SET", "socket-mark-id", "5"}).str,
            "ERR CONFIG SET failed (possibly related to argument 'socket-mark-id') - can't set "
            "immutable config");
  ServerProcess plain(GetParam());
  std::string unmarked = Capture("ss -tlne 'sport = :" + std::to_string(plain.port()) + "'");
  EXPECT_EQ(unmarked.find("fwmark"), std::string::npos) << unmarked;
}

// ---- crash-memcheck-enabled ----

bool Crash(ServerProcess& s) {
  RespClient c(s.port());
  c.Send({"DEBUG", "SEGFAULT"});
  c.Read();
  return WaitFor([&] { return !s.Alive(); });
}

TEST_P(ProcessParams, ACrashReportEndsWithTheFastMemoryTest) {
  Cmd tcp = kvstore() ? Cmd{"--repl-transport", "tcp"} : Cmd{};
  ServerProcess s(GetParam(), tcp);
  ASSERT_TRUE(Crash(s));
  std::string log = s.LogText();
  size_t test = log.find("\n------ FAST MEMORY TEST ------\n");
  ASSERT_NE(test, std::string::npos) << log;
  EXPECT_NE(log.find("*** Preparing to test memory region ", test), std::string::npos) << log;
  EXPECT_NE(log.find(".O", test), std::string::npos) << log;
  // The verdict is one of Redis' two lines. Which one depends on the machine: the test inverts
  // every anonymous mapping in place, and a page that another thread touches meanwhile reads as a
  // memory error, so a loaded host can see the second line from a healthy server.
  size_t verdict = log.find(
      "\nFast memory test PASSED, however your memory can still be broken. Please run a memory "
      "test for several hours if possible.\n",
      test);
  if (verdict == std::string::npos) {
    verdict = log.find("\n!!! MEMORY ERROR DETECTED! Check your memory ASAP !!!\n", test);
  }
  // redis-server can also die inside its memory test (a mapping another thread unmaps while it
  // is tested faults again, and the handler is gone): no verdict to compare with then.
  if (verdict == std::string::npos && !kvstore()) {
    GTEST_SKIP() << "redis-server died inside its own memory test:\n" << log.substr(test);
  }
  ASSERT_NE(verdict, std::string::npos) << log;
  EXPECT_LT(verdict, log.find("=== REDIS BUG REPORT END."));
}

TEST_P(ProcessParams, NoMemoryTestWhenCrashMemcheckIsOff) {
  Cmd args = kvstore() ? Cmd{"--repl-transport", "tcp"} : Cmd{};
  ServerProcess s(GetParam(), args);
  RespClient c(s.port());
  EXPECT_EQ(c.Call({"CONFIG", "SET", "crash-memcheck-enabled", "no"}).str, "OK");
  ASSERT_TRUE(Crash(s));
  std::string log = s.LogText();
  EXPECT_NE(log.find("BUG REPORT START"), std::string::npos) << log;
  EXPECT_EQ(log.find("FAST MEMORY TEST"), std::string::npos) << log;
}

// ---- shutdown-on-sigint, shutdown-on-sigterm ----

TEST_P(ProcessParams, ShutdownOnSignalFlagsAreValidatedAndCanonical) {
  ServerProcess s(GetParam(), {"--shutdown-on-sigint", "now Save force"});
  RespClient c(s.port());
  EXPECT_EQ(c.Call({"CONFIG", "GET", "shutdown-on-sigint"}).elems.at(1).str, "save now force");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "shutdown-on-sigterm", "nosave default"}), "+OK\r\n");
  EXPECT_EQ(c.Call({"CONFIG", "GET", "shutdown-on-sigterm"}).elems.at(1).str, "nosave");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "shutdown-on-sigterm", "save nosave"}),
            "-ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigterm') - "
            "shutdown options SAVE and NOSAVE can't be used simultaneously\r\n");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "shutdown-on-sigterm", "later"}),
            "-ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigterm') - "
            "argument(s) must be one of the following: default, save, nosave, now, force\r\n");
  EXPECT_EQ(StartupError(GetParam(), "--shutdown-on-sigint 'save nosave'"),
            "shutdown options SAVE and NOSAVE can't be used simultaneously");
}

// Sends `sig` and waits for the server to exit; false if it is still running.
bool EndsOn(ServerProcess& s, int sig) {
  kill(s.pid(), sig);
  return WaitFor([&] { return !s.Alive(); }, 10000);
}

bool HasDump(const ServerProcess& s) { return std::filesystem::exists(s.dir() + "/dump.rdb"); }

TEST_P(ProcessParams, SigintWithNosaveSkipsTheFinalSnapshot) {
  {
    ServerProcess s(GetParam(), {"--save", "3600 1"});
    RespClient(s.port()).Call({"SET", "k", "v"});
    ASSERT_TRUE(EndsOn(s, SIGINT));
    EXPECT_TRUE(HasDump(s)) << "by default save points mean a final snapshot";
  }
  ServerProcess s(GetParam(), {"--save", "3600 1", "--shutdown-on-sigint", "nosave"});
  RespClient(s.port()).Call({"SET", "k", "v"});
  ASSERT_TRUE(EndsOn(s, SIGINT));
  EXPECT_FALSE(HasDump(s)) << s.LogText();
}

// SIGHUP is ignored, as Redis ignores it: a closed terminal, or the SIGHUP and SIGCONT the
// kernel sends to a stopped job when its process group is orphaned, leaves the server serving.
TEST_P(ProcessParams, SighupLeavesTheServerRunning) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  ASSERT_EQ(c.Call({"SET", "k", "v"}).str, "OK");
  kill(s.pid(), SIGHUP);
  kill(s.pid(), SIGSTOP);
  kill(s.pid(), SIGHUP);
  kill(s.pid(), SIGCONT);
  EXPECT_EQ(c.Call({"GET", "k"}).str, "v");
  EXPECT_TRUE(s.Alive());
}

TEST_P(ProcessParams, SigtermWithSaveSnapshotsWithoutSavePoints) {
  {
    ServerProcess s(GetParam());  // no save points
    RespClient(s.port()).Call({"SET", "k", "v"});
    ASSERT_TRUE(EndsOn(s, SIGTERM));
    EXPECT_FALSE(HasDump(s));
  }
  ServerProcess s(GetParam(), {"--shutdown-on-sigterm", "save"});
  RespClient(s.port()).Call({"SET", "k", "v"});
  ASSERT_TRUE(EndsOn(s, SIGTERM));
  EXPECT_TRUE(HasDump(s)) << s.LogText();
}

// A final snapshot that fails keeps the server up, unless the flags say force.
TEST_P(ProcessParams, ForceShutsDownThoughTheSnapshotFails) {
  ServerProcess s(GetParam(),
                  {"--shutdown-on-sigterm", "save", "--shutdown-on-sigint", "save force"});
  // The snapshot cannot take the name of a directory that is not empty.
  std::filesystem::create_directories(s.dir() + "/dump.rdb/x");
  RespClient c(s.port());
  c.Call({"SET", "k", "v"});
  kill(s.pid(), SIGTERM);
  EXPECT_TRUE(WaitFor([&] {
    return s.LogText().find(
               "Errors trying to shut down the server. Check the logs for more information.") !=
           std::string::npos;
  })) << s.LogText();
  EXPECT_EQ(c.Call({"PING"}).str, "PONG");
  EXPECT_TRUE(EndsOn(s, SIGINT)) << s.LogText();
}

INSTANTIATE_TEST_SUITE_P(Servers, ProcessParams, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         KindName);

}  // namespace
}  // namespace kv::test
