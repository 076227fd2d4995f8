// End-to-end tests of key positions for the movable-key commands (numkeys commands and SORT):
// COMMAND GETKEYS with valid and invalid numkeys, COMMAND INFO and COMMAND's movablekeys flag,
// compared byte for byte with Debian's redis-server; COMMAND INFO of every data command; and
// COMMAND GETKEYS / GETKEYSANDFLAGS of every command.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/suite_servers.h"

namespace kv::test {
namespace {

using Args = std::vector<std::string>;

// Every movable-key command kvstore implements (Redis 7.0 also has EVAL, FCALL, XREAD,
// GEORADIUS and MIGRATE).
const char* const kMovable[] = {"lmpop",       "blmpop",      "zmpop",      "bzmpop",
                                "zunion",      "zinter",      "zdiff",      "zintercard",
                                "sintercard",  "zunionstore", "zinterstore", "zdiffstore",
                                "sort",        "sort_ro"};

class CommandKeysTest : public KvstoreAndRedisSuite {};
#define REQUIRE_REDIS() \
  if (!redis_) GTEST_SKIP() << "redis-server is not installed"

Args GetKeys(Args cmd) {
  cmd.insert(cmd.begin(), {"COMMAND", "GETKEYS"});
  return cmd;
}

std::vector<std::string> Strings(const Reply& r) {
  std::vector<std::string> out;
  for (const auto& e : r.elems) out.push_back(e.str);
  return out;
}

TEST_F(CommandKeysTest, GetKeysFindsMovableKeys) {
  RespClient c(kv_->port());
  using V = std::vector<std::string>;
  EXPECT_EQ(Strings(c.Call(GetKeys({"zunionstore", "d", "2", "a", "b", "weights", "1", "2"}))),
            (V{"d", "a", "b"}));
  EXPECT_EQ(Strings(c.Call(GetKeys({"blmpop", "0", "2", "a", "b", "left"}))), (V{"a", "b"}));
  EXPECT_EQ(Strings(c.Call(GetKeys({"sort", "k", "by", "w_*", "store", "d"}))), (V{"k", "d"}));
  EXPECT_EQ(c.Raw(GetKeys({"zunion", "0", "a"})),
            "-ERR Invalid arguments specified for command\r\n");
  EXPECT_EQ(c.Raw(GetKeys({"lmpop", "1", "a"})),
            "-ERR Invalid number of arguments specified for command\r\n");
}

TEST_F(CommandKeysTest, GetKeysMatchesRedis) {
  REQUIRE_REDIS();
  RespClient c(kv_->port()), r(redis_->port());
  const std::vector<Args> kCases = {
      // numkeys at 1: valid, short, zero, negative, not a number, past the end, atoi-only.
      {"zunion", "2", "a", "b"}, {"zunion", "1", "a", "b", "weights", "3"},
      {"zunion", "0", "a"}, {"zunion", "-1", "a"}, {"zunion", "x", "a"}, {"zunion", "3", "a"},
      {"zunion", "02", "a", "b"}, {"zunion", "+1", "a"}, {"zunion", " 1", "a"},
      {"zunion", "1x", "a"}, {"zunion", "4294967297", "a"}, {"zunion", "9223372036854775807", "a"},
      {"zunion", "4294967297", "a", "b"}, {"zunion", "4294967295", "a"},
      {"zdiffstore", "d", "4294967297", "a", "b"},
      {"zinter", "2", "a", "b", "aggregate", "min"}, {"zdiff", "1", "a"}, {"zdiff", "2", "a"},
      {"zintercard", "2", "a", "b", "limit", "1"}, {"zintercard", "0", "a"},
      {"sintercard", "1", "a"}, {"sintercard", "abc", "a"}, {"sintercard", "2", "a", "b"},
      {"lmpop", "2", "a", "b", "left"}, {"lmpop", "3", "a", "b", "left"}, {"lmpop", "1", "a"},
      {"lmpop", "0", "a", "left"}, {"zmpop", "1", "a", "min", "count", "2"},
      {"zmpop", "-5", "a", "min"},
      // numkeys at 2, after a timeout.
      {"blmpop", "0", "1", "a", "left"}, {"blmpop", "0", "3", "a", "b", "left"},
      {"blmpop", "x", "1", "a", "left"}, {"bzmpop", "1.5", "2", "a", "b", "max"},
      {"bzmpop", "0", "0", "a", "max"}, {"bzmpop", "0", "2x", "a", "b", "min"},
      // destination, then numkeys: the order of the keys differs between Redis' two paths.
      {"zunionstore", "d", "2", "a", "b"}, {"zunionstore", "d", "02", "a", "b"},
      {"zinterstore", "d", "1", "a", "weights", "2"}, {"zinterstore", "d", "0", "a"},
      {"zdiffstore", "d", "-1", "a"}, {"zdiffstore", "d", "3", "a", "b"},
      {"zdiffstore", "d", "1"},
      // SORT: the last STORE with an argument, options skipped with their arguments.
      {"sort", "k"}, {"sort", "k", "store", "d"}, {"sort", "k", "STORE", "d", "store", "e"},
      {"sort", "k", "get", "store", "by", "store"}, {"sort", "k", "limit", "store", "x", "store"},
      {"sort", "k", "store"}, {"sort", "k", "alpha", "desc", "store", "d", "limit", "0", "1"},
      {"sort_ro", "k", "store", "d"}, {"sort_ro"},
  };
  for (const Args& args : kCases) {
    Args cmd = GetKeys(args);
    EXPECT_EQ(c.Raw(cmd), r.Raw(cmd)) << args[0] << " " << args[1];
  }
}

TEST_F(CommandKeysTest, InfoMatchesRedis) {
  REQUIRE_REDIS();
  RespClient c(kv_->port()), r(redis_->port());
  for (int resp : {2, 3}) {
    if (resp == 3) {
      c.Call({"HELLO", "3"});
      r.Call({"HELLO", "3"});
    }
    for (const char* name : kMovable) {
      Reply ours = c.Call({"COMMAND", "INFO", name});
      Reply theirs = r.Call({"COMMAND", "INFO", name});
      ASSERT_EQ(ours.elems.size(), 1u) << name;
      ASSERT_EQ(ours.elems[0].elems.size(), 10u) << name;
      // Name, arity, flags (with movablekeys), the legacy key range and ACL categories. Tips
      // and key specs are not recorded.
      for (size_t i = 0; i < 7; i++) {
        EXPECT_EQ(ours.elems[0].elems[i].raw, theirs.elems[0].elems[i].raw)
            << name << " field " << i << " RESP" << resp;
      }
    }
  }
}

TEST_F(CommandKeysTest, MovableFlagInCommandListingMatchesRedis) {
  REQUIRE_REDIS();
  RespClient c(kv_->port()), r(redis_->port());
  // Commands by name with their flags, from the full COMMAND reply.
  auto movable = [](const Reply& all) {
    std::map<std::string, bool> out;
    for (const Reply& e : all.elems) {
      bool m = false;
      for (const Reply& f : e.elems[2].elems) m |= f.str == "movablekeys";
      out[e.elems[0].str] = m;
    }
    return out;
  };
  std::map<std::string, bool> ours = movable(c.Call({"COMMAND"}));
  std::map<std::string, bool> theirs = movable(r.Call({"COMMAND"}));
  for (const char* name : kMovable) EXPECT_TRUE(ours[name]) << name;
  // Every command kvstore has is movable exactly when it is in Redis.
  for (const auto& [name, m] : ours) {
    auto it = theirs.find(name);
    if (it != theirs.end()) {
      EXPECT_EQ(m, it->second) << name;
    }
  }
}

// Name, arity, flags, legacy key range and ACL categories of every data command (the groups
// issue 3 covers) as Redis 7.0 reports them.
TEST_F(CommandKeysTest, DataCommandsInfoMatchesRedis) {
  REQUIRE_REDIS();
  RespClient c(kv_->port()), r(redis_->port());
  const std::set<std::string> kGroups = {"string", "list", "set", "sorted-set", "hash", "generic"};
  // Registered by other modules, which own their reply: RESTORE (persistence), WAIT (replication).
  const std::set<std::string> kElsewhere = {"restore", "wait"};
  Reply all = c.Call({"COMMAND"});
  int compared = 0;
  for (const Reply& ours : all.elems) {
    const std::string& name = ours.elems[0].str;
    if (kElsewhere.count(name)) continue;
    Reply docs = r.Call({"COMMAND", "DOCS", name});
    std::string group;
    if (docs.elems.size() == 2) {
      for (size_t i = 0; i + 1 < docs.elems[1].elems.size(); i += 2) {
        if (docs.elems[1].elems[i].str == "group") group = docs.elems[1].elems[i + 1].str;
      }
    }
    if (!kGroups.count(group)) continue;
    Reply theirs = r.Call({"COMMAND", "INFO", name}).elems[0];
    for (size_t i = 0; i < 7; i++) {
      EXPECT_EQ(ours.elems[i].raw, theirs.elems[i].raw) << name << " field " << i;
    }
    compared++;
  }
  EXPECT_GT(compared, 100);
  // Server-group commands that Redis files under @keyspace.
  for (const char* name : {"dbsize", "flushdb", "flushall", "swapdb"}) {
    EXPECT_EQ(c.Call({"COMMAND", "INFO", name}).elems[0].elems[6].raw,
              r.Call({"COMMAND", "INFO", name}).elems[0].elems[6].raw) << name;
  }
}

// COMMAND GETKEYSANDFLAGS: the keys with their key-spec flags, from the specs or, where they do
// not answer (SORT's incomplete specs, SET's variable flags, a numkeys only atoi reads), from
// the finder with the flags Redis' getkeys function records.
TEST_F(CommandKeysTest, GetKeysAndFlagsMatchesRedis) {
  REQUIRE_REDIS();
  RespClient c(kv_->port()), r(redis_->port());
  const std::vector<Args> kCases = {
      {"set", "k", "v"}, {"set", "k", "v", "GET"}, {"set", "k", "v", "px", "10", "get"},
      {"getex", "k"}, {"get", "k"}, {"strlen", "k"}, {"append", "k", "v"},
      {"sort", "k"}, {"sort", "k", "store", "d", "by", "x"}, {"sort", "k", "get", "store"},
      {"sort_ro", "k", "store", "d"},
      {"zunionstore", "d", "2", "a", "b"}, {"zunionstore", "d", "02", "a", "b"},
      {"zunionstore", "d", "0", "a"}, {"zinterstore", "d", "1", "a", "weights", "2"},
      {"zdiffstore", "d", "3", "a", "b"}, {"zunion", "2", "a", "b"}, {"zunion", "x", "a"},
      {"zunion", "4294967297", "a", "b"}, {"zintercard", "2", "a", "b", "limit", "1"},
      {"sintercard", "1", "a"}, {"lmpop", "2", "a", "b", "left"}, {"lmpop", "1", "a"},
      {"blmpop", "0", "2", "a", "b", "left"}, {"bzmpop", "0", "1", "a", "min"},
      {"zmpop", "1", "a", "min", "count", "2"},
      {"del", "a", "b"}, {"unlink", "a"}, {"mset", "a", "1", "b", "2"}, {"mget", "a", "b"},
      {"msetnx", "a", "1"}, {"copy", "a", "b"}, {"rename", "a", "b"}, {"renamenx", "a", "b"},
      {"lcs", "a", "b"}, {"blmove", "a", "b", "left", "right", "0"}, {"rpoplpush", "a", "b"},
      {"blpop", "a", "b", "0"}, {"bzpopmin", "a", "0"}, {"smove", "a", "b", "m"},
      {"sdiffstore", "d", "a", "b"}, {"zrangestore", "d", "s", "0", "-1"},
      {"spop", "s", "3"}, {"restore", "k", "0", "x"}, {"object", "encoding", "k"},
      {"memory", "usage", "k"}, {"debug", "object", "k"}, {"move", "a", "1"},
      // Errors: unknown command, wrong arity, no keys, arguments that name no keys.
      {"nosuchcommand", "x"}, {"get", "a", "b"}, {"ping", "x"}, {"config", "get", "x"},
      {"client", "list"}, {"object", "nosuchsub", "x"}, {"lmpop", "0", "a", "left"},
  };
  for (const Args& args : kCases) {
    Args cmd = args;
    cmd.insert(cmd.begin(), {"COMMAND", "GETKEYSANDFLAGS"});
    EXPECT_EQ(c.Raw(cmd), r.Raw(cmd)) << args[0] << " " << args[1];
  }
  for (const Args& cmd : std::vector<Args>{{"COMMAND", "GETKEYSANDFLAGS"},
                                           {"COMMAND", "GETKEYSANDFLAGS", "get"}}) {
    EXPECT_EQ(c.Raw(cmd), r.Raw(cmd)) << cmd.size();
  }
  c.Call({"HELLO", "3"});
  r.Call({"HELLO", "3"});
  Args cmd = {"COMMAND", "GETKEYSANDFLAGS", "zunionstore", "d", "2", "a", "b"};
  EXPECT_EQ(c.Raw(cmd), r.Raw(cmd));
}

// GETKEYS and GETKEYSANDFLAGS of every command kvstore has, with arguments of every count from
// its arity up: all "1", all distinct names, or a count of 2 then names.
TEST_F(CommandKeysTest, GetKeysOfEveryCommandMatchesRedis) {
  REQUIRE_REDIS();
  RespClient c(kv_->port()), r(redis_->port());
  int compared = 0;
  for (const Reply& n : c.Call({"COMMAND", "LIST"}).elems) {
    Reply info = r.Call({"COMMAND", "INFO", n.str});
    if (info.elems[0].is_null) continue;  // not a Redis 7.0 command
    int64_t arity = info.elems[0].elems[1].integer;
    Args base = {n.str};
    if (size_t bar = n.str.find('|'); bar != std::string::npos) {
      base = {n.str.substr(0, bar), n.str.substr(bar + 1)};
    }
    int64_t need = std::abs(arity) - static_cast<int64_t>(base.size());
    for (int64_t extra = 0; extra < (arity < 0 ? 4 : 1); extra++) {
      for (int fill = 0; fill < 3; fill++) {
        Args cmd = {"COMMAND", "GETKEYS"};
        cmd.insert(cmd.end(), base.begin(), base.end());
        for (int64_t i = 0; i < need + extra; i++) {
          cmd.push_back(fill == 0 || (fill == 2 && i == 0) ? (fill ? "2" : "1")
                                                           : "k" + std::to_string(i));
        }
        EXPECT_EQ(c.Raw(cmd), r.Raw(cmd)) << n.str << " " << cmd.size();
        cmd[1] = "GETKEYSANDFLAGS";
        EXPECT_EQ(c.Raw(cmd), r.Raw(cmd)) << n.str << " " << cmd.size();
        compared++;
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

// The pipeline prefetch reads the first key of each request through the same finders.
TEST(CommandKeysPrefetch, FirstKeyUsesTheFinder) {
  InProcessServer s;
  auto first = [&](std::vector<std::string_view> args) {
    return std::string(s.server().FirstKey(args));
  };
  EXPECT_EQ(first({"zunionstore", "d", "2", "a", "b"}), "d");
  EXPECT_EQ(first({"ZUNION", "2", "a", "b"}), "a");
  EXPECT_EQ(first({"blmpop", "0", "1", "l", "left"}), "l");
  EXPECT_EQ(first({"sort", "k", "store", "d"}), "k");
  EXPECT_EQ(first({"lmpop", "0", "a", "left"}), "");  // an error, no keys
  EXPECT_EQ(first({"lmpop", "1"}), "");                // short of its arity
  EXPECT_EQ(first({"get", "k"}), "k");
  EXPECT_EQ(first({"ping"}), "");
}

}  // namespace
}  // namespace kv::test
