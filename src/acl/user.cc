#include "acl/user.h"

#include <algorithm>
#include <cctype>

#include "acl/password.h"
#include "common/strutil.h"

namespace kv::acl {

std::vector<std::string_view> UserFlagNames(uint32_t flags) {
  static constexpr std::pair<UserFlag, std::string_view> kNames[] = {
      {kUserOn, "on"},
      {kUserOff, "off"},
      {kUserNoPass, "nopass"},
      {kUserSkipSanitizePayload, "skip-sanitize-payload"},
      {kUserSanitizePayload, "sanitize-payload"},
  };
  std::vector<std::string_view> out;
  for (const auto& [flag, name] : kNames) {
    if (flags & flag) out.push_back(name);
  }
  return out;
}

User User::Create(std::string name, const RuleEnv& env) {
  User u;
  u.name = std::move(name);
  u.selectors.push_back(Selector::Create(env, /*root=*/true));
  return u;
}

User User::Default(const RuleEnv& env) {
  User u = Create("default", env);
  for (std::string_view op : {"+@all", "~*", "&*", "on", "nopass"}) ApplyUserRule(u, op, env);
  return u;
}

bool User::CheckPassword(std::string_view cleartext) const {
  if (flags & kUserNoPass) return true;
  std::string hash = HashPassword(cleartext);
  bool found = false;
  // Every stored hash is compared, so the time taken does not say which one matched.
  for (const std::string& p : passwords) found |= HashesEqual(p, hash);
  return found;
}

namespace {

// >pw #hash: adds a password; <pw !hash: removes one.
RuleError ChangePassword(User& u, std::string_view op) {
  std::string hash;
  if (op[0] == '>' || op[0] == '<') {
    hash = HashPassword(op.substr(1));
  } else {
    if (!IsValidPasswordHash(op.substr(1))) return RuleError::kBadHash;
    hash = std::string(op.substr(1));
  }
  auto it = std::find(u.passwords.begin(), u.passwords.end(), hash);
  if (op[0] == '>' || op[0] == '#') {
    if (it == u.passwords.end()) u.passwords.push_back(std::move(hash));
    u.flags &= ~kUserNoPass;
    return RuleError::kNone;
  }
  if (it == u.passwords.end()) return RuleError::kNoSuchPassword;
  u.passwords.erase(it);
  return RuleError::kNone;
}

void SetFlag(User& u, uint32_t set, uint32_t clear) {
  u.flags |= set;
  u.flags &= ~clear;
}

}  // namespace

RuleError ApplyUserRule(User& u, std::string_view op, const RuleEnv& env) {
  auto is = [&](std::string_view word) { return EqualsIgnoreCase(op, word); };
  if (op.empty()) return RuleError::kNone;
  if (is("on")) {
    SetFlag(u, kUserOn, kUserOff);
  } else if (is("off")) {
    SetFlag(u, kUserOff, kUserOn);
  } else if (is("skip-sanitize-payload")) {
    SetFlag(u, kUserSkipSanitizePayload, kUserSanitizePayload);
  } else if (is("sanitize-payload")) {
    SetFlag(u, kUserSanitizePayload, kUserSkipSanitizePayload);
  } else if (is("nopass")) {
    u.flags |= kUserNoPass;
    u.passwords.clear();
  } else if (is("resetpass")) {
    u.flags &= ~kUserNoPass;
    u.passwords.clear();
  } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
    return ChangePassword(u, op);
  } else if (op[0] == '(' && op.back() == ')') {
    Selector s;
    RuleError e = SelectorFromOpSet(op, env, &s);
    if (e != RuleError::kNone) return e;
    u.selectors.push_back(std::move(s));
  } else if (is("clearselectors")) {
    u.selectors.resize(1);
  } else if (is("reset")) {
    for (std::string_view r : {"resetpass", "resetkeys", "resetchannels"}) {
      ApplyUserRule(u, r, env);
    }
    if (env.pubsub_allchannels) ApplyUserRule(u, "allchannels", env);
    for (std::string_view r : {"off", "sanitize-payload", "clearselectors", "-@all"}) {
      ApplyUserRule(u, r, env);
    }
  } else {
    return ApplySelectorRule(u.root(), op, env);
  }
  return RuleError::kNone;
}

bool MergeSelectorArgs(std::span<const std::string_view> args, std::vector<std::string>* merged,
                       size_t* unmatched) {
  merged->clear();
  bool open = false;
  size_t open_at = 0;
  std::string selector;
  for (size_t j = 0; j < args.size(); j++) {
    std::string_view op = args[j];
    if (!op.empty() && op[0] == '(' && op.back() != ')') {
      // A second '(' while one is open starts over, as in Redis.
      selector = std::string(op);
      open = true;
      open_at = j;
      continue;
    }
    if (open) {
      selector += ' ';
      selector += op;
      if (!op.empty() && op.back() == ')') {
        open = false;
        merged->push_back(std::move(selector));
        selector.clear();
      }
      continue;
    }
    merged->emplace_back(op);
  }
  if (open) {
    *unmatched = open_at;
    return false;
  }
  return true;
}

std::string SetUser(User& u, std::span<const std::string_view> rules, const RuleEnv& env) {
  std::vector<std::string> merged;
  size_t unmatched = 0;
  if (!MergeSelectorArgs(rules, &merged, &unmatched)) {
    return "Unmatched parenthesis in acl selector starting at '" + std::string(rules[unmatched]) +
           "'.";
  }
  User staged = u;
  for (const std::string& op : merged) {
    RuleError e = ApplyUserRule(staged, op, env);
    if (e != RuleError::kNone) {
      return "Error in ACL SETUSER modifier '" + op + "': " + std::string(RuleErrorMessage(e));
    }
  }
  u = std::move(staged);
  return std::string();
}

bool ValidUserName(std::string_view name) {
  return std::none_of(name.begin(), name.end(),
                      [](char c) { return c == 0 || std::isspace(static_cast<unsigned char>(c)); });
}

}  // namespace kv::acl
