// ACL users against redis-server, differentially: the same ACL commands, AUTH and commands run
// as the users, on a kvstore and a redis-server started side by side, with the replies compared
// byte for byte (ACL GENPASS's randomness aside). Then what a change of users does to the
// clients already connected, and a generator of random SETUSER rule lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/acl_canon.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

class Acl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server";
    kv_ = std::make_unique<ServerProcess>(Kind::kKvstore);
    redis_ = std::make_unique<ServerProcess>(Kind::kRedis);
    k_ = std::make_unique<RespClient>(kv_->port());
    r_ = std::make_unique<RespClient>(redis_->port());
  }
  // Sends `cmd` on both admin connections; expects the same reply and returns it.
  std::string Both(const Cmd& cmd) { return Same(*k_, *r_, cmd); }
  // Sends `cmd` to both servers and expects the same reply (Canon); returns redis-server's.
  static std::string Same(RespClient& k, RespClient& r, const Cmd& cmd) {
    Reply theirs = r.Call(cmd);
    Reply ours = k.Call(cmd);
    EXPECT_EQ(Canon(ours), Canon(theirs))
        << Join(cmd) << "\n ours: " << ours.raw << "\n theirs: " << theirs.raw;
    EXPECT_EQ(ours.raw.size(), theirs.raw.size()) << Join(cmd);
    return theirs.raw;
  }
  // A connection to each server, authenticated as `user` (AUTH's reply compared).
  std::pair<std::unique_ptr<RespClient>, std::unique_ptr<RespClient>> As(const std::string& user,
                                                                         const std::string& pass) {
    auto k = std::make_unique<RespClient>(kv_->port());
    auto r = std::make_unique<RespClient>(redis_->port());
    std::string theirs = r->Raw({"AUTH", user, pass});
    EXPECT_EQ(k->Raw({"AUTH", user, pass}), theirs) << user;
    return {std::move(k), std::move(r)};
  }
  static std::string Join(const Cmd& cmd) {
    std::string out;
    for (const std::string& a : cmd) out += a + " ";
    return out;
  }
  std::unique_ptr<ServerProcess> kv_, redis_;
  std::unique_ptr<RespClient> k_, r_;
};

TEST_F(Acl, UserCommandsAnswerAsRedis) {
  const std::vector<Cmd> script = {
      {"ACL", "USERS"},
      {"ACL", "LIST"},
      {"ACL", "GETUSER", "default"},
      {"ACL", "GETUSER", "nobody"},
      {"ACL", "WHOAMI"},
      {"ACL", "SETUSER", "alice", "on", ">p1", "~cached:*", "+get", "+set", "&chan"},
      {"ACL", "SETUSER", "bob", "on", "nopass", "+@read", "-@dangerous", "%R~r:*", "%W~w:*",
       "(~s:* +set)", "(+hget ~h:*)"},
      {"ACL", "SETUSER", "carol", "off", "#" + std::string(64, 'a'), "allkeys", "allchannels",
       "+@all", "-flushall", "+client|list", "-client", "+select|0"},
      {"ACL", "LIST"},
      {"ACL", "USERS"},
      {"ACL", "GETUSER", "alice"},
      {"ACL", "GETUSER", "bob"},
      {"ACL", "GETUSER", "carol"},
      {"ACL", "SETUSER", "bob", "clearselectors", "resetkeys", "~x", "<nosuch"},
      {"ACL", "SETUSER", "bob", "~a", "allkeys", "~b"},
      {"ACL", "SETUSER", "bob", "+nosuchcommand"},
      {"ACL", "SETUSER", "bob", "(~a"},
      {"ACL", "SETUSER", "bad name", "on"},
      {"ACL", "SETUSER", "odd", "%"},  // malformed key patterns (CVE-2024-31227's kind)
      {"ACL", "SETUSER", "odd", "%~foo"},
      {"ACL", "SETUSER", "odd", "%R"},
      {"ACL", "SETUSER", "odd", "(%W~"},
      {"ACL", "SETUSER", "odd", "(%W~a", "&)"},
      {"ACL", "GETUSER", "odd"},
      {"ACL", "GETUSER", "bob"},  // unchanged by the refused rules
      {"ACL", "DRYRUN", "alice", "get", "cached:1"},
      {"ACL", "DRYRUN", "alice", "get", "other"},
      {"ACL", "DRYRUN", "alice", "incr", "cached:1"},
      {"ACL", "DRYRUN", "alice", "publish", "other", "m"},
      {"ACL", "DRYRUN", "bob", "set", "s:1", "v"},
      {"ACL", "DRYRUN", "bob", "set", "r:1", "v"},
      {"ACL", "DRYRUN", "nobody", "get", "x"},
      {"ACL", "DRYRUN", "alice", "nosuch", "x"},
      {"ACL", "DRYRUN", "alice", "get"},
      {"ACL", "DRYRUN", "alice", "client", "list"},
      {"ACL", "DRYRUN", "alice", "client", "nosuch"},
      {"ACL", "DRYRUN", "carol", "client", "list"},
      {"ACL", "DRYRUN", "bob", "config"},
      {"ACL", "CAT"},
      {"ACL", "CAT", "nosuchcategory"},
      {"ACL", "GENPASS", "0"},
      {"ACL", "GENPASS", "5000"},
      {"ACL", "GENPASS", "x"},
      {"ACL", "LOAD"},
      {"ACL", "SAVE"},
      {"ACL", "HELP"},
      {"ACL", "DELUSER", "default"},
      {"ACL", "DELUSER", "alice", "nobody", "carol"},
      {"ACL", "USERS"},
  };
  for (const Cmd& cmd : script) Both(cmd);
  // A category's commands (which Redis lists in its command table's hash order): the same for
  // every command both servers have. kvstore has CLIENT SETINFO (Redis 7.2's) and the
  // whole-slot migration's CLUSTER subcommands (Valkey 9's form) besides.
  const std::set<std::string> kOwn = {"client|setinfo", "cluster|migrateslots",
                                      "cluster|getslotmigrations", "cluster|cancelslotmigrations",
                                      "cluster|syncslots"};
  for (const char* category : {"hyperloglog", "connection", "keyspace", "pubsub", "dangerous"}) {
    auto names = [&](RespClient& c) {
      std::set<std::string> out;
      for (const Reply& e : c.Call({"ACL", "CAT", category}).elems) out.insert(e.str);
      return out;
    };
    std::set<std::string> ours = names(*k_), theirs = names(*r_);
    EXPECT_FALSE(theirs.empty());
    for (const std::string& n : theirs) {
      bool known = !k_->Call({"COMMAND", "INFO", n}).elems.at(0).is_null;
      EXPECT_EQ(ours.count(n), known ? 1u : 0u) << category << ": " << n;
    }
    for (const std::string& n : ours) {
      EXPECT_TRUE(theirs.count(n) || kOwn.count(n)) << category << ": " << n;
    }
  }
  EXPECT_EQ(k_->Call({"ACL", "GENPASS"}).str.size(), 64u);
  EXPECT_EQ(k_->Call({"ACL", "GENPASS", "5"}).str.size(), 2u);
}

TEST_F(Acl, CommandsRunAsTheUserAsInRedis) {
  Both({"ACL", "SETUSER", "alice", "on", ">p1", "~cached:*", "%R~ro:*", "+get", "+set",
        "+client|list", "+select|0", "&chan", "+publish", "+subscribe", "+psubscribe",
        "(~other:* +incr)"});
  Both({"ACL", "SETUSER", "off", "off", ">p2", "+@all", "~*"});
  auto [k, r] = As("alice", "p1");
  auto bad = As("alice", "wrong");
  auto disabled = As("off", "p2");
  const std::vector<Cmd> script = {
      {"SET", "cached:1", "v"},
      {"GET", "cached:1"},
      {"SET", "other", "v"},
      {"GET", "ro:1"},
      {"SET", "ro:1", "v"},
      {"INCR", "cached:1"},
      {"INCR", "other:1"},
      {"GET", "other:1"},
      {"SELECT", "0"},
      {"SELECT", "1"},
      {"CLIENT", "ID"},
      {"PUBLISH", "chan", "m"},
      {"PUBLISH", "other", "m"},
      {"ACL", "WHOAMI"},
      {"FLUSHALL"},
      {"MSET", "cached:2", "a", "ro:2", "b"},
  };
  for (const Cmd& cmd : script) Same(*k, *r, cmd);
  // Subscribing to a channel or pattern the user lacks is refused (PSUBSCRIBE's pattern must be
  // one of the user's, literally).
  for (const Cmd& cmd :
       std::vector<Cmd>{{"SUBSCRIBE", "other"}, {"PSUBSCRIBE", "ch*"}, {"SUBSCRIBE", "chan"}}) {
    std::string theirs = r->Raw(cmd);
    EXPECT_EQ(k->Raw(cmd), theirs) << Join(cmd);
  }
}

TEST_F(Acl, AuthHelloAndRequirepassAsRedis) {
  Both({"ACL", "SETUSER", "alice", "on", ">p1", "+@all", "~*"});
  for (const Cmd& cmd : std::vector<Cmd>{{"AUTH", "pw"},
                                         {"AUTH", "alice", "p1"},
                                         {"AUTH", "alice", "no"},
                                         {"AUTH", "nobody", "x"},
                                         {"ACL", "WHOAMI"},
                                         {"HELLO", "2", "AUTH", "alice", "no"},
                                         {"HELLO", "2", "AUTH", "nobody", "x"},
                                         {"ACL", "WHOAMI"}}) {
    Both(cmd);
  }
  // requirepass is the default user's password.
  Both({"CONFIG", "SET", "requirepass", "secret"});
  Both({"ACL", "GETUSER", "default"});
  RespClient fresh_k(kv_->port()), fresh_r(redis_->port());
  for (const Cmd& cmd : std::vector<Cmd>{{"GET", "x"},
                                         {"AUTH", "wrong"},
                                         {"AUTH", "secret"},
                                         {"ACL", "WHOAMI"},
                                         {"RESET"},
                                         {"GET", "x"},
                                         {"AUTH", "alice", "p1"},
                                         {"CLIENT", "KILL", "USER", "nobody"}}) {
    std::string theirs = fresh_r.Raw(cmd);
    EXPECT_EQ(fresh_k.Raw(cmd), theirs) << Join(cmd);
  }
  // A default user turned off takes every new connection's access, nopass or not.
  Both({"CONFIG", "SET", "requirepass", ""});
  Both({"ACL", "SETUSER", "default", "off"});
  RespClient off_k(kv_->port()), off_r(redis_->port());
  std::string theirs = off_r.Raw({"GET", "x"});
  EXPECT_EQ(off_k.Raw({"GET", "x"}), theirs);
  EXPECT_EQ(theirs.rfind("-NOAUTH", 0), 0u) << theirs;
}

TEST_F(Acl, TransactionsAndScriptsAreCheckedAsRedis) {
  Both({"ACL", "SETUSER", "alice", "on", ">p1", "~*", "+@all", "-incr"});
  auto [k, r] = As("alice", "p1");
  auto compare = [&](const Cmd& cmd) { Same(*k, *r, cmd); };
  // Refused when queued: the transaction is discarded.
  for (const Cmd& cmd : std::vector<Cmd>{{"MULTI"}, {"SET", "a", "1"}, {"INCR", "a"}, {"EXEC"}}) {
    compare(cmd);
  }
  // Allowed when queued, refused at EXEC: the rules changed meanwhile.
  compare({"MULTI"});
  compare({"SET", "a", "1"});
  compare({"GET", "a"});
  Both({"ACL", "SETUSER", "alice", "-get"});
  compare({"EXEC"});
  // A script runs as its caller.
  compare({"EVAL", "return redis.call('incr', KEYS[1])", "1", "a"});
  compare({"EVAL", "return redis.pcall('incr', KEYS[1])", "1", "a"});
  compare({"EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "a"});
  Both({"ACL", "SETUSER", "alice", "resetkeys", "~b"});
  compare({"EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "a"});
  compare({"EVAL", "return redis.call('set', 'a', 'x')", "0"});
}

// redis.acl_check_cmd answers for the script's caller: commands, subcommands, keys and
// channels, and an error for a command the server does not know.
TEST_F(Acl, ScriptsAskTheCallersRightsAsRedis) {
  Both({"ACL", "SETUSER", "bob", "on", ">123", "+@scripting", "+set", "+get", "+config|get",
        "+publish", "~x*", "&ch"});
  auto [k, r] = As("bob", "123");
  for (const char* call :
       {"'set','xx',1", "'set','yy',1", "'hset','xx','f',1", "'get','xx'",
        "'mset','xx','1','yy','2'", "'config','get','x'", "'config','set','x','y'", "'config'",
        "'config','nosuch'", "'publish','ch','m'", "'publish','other','m'", "'nosuch'",
        "'eval','return 1','1','xx'", "'eval','return 1','1','yy'"}) {
    Same(*k, *r, {"EVAL", std::string("return redis.acl_check_cmd(") + call + ")", "0"});
  }
  // The default user may run everything.
  Same(*k_, *r_, {"EVAL", "return redis.acl_check_cmd('hset','yy','f',1)", "0"});
}

TEST_F(Acl, PubsubDefaultDecidesTheChannelsOfNewUsersAsInRedis) {
  Both({"CONFIG", "SET", "acl-pubsub-default", "allchannels"});
  Both({"ACL", "SETUSER", "a", "on", "nopass", "+@all", "~*"});
  Both({"ACL", "SETUSER", "b", "on", "nopass", "+@all", "resetchannels", "&x"});
  Both({"ACL", "SETUSER", "b", "(+get ~k)"});  // a new selector: all channels
  Both({"ACL", "GETUSER", "a"});
  Both({"ACL", "GETUSER", "b"});
  {
    auto [k, r] = As("a", "x");
    Same(*k, *r, {"PUBLISH", "any", "m"});
  }
  Both({"CONFIG", "SET", "acl-pubsub-default", "resetchannels"});
  Both({"ACL", "SETUSER", "c", "on", "nopass", "+@all"});
  Both({"ACL", "SETUSER", "a", "reset", "on", "nopass", "+@all"});  // reset: none now
  Both({"ACL", "LIST"});
  auto [k, r] = As("c", "x");
  Same(*k, *r, {"PUBLISH", "any", "m"});
  Both({"CONFIG", "GET", "acl-pubsub-default"});
  Both({"CONFIG", "SET", "acl-pubsub-default", "some"});
}

// One client-info field ("cmd", "user", ...) of a CLIENT LIST line.
std::string ClientField(const std::string& line, const std::string& name) {
  size_t at = line.find(" " + name + "=");
  if (at == std::string::npos) return "<no " + name + ">";
  at += name.size() + 2;
  return line.substr(at, line.find(' ', at) - at);
}

// ACL LOG's entries on both servers: every field the same but age-seconds (under a minute on
// both) and client-info, of which the user and the command must agree.
void ExpectSameLog(RespClient& k, RespClient& r, const std::string& count = "100") {
  Reply ours = k.Call({"ACL", "LOG", count}), theirs = r.Call({"ACL", "LOG", count});
  ASSERT_EQ(ours.elems.size(), theirs.elems.size()) << ours.raw << "\n" << theirs.raw;
  for (size_t i = 0; i < ours.elems.size(); i++) {
    const Reply &o = ours.elems[i], &t = theirs.elems[i];
    ASSERT_EQ(o.elems.size(), 14u) << o.raw;
    for (size_t f = 0; f < 14; f += 2) {
      const std::string& field = t.elems[f].str;
      EXPECT_EQ(o.elems[f].str, field);
      if (field == "age-seconds") {
        EXPECT_LT(std::stod(o.elems[f + 1].str), 60.0) << o.elems[f + 1].str;
      } else if (field == "client-info") {
        for (const char* name : {"user", "cmd", "db", "flags", "multi"}) {
          EXPECT_EQ(ClientField(o.elems[f + 1].str, name), ClientField(t.elems[f + 1].str, name))
              << "entry " << i << " " << name << "\n ours: " << o.elems[f + 1].str
              << "\n theirs: " << t.elems[f + 1].str;
        }
      } else {
        EXPECT_EQ(o.elems[f + 1].raw, t.elems[f + 1].raw) << "entry " << i << " " << field;
      }
    }
  }
}

TEST_F(Acl, LogRecordsRefusalsAndFailedAuthsAsRedis) {
  Both({"ACL", "SETUSER", "alice", "on", ">p1", "~k*", "&news", "+get", "+set", "+multi", "+exec",
        "+eval", "+publish", "+auth", "+acl|whoami"});
  auto [k, r] = As("alice", "p1");
  auto compare = [&](const Cmd& cmd) { Same(*k, *r, cmd); };
  compare({"GET", "other"});            // key
  compare({"INCR", "k1"});              // command
  compare({"GET", "other"});            // the same event again: count 2
  compare({"CONFIG", "GET", "port"});   // a subcommand's full name
  compare({"PUBLISH", "sports", "m"});  // channel
  compare({"AUTH", "alice", "wrong"});  // auth, under the name tried
  compare({"auth", "nobody", "x"});     // AUTH's name as sent
  compare({"HELLO", "2", "AUTH", "bob", "x"});
  compare({"MULTI"});
  compare({"GET", "other"});  // queued: context multi
  compare({"SET", "k1", "v"});
  compare({"EXEC"});
  compare({"MULTI"});
  compare({"GET", "k1"});
  Both({"ACL", "SETUSER", "alice", "-get"});
  compare({"EXEC"});                                                 // refused at EXEC: multi
  compare({"EVAL", "return redis.call('set', 'other', 'x')", "0"});  // lua
  compare({"EVAL", "return redis.pcall('incr', 'k1')", "0"});
  ExpectSameLog(*k_, *r_);
  ExpectSameLog(*k_, *r_, "2");
  Both({"ACL", "LOG", "0"});
  Both({"ACL", "LOG", "-5"});
  Both({"ACL", "LOG", "x"});
  Both({"ACL", "LOG", "1", "2"});
  // acllog-max-len applies at the next entry; RESET empties the log.
  Both({"CONFIG", "SET", "acllog-max-len", "3"});
  EXPECT_EQ(k_->Call({"ACL", "LOG"}).elems.size(), 10u);
  compare({"GET", "other2"});
  ExpectSameLog(*k_, *r_);
  EXPECT_EQ(k_->Call({"ACL", "LOG"}).elems.size(), 3u);
  Both({"CONFIG", "GET", "acllog-max-len"});
  Both({"ACL", "LOG", "RESET"});
  Both({"ACL", "LOG"});
  // Neither the password tried nor the user's are in the log.
  compare({"AUTH", "alice", "secret-tried"});
  std::string log = k_->Raw({"ACL", "LOG"});
  EXPECT_EQ(log.find("secret-tried"), std::string::npos) << log;
  EXPECT_EQ(log.find("p1"), std::string::npos) << log;
}

// What MONITOR shows of ACL SETUSER (nothing: an admin command) and AUTH (its arguments
// redacted), as Redis does.
TEST_F(Acl, MonitorNeverShowsRulesOrPasswords) {
  auto line = [](int port, const Cmd& cmd) {
    RespClient m(port), c(port);
    EXPECT_EQ(m.Call({"MONITOR"}).str, "OK");
    c.Call(cmd);
    c.Call({"PING"});  // shown after it, if it is shown at all
    std::string text = m.Read().str;
    return text.substr(text.find(']') + 2);
  };
  for (const Cmd& cmd : std::vector<Cmd>{{"ACL", "SETUSER", "x", "on", ">secret", "~*"},
                                         {"AUTH", "x", "secret"}}) {
    std::string theirs = line(redis_->port(), cmd);
    EXPECT_EQ(line(kv_->port(), cmd), theirs);
    EXPECT_EQ(theirs.find("secret"), std::string::npos) << theirs;
  }
}

// SORT's BY and GET patterns reach keys the arguments do not name: only a user who may read
// every key may use them (CVE-2023-41053), in a script too.
TEST_F(Acl, SortPatternsNeedAccessToEveryKey) {
  Both({"RPUSH", "list", "2", "1"});
  Both({"SET", "w_1", "b"});
  Both({"SET", "w_2", "a"});
  Both({"ACL", "SETUSER", "some", "on", ">p", "+@all", "~list*"});
  Both({"ACL", "SETUSER", "every", "on", ">p", "+@all", "%R~*", "~list*"});
  Both({"ACL", "SETUSER", "writer", "on", ">p", "+@all", "%W~*", "~list*"});
  for (const char* user : {"some", "every", "writer"}) {
    SCOPED_TRACE(user);
    auto [k, r] = As(user, "p");
    for (const Cmd& cmd : std::vector<Cmd>{
             {"SORT", "list"},
             {"SORT", "list", "BY", "nosort"},
             {"SORT", "list", "BY", "w_*", "ALPHA"},
             {"SORT", "list", "GET", "#"},
             {"SORT", "list", "GET", "w_*"},
             {"SORT_RO", "list", "BY", "w_*", "GET", "w_*", "ALPHA"},
             {"EVAL", "return redis.call('sort', KEYS[1], 'GET', 'w_*')", "1", "list"}}) {
      Same(*k, *r, cmd);
    }
  }
}

// Clients of a user that is deleted are disconnected; a subscribed client whose channel the
// user loses is disconnected; CLIENT LIST names each client's user. Both servers.
TEST_F(Acl, ChangesReachConnectedClientsAsInRedis) {
  for (ServerProcess* s : {redis_.get(), kv_.get()}) {
    SCOPED_TRACE(s == kv_.get() ? "kvstore" : "redis");
    RespClient admin(s->port());
    ASSERT_EQ(admin.Raw({"ACL", "SETUSER", "alice", "on", ">p1", "~*", "+@all", "&news:*"}),
              "+OK\r\n");
    RespClient a(s->port()), sub(s->port());
    ASSERT_EQ(a.Raw({"AUTH", "alice", "p1"}), "+OK\r\n");
    ASSERT_EQ(sub.Raw({"AUTH", "alice", "p1"}), "+OK\r\n");
    std::string id = std::to_string(a.Call({"CLIENT", "ID"}).integer);
    EXPECT_NE(admin.Call({"CLIENT", "LIST", "ID", id}).str.find(" user=alice "), std::string::npos);
    sub.Send({"SUBSCRIBE", "news:today"});
    ASSERT_EQ(sub.Read().elems.size(), 3u);
    // Another channel pattern that still covers it: the subscriber stays.
    ASSERT_EQ(admin.Raw({"ACL", "SETUSER", "alice", "&news:t*"}), "+OK\r\n");
    EXPECT_EQ(a.Raw({"PING"}), "+PONG\r\n");
    ASSERT_EQ(admin.Raw({"ACL", "SETUSER", "alice", "resetchannels", "&sports"}), "+OK\r\n");
    EXPECT_TRUE(sub.WaitClosed(10000));
    EXPECT_EQ(a.Raw({"PING"}), "+PONG\r\n");  // not subscribed: kept
    EXPECT_EQ(admin.Raw({"ACL", "DELUSER", "alice"}), ":1\r\n");
    EXPECT_TRUE(a.WaitClosed(10000));
    EXPECT_EQ(admin.Raw({"ACL", "WHOAMI"}), "$7\r\ndefault\r\n");
  }
}

// Random SETUSER rule lists, each followed by commands run as that user: the replies, ACL LIST
// and ACL GETUSER agree with redis-server's.
TEST_F(Acl, RandomRuleListsAgreeWithRedis) {
  const std::vector<std::string> rules = {
      "on",          "off",         "nopass",        "resetpass",  ">pw",        "<pw",
      "+get",        "-get",        "+set",          "-set",       "+@read",     "-@read",
      "+@write",     "-@write",     "+@string",      "-@hash",     "+@all",      "-@all",
      "allcommands", "nocommands",  "+client|list",  "-client",    "+select|0",  "+config|get",
      "~k*",         "%R~r*",       "%W~w*",         "%RW~rw*",    "allkeys",    "resetkeys",
      "&c*",         "allchannels", "resetchannels", "(~s* +get)", "(+set ~t*)", "clearselectors",
      "+publish",    "+hset",       "-@dangerous",   "+@pubsub",   "reset"};
  const std::vector<Cmd> commands = {{"GET", "k1"},
                                     {"GET", "r1"},
                                     {"GET", "w1"},
                                     {"SET", "k1", "v"},
                                     {"SET", "w1", "v"},
                                     {"SET", "r1", "v"},
                                     {"SET", "s1", "v"},
                                     {"GET", "s1"},
                                     {"GET", "t1"},
                                     {"SET", "t1", "v"},
                                     {"HSET", "k1h", "f", "v"},
                                     {"PUBLISH", "c1", "m"},
                                     {"PUBLISH", "x1", "m"},
                                     {"CLIENT", "ID"},
                                     {"SELECT", "0"},
                                     {"CONFIG", "GET", "maxmemory"},
                                     {"COPY", "r1", "w2"},
                                     {"PING"}};
  std::mt19937 rng(20261207);
  for (int round = 0; round < 40; round++) {
    Cmd setuser = {"ACL", "SETUSER", "u", "reset", "on", ">pw"};
    int n = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < n; i++) setuser.push_back(rules[rng() % rules.size()]);
    SCOPED_TRACE(Join(setuser));
    Both(setuser);
    Both({"ACL", "LIST"});
    Both({"ACL", "GETUSER", "u"});
    auto [k, r] = As("u", "pw");
    for (const Cmd& cmd : commands) {
      std::string theirs = r->Raw(cmd);
      std::string ours = k->Raw(cmd);
      if (cmd[0] == "CLIENT" && theirs[0] == ':') continue;  // ids differ
      EXPECT_EQ(ours, theirs) << Join(cmd);
    }
  }
}

}  // namespace
}  // namespace kv::test
