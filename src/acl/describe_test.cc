// ACL LIST / ACL GETUSER descriptions, against the lines Redis 7.0.15 prints for the same rules,
// and their round trip through SETUSER.
#include "acl/describe.h"

#include <gtest/gtest.h>

#include <sstream>

#include "acl/acl_test_util.h"
#include "acl/user.h"
#include "cmd/acl_categories.h"

namespace kv::acl {
namespace {

class AclDescribe : public ::testing::Test {
 protected:
  User Make(std::string name, std::vector<std::string_view> rules) {
    User u = User::Create(std::move(name), env_);
    std::string err = SetUser(u, rules, env_);
    EXPECT_EQ(err, "");
    return u;
  }
  std::string Commands(std::vector<std::string_view> rules) {
    return GetUserInfo(Make("x", rules), env_).root.commands;
  }

  // ACL LIST's line re-applied (after "user <name>") to a fresh user.
  User Reparse(const User& u) {
    std::string line = DescribeUser(u, env_);
    std::vector<std::string> words;
    std::istringstream in(line);
    for (std::string w; in >> w;) words.push_back(w);
    std::vector<std::string_view> views(words.begin(), words.end());
    User v = User::Create(u.name, env_);
    EXPECT_EQ(SetUser(v, views, env_), "") << line;
    return v;
  }

  AclTestTable t_;
  RuleEnv env_ = t_.env();
};

TEST_F(AclDescribe, RedisLines) {
  EXPECT_EQ(AclListLine(Make("u2", {"+@all", "-client|kill"}), env_),
            "user u2 off resetchannels +@all -client|kill");
  EXPECT_EQ(AclListLine(Make("u5", {"+@all", "-@write", "+set"}), env_),
            "user u5 off resetchannels +@all -@write +set");
  EXPECT_EQ(AclListLine(Make("hpuser", {"on", "nopass", "resetchannels", "&foo", "+@all"}), env_),
            "user hpuser on nopass resetchannels &foo +@all");
  // Redis prints single commands in its hash-table order; kvstore in registration order
  // (SELECT, a data command, before CONFIG).
  EXPECT_EQ(AclListLine(Make("u3", {"-@all", "+select|0", "+config|get", "%R~r*", "%W~w*", "%RW~rw",
                                    "&ch", "(+get ~x)"}),
                        env_),
            "user u3 off %R~r* %W~w* ~rw resetchannels &ch -@all +select|0 +config|get "
            "(~x resetchannels -@all +get)");
}

TEST_F(AclDescribe, CommandRules) {
  EXPECT_EQ(Commands({"+@all"}), "+@all");
  EXPECT_EQ(Commands({"-@all"}), "-@all");
  EXPECT_EQ(Commands({"+@all", "-config|get"}), "+@all -config|get");
  EXPECT_EQ(Commands({"+@all", "-config"}), "+@all -config");
  EXPECT_EQ(Commands({"-@all", "+config|get"}), "-@all +config|get");
  EXPECT_EQ(Commands({"-@all", "+config"}), "-@all +config");
  EXPECT_EQ(Commands({"+@all", "-config", "+config|get"}), "+@all -config +config|get");
  // Allowing every subcommand one by one is not the container: the container's own bit is
  // still off, as in Redis.
  EXPECT_EQ(Commands({"-@all", "+config|get", "+config|set", "+config|help"}),
            "-@all +config|get +config|set +config|help");
  EXPECT_EQ(Commands({"-@all", "+debug|digest", "+debug|segfault"}),
            "-@all +debug|digest +debug|segfault");
  EXPECT_EQ(Commands({"+@all", "-@hash", "-@slow", "+hget"}), "+@all -@slow -@hash +hget");
  EXPECT_EQ(Commands({"allcommands", "nocommands", "+get"}), "-@all +get");
  // What Redis 7.0.15's ACL GETUSER shows for the same rules.
  EXPECT_EQ(Commands({"-@all", "+@read", "-get"}), "-@all +@read -get");
  EXPECT_EQ(Commands({"+@all", "-@hash", "-hget"}), "+@all -@hash");
  EXPECT_EQ(Commands({"-@all", "+@list", "+@hash", "-lpush"}), "-@all +@hash +@list -lpush");
  EXPECT_EQ(Commands({"+@all", "-@read", "+get"}), "+@all -@read +get");
  EXPECT_EQ(Commands({"+@all", "-@keyspace", "-@list"}), "+@all -@keyspace -@list");
  // Redis prints "+config|get -xadd" (its hash-table order).
  EXPECT_EQ(Commands({"-@all", "+@stream", "-xadd", "+config|get"}),
            "-@all +@stream -xadd +config|get");
}

// Redis' "ACL GETUSER provides reasonable results": a single category is described as itself.
TEST_F(AclDescribe, SingleCategoryDescribedAsItself) {
  int tested = 0;
  for (int cat = 0; cat < cmd::kNumCategories; cat++) {
    bool used = false;
    for (int id = 0; id < t_.index().id_count(); id++) {
      used |= (t_.index().CategoriesOf(id) >> cat & 1) != 0;
    }
    if (!used) continue;  // no command of the category in the test table
    std::string name(cmd::AclCategoryNames()[cat]);
    std::string minus = "-@" + name, plus = "+@" + name;
    EXPECT_EQ(Commands({"reset", "+@all", minus}), "+@all " + minus);
    EXPECT_EQ(Commands({"reset", "-@all", plus}), "-@all " + plus);
    tested++;
  }
  EXPECT_GE(tested, 15);
}

TEST_F(AclDescribe, GetUserFields) {
  User u = Make("selector-info",
                {"-@all", "+get", "resetchannels", "&channel1", "%R~foo1", "%W~bar1", "~baz1"});
  ASSERT_EQ(SetUser(u,
                    std::vector<std::string_view>{"(-@all +set resetchannels &channel2 %R~foo2 "
                                                  "%W~bar2 ~baz2)"},
                    env_),
            "");
  UserInfo info = GetUserInfo(u, env_);
  EXPECT_EQ(info.flags, (std::vector<std::string_view>{"off"}));
  EXPECT_TRUE(info.passwords.empty());
  EXPECT_EQ(info.root.keys, "%R~foo1 %W~bar1 ~baz1");
  EXPECT_EQ(info.root.channels, "&channel1");
  EXPECT_EQ(info.root.commands, "-@all +get");
  ASSERT_EQ(info.selectors.size(), 1u);
  EXPECT_EQ(info.selectors[0].keys, "%R~foo2 %W~bar2 ~baz2");
  EXPECT_EQ(info.selectors[0].channels, "&channel2");
  EXPECT_EQ(info.selectors[0].commands, "-@all +set");

  UserInfo def = GetUserInfo(User::Default(env_), env_);
  EXPECT_EQ(def.flags, (std::vector<std::string_view>{"on", "nopass"}));
  EXPECT_EQ(def.root.keys, "~*");
  EXPECT_EQ(def.root.channels, "&*");
  EXPECT_EQ(def.root.commands, "+@all");
}

TEST_F(AclDescribe, RoundTrip) {
  std::vector<User> users;
  users.push_back(User::Default(env_));
  users.push_back(Make("a", {"on", ">secret", "#" + std::string(64, 'a'), "~k*", "%R~r*", "&news.*",
                             "+@all", "-@dangerous", "+config|get", "-hset"}));
  users.push_back(Make("b", {"-@all", "+@read", "-get", "+select|0", "+select|3", "+client|id",
                             "(+@write %W~w:* &*)", "(+get ~g)"}));
  users.push_back(Make("c", {"+@all", "-@all", "+@hash", "+@list", "-lpush", "-config",
                             "skip-sanitize-payload", "nopass", "allchannels"}));
  users.push_back(Make("d", {"allcommands", "-config|set", "-debug", "+@pubsub", "-@slow"}));
  for (const User& u : users) {
    std::string line = AclListLine(u, env_);
    User v = Reparse(u);
    EXPECT_EQ(AclListLine(v, env_), line);
    for (size_t i = 0; i < u.selectors.size() && i < v.selectors.size(); i++) {
      EXPECT_EQ(v.selectors[i].allowed, u.selectors[i].allowed) << line;
      EXPECT_EQ(v.selectors[i].firstargs, u.selectors[i].firstargs) << line;
    }
  }
}

}  // namespace
}  // namespace kv::acl
