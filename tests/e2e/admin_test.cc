// End-to-end tests of DEBUG, LATENCY, SLOWLOG, MEMORY, MONITOR and SHUTDOWN over real sockets:
// kvstore-only behaviour against an in-process server or a kvstore-server process, and replies
// that must match Redis byte for byte against Debian's redis-server as the oracle.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <regex>
#include <thread>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

using Clock = std::chrono::steady_clock;
using Cmd = std::vector<std::string>;
using Overrides = std::vector<std::pair<std::string, std::string>>;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

std::string Join(const Cmd& cmd) {
  std::string s;
  for (const auto& a : cmd) s += (s.empty() ? "" : " ") + a;
  return s;
}

// The value of `name` in a MEMORY STATS reply (RESP2 flat array or RESP3 map), or null.
const Reply* StatsField(const Reply& stats, const std::string& name) {
  for (size_t i = 0; i + 1 < stats.elems.size(); i += 2) {
    if (stats.elems[i].str == name) return &stats.elems[i + 1];
  }
  return nullptr;
}

int64_t KeysCount(RespClient& c) {
  Reply stats = c.Call({"MEMORY", "STATS"});
  const Reply* keys = StatsField(stats, "keys.count");
  return keys ? keys->integer : -1;
}

// Waits for `pid` to exit without reaping it (ServerProcess::Stop does that). Returns its exit
// status, -1 if it did not exit normally, or -2 if it is still running after timeout_ms.
int WaitExit(pid_t pid, int timeout_ms) {
  auto start = Clock::now();
  while (MsSince(start) < timeout_ms) {
    siginfo_t info{};
    if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
      return info.si_code == CLD_EXITED ? info.si_status : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -2;
}

// ---- differential tests: kvstore and redis-server side by side ----------------------------

// A fresh kvstore-server and redis-server per test, with a client to each.
class VsRedis : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    kv_ = std::make_unique<ServerProcess>(ServerProcess::Kind::kKvstore);
    redis_ = std::make_unique<ServerProcess>(ServerProcess::Kind::kRedis);
    k_ = std::make_unique<RespClient>(kv_->port(), 3000);
    r_ = std::make_unique<RespClient>(redis_->port(), 3000);
  }
  // Sends `cmd` to both servers and expects the same bytes back; returns kvstore's reply.
  Reply Same(const Cmd& cmd) {
    Reply k = k_->Call(cmd);
    Reply r = r_->Call(cmd);
    EXPECT_EQ(k.raw, r.raw) << Join(cmd);
    return k;
  }

  std::unique_ptr<ServerProcess> kv_, redis_;
  std::unique_ptr<RespClient> k_, r_;
};

using DebugVsRedis = VsRedis;
using SlowlogVsRedis = VsRedis;
using LatencyVsRedis = VsRedis;
using MemoryVsRedis = VsRedis;
using MonitorVsRedis = VsRedis;
using ShutdownVsRedis = VsRedis;

TEST_F(DebugVsRedis, DigestOfTheSameCommandsMatches) {
  const std::string kZero(40, '0');
  EXPECT_EQ(Same({"DEBUG", "DIGEST"}).str, kZero);
  const std::vector<Cmd> script = {
      {"SET", "a", "1"},
      {"SET", "b", "hello"},
      {"SET", "c", std::string(100, 'x')},
      {"SET", "n", "-12345678901"},
      {"SET", "e", ""},
      {"SET", "t", "v", "EX", "1000"},
      {"SELECT", "5"},
      {"SET", "a", "1"},
      {"APPEND", "z", "12"},
      {"SELECT", "0"},
      {"DEL", "a"},
      {"SET", "b", "other"},
  };
  for (const Cmd& cmd : script) {
    Same(cmd);
    Reply d = Same({"DEBUG", "DIGEST"});
    EXPECT_EQ(d.type, '+') << Join(cmd);
    EXPECT_EQ(d.str.size(), 40u);
    EXPECT_NE(d.str, kZero) << Join(cmd);
  }
  Reply values = Same({"DEBUG", "DIGEST-VALUE", "a", "b", "c", "n", "e", "t", "missing"});
  ASSERT_EQ(values.elems.size(), 7u);
  EXPECT_EQ(values.elems[0].str, kZero);  // deleted
  EXPECT_NE(values.elems[1].str, kZero);
  EXPECT_NE(values.elems[5].str, values.elems[1].str);  // a TTL changes the digest
  Same({"SELECT", "5"});
  Same({"DEBUG", "DIGEST-VALUE", "a", "z"});
  Same({"DEBUG", "DIGEST-VALUE"});
}

// DEBUG POPULATE builds the same dataset as Redis' (digests match): names, values, sizes that
// cut or pad the value with zero bytes, keys that exist left alone; the same errors.
TEST_F(DebugVsRedis, PopulateBuildsWhatRedisBuilds) {
  Same({"SET", "key:7", "mine"});
  Same({"DEBUG", "POPULATE", "1000"});
  EXPECT_EQ(Same({"DBSIZE"}).integer, 1000);
  EXPECT_EQ(Same({"GET", "key:7"}).str, "mine");
  EXPECT_EQ(Same({"GET", "key:999"}).str, "value:999");
  Same({"DEBUG", "POPULATE", "5", "pad", "12"});
  EXPECT_EQ(Same({"GET", "pad:3"}).str, std::string("value:3") + std::string(5, '\0'));
  Same({"DEBUG", "POPULATE", "5", "cut", "3"});
  EXPECT_EQ(Same({"GET", "cut:4"}).str, "val");
  Same({"DEBUG", "POPULATE", "0"});
  Same({"SELECT", "3"});
  Same({"DEBUG", "POPULATE", "10", std::string(200, 'p')});  // names cut at 127 bytes
  Same({"KEYS", "*"});
  Same({"SELECT", "0"});
  Same({"DEBUG", "DIGEST"});
  EXPECT_EQ(Same({"DBSIZE"}).integer, 1010);
  for (const Cmd& bad : std::vector<Cmd>{{"DEBUG", "POPULATE"},
                                         {"DEBUG", "POPULATE", "-1"},
                                         {"DEBUG", "POPULATE", "x"},
                                         {"DEBUG", "POPULATE", "1", "k", "-5"},
                                         {"DEBUG", "POPULATE", "1", "k", "1.5"},
                                         {"DEBUG", "POPULATE", "1", "k", "5", "extra"}}) {
    EXPECT_TRUE(Same(bad).is_error()) << Join(bad);
  }
  // Where Redis would try to build the value, kvstore refuses it.
  EXPECT_TRUE(k_->Call({"DEBUG", "POPULATE", "1", "big", "1000000000000"}).is_error());
  EXPECT_EQ(k_->Call({"PING"}).str, "PONG");
}

// DEBUG OBJECT agrees with Redis on everything but the address and the LRU clock; its
// serializedlength is the value's size in an RDB, LZF-compressed strings and collections too.
TEST_F(DebugVsRedis, ObjectDescribesValuesLikeRedis) {
  const std::regex kFormat(
      R"(\+Value at:0x[0-9a-f]+ (refcount:-?\d+ encoding:[a-z]+ serializedlength:\d+) )"
      R"(lru:\d+ lru_seconds_idle:\d+[^\r]*\r\n)");
  const std::vector<std::string> values = {"hello",
                                           "5",
                                           "12345",
                                           "-5",
                                           "3.5",
                                           "",
                                           "123456789012",
                                           "abcdefghijabcdefghij",
                                           "99999999999999999999",
                                           "007"};
  for (const std::string& v : values) {
    Same({"SET", "k", v});
    std::string k = k_->Raw({"DEBUG", "OBJECT", "k"});
    std::string r = r_->Raw({"DEBUG", "OBJECT", "k"});
    std::smatch km, rm;
    ASSERT_TRUE(std::regex_match(k, km, kFormat)) << k;
    ASSERT_TRUE(std::regex_match(r, rm, kFormat)) << r;
    EXPECT_EQ(km[1].str(), rm[1].str()) << "value '" << v << "'";
  }
  const std::vector<Cmd> collections = {{"SET", "c", std::string(300, 'a')},
                                        {"RPUSH", "c", "a", "bb", "123", "-7"},
                                        {"HSET", "c", "f", "v", "g", "12"},
                                        {"SADD", "c", "1", "2", "300000"},
                                        {"SADD", "c", "x", "y"},
                                        {"ZADD", "c", "1", "a", "2.5", "b"}};
  for (const Cmd& make : collections) {
    Same({"DEL", "c"});
    Same(make);
    std::string k = k_->Raw({"DEBUG", "OBJECT", "c"});
    std::string r = r_->Raw({"DEBUG", "OBJECT", "c"});
    std::smatch km, rm;
    ASSERT_TRUE(std::regex_match(k, km, kFormat)) << k;
    ASSERT_TRUE(std::regex_match(r, rm, kFormat)) << r;
    EXPECT_EQ(km[1].str(), rm[1].str()) << make[0];
  }
  Same({"DEBUG", "OBJECT", "nokey"});
}

// Small integers report Redis' shared refcount, except under maxmemory with an LRU or LFU
// policy, where Redis stops sharing them (each object keeps its own clock).
TEST_F(DebugVsRedis, ObjectRefcountOfSmallIntegersFollowsTheEvictionPolicy) {
  Same({"SET", "a", "1"});
  EXPECT_EQ(Same({"OBJECT", "REFCOUNT", "a"}).integer, 2147483647);
  Same({"CONFIG", "SET", "maxmemory", "1073741824"});
  for (const char* policy : {"allkeys-lru", "volatile-lfu", "allkeys-random", "noeviction"}) {
    Same({"CONFIG", "SET", "maxmemory-policy", policy});
    Same({"SET", "b", "1"});
    Same({"OBJECT", "REFCOUNT", "b"});
  }
  Same({"CONFIG", "SET", "maxmemory", "0"});
  Same({"SET", "c", "7"});
  Same({"OBJECT", "REFCOUNT", "c"});
  Same({"SET", "d", "10000"});
  EXPECT_EQ(Same({"OBJECT", "REFCOUNT", "d"}).integer, 1);
}

TEST_F(DebugVsRedis, ErrorRepliesMatch) {
  const std::vector<Cmd> cmds = {
      {"DEBUG"},
      {"DEBUG", "foo"},
      {"DEBUG", "SLEEP"},
      {"DEBUG", "sleep", "1", "2"},
      {"DEBUG", "DIGEST", "x"},
      {"DEBUG", "OBJECT"},
      {"DEBUG", "OBJECT", "a", "b"},
      {"DEBUG", "SET-ACTIVE-EXPIRE"},
      {"DEBUG", "HELP", "x"},
  };
  for (const Cmd& cmd : cmds) EXPECT_EQ(Same(cmd).type, '-') << Join(cmd);
  Same({"DEBUG", "SLEEP", "0"});
  Same({"DEBUG", "SLEEP", "abc"});  // strtod: zero seconds
  Same({"DEBUG", "SET-ACTIVE-EXPIRE", "1"});
}

TEST_F(SlowlogVsRedis, ErrorRepliesMatch) {
  const std::vector<Cmd> cmds = {
      {"SLOWLOG"},
      {"SLOWLOG", "foo"},
      {"SLOWLOG", "GET", "-2"},
      {"SLOWLOG", "GET", "abc"},
      {"SLOWLOG", "get", "1", "2"},
      {"SLOWLOG", "LEN", "x"},
      {"SLOWLOG", "RESET", "x"},
      {"SLOWLOG", "HELP", "x"},
  };
  for (const Cmd& cmd : cmds) EXPECT_EQ(Same(cmd).type, '-') << Join(cmd);
  Same({"SLOWLOG", "RESET"});
  Same({"SLOWLOG", "GET", "0"});
}

TEST_F(LatencyVsRedis, IdleMonitorRepliesMatch) {
  Same({"LATENCY", "LATEST"});
  Same({"LATENCY", "HISTORY", "command"});
  Same({"LATENCY", "RESET"});
  Same({"LATENCY", "RESET", "command", "fast-command"});
  EXPECT_NE(Same({"LATENCY", "DOCTOR"}).str.find("Latency monitoring is disabled"),
            std::string::npos);
  EXPECT_EQ(Same({"LATENCY", "foo"}).type, '-');
  EXPECT_EQ(Same({"LATENCY", "HISTORY"}).type, '-');
  EXPECT_EQ(Same({"LATENCY"}).type, '-');
  k_->Call({"HELLO", "3"});
  r_->Call({"HELLO", "3"});
  EXPECT_EQ(Same({"LATENCY", "DOCTOR"}).type, '=');
}

TEST_F(MemoryVsRedis, UsageRepliesMatch) {
  Same({"SET", "k", "hello"});
  Same({"MEMORY", "USAGE", "nokey"});
  Same({"MEMORY", "USAGE", "nokey", "SAMPLES", "0"});
  const std::vector<Cmd> errors = {
      {"MEMORY"},
      {"MEMORY", "foo"},
      {"MEMORY", "USAGE"},
      {"MEMORY", "USAGE", "k", "SAMPLES"},
      {"MEMORY", "USAGE", "k", "SAMPLES", "x"},
      {"MEMORY", "USAGE", "k", "SAMPLES", "-1"},
      {"MEMORY", "USAGE", "k", "FOO", "1"},
      {"MEMORY", "STATS", "x"},
      {"MEMORY", "PURGE", "x"},
  };
  for (const Cmd& cmd : errors) EXPECT_EQ(Same(cmd).type, '-') << Join(cmd);
  Same({"MEMORY", "PURGE"});
  EXPECT_GT(k_->Call({"MEMORY", "USAGE", "k", "SAMPLES", "5"}).integer, 0);
  k_->Call({"HELLO", "3"});
  r_->Call({"HELLO", "3"});
  Same({"MEMORY", "USAGE", "nokey"});
}

// The feed seen by a monitor, with the timestamp and client port masked.
TEST_F(MonitorVsRedis, FeedFormatMatches) {
  RespClient km(kv_->port(), 3000), rm(redis_->port(), 3000);
  EXPECT_EQ(km.Raw({"MONITOR"}), "+OK\r\n");
  EXPECT_EQ(rm.Raw({"MONITOR"}), "+OK\r\n");
  const std::vector<Cmd> cmds = {
      {"SET", "k", "a b\n\x01\"q\""},
      {"GET", "k"},
      {"DEBUG", "DIGEST"},
      {"SELECT", "3"},
      {"SLOWLOG", "LEN"},
      {"ECHO", ""},
      {"PING"},
  };
  for (const Cmd& cmd : cmds) Same(cmd);
  const std::regex kStamp(R"(^\+\d+\.\d{6} \[(\d+) 127\.0\.0\.1:\d+\])");
  for (int shown = 0; shown < 5; shown++) {  // DEBUG and SLOWLOG are admin: not shown
    std::string k = std::regex_replace(km.Read().raw, kStamp, "+T [$1 ADDR]");
    std::string r = std::regex_replace(rm.Read().raw, kStamp, "+T [$1 ADDR]");
    EXPECT_EQ(k, r);
    EXPECT_EQ(k.rfind("+T [", 0), 0u) << k;
  }
}

TEST_F(ShutdownVsRedis, OptionErrorsMatch) {
  const std::vector<Cmd> cmds = {
      {"SHUTDOWN", "ABORT"},        {"SHUTDOWN", "FOO"},          {"SHUTDOWN", "SAVE", "NOSAVE"},
      {"SHUTDOWN", "ABORT", "NOW"}, {"SHUTDOWN", "now", "abort"}, {"SHUTDOWN", "NOSAVE", "x"},
  };
  for (const Cmd& cmd : cmds) EXPECT_EQ(Same(cmd).type, '-') << Join(cmd);
  EXPECT_TRUE(kv_->Alive());
  EXPECT_TRUE(redis_->Alive());
}

// ---- DEBUG ----------------------------------------------------------------------------------

// While one client sleeps, nobody else is served. A pipelines "SET before", "DEBUG SLEEP" and
// "SET after"; a monitor on another IO thread sees "before" while the sleep has just begun; B's
// command sent then is served only after the sleep ends and after A's "SET after".
TEST(DebugSleep, BlocksEveryOtherClient) {
  // Connections are dealt to the IO threads in turn. Thread 0 also runs the cron, which waits
  // for the lock during the sleep, so the monitor (1) and the sleeper (2) must not be there.
  InProcessServer s(Overrides{{"io-threads", "3"}});
  RespClient filler(s.port()), monitor(s.port()), a(s.port()), b(s.port());
  EXPECT_EQ(filler.Raw({"PING"}), "+PONG\r\n");
  ASSERT_EQ(monitor.Raw({"MONITOR"}), "+OK\r\n");
  auto t0 = Clock::now();
  a.SendRaw(RespClient::Encode({"SET", "before", "1"}) +
            RespClient::Encode({"DEBUG", "SLEEP", "1.5"}) +
            RespClient::Encode({"SET", "after", "1"}));
  EXPECT_NE(monitor.Read().str.find("\"before\""), std::string::npos);
  ASSERT_LT(MsSince(t0), 1500) << "the test was too slow to observe the sleep";
  EXPECT_EQ(b.Raw({"SET", "b", "1"}), "+OK\r\n");
  EXPECT_GE(MsSince(t0), 1500);
  EXPECT_NE(monitor.Read().str.find("\"after\""), std::string::npos);
  EXPECT_NE(monitor.Read().str.find("\"b\""), std::string::npos);
  for (int i = 0; i < 3; i++) EXPECT_EQ(a.Read().raw, "+OK\r\n");
}

TEST(DebugActiveExpire, OffKeepsUntouchedExpiredKeysUntilTurnedOn) {
  InProcessServer s(Overrides{{"hz", "100"}});
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"SET", "k", "v", "PX", "20"}), "+OK\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // ~30 expiry cycles
  // DBSIZE, MEMORY STATS and DEBUG DIGEST-VALUE never look the key up, so nothing expires it
  // lazily.
  EXPECT_EQ(c.Raw({"DBSIZE"}), ":1\r\n");
  EXPECT_EQ(KeysCount(c), 1);
  EXPECT_NE(c.Call({"DEBUG", "DIGEST-VALUE", "k"}).elems.at(0).str, std::string(40, '0'));
  EXPECT_EQ(c.Raw({"DEBUG", "SET-ACTIVE-EXPIRE", "1"}), "+OK\r\n");
  auto start = Clock::now();
  while (c.Raw({"DBSIZE"}) != ":0\r\n" && MsSince(start) < 5000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(c.Raw({"DBSIZE"}), ":0\r\n");
  EXPECT_EQ(KeysCount(c), 0);
}

TEST(DebugCommand, RefusedWhenDisabled) {
  InProcessServer s(Overrides{{"enable-debug-command", "no"}});
  RespClient c(s.port());
  const std::string kRefused =
      "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
      "you can run it from a local connection, otherwise you need to set this option in the "
      "configuration file, and then restart the server.\r\n";
  EXPECT_EQ(c.Raw({"DEBUG", "DIGEST"}), kRefused);
  EXPECT_EQ(c.Raw({"DEBUG", "HELP"}), kRefused);
}

// enable-debug-command local, as in Redis: DEBUG from a local connection (127.0.0.1), refused
// from any other address; no, Redis 7.0's default, refuses it from everywhere.
TEST(DebugCommand, LocalAllowsOnlyLocalConnections) {
  std::string addr = NonLoopbackAddress();
  if (addr.empty()) GTEST_SKIP() << "this machine has no address other than loopback";
  for (const char* mode : {"local", "no", "yes"}) {
    SCOPED_TRACE(mode);
    InProcessServer s(Overrides{{"enable-debug-command", mode},
                                {"bind", "127.0.0.1 " + addr},
                                {"protected-mode", "no"}});
    RespClient local(s.port());
    bool local_ok = std::string(mode) != "no";
    EXPECT_EQ(local.Call({"DEBUG", "DIGEST"}).is_error(), !local_ok);
    auto fd = net::ConnectTcp(addr, s.port(), 5000);
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    std::string req = RespClient::Encode({"DEBUG", "DIGEST"});
    ASSERT_EQ(write(fd->get(), req.data(), req.size()), static_cast<ssize_t>(req.size()));
    char buf[512];
    ssize_t n = 0;
    for (int i = 0; i < 500 && n <= 0; i++) {
      n = read(fd->get(), buf, sizeof buf);
      if (n < 0 && errno == EAGAIN) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(n, 0);
    EXPECT_EQ(buf[0] == '-', std::string(mode) != "yes") << std::string(buf, n);
  }
}

TEST(DebugCommand, HelpAndObject) {
  InProcessServer s;
  RespClient c(s.port());
  Reply help = c.Call({"debug", "help"});
  ASSERT_GT(help.elems.size(), 10u);
  EXPECT_EQ(help.elems[0].str, "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  bool has_sleep = false;
  for (const Reply& line : help.elems) has_sleep |= line.str == "SLEEP <seconds>";
  EXPECT_TRUE(has_sleep);
  EXPECT_EQ(c.Raw({"DEBUG", "OBJECT", "k"}), "-ERR no such key\r\n");
  EXPECT_EQ(c.Raw({"SET", "k", std::string(100, 'x')}), "+OK\r\n");
  std::string obj = c.Raw({"DEBUG", "OBJECT", "k"});
  // 100 equal bytes LZF-compress to a 13-byte string record, as Redis saves them.
  EXPECT_TRUE(std::regex_match(obj, std::regex(R"(\+Value at:0x[0-9a-f]+ refcount:1 )"
                                               R"(encoding:raw serializedlength:13 lru:\d+ )"
                                               R"(lru_seconds_idle:\d+\r\n)")))
      << obj;
}

// ---- LATENCY --------------------------------------------------------------------------------

// The event holding the sleep's sample: the one whose worst latency reached `ms` (another
// command may pass the threshold too on a loaded machine, but not by that much).
const Reply* EventOver(const Reply& latest, int64_t ms) {
  for (const Reply& ev : latest.elems) {
    if (ev.elems.size() == 4 && ev.elems[3].integer >= ms) return &ev;
  }
  return nullptr;
}

TEST(LatencyMonitor, RecordsDebugSleepAndResets) {
  InProcessServer s(Overrides{{"latency-monitor-threshold", "20"}});
  RespClient c(s.port());
  EXPECT_NE(c.Call({"LATENCY", "DOCTOR"}).str.find("no latency spike was observed"),
            std::string::npos);
  EXPECT_EQ(c.Raw({"DEBUG", "SLEEP", "0.1"}), "+OK\r\n");
  int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  Reply latest = c.Call({"LATENCY", "LATEST"});
  const Reply* ev = EventOver(latest, 100);
  ASSERT_NE(ev, nullptr) << latest.Debug();
  // Redis files DEBUG SLEEP under "command" (DEBUG is not a fast command); the event name is
  // chosen by the dispatcher, so it is read from the reply here.
  const std::string name = ev->elems[0].str;
  EXPECT_FALSE(name.empty());
  EXPECT_LE(std::abs(ev->elems[1].integer - now_s), 60);
  EXPECT_GE(ev->elems[2].integer, 100);

  Reply history = c.Call({"LATENCY", "HISTORY", name});
  ASSERT_GE(history.elems.size(), 1u) << history.Debug();
  EXPECT_EQ(history.elems.back().elems.at(0).integer, ev->elems[1].integer);
  EXPECT_GE(history.elems.back().elems.at(1).integer, 100);
  std::string doctor = c.Call({"LATENCY", "DOCTOR"}).str;
  EXPECT_NE(doctor.find(". " + name + ": "), std::string::npos) << doctor;
  EXPECT_NE(doctor.find("latency spikes"), std::string::npos) << doctor;

  EXPECT_EQ(c.Raw({"LATENCY", "RESET", "nosuch"}), ":0\r\n");
  EXPECT_EQ(c.Raw({"LATENCY", "RESET", name}), ":1\r\n");
  EXPECT_EQ(EventOver(c.Call({"LATENCY", "LATEST"}), 100), nullptr);
  EXPECT_GE(c.Call({"LATENCY", "RESET"}).integer, 0);
}

// ---- SLOWLOG --------------------------------------------------------------------------------

TEST(SlowlogTest, RecordsEveryCommandWhenThresholdIsZero) {
  InProcessServer s;
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "slowlog-log-slower-than", "0"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"CLIENT", "SETNAME", "me"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"SLOWLOG", "RESET"}), "+OK\r\n");  // logged itself, after it ran
  EXPECT_EQ(c.Raw({"SET", "foo", "bar"}), "+OK\r\n");
  Reply got = c.Call({"SLOWLOG", "GET"});
  ASSERT_EQ(got.elems.size(), 2u) << got.Debug();
  const Reply& set = got.elems[0];  // newest first
  ASSERT_EQ(set.elems.size(), 6u);
  EXPECT_GT(set.elems[0].integer, got.elems[1].elems[0].integer);  // ids grow
  int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  EXPECT_LE(std::abs(set.elems[1].integer - now_s), 60);
  EXPECT_GE(set.elems[2].integer, 0);
  ASSERT_EQ(set.elems[3].elems.size(), 3u);
  EXPECT_EQ(set.elems[3].elems[0].str, "SET");
  EXPECT_EQ(set.elems[3].elems[2].str, "bar");
  EXPECT_TRUE(std::regex_match(set.elems[4].str, std::regex(R"(127\.0\.0\.1:\d+)")));
  EXPECT_EQ(set.elems[5].str, "me");
  EXPECT_EQ(got.elems[1].elems[3].elems.at(1).str, "RESET");

  EXPECT_EQ(c.Raw({"SLOWLOG", "LEN"}), ":3\r\n");  // RESET, SET, GET
  Reply one = c.Call({"SLOWLOG", "GET", "1"});
  ASSERT_EQ(one.elems.size(), 1u);
  EXPECT_EQ(one.elems[0].elems[3].elems.at(1).str, "LEN");
  EXPECT_EQ(c.Call({"SLOWLOG", "GET", "-1"}).elems.size(), 5u);
  EXPECT_EQ(c.Raw({"SLOWLOG", "GET", "0"}), "*0\r\n");

  EXPECT_EQ(c.Raw({"CONFIG", "SET", "slowlog-log-slower-than", "-1"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"SLOWLOG", "RESET"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"SET", "foo", "baz"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"SLOWLOG", "LEN"}), ":0\r\n");  // -1 disables the log
}

TEST(SlowlogTest, LogsOnlyCommandsOverTheThreshold) {
  InProcessServer s(Overrides{{"slowlog-log-slower-than", "50000"}});
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  EXPECT_EQ(c.Raw({"DEBUG", "SLEEP", "0.1"}), "+OK\r\n");
  Reply got = c.Call({"SLOWLOG", "GET", "-1"});
  ASSERT_GE(got.elems.size(), 1u);
  const Reply& e = got.elems[0];
  EXPECT_GE(e.elems.at(2).integer, 100000);
  EXPECT_EQ(e.elems.at(3).elems.at(1).str, "SLEEP");
  for (const Reply& entry : got.elems) EXPECT_NE(entry.elems.at(3).elems.at(0).str, "PING");
}

// ---- MEMORY ---------------------------------------------------------------------------------

TEST(MemoryTest, UsageGrowsWithValueSize) {
  InProcessServer s;
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"MEMORY", "USAGE", "k1"}), "$-1\r\n");
  c.Call({"SET", "k1", "x"});
  c.Call({"SET", "k2", std::string(10000, 'x')});
  c.Call({"SET", "k3", std::string(100000, 'x')});
  int64_t u1 = c.Call({"MEMORY", "USAGE", "k1"}).integer;
  int64_t u2 = c.Call({"MEMORY", "USAGE", "k2"}).integer;
  int64_t u3 = c.Call({"MEMORY", "USAGE", "k3", "SAMPLES", "0"}).integer;
  EXPECT_GT(u1, 0);
  EXPECT_GE(u2, u1 + 10000);
  EXPECT_GE(u3, u2 + 90000);
  c.Call({"HELLO", "3"});
  EXPECT_EQ(c.Raw({"MEMORY", "USAGE", "nokey"}), "_\r\n");
}

TEST(MemoryTest, StatsInBothProtocols) {
  InProcessServer s;
  RespClient c(s.port());
  for (const char* k : {"a", "b", "c"}) c.Call({"SET", k, "v"});
  c.Call({"SELECT", "2"});
  c.Call({"SET", "d", "v", "EX", "100"});
  Reply flat = c.Call({"MEMORY", "STATS"});
  ASSERT_EQ(flat.type, '*');
  ASSERT_EQ(flat.elems.size() % 2, 0u);
  EXPECT_EQ(StatsField(flat, "keys.count")->integer, 4);
  EXPECT_GT(StatsField(flat, "total.allocated")->integer, 0);
  ASSERT_NE(StatsField(flat, "db.2"), nullptr);
  EXPECT_EQ(StatsField(flat, "db.1"), nullptr);  // empty databases are left out
  EXPECT_GT(StatsField(*StatsField(flat, "db.2"), "overhead.hashtable.expires")->integer, 0);
  EXPECT_EQ(StatsField(flat, "dataset.percentage")->type, '$');
  c.Call({"HELLO", "3"});
  Reply map = c.Call({"MEMORY", "STATS"});
  ASSERT_EQ(map.type, '%');
  EXPECT_EQ(StatsField(map, "db.0")->type, '%');
  EXPECT_EQ(StatsField(map, "dataset.percentage")->type, ',');
  EXPECT_EQ(StatsField(map, "keys.count")->integer, 4);
}

TEST(MemoryTest, DoctorMallocStatsPurgeAndHelp) {
  InProcessServer s;
  RespClient c(s.port());
  EXPECT_NE(c.Call({"MEMORY", "DOCTOR"}).str.find("Sam"), std::string::npos);
  EXPECT_NE(c.Call({"MEMORY", "MALLOC-STATS"}).str.find("<malloc"), std::string::npos);
  EXPECT_EQ(c.Raw({"MEMORY", "PURGE"}), "+OK\r\n");
  Reply help = c.Call({"MEMORY", "HELP"});
  ASSERT_FALSE(help.elems.empty());
  EXPECT_EQ(help.elems[0].str, "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
}

// ---- MONITOR --------------------------------------------------------------------------------

TEST(MonitorTest, ShowsOtherClientsCommandsButNotAdminOnes) {
  InProcessServer s;
  RespClient m(s.port(), 3000), c(s.port());
  ASSERT_EQ(m.Raw({"MONITOR"}), "+OK\r\n");
  c.Call({"SET", "foo", "bar baz"});
  c.Call({"SLOWLOG", "RESET"});
  c.Call({"DEBUG", "DIGEST"});
  c.Call({"SELECT", "2"});
  c.Call({"GET", "foo"});
  const std::regex kLine(R"(\+\d+\.\d{6} \[(\d+) 127\.0\.0\.1:\d+\] (.*)\r\n)");
  std::smatch match;
  std::string line = m.Read().raw;
  ASSERT_TRUE(std::regex_match(line, match, kLine)) << line;
  EXPECT_EQ(match[1].str(), "0");
  EXPECT_EQ(match[2].str(), "\"SET\" \"foo\" \"bar baz\"");
  line = m.Read().raw;
  EXPECT_NE(line.find("\"SELECT\" \"2\""), std::string::npos) << line;
  line = m.Read().raw;
  ASSERT_TRUE(std::regex_match(line, match, kLine)) << line;
  EXPECT_EQ(match[1].str(), "2");
  EXPECT_EQ(match[2].str(), "\"GET\" \"foo\"");
}

// ---- SHUTDOWN -------------------------------------------------------------------------------

// SHUTDOWN, with each option set Redis accepts, closes the connection without a reply and the
// process exits with status 0.
TEST(ShutdownTest, ClosesConnectionAndExitsZero) {
  const std::vector<Cmd> variants = {
      {"SHUTDOWN"}, {"shutdown", "nosave"}, {"SHUTDOWN", "SAVE", "NOW", "FORCE"}};
  for (const Cmd& cmd : variants) {
    ServerProcess s(ServerProcess::Kind::kKvstore);
    RespClient c(s.port(), 3000), other(s.port(), 3000);
    EXPECT_EQ(other.Raw({"PING"}), "+PONG\r\n");
    c.Send(cmd);
    EXPECT_EQ(c.Read().type, 0) << Join(cmd) << ": no reply expected";
    EXPECT_TRUE(c.WaitClosed(5000)) << Join(cmd);
    EXPECT_TRUE(other.WaitClosed(5000)) << Join(cmd);
    EXPECT_EQ(WaitExit(s.pid(), 5000), 0) << Join(cmd);
    EXPECT_EQ(s.Stop(), 0);
  }
}

TEST(ShutdownTest, SigtermExitsZero) {
  ServerProcess s(ServerProcess::Kind::kKvstore);
  RespClient c(s.port(), 3000);
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  EXPECT_EQ(s.Stop(), 0);  // SIGTERM
  EXPECT_TRUE(c.WaitClosed(2000));
}

}  // namespace
}  // namespace kv::test
