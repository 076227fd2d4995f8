// Describing users the way ACL LIST and ACL GETUSER show them. Every description re-applies:
// feeding a user's ACL LIST rules to a fresh user gives the same description.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "acl/user.h"

namespace kv::acl {

// The rules that rebuild a selector's command bitmap (Redis 7.0's
// ACLDescribeSelectorCommandRules): "+@all" or "-@all" first (by the future-commands bit),
// then the categories that best fit the bitmap, chosen greedily, then single commands
// (+cmd, -cmd, +cmd|sub) and allowed first arguments (+cmd|arg) for what remains, the single
// commands in registration order.
std::string DescribeCommandRules(const Selector& s, const RuleEnv& env);

// A selector's keys, channels and commands: "~* &* +@all", "%R~a ~b resetchannels &c -@all
// +get". Keys are omitted when there are none; channels are "&*" or "resetchannels" followed by
// the patterns.
std::string DescribeSelector(const Selector& s, const RuleEnv& env);

// ACL LIST's line for a user without the leading "user <name> ": flags, "#<hash>" per password,
// the root selector, then " (<selector>)" per other selector.
std::string DescribeUser(const User& u, const RuleEnv& env);

// ACL LIST's whole line: "user <name> " + DescribeUser.
std::string AclListLine(const User& u, const RuleEnv& env);

// One selector as ACL GETUSER shows it.
struct SelectorInfo {
  std::string commands;  // DescribeCommandRules
  std::string keys;      // "~*", or the patterns separated by spaces ("%R~a ~b"), or ""
  std::string channels;  // "&*", or the patterns separated by spaces ("&a &b"), or ""
};

// ACL GETUSER's fields, in its order: flags, passwords, then the root selector's commands,
// keys and channels, then every other selector.
struct UserInfo {
  std::vector<std::string_view> flags;
  std::vector<std::string> passwords;
  SelectorInfo root;
  std::vector<SelectorInfo> selectors;
};

SelectorInfo DescribeSelectorInfo(const Selector& s, const RuleEnv& env);
UserInfo GetUserInfo(const User& u, const RuleEnv& env);

}  // namespace kv::acl
