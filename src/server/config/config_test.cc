#include "server/config/config.h"

#include <gtest/gtest.h>

#include "server/server.h"

namespace kv::server {
namespace {

TEST(Config, DefaultsMatchRedis) {
  Config c;
  EXPECT_EQ(c.GetInt("port"), 6379);
  EXPECT_EQ(c.GetString("bind"), "* -::*");  // Redis 7.0's, with protected mode on
  EXPECT_EQ(c.GetInt("proto-max-bulk-len"), 512LL * 1024 * 1024);
  EXPECT_EQ(c.GetInt("databases"), 16);
  EXPECT_EQ(c.GetString("save"), "3600 1 300 100 60 10000");
  // Redis 7.0 refuses DEBUG, MODULE and protected configs unless told otherwise.
  for (const char* name :
       {"enable-debug-command", "enable-protected-configs", "enable-module-command"}) {
    EXPECT_EQ(c.GetString(name), "no") << name;
    EXPECT_FALSE(c.Allows(name, true)) << name;
  }
}

// yes|no|local parameters: local allows local connections only.
TEST(Config, LocalAllowsLocalConnectionsOnly) {
  Config c;
  for (const char* name :
       {"enable-debug-command", "enable-protected-configs", "enable-module-command"}) {
    ASSERT_TRUE(c.Load({{name, {"local"}, "t"}}).ok()) << name;
    EXPECT_TRUE(c.Allows(name, true)) << name;
    EXPECT_FALSE(c.Allows(name, false)) << name;
    ASSERT_TRUE(c.Load({{name, {"yes"}, "t"}}).ok()) << name;
    EXPECT_TRUE(c.Allows(name, false)) << name;
    EXPECT_FALSE(c.Load({{name, {"maybe"}, "t"}}).ok()) << name;
  }
}

// replicaof as redis.conf writes it (two arguments), as one argument, and "no one".
TEST(Config, ReplicaofTakesHostAndPort) {
  Config c;
  ASSERT_TRUE(c.Load({{"replicaof", {"10.0.0.1", "6380"}, "t"}}).ok());
  EXPECT_EQ(c.GetString("replicaof"), "10.0.0.1 6380");
  ASSERT_TRUE(c.Load({{"slaveof", {"10.0.0.2 6381"}, "t"}}).ok());
  EXPECT_EQ(c.GetString("replicaof"), "10.0.0.2 6381");
  ASSERT_TRUE(c.Load({{"replicaof", {"no", "one"}, "t"}}).ok());
  EXPECT_EQ(c.GetString("replicaof"), "");
  EXPECT_FALSE(c.Load({{"replicaof", {"10.0.0.1"}, "t"}}).ok());
  EXPECT_FALSE(c.Load({{"replicaof", {"10.0.0.1", "port"}, "t"}}).ok());
  EXPECT_FALSE(c.Load({{"replicaof", {"a", "1", "2"}, "t"}}).ok());
}

// io-threads 0: three poll groups per four cores, at least one.
TEST(Config, DefaultPollGroupsLeaveACoreInFour) {
  EXPECT_EQ(DefaultPollGroups(0), 1);
  EXPECT_EQ(DefaultPollGroups(1), 1);
  EXPECT_EQ(DefaultPollGroups(2), 1);
  EXPECT_EQ(DefaultPollGroups(3), 2);
  EXPECT_EQ(DefaultPollGroups(4), 3);
  EXPECT_EQ(DefaultPollGroups(8), 6);
  EXPECT_EQ(DefaultPollGroups(16), 12);
}

TEST(Config, SetManyIsAtomic) {
  Config c;
  EXPECT_TRUE(c.SetMany({{"maxclients", "100"}, {"timeout", "5"}}).ok());
  EXPECT_EQ(c.GetInt("maxclients"), 100);
  Status s = c.SetMany({{"timeout", "7"}, {"maxclients", "nope"}});
  EXPECT_EQ(s.message(),
            "CONFIG SET failed (possibly related to argument 'maxclients') - "
            "argument couldn't be parsed into an integer");
  EXPECT_EQ(c.GetInt("timeout"), 5);  // nothing applied
  EXPECT_EQ(c.SetMany({{"nosuch", "1"}}).message(),
            "Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  EXPECT_EQ(c.SetMany({{"daemonize", "yes"}}).message(),
            "CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable "
            "config");
}

// A group (the TLS context) applies once per CONFIG SET, after all of its values are in place,
// and a failure puts every value of the call back.
TEST(Config, GroupsApplyOnceWithEveryValueInPlace) {
  Config c;
  int runs = 0;
  std::vector<std::pair<std::string, std::string>> seen;
  c.OnApplyGroup({"tls-cert-file", "tls-key-file"}, [&] {
    runs++;
    seen.emplace_back(c.GetString("tls-cert-file"), c.GetString("tls-key-file"));
    return c.GetString("tls-key-file") == "bad" ? Status::Invalid("Unable to update TLS")
                                                : Status::Ok();
  });
  EXPECT_TRUE(c.ApplyAll().ok());
  EXPECT_EQ(runs, 1);
  ASSERT_TRUE(c.SetMany({{"tls-cert-file", "a.crt"}, {"timeout", "3"}, {"tls-key-file", "a.key"}})
                  .ok());
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(seen.back(), std::make_pair(std::string("a.crt"), std::string("a.key")));
  Status s = c.SetMany({{"timeout", "9"}, {"tls-cert-file", "b.crt"}, {"tls-key-file", "bad"}});
  EXPECT_EQ(s.message(),
            "CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update "
            "TLS");
  EXPECT_EQ(c.GetString("tls-cert-file"), "a.crt");
  EXPECT_EQ(c.GetString("tls-key-file"), "a.key");
  EXPECT_EQ(c.GetInt("timeout"), 3);
}

TEST(Config, TypesAreCanonicalised) {
  Config c;
  ASSERT_TRUE(c.SetMany({{"client-query-buffer-limit", "2gb"},
                         {"rdbcompression", "NO"},
                         {"loglevel", "WARNING"}})
                  .ok());
  EXPECT_EQ(c.GetString("client-query-buffer-limit"), "2147483648");
  EXPECT_EQ(c.GetString("rdbcompression"), "no");
  EXPECT_EQ(c.GetString("loglevel"), "warning");
  EXPECT_FALSE(c.SetMany({{"loglevel", "sometimes"}}).ok());
  EXPECT_FALSE(c.SetMany({{"maxclients", "0"}}).ok());
}

TEST(Config, GetMatchesGlobsAndAliases) {
  Config c;
  auto r = c.Get({"maxmemory*"});
  EXPECT_GE(r.size(), 5u);
  auto a = c.Get({"slave-read-only"});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].second, "yes");
  auto z = c.Get({"hash-max-ziplist-entries"});
  ASSERT_EQ(z.size(), 1u);
  EXPECT_EQ(z[0].second, "512");
}

TEST(Config, LoadAccumulatesSaveAndRejectsUnknown) {
  Config c;
  auto d = ParseConfigText("save 900 1\nsave 300 10\nrename-command FLUSHALL \"\"\n", "t");
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(c.Load(*d).ok());
  EXPECT_EQ(c.GetString("save"), "900 1 300 10");
  ASSERT_EQ(c.renames().size(), 1u);
  Config c2;
  auto bad = ParseConfigText("port seventy\n", "f.conf");
  Status s = c2.Load(*bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at line 1\n>>> 'port seventy'\n"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("argument couldn't be parsed into an integer"), std::string::npos);
}

TEST(Config, OutputBufferLimitsMergeByClass) {
  Config c;
  ASSERT_TRUE(c.SetMany({{"client-output-buffer-limit", "pubsub 64mb 16mb 90"}}).ok());
  EXPECT_EQ(c.GetString("client-output-buffer-limit"),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 67108864 16777216 90");
}

}  // namespace
}  // namespace kv::server

namespace kv::server {
namespace {

// Every parameter name Redis 7.0.15 reports for `CONFIG GET *` (minus none) is accepted.
TEST(Config, KnowsEveryRedis70Parameter) {
  const char* kRedisNames[] = {
#include "server/config/redis70_params.inc"
  };
  Config c;
  for (const char* name : kRedisNames) {
    EXPECT_EQ(c.Get({name}).size(), 1u) << name;
  }
}

}  // namespace
}  // namespace kv::server

namespace kv::server {
namespace {

TEST(Config, ImmutableAndProtectedAsRedis) {
  Config c;
  EXPECT_EQ(c.SetMany({{"databases", "4"}}).message(),
            "CONFIG SET failed (possibly related to argument 'databases') - can't set immutable "
            "config");
  EXPECT_EQ(c.SetMany({{"dir", "/tmp"}}).message(),
            "CONFIG SET failed (possibly related to argument 'dir') - can't set protected config");
  EXPECT_TRUE(c.SetMany({{"rdbcompression", "no"}}).ok());
  Config open;
  auto d = ParseConfigText("enable-protected-configs yes\n", "t");
  ASSERT_TRUE(open.Load(*d).ok());
  EXPECT_TRUE(open.SetMany({{"dbfilename", "x.rdb"}}).ok());
}

}  // namespace
}  // namespace kv::server
