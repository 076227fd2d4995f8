// Users kept in text: the ACL file (aclfile: ACL LOAD, ACL SAVE) and the `user` directives of
// the config file, with Redis 7.0's parsing and error texts. Pure: the caller reads and writes
// the files and swaps the users in.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "acl/user.h"

namespace kv::acl {

using UserSet = std::map<std::string, User, std::less<>>;

// Parses an ACL file's text as Redis' ACLLoadFromFile does: blank lines skipped, every other
// line "user <name> <rule> ..." split on single spaces, no comments, no user twice. Returns ""
// with `*users` holding every user (a "default" user created as at startup when the file names
// none); or every problem found, each prefixed with "<filename>:<line>", followed by "WARNING:
// ACL errors detected, no change to the previously active ACL rules was performed".
std::string ParseAclFile(std::string_view text, std::string_view filename, const RuleEnv& env,
                         UserSet* users);

// What ACL SAVE writes and CONFIG REWRITE puts in the config file: each user's ACL LIST line
// ("user <name> <rules>"), in name order.
std::vector<std::string> UserLines(const std::vector<const User*>& users, const RuleEnv& env);

// A `user <name> <rule> ...` config directive as read from the file (argv[0] is "user"),
// checked as Redis' ACLAppendUserForLoading checks it; `defined` tells whether a name already
// had a directive. Returns "" or "Error in user declaration '<arg>': <reason>". Rules naming
// unknown commands pass here and fail at LoadUserDirective.
std::string CheckUserDirective(std::span<const std::string> argv,
                               const std::function<bool(std::string_view)>& defined,
                               const RuleEnv& env);

// Applies one checked directive to `u` (a new user, or the default user after "reset"), as
// Redis' ACLLoadConfiguredUsers does. Returns "" or what Redis logs before it exits: "Error
// loading ACL rule '<rule>' for the user named '<name>': <reason>".
std::string LoadUserDirective(std::span<const std::string> argv, const RuleEnv& env, User* u);

}  // namespace kv::acl
