// ACL files and `user` directives: Redis 7.0.15's parsing and its error texts.
#include "acl/file.h"

#include <gtest/gtest.h>

#include <set>

#include "acl/acl_test_util.h"
#include "acl/describe.h"

namespace kv::acl {
namespace {

class AclFile : public ::testing::Test {
 protected:
  std::string Parse(std::string_view text) {
    return ParseAclFile(text, "users.acl", env_, &users_);
  }
  std::string Check(std::vector<std::string> argv) {
    return CheckUserDirective(
        argv, [&](std::string_view n) { return defined_.count(std::string(n)) > 0; }, env_);
  }
  AclTestTable table_;
  RuleEnv env_ = table_.env();
  UserSet users_;
  std::set<std::string> defined_;
};

TEST_F(AclFile, LoadsEveryUserAndAddsTheDefaultOne) {
  ASSERT_EQ(Parse("user alice on >pw ~k* +get\n\n  \r\nuser bob off nopass (+set ~s*)\n"), "");
  ASSERT_EQ(users_.size(), 3u);
  EXPECT_EQ(AclListLine(users_.at("alice"), env_),
            "user alice on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 "
            "~k* resetchannels -@all +get");
  EXPECT_EQ(AclListLine(users_.at("bob"), env_),
            "user bob off nopass resetchannels -@all (~s* resetchannels -@all +set)");
  EXPECT_EQ(AclListLine(users_.at("default"), env_), "user default on nopass ~* &* +@all");
}

TEST_F(AclFile, SavedLinesLoadBackTheSameUsers) {
  ASSERT_EQ(Parse("user default on #" + std::string(64, 'a') +
                  " ~* &* +@all -flushall\nuser u on nopass %R~r* %W~w* &c +@read (+set ~x)\n"),
            "");
  std::vector<const User*> list;
  for (const auto& [name, u] : users_) list.push_back(&u);
  std::string text;
  for (const std::string& l : UserLines(list, env_)) text += l + "\n";
  UserSet first = users_;
  ASSERT_EQ(Parse(text), "");
  for (const auto& [name, u] : first) {
    EXPECT_EQ(AclListLine(users_.at(name), env_), AclListLine(u, env_));
  }
}

TEST_F(AclFile, EveryBadLineIsReportedAndNothingLoads) {
  users_.emplace("kept", User::Create("kept", env_));
  std::string err = Parse(
      "user alice on +get\n"
      "# a comment\n"
      "user\n"
      "user alice off\n"
      "user bob on +nosuch -alsonot\n"
      "user carol on ~a allkeys ~b <missing\n"
      "user dave on (~x +get\n");
  EXPECT_EQ(err,
            "users.acl:2 should start with user keyword followed by the username. "
            "users.acl:3 should start with user keyword followed by the username. "
            "WARNING: Duplicate user 'alice' found on line 4. "
            "users.acl:5: Error in applying operation '+nosuch': Unknown command or category "
            "name in ACL. "
            "users.acl:5: Error in applying operation '-alsonot': Unknown command or category "
            "name in ACL. "
            "users.acl:6: Adding a pattern after the * pattern (or the 'allkeys' flag) is not "
            "valid and does not have any effect. Try 'resetkeys' to start with an empty list of "
            "patterns. "
            "users.acl:7: Unmatched parenthesis in selector definition."
            "WARNING: ACL errors detected, no change to the previously active ACL rules was "
            "performed");
  ASSERT_EQ(users_.size(), 1u);  // untouched
  EXPECT_TRUE(users_.count("kept"));
}

TEST_F(AclFile, ConfigDirectivesAreCheckedAsRedisChecksThem) {
  EXPECT_EQ(Check({"user", "alice", "on", ">pw", "+nosuchcommand"}), "");  // fails at load
  EXPECT_EQ(Check({"user", "alice", "on", "bad"}),
            "Error in user declaration 'alice': Syntax error");
  EXPECT_EQ(Check({"user", "alice", "<nope"}),
            "Error in user declaration 'user': The password you are trying to remove from the "
            "user does not exist");
  defined_.insert("alice");
  EXPECT_EQ(Check({"user", "alice", "on"}),
            "Error in user declaration 'alice': Duplicate user found. A user can only be defined "
            "once in config files");
}

TEST_F(AclFile, ConfigDirectivesLoad) {
  User u = User::Create("alice", env_);
  EXPECT_EQ(
      LoadUserDirective(std::vector<std::string>{"user", "alice", "on", "(+get", "~a)"}, env_, &u),
      "");
  EXPECT_EQ(AclListLine(u, env_),
            "user alice on resetchannels -@all (~a resetchannels -@all +get)");
  EXPECT_EQ(LoadUserDirective(std::vector<std::string>{"user", "alice", "+nosuch"}, env_, &u),
            "Error loading ACL rule '+nosuch' for the user named 'alice': Unknown command or "
            "category name in ACL");
}

}  // namespace
}  // namespace kv::acl
