// End-to-end tests of INFO: real kvstore-server processes over real sockets, with Debian's
// redis-server as the oracle for reply shapes where Redis is deterministic, and redis-cli as a
// real client. CONFIG, COMMAND and TIME are in config_command_test.cc.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/suite_servers.h"
#include "tests/e2e/info_util.h"

namespace kv::test {
namespace {

int64_t StatOf(RespClient& c, const std::string& field) {
  Fields f = InfoSection(c, "stats", "Stats");
  EXPECT_TRUE(f.count(field)) << field;
  return std::stoll(f[field]);
}

// The calls= of one command's commandstats line, 0 when it has none.
int64_t CallsOf(RespClient& c, const std::string& cmd) {
  Fields f = InfoSection(c, "commandstats", "Commandstats");
  auto it = f.find("cmdstat_" + cmd);
  if (it == f.end()) return 0;
  return std::stoll(it->second.substr(it->second.find('=') + 1));
}

// ---- INFO ----------------------------------------------------------------------------------

class InfoTest : public Servers {};

TEST_F(InfoTest, DefaultSectionsInRedisOrder) {
  RespClient c(port());
  const std::vector<std::string> kDefault = {"Server", "Clients", "Memory", "Persistence",
                                             "Stats", "Replication", "CPU", "Modules",
                                             "Errorstats", "Cluster", "Keyspace"};
  EXPECT_EQ(CallInfo(c).titles, kDefault);
  EXPECT_EQ(CallInfo(c, {"default"}).titles, kDefault);
  std::vector<std::string> with_commandstats = kDefault;
  with_commandstats.insert(with_commandstats.begin() + 8, "Commandstats");
  std::vector<std::string> all = with_commandstats;
  all.insert(all.begin() + 10, "Latencystats");
  EXPECT_EQ(CallInfo(c, {"all"}).titles, all);
  EXPECT_EQ(CallInfo(c, {"everything"}).titles, all);
  // Several sections come back in Redis' order whatever the argument order; names ignore case.
  EXPECT_EQ(CallInfo(c, {"KEYSPACE", "server", "CommandStats"}).titles,
            (std::vector<std::string>{"Server", "Commandstats", "Keyspace"}));
  EXPECT_EQ(CallInfo(c, {"default", "commandstats"}).titles, with_commandstats);
}

TEST(InfoErrorStats, CountsErrorRepliesByCode) {
  ServerProcess s(ServerProcess::Kind::kKvstore, {"--requirepass", "pw"});
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"AUTH", "pw"}), "+OK\r\n");
  // Start from zero: the harness' readiness probe was answered NOAUTH too.
  EXPECT_EQ(c.Raw({"CONFIG", "RESETSTAT"}), "+OK\r\n");
  RespClient anon(s.port());
  EXPECT_EQ(anon.Call({"GET", "k"}).type, '-');  // NOAUTH
  EXPECT_EQ(c.Call({"NOSUCHCOMMAND"}).type, '-');
  EXPECT_EQ(c.Call({"INCR", "nonint"}).type, ':');
  ASSERT_EQ(c.Raw({"SET", "s", "abc"}), "+OK\r\n");
  EXPECT_EQ(c.Call({"INCR", "s"}).type, '-');
  Fields f = InfoSection(c, "errorstats", "Errorstats");
  EXPECT_EQ(f["errorstat_NOAUTH"], "count=1");
  EXPECT_EQ(f["errorstat_ERR"], "count=2");
  EXPECT_EQ(c.Raw({"CONFIG", "RESETSTAT"}), "+OK\r\n");
  EXPECT_TRUE(InfoSection(c, "errorstats", "Errorstats").empty());
}

TEST_F(InfoTest, FramingAndUnknownSection) {
  RespClient c(port());
  std::string text = c.Call({"INFO", "server", "cluster"}).str;
  EXPECT_EQ(text.rfind("# Server\r\nredis_version:7.0.15\r\n", 0), 0u) << text;
  EXPECT_NE(text.find("\r\n\r\n# Cluster\r\ncluster_enabled:0\r\n"), std::string::npos);
  EXPECT_TRUE(text.ends_with("\r\ncluster_enabled:0\r\n")) << text;  // no trailing blank line
  EXPECT_EQ(c.Raw({"INFO", "nosuchsection"}), "$0\r\n\r\n");
  EXPECT_EQ(c.Call({"HELLO", "3"}).type, '%');
  Reply r = c.Call({"INFO", "cluster"});
  EXPECT_EQ(r.raw, "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n");
  EXPECT_EQ(c.Raw({"INFO", "nosuchsection"}), "=4\r\ntxt:\r\n");
}

TEST_F(InfoTest, ServerSectionDescribesThisProcess) {
  RespClient c(port());
  Fields f = InfoSection(c, "server", "Server");
  EXPECT_EQ(f["redis_version"], "7.0.15");
  EXPECT_EQ(f["kvstore_version"], "0.1.0");
  EXPECT_EQ(f["redis_mode"], "standalone");
  EXPECT_EQ(f["arch_bits"], "64");
  EXPECT_EQ(f["multiplexing_api"], "epoll");
  EXPECT_EQ(f["process_id"], std::to_string(kv_->pid()));
  EXPECT_EQ(f["tcp_port"], std::to_string(port()));
  EXPECT_TRUE(std::regex_match(f["run_id"], std::regex("[0-9a-f]{40}"))) << f["run_id"];
  EXPECT_TRUE(f["executable"].ends_with("/kvstore-server")) << f["executable"];
  EXPECT_EQ(f["config_file"], "");
  EXPECT_EQ(f["hz"], "10");
  int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(std::stoll(f["server_time_usec"]), now_us, 5'000'000);
  EXPECT_GE(std::stoll(f["uptime_in_seconds"]), 0);
  // INFO was read a moment before now_us: a second may have ticked over in between.
  int64_t lru = std::stoll(f["lru_clock"]);
  int64_t expected = (now_us / 1'000'000) & 0xFFFFFF;
  EXPECT_TRUE(lru == expected || lru == ((expected - 1) & 0xFFFFFF)) << lru << " vs " << expected;
}

TEST_F(InfoTest, CountersFollowTraffic) {
  RespClient c(port());
  int64_t before = StatOf(c, "total_commands_processed");
  for (int i = 0; i < 5; i++) c.Call({"PING"});
  // Five PINGs and the INFO that reads the counter.
  EXPECT_EQ(StatOf(c, "total_commands_processed"), before + 6);

  int64_t conns = StatOf(c, "total_connections_received");
  {
    RespClient a(port()), b(port());
    a.Call({"PING"});
    b.Call({"PING"});
  }
  EXPECT_EQ(StatOf(c, "total_connections_received"), conns + 2);

  int64_t in = StatOf(c, "total_net_input_bytes");
  c.Call({"ECHO", std::string(10000, 'x')});
  EXPECT_GE(StatOf(c, "total_net_input_bytes"), in + 10000);
  int64_t out = StatOf(c, "total_net_output_bytes");
  c.Call({"ECHO", std::string(10000, 'y')});
  EXPECT_GE(StatOf(c, "total_net_output_bytes"), out + 10000);

  int64_t errors = StatOf(c, "total_error_replies");
  EXPECT_TRUE(c.Call({"NOSUCHCOMMAND"}).is_error());
  EXPECT_TRUE(c.Call({"CONFIG", "SET", "maxmemory", "abc"}).is_error());
  EXPECT_EQ(StatOf(c, "total_error_replies"), errors + 2);
}

// A client that sends each request as soon as its reply arrives is served by the poll group's
// busy poll (io-busy-poll-us, on by default) rather than by wake-ups; at 0 the group sleeps.
TEST(InfoBusyPoll, BackToBackRequestsAreFoundByTheBusyPoll) {
  ServerProcess s(ServerProcess::Kind::kKvstore, {"--io-threads", "1"});
  RespClient c(s.port());
  EXPECT_EQ(c.Call({"CONFIG", "GET", "io-busy-poll-us"}).elems.at(1).str, "50");
  for (int i = 0; i < 20; i++) c.Call({"PING"});
  EXPECT_GT(StatOf(c, "io_busy_poll_hits") + StatOf(c, "io_busy_poll_misses"), 0);
  // The poll lasts 50 us; give it 5 ms so that a slow machine still finds the next request.
  ASSERT_EQ(c.Call({"CONFIG", "SET", "io-busy-poll-us", "5000"}).str, "OK");
  int64_t hits = StatOf(c, "io_busy_poll_hits");
  for (int i = 0; i < 200; i++) c.Call({"PING"});
  EXPECT_GE(StatOf(c, "io_busy_poll_hits"), hits + 150);

  ASSERT_EQ(c.Call({"CONFIG", "SET", "io-busy-poll-us", "0"}).str, "OK");
  hits = StatOf(c, "io_busy_poll_hits");
  int64_t misses = StatOf(c, "io_busy_poll_misses");
  for (int i = 0; i < 200; i++) c.Call({"PING"});
  // The group reads the setting before each wait: from the CONFIG SET's reply on, no polls.
  EXPECT_EQ(StatOf(c, "io_busy_poll_hits"), hits);
  EXPECT_EQ(StatOf(c, "io_busy_poll_misses"), misses);
}

TEST_F(InfoTest, KeyspaceHitsMissesAndExpiry) {
  RespClient c(port());
  c.Call({"SET", "info:hit", "v"});
  int64_t hits = StatOf(c, "keyspace_hits"), misses = StatOf(c, "keyspace_misses");
  c.Call({"GET", "info:hit"});
  c.Call({"GET", "info:nosuchkey"});
  c.Call({"GET", "info:nosuchkey"});
  EXPECT_EQ(StatOf(c, "keyspace_hits"), hits + 1);
  EXPECT_EQ(StatOf(c, "keyspace_misses"), misses + 2);

  int64_t expired = StatOf(c, "expired_keys");
  c.Call({"SET", "info:short", "v"});
  c.Call({"PEXPIRE", "info:short", "20"});
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_TRUE(c.Call({"GET", "info:short"}).is_null);
  EXPECT_EQ(StatOf(c, "expired_keys"), expired + 1);
}

TEST_F(InfoTest, KeyspaceLines) {
  RespClient c(port());
  EXPECT_EQ(c.Raw({"SELECT", "7"}), "+OK\r\n");
  c.Call({"FLUSHDB"});
  EXPECT_FALSE(InfoSection(c, "keyspace", "Keyspace").count("db7"));
  c.Call({"SET", "a", "1"});
  EXPECT_EQ(InfoSection(c, "keyspace", "Keyspace")["db7"], "keys=1,expires=0,avg_ttl=0");
  c.Call({"SET", "b", "2"});
  c.Call({"EXPIRE", "b", "100"});
  std::smatch m;
  std::string line = InfoSection(c, "keyspace", "Keyspace")["db7"];
  ASSERT_TRUE(std::regex_match(line, m, std::regex("keys=2,expires=1,avg_ttl=(\\d+)"))) << line;
  EXPECT_GT(std::stoll(m[1]), 90'000);
  EXPECT_LE(std::stoll(m[1]), 100'000);
  c.Call({"FLUSHDB"});
  EXPECT_FALSE(InfoSection(c, "keyspace", "Keyspace").count("db7"));
}

TEST_F(InfoTest, CommandStatsCountCallsSubcommandsAndFailures) {
  RespClient c(port());
  int64_t echo = CallsOf(c, "echo");
  for (int i = 0; i < 3; i++) c.Call({"ECHO", "x"});
  EXPECT_EQ(CallsOf(c, "echo"), echo + 3);
  int64_t id = CallsOf(c, "client|id");
  c.Call({"CLIENT", "ID"});
  EXPECT_EQ(CallsOf(c, "client|id"), id + 1);
  c.Call({"CONFIG", "SET", "maxmemory", "notanumber"});
  Fields f = InfoSection(c, "commandstats", "Commandstats");
  const std::regex kLine(
      "calls=(\\d+),usec=(\\d+),usec_per_call=\\d+\\.\\d\\d,rejected_calls=\\d+,"
      "failed_calls=(\\d+)");
  for (const auto& [name, value] : f) {
    EXPECT_TRUE(std::regex_match(name, std::regex("cmdstat_[a-z|-]+"))) << name;
    EXPECT_TRUE(std::regex_match(value, kLine)) << name << ":" << value;
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_match(f["cmdstat_config|set"], m, kLine)) << f["cmdstat_config|set"];
  EXPECT_GE(std::stoll(m[3]), 1);
  EXPECT_FALSE(f.count("cmdstat_client"));  // the container itself never ran
}

TEST_F(InfoTest, MemoryFollowsTheDataset) {
  RespClient c(port());
  const std::regex kHuman("\\d+B|\\d+\\.\\d\\d[KMGTP]");
  Fields before = InfoSection(c, "memory", "Memory");
  EXPECT_EQ(before["mem_allocator"], "libc");
  EXPECT_TRUE(std::regex_match(before["used_memory_human"], kHuman));
  EXPECT_GT(std::stoll(before["used_memory_rss"]), 0);
  EXPECT_GT(std::stoll(before["total_system_memory"]), 0);
  std::string big(1 << 20, 'm');
  for (int i = 0; i < 8; i++) c.Call({"SET", "info:big" + std::to_string(i), big});
  Fields grown = InfoSection(c, "memory", "Memory");
  int64_t used = std::stoll(grown["used_memory"]);
  EXPECT_GE(used, std::stoll(before["used_memory"]) + 8 * (1 << 20));
  EXPECT_GE(std::stoll(grown["used_memory_peak"]), used);
  EXPECT_GE(std::stoll(grown["used_memory_rss"]), 8 * (1 << 20));
  for (int i = 0; i < 8; i++) c.Call({"DEL", "info:big" + std::to_string(i)});
  Fields shrunk = InfoSection(c, "memory", "Memory");
  EXPECT_LE(std::stoll(shrunk["used_memory"]), used - 6 * (1 << 20));
  EXPECT_GE(std::stoll(shrunk["used_memory_peak"]), used);  // the peak is remembered
}

TEST_F(InfoTest, ConfigChangesShowInInfo) {
  RespClient c(port());
  c.Call({"CONFIG", "SET", "maxmemory", "10gb", "maxmemory-policy", "allkeys-lfu"});
  c.Call({"CONFIG", "SET", "repl-backlog-size", "2mb", "maxclients", "500"});
  Fields m = InfoSection(c, "memory", "Memory");
  EXPECT_EQ(m["maxmemory"], "10737418240");
  EXPECT_EQ(m["maxmemory_human"], "10.00G");
  EXPECT_EQ(m["maxmemory_policy"], "allkeys-lfu");
  c.Call({"CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction"});
  EXPECT_EQ(InfoSection(c, "replication", "Replication")["repl_backlog_size"], "2097152");
  EXPECT_EQ(InfoSection(c, "clients", "Clients")["maxclients"], "500");
  c.Call({"CONFIG", "SET", "repl-backlog-size", "1mb", "maxclients", "10000"});
}

TEST_F(InfoTest, ReplicationPersistenceAndClients) {
  RespClient c(port());
  Info info = CallInfo(c);
  Fields& r = info.sections["Replication"];
  EXPECT_EQ(r["role"], "master");
  EXPECT_EQ(r["connected_slaves"], "0");
  // Like Redis, the replication ID is its own random 40-hex-digit ID, not the run ID.
  EXPECT_EQ(r["master_replid"].size(), 40u);
  EXPECT_EQ(r["master_replid"].find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(r["master_replid2"], std::string(40, '0'));
  EXPECT_EQ(r["second_repl_offset"], "-1");
  Fields& p = info.sections["Persistence"];
  EXPECT_EQ(p["rdb_bgsave_in_progress"], "0");
  EXPECT_EQ(p["loading"], "0");
  int64_t started = std::stoll(info.sections["Server"]["server_time_usec"]) / 1'000'000 -
                    std::stoll(info.sections["Server"]["uptime_in_seconds"]);
  EXPECT_NEAR(std::stoll(p["rdb_last_save_time"]), started, 1);
  int64_t dirty = std::stoll(p["rdb_changes_since_last_save"]);
  c.Call({"SET", "info:dirty", "1"});
  c.Call({"SET", "info:dirty", "2"});
  EXPECT_EQ(std::stoll(InfoSection(c, "persistence", "Persistence")["rdb_changes_since_last_save"]),
            dirty + 2);
  RespClient other(port());
  other.Call({"PING"});
  Fields cl = InfoSection(c, "clients", "Clients");
  EXPECT_GE(std::stoll(cl["connected_clients"]), 2);
  EXPECT_EQ(cl["blocked_clients"], "0");
}

TEST_F(InfoTest, CpuAndInstantaneousOpsMove) {
  RespClient c(port());
  auto cpu = [&] {
    Fields f = InfoSection(c, "cpu", "CPU");
    EXPECT_TRUE(std::regex_match(f["used_cpu_user"], std::regex("\\d+\\.\\d{6}")));
    return std::stod(f["used_cpu_user"]) + std::stod(f["used_cpu_sys"]);
  };
  double before = cpu();
  std::string batch;
  for (int i = 0; i < 2000; i++) batch += RespClient::Encode({"ECHO", "load"});
  int64_t ops = 0;
  // Keep the server busy across several cron samples, then read the rate it measured.
  for (int round = 0; round < 20; round++) {
    c.SendRaw(batch);
    for (int i = 0; i < 2000; i++) c.Read();
    if (round >= 10) ops = std::max(ops, StatOf(c, "instantaneous_ops_per_sec"));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GT(ops, 0);
  EXPECT_GT(cpu(), before);
}

TEST_F(InfoTest, FieldNamesAreRedisFieldNames) {
  REQUIRE_REDIS();
  RespClient c(port()), r(redis_->port());
  Info ours = CallInfo(c, {"everything"});
  Info theirs = CallInfo(r, {"everything"});
  for (const auto& [title, fields] : ours.sections) {
    ASSERT_TRUE(theirs.sections.count(title)) << title;
    for (const auto& [name, value] : fields) {
      // Which commands ran (commandstats, latencystats), which errors were answered and which
      // databases hold keys depend on what earlier tests sent to each server, not on the field
      // names. kvstore's own fields are named for what Redis does not have.
      if (name == "kvstore_version" || name == "io_busy_poll_hits" ||
          name == "io_busy_poll_misses" || title == "Commandstats" || title == "Keyspace" ||
          title == "Errorstats" || title == "Latencystats") {
        continue;
      }
      EXPECT_TRUE(theirs.sections[title].count(name)) << title << ": " << name;
    }
  }
}

TEST_F(InfoTest, RedisCliPrintsInfo) {
  if (access("/usr/bin/redis-cli", X_OK) != 0) GTEST_SKIP() << "redis-cli is not installed";
  std::string cli = "/usr/bin/redis-cli -p " + std::to_string(port());
  std::string info = RunShell(cli + " INFO 2>&1");
  EXPECT_NE(info.find("# Server"), std::string::npos) << info;
  EXPECT_NE(info.find("kvstore_version:0.1.0"), std::string::npos);
  EXPECT_NE(info.find("# Keyspace"), std::string::npos);
  EXPECT_EQ(RunShell(cli + " CONFIG GET maxmemory 2>&1"), "maxmemory\n0\n");
  std::string docs = RunShell(cli + " --no-raw COMMAND DOCS get 2>&1");
  EXPECT_NE(docs.find("1) \"get\""), std::string::npos) << docs;
  EXPECT_NE(docs.find("\"Get the value of a key\""), std::string::npos) << docs;
}

// redis-cli fetches COMMAND DOCS when it starts on a terminal and uses it for `help`.
TEST_F(InfoTest, RedisCliInteractiveStartup) {
  if (access("/usr/bin/redis-cli", X_OK) != 0 || access("/usr/bin/script", X_OK) != 0) {
    GTEST_SKIP() << "redis-cli or script(1) is not installed";
  }
  RespClient c(port());
  int64_t docs = CallsOf(c, "command|docs");
  char dir[] = "/tmp/kvstore-cli-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string input = std::string(dir) + "/in.txt";
  std::ofstream(input) << "set info:cli 42\nget info:cli\nhelp get\nexit\n";
  std::string out = RunShell("timeout 20 /usr/bin/script -qc '/usr/bin/redis-cli -p " +
                             std::to_string(port()) + " < " + input + "' /dev/null 2>&1");
  RunShell(std::string("rm -rf ") + dir);
  EXPECT_NE(out.find("\"42\""), std::string::npos) << out;
  EXPECT_NE(out.find("Get the value of a key"), std::string::npos) << out;
  EXPECT_EQ(CallsOf(c, "command|docs"), docs + 1);
}

}  // namespace
}  // namespace kv::test
