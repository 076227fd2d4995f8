// End-to-end tests of INFO, CONFIG, COMMAND and TIME: real kvstore-server processes over real
// sockets, with Debian's redis-server as the oracle for reply shapes and error texts where Redis
// is deterministic, and redis-cli as a real client.
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

namespace kv::test {
namespace {

using Fields = std::map<std::string, std::string>;

// An INFO reply: section titles in order and each section's fields.
struct Info {
  std::vector<std::string> titles;
  std::map<std::string, Fields> sections;  // by title: "Server", "Stats", ...
};

// Parses INFO text, checking the framing: "# Title" headers, "name:value" lines ending in
// \r\n, one blank line between sections.
Info ParseInfo(const std::string& text) {
  Info info;
  size_t pos = 0;
  bool expect_header = true;
  while (pos < text.size()) {
    size_t eol = text.find("\r\n", pos);
    EXPECT_NE(eol, std::string::npos) << "line without \\r\\n at " << pos;
    if (eol == std::string::npos) break;
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 2;
    if (line.empty()) {
      EXPECT_FALSE(expect_header) << "two blank lines in a row";
      expect_header = true;
      continue;
    }
    if (expect_header) {
      EXPECT_EQ(line.rfind("# ", 0), 0u) << "expected a section header: " << line;
      info.titles.push_back(line.substr(2));
      info.sections[info.titles.back()];
      expect_header = false;
      continue;
    }
    EXPECT_EQ(line.find('\n'), std::string::npos);
    size_t colon = line.find(':');
    EXPECT_NE(colon, std::string::npos) << line;
    if (colon == std::string::npos || info.titles.empty()) continue;
    info.sections[info.titles.back()][line.substr(0, colon)] = line.substr(colon + 1);
  }
  return info;
}

Info CallInfo(RespClient& c, std::vector<std::string> sections = {}) {
  sections.insert(sections.begin(), "INFO");
  Reply r = c.Call(sections);
  EXPECT_EQ(r.type, '$') << r.Debug();
  return ParseInfo(r.str);
}

Fields InfoSection(RespClient& c, const std::string& name, const std::string& title) {
  return CallInfo(c, {name}).sections[title];
}

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

std::vector<std::string> Strings(const Reply& r) {
  std::vector<std::string> out;
  for (const auto& e : r.elems) out.push_back(e.str);
  return out;
}

std::string RunShell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

class Servers : public KvstoreAndRedisSuite {
 protected:
  static int port() { return kv_->port(); }
};
#define REQUIRE_REDIS() \
  if (!redis_) GTEST_SKIP() << "redis-server is not installed"

// ---- INFO ----------------------------------------------------------------------------------

class InfoTest : public Servers {};

TEST_F(InfoTest, DefaultSectionsInRedisOrder) {
  RespClient c(port());
  const std::vector<std::string> kDefault = {"Server", "Clients", "Memory", "Persistence",
                                             "Stats", "Replication", "CPU", "Modules",
                                             "Errorstats", "Cluster", "Keyspace"};
  EXPECT_EQ(CallInfo(c).titles, kDefault);
  EXPECT_EQ(CallInfo(c, {"default"}).titles, kDefault);
  std::vector<std::string> all = kDefault;
  all.insert(all.begin() + 8, "Commandstats");
  EXPECT_EQ(CallInfo(c, {"all"}).titles, all);
  EXPECT_EQ(CallInfo(c, {"everything"}).titles, all);
  // Several sections come back in Redis' order whatever the argument order; names ignore case.
  EXPECT_EQ(CallInfo(c, {"KEYSPACE", "server", "CommandStats"}).titles,
            (std::vector<std::string>{"Server", "Commandstats", "Keyspace"}));
  EXPECT_EQ(CallInfo(c, {"default", "commandstats"}).titles, all);
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
      // Which commands ran, which errors were answered and which databases hold keys depend on
      // what earlier tests sent to each server, not on the field names. kvstore's own fields
      // are named for what Redis does not have.
      if (name == "kvstore_version" || name == "io_busy_poll_hits" ||
          name == "io_busy_poll_misses" || title == "Commandstats" || title == "Keyspace" ||
          title == "Errorstats") {
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

// ---- CONFIG --------------------------------------------------------------------------------

class ConfigTest : public Servers {};

TEST_F(ConfigTest, GetSetRoundTrip) {
  RespClient c(port());
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "client-query-buffer-limit", "100mb"}), "+OK\r\n");
  EXPECT_EQ(Strings(c.Call({"CONFIG", "GET", "client-query-buffer-limit"})),
            (std::vector<std::string>{"client-query-buffer-limit", "104857600"}));
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "client-query-buffer-limit", "1gb", "hz", "15",
                   "slowlog-max-len", "64"}),
            "+OK\r\n");
  Reply r = c.Call({"CONFIG", "GET", "hz", "slowlog-max-len", "client-query-buffer-limit", "HZ"});
  std::map<std::string, std::string> got;
  for (size_t i = 0; i + 1 < r.elems.size(); i += 2) got[r.elems[i].str] = r.elems[i + 1].str;
  EXPECT_EQ(r.elems.size(), 6u);  // each parameter once, even when two patterns match it
  EXPECT_EQ(got, (std::map<std::string, std::string>{{"hz", "15"},
                                                     {"slowlog-max-len", "64"},
                                                     {"client-query-buffer-limit", "1073741824"}}));
  Reply glob = c.Call({"CONFIG", "GET", "maxmemory-*"});
  EXPECT_GE(glob.elems.size(), 8u);
  for (size_t i = 0; i < glob.elems.size(); i += 2) {
    EXPECT_EQ(glob.elems[i].str.rfind("maxmemory-", 0), 0u);
  }
  EXPECT_EQ(c.Raw({"CONFIG", "GET", "nosuchparam"}), "*0\r\n");
  c.Call({"HELLO", "3"});
  EXPECT_EQ(c.Raw({"CONFIG", "GET", "maxmemory"}), "%1\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n");
  c.Call({"CONFIG", "SET", "hz", "10", "slowlog-max-len", "128"});
}

TEST_F(ConfigTest, ErrorsMatchRedis) {
  REQUIRE_REDIS();
  RespClient c(port()), r(redis_->port());
  const std::vector<std::vector<std::string>> kCases = {
      {"CONFIG", "GET", "maxmemory"},
      {"CONFIG", "GET", "nosuchparam"},
      {"CONFIG", "SET", "maxmemory", "abc"},
      {"CONFIG", "SET", "maxmemory", "1", "hz"},
      {"CONFIG", "SET", "maxmemory", "1", "maxmemory", "2"},
      {"CONFIG", "SET", "nosuchparam", "1"},
      {"CONFIG", "SET", "databases", "4"},
      {"CONFIG", "SET", "maxmemory-policy", "sometimes"},
      {"CONFIG", "SET", "maxmemory"},
      {"CONFIG", "GET"},
      {"CONFIG"},
      {"CONFIG", "NOSUCHSUB"},
      {"CONFIG", "REWRITE"},
      {"CONFIG", "REWRITE", "extra"},
  };
  for (const auto& args : kCases) {
    std::string what;
    for (const auto& a : args) what += a + " ";
    EXPECT_EQ(c.Raw(args), r.Raw(args)) << what;
  }
  EXPECT_EQ(c.Raw({"CONFIG", "REWRITE"}),
            "-ERR The server is running without a config file\r\n");
}

TEST(ConfigResetStat, ClearsCountersLikeRedis) {
  ServerProcess s(ServerProcess::Kind::kKvstore);
  RespClient c(s.port());
  c.Call({"SET", "k", "v"});
  c.Call({"GET", "k"});
  c.Call({"GET", "missing"});
  c.Call({"NOSUCHCOMMAND"});
  c.Call({"PEXPIRE", "k", "1"});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.Call({"GET", "k"});
  std::string dirty = InfoSection(c, "persistence", "Persistence")["rdb_changes_since_last_save"];
  EXPECT_EQ(dirty, "2");  // SET and PEXPIRE
  EXPECT_EQ(c.Raw({"CONFIG", "RESETSTAT"}), "+OK\r\n");
  Fields st = InfoSection(c, "stats", "Stats");
  EXPECT_EQ(st["total_commands_processed"], "1");  // CONFIG RESETSTAT itself, as in Redis
  for (const char* f : {"keyspace_hits", "keyspace_misses", "expired_keys", "total_error_replies",
                        "total_connections_received", "rejected_connections"}) {
    EXPECT_EQ(st[f], "0") << f;
  }
  Fields cs = InfoSection(c, "commandstats", "Commandstats");
  EXPECT_EQ(cs.size(), 2u);  // config|resetstat and the first INFO
  EXPECT_TRUE(std::regex_match(cs["cmdstat_config|resetstat"],
                               std::regex("calls=1,usec=\\d+,usec_per_call=.*,rejected_calls=0,"
                                          "failed_calls=0")));
  // What describes the present is kept: connected clients, changes since the last save.
  EXPECT_EQ(InfoSection(c, "clients", "Clients")["connected_clients"], "1");
  EXPECT_EQ(InfoSection(c, "persistence", "Persistence")["rdb_changes_since_last_save"], dirty);
}

// A kvstore-server started from a config file (ServerProcess passes options only).
class ConfigFileServer {
 public:
  explicit ConfigFileServer(const std::string& path) {
    pid_ = fork();
    if (pid_ == 0) {
      std::string bin = BuildPath("kvstore-server");
      execl(bin.c_str(), bin.c_str(), path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~ConfigFileServer() { Stop(); }
  // Waits until the server answers on `port`.
  bool WaitReady(int port) {
    for (int i = 0; i < 200; i++) {
      auto fd = net::ConnectTcp("127.0.0.1", port, 200);
      if (fd.ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

TEST(ConfigRewrite, RestartedServerLoadsTheRewrittenFile) {
  char tmpl[] = "/tmp/kvstore-rewrite-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string conf = dir + "/kvstore.conf";
  int port = FreePort();
  std::ofstream(conf) << "# kvstore test config\nport " << port << "\ndir " << dir
                      << "\nlogfile " << dir << "/log\nsave \"\"\nproto-max-bulk-len 2mb\n"
                      << "# keep this comment\nhz 10\n";
  {
    ConfigFileServer s(conf);
    ASSERT_TRUE(s.WaitReady(port));
    RespClient c(port);
    EXPECT_EQ(InfoSection(c, "server", "Server")["config_file"], conf);
    EXPECT_EQ(c.Raw({"CONFIG", "SET", "proto-max-bulk-len", "5mb", "hz", "20"}), "+OK\r\n");
    EXPECT_EQ(c.Raw({"CONFIG", "SET", "loglevel", "warning"}), "+OK\r\n");
    EXPECT_EQ(c.Raw({"CONFIG", "REWRITE"}), "+OK\r\n");
  }
  std::string text = ReadFile(conf);
  EXPECT_NE(text.find("# keep this comment"), std::string::npos) << text;
  EXPECT_NE(text.find("proto-max-bulk-len 5242880"), std::string::npos) << text;
  EXPECT_NE(text.find("hz 20"), std::string::npos) << text;
  EXPECT_NE(text.find("loglevel warning"), std::string::npos) << text;
  {
    ConfigFileServer s(conf);
    ASSERT_TRUE(s.WaitReady(port));
    RespClient c(port);
    EXPECT_EQ(Strings(c.Call({"CONFIG", "GET", "proto-max-bulk-len"})),
              (std::vector<std::string>{"proto-max-bulk-len", "5242880"}));
    EXPECT_EQ(Strings(c.Call({"CONFIG", "GET", "loglevel"}))[1], "warning");
    EXPECT_EQ(InfoSection(c, "server", "Server")["hz"], "20");
  }
  RunShell("rm -rf '" + dir + "'");
}

TEST_F(ConfigTest, Help) {
  RespClient c(port());
  std::vector<std::string> lines = Strings(c.Call({"CONFIG", "HELP"}));
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(lines[0], "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  EXPECT_EQ(lines[9], "HELP");
  REQUIRE_REDIS();
  RespClient r(redis_->port());
  std::vector<std::string> theirs = Strings(r.Call({"CONFIG", "HELP"}));
  ASSERT_EQ(theirs.size(), lines.size());
  // The last line ("    Print(s) this help.") is Context::ReplyHelp's, shared by all commands.
  for (size_t i = 0; i + 1 < lines.size(); i++) EXPECT_EQ(lines[i], theirs[i]);
}

// ---- COMMAND -------------------------------------------------------------------------------

class CommandTest : public Servers {};

TEST_F(CommandTest, CountMatchesTheTable) {
  RespClient c(port());
  Reply count = c.Call({"COMMAND", "COUNT"});
  ASSERT_EQ(count.type, ':');
  Reply all = c.Call({"COMMAND"});
  EXPECT_EQ(static_cast<int64_t>(all.elems.size()), count.integer);
  EXPECT_EQ(static_cast<int64_t>(c.Call({"COMMAND", "INFO"}).elems.size()), count.integer);
  std::vector<std::string> names = Strings(c.Call({"COMMAND", "LIST"}));
  int64_t top = std::count_if(names.begin(), names.end(), [](const std::string& n) {
    return n.find('|') == std::string::npos;
  });
  EXPECT_EQ(top, count.integer);
  for (const char* n : {"get", "info", "config", "config|get", "command|docs", "time"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
  for (const Reply& e : all.elems) EXPECT_EQ(e.elems.size(), 10u) << e.Debug();
}

TEST_F(CommandTest, InfoShape) {
  RespClient c(port());
  Reply r = c.Call({"COMMAND", "INFO", "get", "nosuchcommand", "CONFIG|GET"});
  ASSERT_EQ(r.elems.size(), 3u);
  const Reply& get = r.elems[0];
  ASSERT_EQ(get.elems.size(), 10u);
  EXPECT_EQ(get.elems[0].str, "get");
  EXPECT_EQ(get.elems[1].integer, 2);
  EXPECT_EQ(Strings(get.elems[2]), (std::vector<std::string>{"readonly", "fast"}));
  EXPECT_EQ(get.elems[3].integer, 1);
  EXPECT_EQ(get.elems[4].integer, 1);
  EXPECT_EQ(get.elems[5].integer, 1);
  EXPECT_EQ(Strings(get.elems[6]), (std::vector<std::string>{"@read", "@string", "@fast"}));
  EXPECT_TRUE(r.elems[1].is_null);
  EXPECT_EQ(r.elems[2].elems[0].str, "config|get");
  Reply config = c.Call({"COMMAND", "INFO", "config"}).elems[0];
  EXPECT_EQ(config.elems[1].integer, -2);
  EXPECT_EQ(Strings(config.elems[6]), (std::vector<std::string>{"@slow"}));
  std::set<std::string> subs;
  for (const Reply& s : config.elems[9].elems) subs.insert(s.elems[0].str);
  EXPECT_EQ(subs, (std::set<std::string>{"config|get", "config|set", "config|resetstat",
                                         "config|rewrite", "config|help"}));
  c.Call({"HELLO", "3"});
  Reply r3 = c.Call({"COMMAND", "INFO", "time"}).elems[0];
  EXPECT_EQ(r3.elems[2].type, '~');  // flags and categories are sets in RESP3
  EXPECT_EQ(r3.elems[6].type, '~');
}

TEST_F(CommandTest, InfoMatchesRedis) {
  REQUIRE_REDIS();
  RespClient c(port()), r(redis_->port());
  // Name, arity, flags and key positions; tips and key specs are not recorded.
  auto compare = [&](const char* name, size_t fields) {
    Reply ours = c.Call({"COMMAND", "INFO", name}).elems[0];
    Reply theirs = r.Call({"COMMAND", "INFO", name}).elems[0];
    ASSERT_EQ(ours.elems.size(), 10u) << name;
    for (size_t i = 0; i < fields; i++) {
      EXPECT_EQ(ours.elems[i].raw, theirs.elems[i].raw) << name << " field " << i;
    }
  };
  // ACL categories too (command_info_test.cc compares every command, tips and key specs too).
  for (const char* name : {"get", "time", "echo", "config", "config|get", "config|set",
                           "config|rewrite", "config|resetstat", "config|help", "client|list",
                           "command", "command|count", "command|list", "command|info",
                           "command|docs", "command|getkeys", "command|help", "info"}) {
    compare(name, 7);
  }
}

TEST_F(CommandTest, Docs) {
  RespClient c(port());
  Reply r = c.Call({"COMMAND", "DOCS", "get", "nosuchcommand"});
  ASSERT_EQ(r.elems.size(), 2u) << r.Debug();  // unknown names are left out
  EXPECT_EQ(r.elems[0].str, "get");
  EXPECT_EQ(Strings(r.elems[1]), (std::vector<std::string>{"summary", "Get the value of a key",
                                                           "since", "1.0.0", "group",
                                                           "string"}));
  EXPECT_EQ(c.Raw({"COMMAND", "DOCS", "nosuchcommand"}), "*0\r\n");
  EXPECT_EQ(static_cast<int64_t>(c.Call({"COMMAND", "DOCS"}).elems.size()),
            2 * c.Call({"COMMAND", "COUNT"}).integer);
  c.Call({"HELLO", "3"});
  Reply config = c.Call({"COMMAND", "DOCS", "config"});
  ASSERT_EQ(config.type, '%');
  const Reply& doc = config.elems[1];
  ASSERT_EQ(doc.type, '%');
  std::map<std::string, const Reply*> fields;
  for (size_t i = 0; i + 1 < doc.elems.size(); i += 2) fields[doc.elems[i].str] = &doc.elems[i + 1];
  EXPECT_EQ(fields["summary"]->str, "A container for server configuration commands");
  EXPECT_EQ(fields["group"]->str, "server");
  ASSERT_TRUE(fields.count("subcommands"));
  EXPECT_EQ(fields["subcommands"]->type, '%');
  EXPECT_EQ(fields["subcommands"]->elems.size(), 10u);
  // Keys of data commands group as in Redis ("generic"), not kvstore's internal name.
  Reply del = c.Call({"COMMAND", "DOCS", "del"});
  EXPECT_NE(del.raw.find("$5\r\ngroup\r\n$7\r\ngeneric\r\n"), std::string::npos) << del.raw;
}

TEST_F(CommandTest, ListFilters) {
  RespClient c(port());
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(Strings(c.Call({"COMMAND", "LIST", "FILTERBY", "PATTERN", "conf*"}))),
            (std::vector<std::string>{"config", "config|get", "config|help", "config|resetstat",
                                      "config|rewrite", "config|set"}));
  std::vector<std::string> admin = Strings(c.Call({"COMMAND", "LIST", "FILTERBY", "aclcat",
                                                   "admin"}));
  EXPECT_NE(std::find(admin.begin(), admin.end(), "config|get"), admin.end());
  EXPECT_EQ(std::find(admin.begin(), admin.end(), "get"), admin.end());
  EXPECT_EQ(c.Raw({"COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcat"}), "*0\r\n");
  EXPECT_EQ(c.Raw({"COMMAND", "LIST", "FILTERBY", "MODULE", "m"}), "*0\r\n");
  EXPECT_EQ(c.Raw({"COMMAND", "LIST", "FILTERBY", "NAME", "x"}), "-ERR syntax error\r\n");
  EXPECT_EQ(c.Raw({"COMMAND", "LIST", "FILTERBY"}), "-ERR syntax error\r\n");
  REQUIRE_REDIS();
  RespClient r(redis_->port());
  std::vector<std::string> theirs = Strings(r.Call({"COMMAND", "LIST", "FILTERBY", "PATTERN",
                                                   "co*"}));
  EXPECT_EQ(sorted(Strings(c.Call({"COMMAND", "LIST", "FILTERBY", "PATTERN", "co*"}))),
            sorted(theirs));
}

TEST_F(CommandTest, GetKeysMatchesRedis) {
  RespClient c(port());
  EXPECT_EQ(Strings(c.Call({"COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2"})),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Strings(c.Call({"COMMAND", "GETKEYS", "object", "encoding", "k"})),
            (std::vector<std::string>{"k"}));
  REQUIRE_REDIS();
  RespClient r(redis_->port());
  const std::vector<std::vector<std::string>> kCases = {
      {"COMMAND", "GETKEYS", "get", "k"},
      {"COMMAND", "GETKEYS", "del", "a", "b", "c"},
      {"COMMAND", "GETKEYS", "set", "k", "v", "EX", "10"},
      {"COMMAND", "GETKEYS", "nosuchcommand", "a"},
      {"COMMAND", "GETKEYS", "ping", "x"},
      {"COMMAND", "GETKEYS", "set", "k"},
      {"COMMAND", "GETKEYS", "get"},
      {"COMMAND", "GETKEYS", "config", "get", "x"},
      {"COMMAND", "GETKEYS", "object", "nosuchsub", "x"},
  };
  for (const auto& args : kCases) EXPECT_EQ(c.Raw(args), r.Raw(args)) << args[2];
}

TEST_F(CommandTest, HelpAndErrorsMatchRedis) {
  RespClient c(port());
  std::vector<std::string> help = Strings(c.Call({"COMMAND", "HELP"}));
  ASSERT_FALSE(help.empty());
  EXPECT_EQ(help[0], "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  REQUIRE_REDIS();
  RespClient r(redis_->port());
  EXPECT_EQ(help, Strings(r.Call({"COMMAND", "HELP"})));
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"COMMAND", "NOSUCHSUB"}, {"COMMAND", "COUNT", "x"},
                                             {"COMMAND", "HELP", "x"}}) {
    EXPECT_EQ(c.Raw(args), r.Raw(args)) << args[1];
  }
}

// ---- TIME ----------------------------------------------------------------------------------

TEST(TimeTest, ReturnsWallClockSecondsAndMicros) {
  ServerProcess s(ServerProcess::Kind::kKvstore);
  RespClient c(s.port());
  Reply r = c.Call({"TIME"});
  ASSERT_EQ(r.type, '*');
  ASSERT_EQ(r.elems.size(), 2u);
  EXPECT_EQ(r.elems[0].type, '$');
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(std::stoll(r.elems[0].str), now, 2);
  int64_t us = std::stoll(r.elems[1].str);
  EXPECT_GE(us, 0);
  EXPECT_LT(us, 1'000'000);
  Reply later = c.Call({"TIME"});
  int64_t a = std::stoll(r.elems[0].str) * 1'000'000 + us;
  int64_t b = std::stoll(later.elems[0].str) * 1'000'000 + std::stoll(later.elems[1].str);
  EXPECT_GE(b, a);
  EXPECT_EQ(c.Raw({"TIME", "x"}), "-ERR wrong number of arguments for 'time' command\r\n");
  c.Call({"HELLO", "3"});
  EXPECT_EQ(c.Call({"TIME"}).type, '*');  // an array in RESP3 too
}

}  // namespace
}  // namespace kv::test
