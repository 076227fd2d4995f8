// SETUSER rules: application, Redis' error texts, atomicity, selector argument grouping.
#include <gtest/gtest.h>

#include "acl/acl_test_util.h"
#include "acl/describe.h"
#include "acl/password.h"
#include "acl/user.h"

namespace kv::acl {
namespace {

class AclRules : public ::testing::Test {
 protected:
  // Applies SETUSER rules to user `u` and returns the error ("" on success).
  std::string Set(User& u, std::vector<std::string_view> rules) { return SetUser(u, rules, env_); }
  std::string List(const User& u) { return AclListLine(u, env_); }

  AclTestTable t_;
  RuleEnv env_ = t_.env();
};

TEST_F(AclRules, NewUserAndDefaultUser) {
  User u = User::Create("newuser", env_);
  EXPECT_EQ(List(u), "user newuser off resetchannels -@all");
  EXPECT_EQ(List(User::Default(env_)), "user default on nopass ~* &* +@all");
  // acl-pubsub-default allchannels: new users start with every channel.
  EXPECT_EQ(AclListLine(User::Create("n", t_.env(true)), t_.env(true)), "user n off &* -@all");
}

TEST_F(AclRules, FlagsAndPasswords) {
  User u = User::Create("u1", env_);
  EXPECT_EQ(Set(u, {"on", ">pw", "+@all", "-@hash", "-@slow", "+hget"}), "");
  // The exact line Redis 7.0.15 prints for this user.
  EXPECT_EQ(List(u),
            "user u1 on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 "
            "resetchannels +@all -@slow -@hash +hget");
  EXPECT_TRUE(u.CheckPassword("pw"));
  EXPECT_FALSE(u.CheckPassword("other"));
  EXPECT_EQ(Set(u, {">pw", ">pw2"}), "");
  EXPECT_EQ(u.passwords.size(), 2u);  // not added twice
  EXPECT_EQ(Set(u, {"<pw"}), "");
  EXPECT_FALSE(u.CheckPassword("pw"));
  EXPECT_TRUE(u.CheckPassword("pw2"));
  std::string remove_hash = "!" + HashPassword("pw2");
  EXPECT_EQ(Set(u, {remove_hash}), "");
  EXPECT_TRUE(u.passwords.empty());
  std::string add_hash = "#" + HashPassword("hashed");
  EXPECT_EQ(Set(u, {add_hash}), "");
  EXPECT_TRUE(u.CheckPassword("hashed"));
  EXPECT_EQ(Set(u, {"nopass"}), "");
  EXPECT_TRUE(u.passwords.empty());
  EXPECT_TRUE(u.CheckPassword("anything"));
  EXPECT_EQ(Set(u, {">x"}), "");  // a password clears nopass
  EXPECT_FALSE(u.CheckPassword("anything"));
  EXPECT_EQ(Set(u, {"resetpass"}), "");
  EXPECT_FALSE(u.CheckPassword("x"));
  EXPECT_EQ(Set(u, {"OFF"}), "");  // case-insensitive
  EXPECT_FALSE(u.enabled());
  EXPECT_EQ(Set(u, {"skip-sanitize-payload"}), "");
  EXPECT_EQ(UserFlagNames(u.flags),
            (std::vector<std::string_view>{"off", "skip-sanitize-payload"}));
}

TEST_F(AclRules, PasswordErrors) {
  User u = User::Create("u", env_);
  EXPECT_EQ(Set(u, {"<nosuch"}),
            "Error in ACL SETUSER modifier '<nosuch': The password you are trying to remove from "
            "the user does not exist");
  EXPECT_EQ(Set(u, {"#abc"}),
            "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 "
            "characters and contain only lowercase hexadecimal characters");
  std::string upper = "!" + std::string(64, 'A');
  EXPECT_EQ(Set(u, {upper}),
            "Error in ACL SETUSER modifier '!" + std::string(64, 'A') +
                "': The password hash must be exactly 64 characters and contain only lowercase "
                "hexadecimal characters");
}

TEST_F(AclRules, CommandAndCategoryErrors) {
  User u = User::Create("u", env_);
  EXPECT_EQ(Set(u, {"+nosuchcommand"}),
            "Error in ACL SETUSER modifier '+nosuchcommand': Unknown command or category name in "
            "ACL");
  EXPECT_EQ(Set(u, {"-@nosuchcat"}),
            "Error in ACL SETUSER modifier '-@nosuchcat': Unknown command or category name in ACL");
  EXPECT_EQ(Set(u, {"-select|0"}),  // first args can only be allowed
            "Error in ACL SETUSER modifier '-select|0': Unknown command or category name in ACL");
  EXPECT_EQ(Set(u, {"+config|nosuch"}),
            "Error in ACL SETUSER modifier '+config|nosuch': Unknown command or category name in "
            "ACL");
  EXPECT_EQ(Set(u, {"+config|get|x"}),
            "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is "
            "not supported");
  EXPECT_EQ(Set(u, {"+debug|"}), "Error in ACL SETUSER modifier '+debug|': Syntax error");
  EXPECT_EQ(Set(u, {"bogus"}), "Error in ACL SETUSER modifier 'bogus': Syntax error");
}

TEST_F(AclRules, PatternErrors) {
  User u = User::Create("u", env_);
  EXPECT_EQ(Set(u, {"allkeys", "~foo"}),
            "Error in ACL SETUSER modifier '~foo': Adding a pattern after the * pattern (or the "
            "'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start "
            "with an empty list of patterns");
  EXPECT_EQ(Set(u, {"&*", "&foo"}),
            "Error in ACL SETUSER modifier '&foo': Adding a pattern after the * pattern (or the "
            "'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' "
            "to start with an empty list of channels");
  EXPECT_EQ(Set(u, {"%X~foo"}), "Error in ACL SETUSER modifier '%X~foo': Syntax error");
  EXPECT_EQ(Set(u, {"%RR~foo"}), "Error in ACL SETUSER modifier '%RR~foo': Syntax error");
  EXPECT_EQ(Set(u, {"~a b"}), "Error in ACL SETUSER modifier '~a b': Syntax error");
  EXPECT_EQ(Set(u, {"&a\tb"}), "Error in ACL SETUSER modifier '&a\tb': Syntax error");
}

TEST_F(AclRules, FailedSetUserLeavesUserUnchanged) {
  User u = User::Create("u", env_);
  ASSERT_EQ(Set(u, {"on", "~k", "+get"}), "");
  std::string before = List(u);
  EXPECT_NE(Set(u, {"off", ">pw", "~other", "+set", "+nosuch"}), "");
  EXPECT_EQ(List(u), before);
  EXPECT_TRUE(u.enabled());
}

TEST_F(AclRules, KeyPatternsMergePermissions) {
  User u = User::Create("u", env_);
  // Redis: "Test R+W is the same as all permissions".
  ASSERT_EQ(Set(u, {"%R~foo", "%W~foo", "%RW~bar"}), "");
  EXPECT_EQ(GetUserInfo(u, env_).root.keys, "~foo ~bar");
  ASSERT_EQ(Set(u, {"resetkeys", "%r~lower", "%wR~both"}), "");
  EXPECT_EQ(GetUserInfo(u, env_).root.keys, "%R~lower ~both");
  ASSERT_EQ(Set(u, {"~*"}), "");  // allkeys forgets the patterns
  EXPECT_TRUE(u.root().allkeys);
  EXPECT_TRUE(u.root().keys.empty());
  ASSERT_EQ(Set(u, {"resetkeys", "~a"}), "");
  EXPECT_FALSE(u.root().allkeys);
  EXPECT_EQ(GetUserInfo(u, env_).root.keys, "~a");
}

TEST_F(AclRules, ResetRestoresNewUserState) {
  User u = User::Create("u", env_);
  ASSERT_EQ(Set(u, {"on", ">pw", "~*", "&*", "+@all", "(+get ~x)"}), "");
  ASSERT_EQ(Set(u, {"reset"}), "");
  EXPECT_EQ(List(u), "user u off sanitize-payload resetchannels -@all");
  User v = User::Create("v", t_.env(true));
  ASSERT_EQ(SetUser(v, std::vector<std::string_view>{"reset"}, t_.env(true)), "");
  EXPECT_EQ(AclListLine(v, t_.env(true)), "user v off sanitize-payload &* -@all");
}

TEST_F(AclRules, SelectorsAndClearSelectors) {
  User u = User::Create("u", env_);
  ASSERT_EQ(Set(u, {"on", "(~added-selector)"}), "");
  UserInfo info = GetUserInfo(u, env_);
  ASSERT_EQ(info.selectors.size(), 1u);
  EXPECT_EQ(info.selectors[0].keys, "~added-selector");
  ASSERT_EQ(Set(u, {"clearselectors"}), "");
  EXPECT_TRUE(GetUserInfo(u, env_).selectors.empty());
  // "reset ()": one empty selector.
  ASSERT_EQ(Set(u, {"reset", "()"}), "");
  info = GetUserInfo(u, env_);
  ASSERT_EQ(info.selectors.size(), 1u);
  EXPECT_EQ(info.selectors[0].keys, "");
  EXPECT_EQ(info.selectors[0].channels, "");
  EXPECT_EQ(info.selectors[0].commands, "-@all");
}

TEST_F(AclRules, SelectorArgumentsSplitBySpacesAreMerged) {
  User u = User::Create("selector-2", env_);
  ASSERT_EQ(Set(u, {"(~key1 +get )", "( ~key2 +get )", "( ~key3 +get)", "(~key4 +get)"}), "");
  ASSERT_EQ(Set(u, {"(~key5", "+get", ")", "(", "~key6", "+get", ")", "(", "~key7", "+get)",
                    "(~key8", "+get)"}),
            "");
  UserInfo info = GetUserInfo(u, env_);
  ASSERT_EQ(info.selectors.size(), 8u);
  for (int i = 0; i < 8; i++) {
    EXPECT_EQ(info.selectors[i].keys, "~key" + std::to_string(i + 1));
    EXPECT_EQ(info.selectors[i].commands, "-@all +get");
  }
}

TEST_F(AclRules, SelectorSyntaxErrors) {
  User u = User::Create("u", env_);
  EXPECT_EQ(Set(u, {"on", "(this-is-invalid)"}),
            "Error in ACL SETUSER modifier '(this-is-invalid)': Syntax error");
  EXPECT_EQ(Set(u, {"on", "(&*", "&fail)"}),
            "Error in ACL SETUSER modifier '(&* &fail)': Adding a pattern after the * pattern (or "
            "the 'allchannels' flag) is not valid and does not have any effect. Try "
            "'resetchannels' to start with an empty list of channels");
  EXPECT_EQ(Set(u, {" () "}), "Error in ACL SETUSER modifier ' () ': Syntax error");
  EXPECT_EQ(Set(u, {"("}), "Unmatched parenthesis in acl selector starting at '('.");
  EXPECT_EQ(Set(u, {"on", "(~a", "+get"}),
            "Unmatched parenthesis in acl selector starting at '(~a'.");
  EXPECT_EQ(Set(u, {")"}), "Error in ACL SETUSER modifier ')': Syntax error");
  EXPECT_FALSE(u.enabled());  // nothing applied
}

TEST_F(AclRules, SelectorRulesUnquote) {
  User u = User::Create("u", env_);
  ASSERT_EQ(Set(u, {"(\"~quoted\" '%R~single' +get)"}), "");
  EXPECT_EQ(GetUserInfo(u, env_).selectors.at(0).keys, "~quoted %R~single");
}

TEST_F(AclRules, FirstArgsAndSubcommands) {
  User u = User::Create("u", env_);
  ASSERT_EQ(Set(u, {"+select|0", "+SELECT|0", "+select|1"}), "");
  const cmd::CommandSpec* select = t_.index().Find("select");
  ASSERT_NE(select, nullptr);
  EXPECT_FALSE(u.root().CommandBit(select->id));
  EXPECT_EQ(u.root().firstargs.at(select->id), (std::vector<std::string>{"0", "1"}));
  ASSERT_EQ(Set(u, {"+select"}), "");  // allowing the command forgets its first args
  EXPECT_TRUE(u.root().CommandBit(select->id));
  EXPECT_TRUE(u.root().firstargs.empty());

  ASSERT_EQ(Set(u, {"+config|get"}), "");
  EXPECT_TRUE(u.root().CommandBit(t_.index().Find("config|get")->id));
  EXPECT_FALSE(u.root().CommandBit(t_.index().Find("config|set")->id));
  ASSERT_EQ(Set(u, {"+config", "-config|set"}), "");  // a container covers its subcommands
  EXPECT_TRUE(u.root().CommandBit(t_.index().Find("config|help")->id));
  EXPECT_FALSE(u.root().CommandBit(t_.index().Find("config|set")->id));
}

TEST_F(AclRules, AllCommandsFlagClearedByAnyRemoval) {
  User u = User::Create("u", env_);
  ASSERT_EQ(Set(u, {"allcommands"}), "");
  EXPECT_TRUE(u.root().allcommands);
  ASSERT_EQ(Set(u, {"-get"}), "");
  EXPECT_FALSE(u.root().allcommands);
  EXPECT_TRUE(u.root().future_commands);  // still described from +@all
  ASSERT_EQ(Set(u, {"nocommands"}), "");
  EXPECT_FALSE(u.root().future_commands);
}

TEST_F(AclRules, MergeSelectorArgs) {
  std::vector<std::string> merged;
  size_t bad = 99;
  std::vector<std::string_view> args = {"on", "(~a", "+get)", "()", "(", "x", ")"};
  ASSERT_TRUE(MergeSelectorArgs(args, &merged, &bad));
  EXPECT_EQ(merged, (std::vector<std::string>{"on", "(~a +get)", "()", "( x )"}));
  args = {"(a", "(b", "c"};
  EXPECT_FALSE(MergeSelectorArgs(args, &merged, &bad));
  EXPECT_EQ(bad, 1u);
}

TEST(AclUserName, Valid) {
  EXPECT_TRUE(ValidUserName("alice"));
  EXPECT_FALSE(ValidUserName("a b"));
  EXPECT_FALSE(ValidUserName(std::string_view("a\0b", 3)));
}

}  // namespace
}  // namespace kv::acl
