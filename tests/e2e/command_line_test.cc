// The server's command line read as Redis 7.0 reads it (the forms of Redis' introspection
// tests): each case runs against kvstore and redis-server, and the refusals and the resulting
// settings must be the same.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Args = std::vector<std::string>;

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs the server with `args`, expecting it to refuse them; returns the quoted line and the
// reason of its FATAL CONFIG FILE ERROR ("" when there is none).
std::string Refusal(Kind kind, const Args& args) {
  std::string cmd = "timeout 20 " + (kind == Kind::kRedis ? std::string("/usr/bin/redis-server")
                                                          : BuildPath("kvstore-server"));
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  pclose(p);
  size_t at = out.find("\n>>> ");
  if (at == std::string::npos) return "no refusal in: " + out;
  size_t end = out.find('\n', out.find('\n', at + 1) + 1);
  return out.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
}

class CommandLine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

TEST_F(CommandLine, RefusalsQuoteTheLineAsRedisDoes) {
  const Args cases[] = {
      {"--port"},
      {"--port", "6380", "--loglevel"},
      {"--port", "6379", "6380"},  // both values are the port's
      {"--port", "--loglevel", "verbose"},
      {"--port", "--bla", "--loglevel", "verbose"},
      {"--logfile", "--my--log--file", "--loglevel", "--bla"},
      {"--shutdown-on-sigint"},
      {"--shutdown-on-sigint", "now force", "--shutdown-on-sigterm"},
      {"--replicaof", "127.0.0.1", "abc"},
      {"--replicaof", "--127.0.0.1", "abc"},
      {"--replicaof", "--127.0.0.1", "--abc"},
  };
  for (const auto& c : cases) {
    std::string redis = Refusal(Kind::kRedis, c);
    ASSERT_EQ(redis.rfind(">>> '", 0), 0u) << redis;
    EXPECT_EQ(Refusal(Kind::kKvstore, c), redis) << c[0];
  }
}

TEST_F(CommandLine, AcceptedFormsSetWhatRedisSets) {
  struct Case {
    Args args;
    std::vector<std::string> params;
  };
  const Case cases[] = {
      {{"--maxmemory 700mb", "--maxmemory-policy volatile-lru"}, {"maxmemory", "maxmemory-policy"}},
      {{"--maxmemory '700mb'", "--maxmemory-policy 'volatile-lru'"},
       {"maxmemory", "maxmemory-policy"}},
      {{"--proc-title-template", "--my--title--template", "--loglevel", "verbose"},
       {"proc-title-template", "loglevel"}},
      {{"--proc-title-template --my--title--template", "--loglevel verbose"},
       {"proc-title-template", "loglevel"}},
      {{"--save", "--loglevel", "verbose"}, {"save", "loglevel"}},
      {{"--loglevel", "verbose", "--save"}, {"save", "loglevel"}},
      {{"--proc-title-template", "--save", "--save", "", "--loglevel", "verbose"},
       {"proc-title-template", "save", "loglevel"}},
      {{"--save", "--save", "60", "1"}, {"save"}},
      {{"--shutdown-on-sigint", "nosave", "force", "now", "--shutdown-on-sigterm", "nosave force"},
       {"shutdown-on-sigint", "shutdown-on-sigterm"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args[0] + " ...");
    std::vector<std::string> got[2];
    for (Kind k : {Kind::kRedis, Kind::kKvstore}) {
      ServerProcess s(k, c.args);
      RespClient rc(s.port());
      for (const auto& p : c.params) {
        Reply r = rc.Call({"CONFIG", "GET", p});
        got[k == Kind::kKvstore].push_back(r.elems.size() == 2 ? r.elems[1].str : r.Debug());
      }
    }
    EXPECT_EQ(got[1], got[0]);
  }
}

}  // namespace
}  // namespace kv::test
