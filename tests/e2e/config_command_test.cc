// End-to-end tests of CONFIG, COMMAND and TIME: real kvstore-server processes over real sockets,
// with Debian's redis-server as the oracle for reply shapes and error texts where Redis is
// deterministic.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/info_util.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

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
  EXPECT_EQ(c.Raw({"CONFIG", "REWRITE"}), "-ERR The server is running without a config file\r\n");
}

// CONFIG GET shows the event classes as Redis writes them back ("KA" is "AK").
TEST_F(ConfigTest, NotifyKeyspaceEventsReadBackAsRedisWritesThem) {
  REQUIRE_REDIS();
  RespClient c(port()), r(redis_->port());
  for (const char* v : {"KA", "EA", "AK", "gK", "$lK", "KEA", "Ag", "g$lshzxetd", "g$lshzxetdKE",
                        "nK", "mK", "Am", "Ad", "xeK", "KEm", "tdK", "ng", "Kq", ""}) {
    std::vector<std::string> set = {"CONFIG", "SET", "notify-keyspace-events", v};
    EXPECT_EQ(c.Raw(set), r.Raw(set)) << v;
    std::vector<std::string> get = {"CONFIG", "GET", "notify-keyspace-events"};
    EXPECT_EQ(c.Raw(get), r.Raw(get)) << v;
  }
  // Redis' text drops an 'n' beside 'A' but keeps sending new-key events: kvstore shows it.
  for (RespClient* s : {&c, &r}) {
    ASSERT_EQ(s->Raw({"CONFIG", "SET", "notify-keyspace-events", "AKEn"}), "+OK\r\n");
  }
  EXPECT_EQ(Strings(c.Call({"CONFIG", "GET", "notify-keyspace-events"})),
            (std::vector<std::string>{"notify-keyspace-events", "AnKE"}));
  for (int p : {port(), redis_->port()}) {
    RespClient sub(p), w(p);
    sub.Call({"SUBSCRIBE", "__keyevent@0__:new"});
    w.Call({"DEL", "nk"});
    w.Call({"SET", "nk", "1"});
    Reply m = sub.Read();
    ASSERT_EQ(m.elems.size(), 3u) << m.Debug();
    EXPECT_EQ(m.elems[2].str, "nk");
    w.Call({"CONFIG", "SET", "notify-keyspace-events", ""});
  }
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
  std::ofstream(conf) << "# kvstore test config\nport " << port << "\ndir " << dir << "\nlogfile "
                      << dir << "/log\nsave \"\"\nproto-max-bulk-len 2mb\n"
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
  EXPECT_NE(text.find("proto-max-bulk-len 5mb"), std::string::npos) << text;  // as Redis writes it
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
                                                           "since", "1.0.0", "group", "string"}));
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
  std::vector<std::string> admin =
      Strings(c.Call({"COMMAND", "LIST", "FILTERBY", "aclcat", "admin"}));
  EXPECT_NE(std::find(admin.begin(), admin.end(), "config|get"), admin.end());
  EXPECT_EQ(std::find(admin.begin(), admin.end(), "get"), admin.end());
  EXPECT_EQ(c.Raw({"COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcat"}), "*0\r\n");
  EXPECT_EQ(c.Raw({"COMMAND", "LIST", "FILTERBY", "MODULE", "m"}), "*0\r\n");
  EXPECT_EQ(c.Raw({"COMMAND", "LIST", "FILTERBY", "NAME", "x"}), "-ERR syntax error\r\n");
  EXPECT_EQ(c.Raw({"COMMAND", "LIST", "FILTERBY"}), "-ERR syntax error\r\n");
  REQUIRE_REDIS();
  RespClient r(redis_->port());
  std::vector<std::string> theirs =
      Strings(r.Call({"COMMAND", "LIST", "FILTERBY", "PATTERN", "co*"}));
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
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"COMMAND", "NOSUCHSUB"}, {"COMMAND", "COUNT", "x"}, {"COMMAND", "HELP", "x"}}) {
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
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
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
