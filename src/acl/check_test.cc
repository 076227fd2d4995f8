// The ACL check, on the cases of Redis 7.0's acl.tcl and acl-v2.tcl.
#include "acl/check.h"

#include <gtest/gtest.h>

#include "acl/acl_test_util.h"
#include "acl/user.h"

namespace kv::acl {
namespace {

class AclCheck : public ::testing::Test {
 protected:
  User Make(std::vector<std::string_view> rules) {
    User u = User::Create("u", env_);
    EXPECT_EQ(SetUser(u, rules, env_), "");
    return u;
  }
  CheckResult Check(const User& u, std::vector<std::string_view> args) {
    std::string err;
    const cmd::CommandSpec* spec = cmd::ResolveCommand(t_.table(), args, &err);
    EXPECT_NE(spec, nullptr) << err;
    if (!spec) return {Denial::kCommand, -1};
    return CheckCommand(u, *spec, args);
  }
  bool Allowed(const User& u, std::vector<std::string_view> args) {
    return Check(u, std::move(args)).allowed();
  }
  Denial Why(const User& u, std::vector<std::string_view> args) {
    return Check(u, std::move(args)).denial;
  }

  AclTestTable t_;
  RuleEnv env_ = t_.env();
};

TEST_F(AclCheck, DefaultUserRunsEverything) {
  User u = User::Default(env_);
  EXPECT_TRUE(Allowed(u, {"set", "k", "v"}));
  EXPECT_TRUE(Allowed(u, {"config", "set", "a", "b"}));
  EXPECT_TRUE(Allowed(u, {"publish", "ch", "m"}));
  EXPECT_TRUE(Allowed(u, {"psubscribe", "*"}));
}

TEST_F(AclCheck, Commands) {
  User u = Make({"-@all", "+get", "+@hash", "-hset", "~*"});
  EXPECT_TRUE(Allowed(u, {"get", "k"}));
  EXPECT_TRUE(Allowed(u, {"hget", "k", "f"}));
  EXPECT_EQ(Why(u, {"hset", "k", "f", "v"}), Denial::kCommand);
  EXPECT_EQ(Why(u, {"set", "k", "v"}), Denial::kCommand);
  EXPECT_EQ(Why(u, {"ping"}), Denial::kCommand);
  // Commands flagged no_auth are never refused (AUTH, HELLO).
  EXPECT_TRUE(Allowed(u, {"auth", "pw"}));
}

TEST_F(AclCheck, Categories) {
  User u = Make({"+@read", "~*"});
  EXPECT_TRUE(Allowed(u, {"get", "k"}));
  EXPECT_TRUE(Allowed(u, {"lrange", "k", "0", "-1"}));
  EXPECT_EQ(Why(u, {"set", "k", "v"}), Denial::kCommand);
  u = Make({"+@all", "-@dangerous", "~*"});
  EXPECT_TRUE(Allowed(u, {"set", "k", "v"}));
  EXPECT_EQ(Why(u, {"config", "set", "a", "b"}), Denial::kCommand);
  EXPECT_EQ(Why(u, {"debug", "object", "k"}), Denial::kCommand);
}

TEST_F(AclCheck, Subcommands) {
  User u = Make({"-@all", "+config|get"});
  EXPECT_TRUE(Allowed(u, {"config", "get", "maxmemory"}));
  EXPECT_EQ(Why(u, {"config", "set", "a", "b"}), Denial::kCommand);
  u = Make({"+@all", "-client|kill"});
  EXPECT_TRUE(Allowed(u, {"client", "id"}));
  EXPECT_EQ(Why(u, {"client", "kill", "x"}), Denial::kCommand);
  u = Make({"+@all", "-client"});
  EXPECT_EQ(Why(u, {"client", "id"}), Denial::kCommand);
}

TEST_F(AclCheck, FirstArgs) {
  User u = Make({"-@all", "+select|0", "+debug|object"});
  EXPECT_TRUE(Allowed(u, {"select", "0"}));
  EXPECT_EQ(Why(u, {"select", "1"}), Denial::kCommand);
  EXPECT_TRUE(Allowed(u, {"DEBUG", "OBJECT", "k"}));  // case-insensitive
  EXPECT_EQ(Why(u, {"debug", "sleep", "0"}), Denial::kCommand);
}

TEST_F(AclCheck, KeyPatterns) {
  User u = Make({"+@all", "~obj:*", "~foo"});
  EXPECT_TRUE(Allowed(u, {"set", "obj:1", "v"}));
  EXPECT_TRUE(Allowed(u, {"get", "foo"}));
  CheckResult r = Check(u, {"mset", "obj:1", "v", "bar", "v"});
  EXPECT_EQ(r.denial, Denial::kKey);
  EXPECT_EQ(r.arg, 3);
}

// acl-v2.tcl: "Test R+W is the same as all permissions" and the R / W / RW cases.
TEST_F(AclCheck, ReadAndWriteKeyPermissions) {
  User r = Make({"%R~read*", "+@all"});
  EXPECT_TRUE(Allowed(r, {"ping"}));
  EXPECT_TRUE(Allowed(r, {"get", "readstr"}));
  EXPECT_EQ(Why(r, {"set", "readstr", "bar"}), Denial::kKey);
  EXPECT_EQ(Why(r, {"get", "notread"}), Denial::kKey);

  User w = Make({"%W~write*", "+@all"});
  EXPECT_TRUE(Allowed(w, {"lpush", "writelist", "10"}));
  EXPECT_EQ(Why(w, {"get", "writestr"}), Denial::kKey);
  EXPECT_EQ(Why(w, {"lpush", "notwrite", "10"}), Denial::kKey);

  User rw = Make({"%R~read*", "%W~write*", "+@all"});
  EXPECT_TRUE(Allowed(rw, {"copy", "read", "write"}));
  EXPECT_EQ(Why(rw, {"copy", "write", "read"}), Denial::kKey);

  // Two selectors, neither of which alone allows both keys.
  User sel = Make({"(%R~read* +@all)", "(%W~write* +@all)"});
  EXPECT_TRUE(Allowed(sel, {"get", "readstr"}));
  EXPECT_TRUE(Allowed(sel, {"set", "writestr", "v"}));
  EXPECT_EQ(Why(sel, {"get", "writestr"}), Denial::kKey);
  EXPECT_EQ(Why(sel, {"copy", "read", "write"}), Denial::kKey);
  EXPECT_EQ(Why(sel, {"copy", "write", "read"}), Denial::kKey);
}

// acl-v2.tcl: SET's key needs read permission only with GET.
TEST_F(AclCheck, SetWithGetNeedsRead) {
  User r = Make({"%R~read*", "+@all"});
  EXPECT_EQ(Why(r, {"set", "readstr", "bar"}), Denial::kKey);
  EXPECT_EQ(Why(r, {"set", "readstr", "bar", "get"}), Denial::kKey);
  EXPECT_EQ(Why(r, {"set", "readstr", "bar", "ex", "100"}), Denial::kKey);

  User w = Make({"%W~write*", "+@all"});
  EXPECT_TRUE(Allowed(w, {"set", "writestr", "bar"}));
  EXPECT_TRUE(Allowed(w, {"set", "writestr", "get"}));  // "get" is the value
  EXPECT_EQ(Why(w, {"set", "get", "writestr"}), Denial::kKey);
  EXPECT_EQ(Why(w, {"set", "writestr", "bar", "get"}), Denial::kKey);
  EXPECT_EQ(Why(w, {"set", "writestr", "bar", "get", "ex", "100"}), Denial::kKey);
  EXPECT_EQ(Why(w, {"set", "writestr", "bar", "get", "keepttl", "nx"}), Denial::kKey);
  EXPECT_EQ(Why(w, {"set", "writestr", "bar", "ex", "get"}), Denial::kKey);

  User rw = Make({"%RW~readwrite*", "+@all"});
  EXPECT_TRUE(Allowed(rw, {"set", "readwrite_str", "bar", "get", "ex", "10"}));
}

// acl-v2.tcl: BITFIELD's key needs write permission only with SET / INCRBY.
TEST_F(AclCheck, BitfieldPermissions) {
  User r = Make({"%R~read*", "+@all"});
  EXPECT_TRUE(Allowed(r, {"bitfield", "readstr", "get", "u4", "0"}));
  EXPECT_EQ(Why(r, {"bitfield", "readstr", "set", "u4", "0", "1"}), Denial::kKey);
  EXPECT_EQ(Why(r, {"bitfield", "readstr", "get", "u4", "0", "set", "u4", "0", "1"}), Denial::kKey);
  EXPECT_EQ(Why(r, {"bitfield", "readstr", "incrby", "u4", "0", "1"}), Denial::kKey);

  User w = Make({"%W~write*", "+@all"});
  EXPECT_EQ(Why(w, {"bitfield", "writestr", "get", "u4", "0"}), Denial::kKey);
  EXPECT_EQ(Why(w, {"bitfield", "writestr", "set", "u4", "0", "1"}), Denial::kKey);
  EXPECT_EQ(Why(w, {"bitfield", "writestr", "incrby", "u4", "0", "1"}), Denial::kKey);

  User rw = Make({"%RW~readwrite*", "+@all"});
  EXPECT_TRUE(Allowed(rw, {"bitfield", "readwrite_str", "set", "u4", "0", "1"}));
}

// acl-v2.tcl: each selector grants its own commands with its own keys.
TEST_F(AclCheck, SelectorsCombine) {
  User u = Make({"on", "-@all", "resetkeys", "nopass"});
  EXPECT_EQ(Why(u, {"ping"}), Denial::kCommand);
  EXPECT_EQ(Why(u, {"set", "write::foo", "bar"}), Denial::kCommand);
  ASSERT_EQ(
      SetUser(u, std::vector<std::string_view>{"(+@write ~write::*)", "(+@read ~read::*)"}, env_),
      "");
  EXPECT_EQ(Why(u, {"ping"}), Denial::kCommand);
  EXPECT_TRUE(Allowed(u, {"set", "write::foo", "bar"}));
  EXPECT_TRUE(Allowed(u, {"get", "read::foo"}));
  EXPECT_EQ(Why(u, {"get", "write::foo"}), Denial::kKey);
  EXPECT_EQ(Why(u, {"set", "read::foo", "bar"}), Denial::kKey);
}

// acl-v2.tcl "Test behavior of loading ACLs": the denial reported is the most specific one any
// selector gave, at the highest argument index.
TEST_F(AclCheck, ReportedDenial) {
  User u = Make({"on", "nopass", "+mget", "~key", "(+mget ~key ~otherkey)"});
  EXPECT_EQ(Why(u, {"get", "key"}), Denial::kCommand);
  CheckResult r = Check(u, {"mget", "otherkey", "someotherkey"});
  EXPECT_EQ(r.denial, Denial::kKey);
  EXPECT_EQ(r.arg, 2);
  r = Check(u, {"mget", "key", "otherkey", "someotherkey"});
  EXPECT_EQ(r.denial, Denial::kKey);
  EXPECT_EQ(r.arg, 3);
  // A channel denial outranks a command denial from another selector.
  User c = Make({"-@all", "(+publish resetchannels &a)"});
  r = Check(c, {"publish", "b", "m"});
  EXPECT_EQ(r.denial, Denial::kChannel);
  EXPECT_EQ(r.arg, 1);
}

TEST_F(AclCheck, Channels) {
  User u = Make({"+@all", "resetchannels", "&foo", "&news.*"});
  EXPECT_TRUE(Allowed(u, {"publish", "foo", "m"}));
  EXPECT_TRUE(Allowed(u, {"publish", "news.tech", "m"}));
  EXPECT_TRUE(Allowed(u, {"spublish", "foo", "m"}));
  CheckResult r = Check(u, {"publish", "bar", "m"});
  EXPECT_EQ(r.denial, Denial::kChannel);
  EXPECT_EQ(r.arg, 1);
  r = Check(u, {"subscribe", "foo", "bar"});
  EXPECT_EQ(r.denial, Denial::kChannel);
  EXPECT_EQ(r.arg, 2);
  EXPECT_EQ(Why(u, {"ssubscribe", "nope"}), Denial::kChannel);
  // The unsubscribe commands are never refused.
  EXPECT_TRUE(Allowed(u, {"unsubscribe", "bar"}));
  // PSUBSCRIBE's pattern must equal an allowed pattern literally.
  EXPECT_TRUE(Allowed(u, {"psubscribe", "news.*"}));
  EXPECT_EQ(Why(u, {"psubscribe", "news.t*"}), Denial::kChannel);
  EXPECT_EQ(Why(u, {"psubscribe", "foo*"}), Denial::kChannel);
  // SPUBLISH's channel is declared as a not_key key spec: no key check.
  User k = Make({"+@all", "resetkeys", "allchannels"});
  EXPECT_TRUE(Allowed(k, {"spublish", "anything", "m"}));
  EXPECT_TRUE(CheckChannel(u, "foo", false));
  EXPECT_FALSE(CheckChannel(u, "news.*x", true));
}

TEST_F(AclCheck, PubsubDefaultAllChannels) {
  User u = User::Create("u", t_.env(true));
  ASSERT_EQ(SetUser(u, std::vector<std::string_view>{"+@all"}, t_.env(true)), "");
  EXPECT_TRUE(CheckCommand(u, *t_.index().Find("publish"),
                           std::vector<std::string_view>{"publish", "x", "y"})
                  .allowed());
}

TEST_F(AclCheck, CheckKey) {
  User u = Make({"%R~r*", "(%W~w*)"});
  EXPECT_TRUE(CheckKey(u, "r1", kKeyRead));
  EXPECT_FALSE(CheckKey(u, "r1", kKeyWrite));
  EXPECT_TRUE(CheckKey(u, "w1", kKeyWrite));
  EXPECT_FALSE(CheckKey(u, "w1", kKeyReadWrite));
}

}  // namespace
}  // namespace kv::acl
