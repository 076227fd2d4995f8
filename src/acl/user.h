// ACL users: a name, on/off, passwords (SHA-256 hex) or nopass, and selectors, the first of
// which is the root selector. Rules are applied as Redis 7.0's ACL SETUSER applies them.
// Plain data: copy a user to stage changes. Not synchronized; the owner serializes access.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "acl/selector.h"

namespace kv::acl {

// User flags, in the order ACL LIST and ACL GETUSER show them.
enum UserFlag : uint32_t {
  kUserOn = 1u << 0,
  kUserOff = 1u << 1,
  kUserNoPass = 1u << 2,
  kUserSkipSanitizePayload = 1u << 3,
  kUserSanitizePayload = 1u << 4,
};

// Names of the flags set in `flags`, in Redis' order ("on", "nopass", ...).
std::vector<std::string_view> UserFlagNames(uint32_t flags);

struct User {
  std::string name;
  uint32_t flags = kUserOff;           // UserFlag bits
  std::vector<std::string> passwords;  // SHA-256 hex, in the order added, no duplicates
  std::vector<Selector> selectors;     // selectors[0] is the root selector, always present

  // A new user as ACL SETUSER creates it: off, no passwords, no commands, no keys, channels
  // per acl-pubsub-default.
  static User Create(std::string name, const RuleEnv& env);
  // The default user: on, nopass, ~* &* +@all.
  static User Default(const RuleEnv& env);

  Selector& root() { return selectors.front(); }
  const Selector& root() const { return selectors.front(); }
  bool enabled() const { return flags & kUserOn; }
  // Whether `cleartext` authenticates this user (nopass: any password). Does not look at on/off.
  bool CheckPassword(std::string_view cleartext) const;
};

// Applies one rule (Redis' ACLSetUser): on off nopass resetpass >pw <pw #hash !hash reset
// sanitize-payload skip-sanitize-payload clearselectors "(selector rules)" and every selector
// rule, which applies to the root selector. The empty rule does nothing. On error the user may
// be partly changed only where Redis would too; use SetUser for all-or-nothing.
RuleError ApplyUserRule(User& u, std::string_view op, const RuleEnv& env);

// Redis' ACLMergeSelectorArguments: joins with spaces the arguments from one starting with '('
// (and not ending with ')') through the next one ending with ')', so "(~a" "+get)" is one
// selector. Returns false and sets *unmatched to the index of the opening argument when a
// parenthesis is left open.
bool MergeSelectorArgs(std::span<const std::string_view> args, std::vector<std::string>* merged,
                       size_t* unmatched);

// ACL SETUSER's rules, all or nothing: on success `u` has every rule applied and "" is
// returned; otherwise `u` is unchanged and Redis' message is returned, "Error in ACL SETUSER
// modifier '<rule>': <reason>" or "Unmatched parenthesis in acl selector starting at '<arg>'.".
std::string SetUser(User& u, std::span<const std::string_view> rules, const RuleEnv& env);

// Whether a user name is acceptable (Redis refuses spaces and NUL bytes).
bool ValidUserName(std::string_view name);

}  // namespace kv::acl
