// DEBUG's actions against kvstore and Debian's redis-server: HELP, PROTOCOL's bytes in RESP2
// and RESP3, the errors and fixed replies of every action, HTSTATS' layout (its numbers aside),
// then what the switches do (LOADAOF, CHANGE-REPL-ID, PAUSE-CRON, SET-SKIP-CHECKSUM-VALIDATION,
// SET-DISABLE-DENY-SCRIPTS, AOF-FLUSH-SLEEP, RESTART) and the watchdog (`watchdog-period`),
// each run on both servers with the same expectations.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
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

// The bytes of one command's whole reply, whatever its RESP3 types (attributes and pushes
// included): a PING follows it and everything before the PONG is the reply.
std::string ReplyBytes(RespClient& c, const Cmd& cmd) {
  c.SendRaw(RespClient::Encode(cmd) + RespClient::Encode({"PING"}));
  std::string got;
  char buf[4096];
  while (got.size() < 7 || got.compare(got.size() - 7, 7, "+PONG\r\n") != 0) {
    pollfd p = {c.fd(), POLLIN, 0};
    if (poll(&p, 1, 10000) <= 0) return got + "<timeout>";
    ssize_t n = recv(c.fd(), buf, sizeof(buf), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;  // the socket is non-blocking
    if (n <= 0) return got + "<closed>";
    got.append(buf, static_cast<size_t>(n));
  }
  return got.substr(0, got.size() - 7);
}

// Both servers, for the byte-for-byte comparisons.
class DebugDiff : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server";
    kv_ = std::make_unique<ServerProcess>(Kind::kKvstore);
    redis_ = std::make_unique<ServerProcess>(Kind::kRedis);
  }
  std::unique_ptr<ServerProcess> kv_, redis_;
};

// Redis lists MALLCTL and MALLCTL-STR only when built with jemalloc (Debian's is); kvstore is
// not, so its help is Redis' without those four lines, and they answer as unknown actions.
TEST_F(DebugDiff, HelpIsRedisHelpWithoutJemalloc) {
  RespClient k(kv_->port()), r(redis_->port());
  Reply kh = k.Call({"DEBUG", "HELP"}), rh = r.Call({"DEBUG", "HELP"});
  std::vector<std::string> expected;
  for (size_t i = 0; i < rh.elems.size(); i++) {
    if (rh.elems[i].str.rfind("MALLCTL", 0) == 0) {
      i++;  // and its description
      continue;
    }
    expected.push_back(rh.elems[i].str);
  }
  ASSERT_GT(expected.size(), 100u);
  std::vector<std::string> got;
  for (const Reply& e : kh.elems) got.push_back(e.str);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(k.Raw({"DEBUG", "MALLCTL", "x"}),
            "-ERR unknown subcommand or wrong number of arguments for 'MALLCTL'. Try DEBUG "
            "HELP.\r\n");
}

TEST_F(DebugDiff, ProtocolRepliesAreRedisBytesInBothProtocols) {
  for (int proto : {2, 3}) {
    RespClient k(kv_->port()), r(redis_->port());
    if (proto == 3) {
      k.Call({"HELLO", "3"});
      r.Call({"HELLO", "3"});
    }
    for (const char* type : {"string", "integer", "double", "bignum", "null", "array", "set", "map",
                             "attrib", "push", "verbatim", "true", "false", "bogus", "STRING"}) {
      Cmd cmd = {"DEBUG", "PROTOCOL", type};
      std::string want = ReplyBytes(r, cmd);
      EXPECT_EQ(ReplyBytes(k, cmd), want) << type << " RESP" << proto;
    }
  }
}

// Replies that hold nothing server-specific: errors, OKs and fixed texts.
TEST_F(DebugDiff, ErrorsAndFixedRepliesAreRedis) {
  RespClient k(kv_->port()), r(redis_->port());
  for (RespClient* c : {&k, &r}) {
    c->Call({"SET", "str", "hello"});
    c->Call({"SET", "int", "12"});
    c->Call({"HSET", "hash", "f", "v"});
    c->Call({"RPUSH", "list", "a", "b"});
    c->Call({"SADD", "intset", "1", "2"});
  }
  const std::vector<Cmd> cases = {
      {"DEBUG", "HELP", "extra"},
      {"DEBUG", "NO-SUCH-ACTION"},
      {"DEBUG", "ERROR", "CUSTOM an error\r\nwith newlines"},
      {"DEBUG", "LOG", "a line from the test"},
      {"DEBUG", "LOG"},
      {"DEBUG", "LEAK", "leaked"},
      {"DEBUG", "HTSTATS", "x"},
      {"DEBUG", "HTSTATS", "99"},
      {"DEBUG", "HTSTATS", "-1"},
      {"DEBUG", "HTSTATS", "0", "full"},
      {"DEBUG", "HTSTATS-KEY", "missing"},
      {"DEBUG", "HTSTATS-KEY", "str"},
      {"DEBUG", "HTSTATS-KEY", "hash"},
      {"DEBUG", "HTSTATS-KEY", "intset"},
      {"DEBUG", "SDSLEN", "missing"},
      {"DEBUG", "SDSLEN", "int"},
      {"DEBUG", "SDSLEN", "hash"},
      {"DEBUG", "LISTPACK", "missing"},
      {"DEBUG", "LISTPACK", "intset"},
      {"DEBUG", "LISTPACK", "hash"},
      {"DEBUG", "QUICKLIST", "list"},
      {"DEBUG", "QUICKLIST", "list", "1"},
      {"DEBUG", "QUICKLIST", "hash"},
      {"DEBUG", "QUICKLIST", "list", "1", "2"},
      {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "abc"},
      {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"},
      {"DEBUG", "REPLYBUFFER", "bad", "0"},
      {"DEBUG", "REPLYBUFFER", "peak-reset-time", "abc"},
      {"DEBUG", "REPLYBUFFER", "resizing"},
      {"DEBUG", "CLIENT-EVICTION"},
      {"DEBUG", "DROP-CLUSTER-PACKET-FILTER", "1"},
      {"DEBUG", "DROP-CLUSTER-PACKET-FILTER", "x"},
      {"DEBUG", "CLUSTERLINK", "KILL", "to", "node"},
      {"DEBUG", "CLUSTERLINK", "other", "to", "node"},
      {"DEBUG", "CLUSTERLINK", "KILL"},
      {"DEBUG", "CHANGE-REPL-ID"},
      {"DEBUG", "CHANGE-REPL-ID", "x"},
      {"DEBUG", "PAUSE-CRON", "0"},
      {"DEBUG", "AOF-FLUSH-SLEEP", "0"},
      {"DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0"},
      {"DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"},
      {"DEBUG", "SET-ACTIVE-EXPIRE", "1"},
      {"DEBUG", "CONFIG-REWRITE-FORCE-ALL"},
      {"DEBUG", "RESTART", "notanumber"},
      {"DEBUG", "CRASH-AND-RECOVER", "notanumber"},
      {"DEBUG", "STRUCTSIZE", "x"},
      {"DEBUG", "STRINGMATCH-TEST"},
  };
  for (const Cmd& cmd : cases) {
    std::string label;
    for (const auto& a : cmd) label += a + " ";
    EXPECT_EQ(k.Raw(cmd), r.Raw(cmd)) << label;
  }
  // Counted as an error reply by neither.
  EXPECT_EQ(InfoField(k, "errorstats", "errorstat_CUSTOM"), "");
  EXPECT_EQ(InfoField(r, "errorstats", "errorstat_CUSTOM"), "");
}

// Redis 7.0's hidden testing parameters: the same defaults and bounds.
TEST_F(DebugDiff, TestingParametersAreRedis) {
  RespClient k(kv_->port()), r(redis_->port());
  for (const char* name : {"watchdog-period", "loading-process-events-interval-bytes",
                           "key-load-delay", "rdb-key-save-delay", "use-exit-on-panic"}) {
    EXPECT_EQ(k.Raw({"CONFIG", "GET", name}), r.Raw({"CONFIG", "GET", name})) << name;
  }
  for (const Cmd& cmd :
       std::vector<Cmd>{{"CONFIG", "SET", "loading-process-events-interval-bytes", "100"},
                        {"CONFIG", "SET", "loading-process-events-interval-bytes", "4096"},
                        {"CONFIG", "GET", "loading-process-events-interval-bytes"},
                        {"CONFIG", "SET", "watchdog-period", "-1"}}) {
    EXPECT_EQ(k.Raw(cmd), r.Raw(cmd)) << cmd[2];
  }
}

// Every line with its numbers masked, the chain distribution (which depends on the hash
// function) left out.
std::vector<std::string> Layout(const std::string& text) {
  std::vector<std::string> out;
  std::regex chain("^   [0-9]+: .*");
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (std::regex_match(line, chain)) continue;
    out.push_back(std::regex_replace(line, std::regex("[0-9]+(\\.[0-9]+)?"), "N"));
  }
  return out;
}

TEST_F(DebugDiff, HtStatsHasRedisLayout) {
  RespClient k(kv_->port()), r(redis_->port());
  for (RespClient* c : {&k, &r}) {
    EXPECT_EQ(c->Call({"DEBUG", "HTSTATS", "0"}).str,
              "[Dictionary HT]\nHash table 0 stats (main hash table):\n"
              "No stats available for empty dictionaries\n[Expires HT]\n"
              "Hash table 0 stats (main hash table):\nNo stats available for empty "
              "dictionaries\n");
    c->Call({"SET", "a", "1", "EX", "100"});
    Cmd sadd = {"SADD", "set"};
    for (int i = 0; i < 200; i++) sadd.push_back("m" + std::to_string(i));
    c->Call(sadd);
  }
  // Lookups move the set's rehash along until both print one table.
  for (RespClient* c : {&k, &r}) {
    for (int i = 0; i < 1000; i++) {
      if (c->Call({"DEBUG", "HTSTATS-KEY", "set"}).str.find("Hash table 1") == std::string::npos) {
        break;
      }
      c->Call({"SISMEMBER", "set", "m1"});
    }
  }
  Reply kt = k.Call({"DEBUG", "HTSTATS", "0"}), rt = r.Call({"DEBUG", "HTSTATS", "0"});
  EXPECT_EQ(Layout(kt.str), Layout(rt.str)) << kt.str << "\n---\n" << rt.str;
  std::string ks = k.Call({"DEBUG", "HTSTATS-KEY", "set"}).str;
  std::string rs = r.Call({"DEBUG", "HTSTATS-KEY", "set"}).str;
  EXPECT_EQ(Layout(ks), Layout(rs)) << ks << "\n---\n" << rs;
  // kvstore's own numbers: 256 buckets for 200 members, each counted once.
  EXPECT_NE(ks.find(" table size: 256\n number of elements: 200\n"), std::string::npos) << ks;
  EXPECT_NE(kt.str.find(" table size: 4\n number of elements: 2\n"), std::string::npos) << kt.str;
}

void AppendToFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

// The functional cases run on each server with the same expectations.
class DebugActions : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  }
};

// POPULATE's keys are not propagated: the AOF holds only the SET, and LOADAOF brings the
// dataset back to exactly that.
TEST_P(DebugActions, LoadAofRestoresWhatTheAofHolds) {
  ServerProcess s(GetParam(), {"--appendonly", "yes"});
  RespClient c(s.port());
  ASSERT_EQ(c.Raw({"SET", "kept", "1"}), "+OK\r\n");
  ASSERT_EQ(c.Raw({"DEBUG", "POPULATE", "10"}), "+OK\r\n");
  ASSERT_EQ(c.Call({"DBSIZE"}).integer, 11);
  EXPECT_NE(InfoField(c, "persistence", "rdb_changes_since_last_save"), "0");
  EXPECT_EQ(c.Raw({"DEBUG", "LOADAOF"}), "+OK\r\n");
  EXPECT_EQ(c.Call({"DBSIZE"}).integer, 1);
  // What was loaded is what the files hold: no change is pending a save.
  EXPECT_EQ(InfoField(c, "persistence", "rdb_changes_since_last_save"), "0");
  EXPECT_EQ(c.Call({"GET", "kept"}).str, "1");
  EXPECT_NE(s.LogText().find("Append Only File loaded by DEBUG LOADAOF"), std::string::npos);
  // The server goes on serving and appending.
  EXPECT_EQ(c.Raw({"SET", "after", "2"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"DEBUG", "LOADAOF"}), "+OK\r\n");
  EXPECT_EQ(c.Call({"GET", "after"}).str, "2");
}

// A script in the AOF that turns busy while DEBUG LOADAOF replays it: other clients get
// -LOADING, as while Redis loads (not -BUSY), and the load ends with the script's write
// (integration/aof's "EVAL timeout with slow verbatim Lua script from AOF"). The client that
// sent DEBUG LOADAOF waits for its reply: its request was once served again while the script
// was busy (answered -BUSY), and the server crashed when the command returned.
TEST_P(DebugActions, ASlowScriptInLoadAofAnswersLoading) {
  ServerProcess s(GetParam(),
                  {"--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--lua-time-limit", "1"});
  RespClient c(s.port()), other(s.port());
  ASSERT_EQ(c.Raw({"SET", "x", "n"}), "+OK\r\n");
  // The incremental file the manifest names, the last one: the script goes at its end.
  std::string manifest;
  ASSERT_TRUE(WaitFor([&] {
    manifest = ReadFile(s.dir() + "/appendonlydir/appendonly.aof.manifest");
    return manifest.find("type i") != std::string::npos;
  }));
  size_t at = manifest.rfind("file ");
  std::string incr = manifest.substr(at + 5, manifest.find(' ', at + 5) - at - 5);
  std::string script =
      "redis.call('set',KEYS[1],'y'); for i=1,3000000 do redis.call('ping') end return 'ok'";
  std::string eval = "*4\r\n$4\r\neval\r\n$" + std::to_string(script.size()) + "\r\n" + script +
                     "\r\n$1\r\n1\r\n$1\r\nx\r\n";
  AppendToFile(s.dir() + "/appendonlydir/" + incr, eval);
  c.Send({"DEBUG", "LOADAOF"});
  std::string seen;
  ASSERT_TRUE(WaitFor([&] {
    seen = other.Raw({"PING"});
    return seen != "+PONG\r\n";
  })) << seen;
  EXPECT_EQ(seen, "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(c.Read().raw, "+OK\r\n");
  EXPECT_EQ(other.Call({"GET", "x"}).str, "y");
}

// Redis 7.0 exits here; kvstore answers the error Redis gives for an AOF that does not load.
TEST(DebugLoadAof, WithoutAnAofIsAnError) {
  ServerProcess s(Kind::kKvstore);
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"DEBUG", "LOADAOF"}),
            "-ERR Error trying to load the AOF files, check server logs.\r\n");
}

TEST_P(DebugActions, ChangeReplIdChangesTheReplicationId) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  std::string before = InfoField(c, "replication", "master_replid");
  ASSERT_EQ(before.size(), 40u);
  ASSERT_EQ(c.Raw({"DEBUG", "CHANGE-REPL-ID"}), "+OK\r\n");
  std::string after = InfoField(c, "replication", "master_replid");
  EXPECT_EQ(after.size(), 40u);
  EXPECT_NE(after, before);
  EXPECT_EQ(InfoField(c, "replication", "master_replid2"), std::string(40, '0'));
  EXPECT_NE(s.LogText().find("Changing replication IDs after receiving DEBUG change-repl-id"),
            std::string::npos);
}

// With the cron paused a key past its TTL stays in the table (nothing reads it); resumed, the
// active expiry removes it.
TEST_P(DebugActions, PauseCronStopsActiveExpiry) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  ASSERT_EQ(c.Raw({"DEBUG", "PAUSE-CRON", "1"}), "+OK\r\n");
  ASSERT_EQ(c.Raw({"SET", "k", "v", "PX", "50"}), "+OK\r\n");
  // Ten cron periods (hz 10) past the TTL.
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));
  EXPECT_EQ(InfoField(c, "stats", "expired_keys"), "0");
  EXPECT_EQ(c.Call({"DBSIZE"}).integer, 1);
  ASSERT_EQ(c.Raw({"DEBUG", "PAUSE-CRON", "0"}), "+OK\r\n");
  EXPECT_TRUE(WaitFor([&] { return InfoField(c, "stats", "expired_keys") == "1"; }));
  EXPECT_EQ(c.Call({"DBSIZE"}).integer, 0);
}

TEST_P(DebugActions, SkipChecksumValidationLetsABadRestoreThrough) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  c.Call({"SET", "k", "some value"});
  std::string payload = c.Call({"DUMP", "k"}).str;
  ASSERT_GT(payload.size(), 10u);
  payload.back() ^= 0x5a;  // the CRC's last byte
  const std::string bad = "-ERR DUMP payload version or checksum are wrong\r\n";
  EXPECT_EQ(c.Raw({"RESTORE", "r", "0", payload}), bad);
  ASSERT_EQ(c.Raw({"DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"RESTORE", "r", "0", payload}), "+OK\r\n");
  EXPECT_EQ(c.Call({"GET", "r"}).str, "some value");
  ASSERT_EQ(c.Raw({"DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"RESTORE", "r2", "0", payload}), bad);
}

TEST_P(DebugActions, DisableDenyScriptsLetsScriptsRunNoscriptCommands) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  Cmd eval = {"EVAL", "return redis.call('debug', 'log', 'from a script')", "0"};
  EXPECT_EQ(c.Call(eval).str.find("ERR This Redis command is not allowed from script"), 0u)
      << c.Call(eval).Debug();
  ASSERT_EQ(c.Raw({"DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"}), "+OK\r\n");
  EXPECT_EQ(c.Raw(eval), "+OK\r\n");
  EXPECT_NE(s.LogText().find("DEBUG LOG: from a script"), std::string::npos);
}

// A write's reply waits for the AOF write, which sleeps first: at least the sleep (a lower
// bound, which a busy machine cannot break).
TEST_P(DebugActions, AofFlushSleepDelaysTheWrite) {
  ServerProcess s(GetParam(), {"--appendonly", "yes"});
  RespClient c(s.port());
  ASSERT_EQ(c.Raw({"DEBUG", "AOF-FLUSH-SLEEP", "300000"}), "+OK\r\n");
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(c.Raw({"SET", "k", "v"}), "+OK\r\n");
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  EXPECT_GE(ms, 290);
  ASSERT_EQ(c.Raw({"DEBUG", "AOF-FLUSH-SLEEP", "0"}), "+OK\r\n");
}

TEST_P(DebugActions, WatchdogLogsAStackWhenTheCronIsLate) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  EXPECT_EQ(c.Call({"CONFIG", "GET", "watchdog-period"}).elems.at(1).str, "0");
  // One write: the sleep starts before any cron runs after the CONFIG SET, which arms the
  // timer itself (Redis' integration/logging sends them so).
  c.SendRaw(
      "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$15\r\nwatchdog-period\r\n$3\r\n200\r\n"
      "*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$1\r\n1\r\n");
  ASSERT_EQ(c.Read().str, "OK");
  ASSERT_EQ(c.Read().str, "OK");
  EXPECT_TRUE(WaitFor([&] {
    return s.LogText().find("--- WATCHDOG TIMER EXPIRED ---") != std::string::npos;
  })) << s.LogText();
  EXPECT_NE(s.LogText().find("STACK TRACE"), std::string::npos);
  ASSERT_EQ(c.Raw({"CONFIG", "SET", "watchdog-period", "0"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  EXPECT_TRUE(s.Alive());
}

// Whether the server accepts connections on `port`.
bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

// RESTART runs the same binary again in the same process after a proper shutdown (the AOF's
// last writes); the data comes back from the AOF.
TEST_P(DebugActions, RestartComesBackWithTheData) {
  ServerProcess s(GetParam(), {"--appendonly", "yes"});
  {
    RespClient c(s.port());
    ASSERT_EQ(c.Raw({"SET", "k", "v"}), "+OK\r\n");
    c.Send({"DEBUG", "RESTART"});
    EXPECT_TRUE(c.WaitClosed(10000));
  }
  ASSERT_TRUE(WaitFor([&] { return Accepts(s.port()); }));
  RespClient c(s.port());
  EXPECT_TRUE(WaitFor([&] { return c.Call({"GET", "k"}).str == "v"; }));
  EXPECT_TRUE(s.Alive());  // the same process
}

// CRASH-AND-RECOVER runs it again at once, without the shutdown: the process stays the same
// and serves again.
TEST_P(DebugActions, CrashAndRecoverRunsTheServerAgain) {
  ServerProcess s(GetParam());
  {
    RespClient c(s.port());
    c.Send({"DEBUG", "CRASH-AND-RECOVER", "100"});
    EXPECT_TRUE(c.WaitClosed(10000));
  }
  ASSERT_TRUE(WaitFor([&] { return Accepts(s.port()); }));
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  EXPECT_TRUE(s.Alive());
}

INSTANTIATE_TEST_SUITE_P(Servers, DebugActions, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         KindName);

}  // namespace
}  // namespace kv::test
