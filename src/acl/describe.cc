#include "acl/describe.h"

#include <cassert>
#include <climits>

#include "cmd/acl_categories.h"

namespace kv::acl {
namespace {

// How many commands and subcommands of `category` the selector allows (on) and denies (off).
void CountCategory(const Selector& s, const CommandIndex& commands, int category, unsigned* on,
                   unsigned* off) {
  *on = *off = 0;
  uint32_t bit = 1u << category;
  auto count = [&](const cmd::CommandSpec& spec) {
    if (!(commands.CategoriesOf(spec.id) & bit)) return;
    (s.CommandBit(spec.id) ? *on : *off) += 1;
  };
  for (const cmd::CommandSpec* spec : commands.top()) {
    count(*spec);
    for (const auto& sub : spec->subcommands) count(*sub);
  }
}

// Emits +cmd / -cmd for every command whose bit differs between the selector and `fake` (the
// rules emitted so far applied), then the allowed first arguments of denied commands.
void DescribeSingleCommands(const Selector& s, Selector& fake, const cmd::CommandSpec& spec,
                            std::string& rules) {
  bool userbit = s.CommandBit(spec.id);
  if (userbit != fake.CommandBit(spec.id)) {
    rules += userbit ? '+' : '-';
    rules += spec.name;
    rules += ' ';
    fake.ChangeCommand(spec, userbit);
  }
  for (const auto& sub : spec.subcommands) DescribeSingleCommands(s, fake, *sub, rules);
  auto it = s.firstargs.find(spec.id);
  if (!userbit && it != s.firstargs.end()) {
    for (const std::string& arg : it->second) rules += "+" + spec.name + "|" + arg + " ";
  }
}

}  // namespace

std::string DescribeCommandRules(const Selector& s, const RuleEnv& env) {
  const CommandIndex& commands = env.commands;
  bool additive = !s.future_commands;
  std::string rules = additive ? "-@all " : "+@all ";
  Selector fake = Selector::Create(env, false);
  fake.SetAllCommands(!additive);

  // `temp` starts as the selector's bitmap; each category chosen is undone in it, so later
  // rounds only count what the chosen categories have not yet explained.
  Selector temp = Selector::Create(env, false);
  temp.allowed = s.allowed;
  bool applied[cmd::kNumCategories] = {};
  while (true) {
    int best = -1;
    unsigned mindiff = INT_MAX, maxsame = 0;
    for (int j = 0; j < cmd::kNumCategories; j++) {
      if (applied[j]) continue;
      unsigned on, off;
      CountCategory(temp, commands, j, &on, &off);
      unsigned diff = additive ? off : on;
      unsigned same = additive ? on : off;
      if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
        best = j;
        mindiff = diff;
        maxsame = same;
      }
    }
    if (best == -1) break;
    fake.ChangeCategory(commands, best, additive);
    temp.ChangeCategory(commands, best, !additive);
    rules += additive ? "+@" : "-@";
    rules += cmd::AclCategoryNames()[best];
    rules += ' ';
    applied[best] = true;
  }
  for (const cmd::CommandSpec* spec : commands.top()) {
    DescribeSingleCommands(s, fake, *spec, rules);
  }
  // The rules must rebuild exactly the selector's bitmap; a description that grants more or less
  // than the user has would be a security bug once saved and reloaded.
  assert(fake.allowed == s.allowed);
  rules.pop_back();  // the trailing space
  return rules;
}

namespace {

std::string KeyPatternString(const KeyPattern& k) {
  std::string_view prefix = k.perms == kKeyReadWrite ? "~" : k.perms == kKeyRead ? "%R~" : "%W~";
  return std::string(prefix) + k.pattern;
}

}  // namespace

std::string DescribeSelector(const Selector& s, const RuleEnv& env) {
  std::string out;
  if (s.allkeys) {
    out += "~* ";
  } else {
    for (const KeyPattern& k : s.keys) out += KeyPatternString(k) + " ";
  }
  if (s.allchannels) {
    out += "&* ";
  } else {
    out += "resetchannels ";
    for (const std::string& c : s.channels) out += "&" + c + " ";
  }
  out += DescribeCommandRules(s, env);
  return out;
}

std::string DescribeUser(const User& u, const RuleEnv& env) {
  std::string out;
  for (std::string_view f : UserFlagNames(u.flags)) {
    out += f;
    out += ' ';
  }
  for (const std::string& p : u.passwords) out += "#" + p + " ";
  for (const Selector& s : u.selectors) {
    if (s.root) {
      out += DescribeSelector(s, env);
    } else {
      out += " (" + DescribeSelector(s, env) + ")";
    }
  }
  return out;
}

std::string AclListLine(const User& u, const RuleEnv& env) {
  return "user " + u.name + " " + DescribeUser(u, env);
}

SelectorInfo DescribeSelectorInfo(const Selector& s, const RuleEnv& env) {
  SelectorInfo info;
  info.commands = DescribeCommandRules(s, env);
  if (s.allkeys) {
    info.keys = "~*";
  } else {
    for (const KeyPattern& k : s.keys) {
      if (!info.keys.empty()) info.keys += ' ';
      info.keys += KeyPatternString(k);
    }
  }
  if (s.allchannels) {
    info.channels = "&*";
  } else {
    for (const std::string& c : s.channels) {
      if (!info.channels.empty()) info.channels += ' ';
      info.channels += "&" + c;
    }
  }
  return info;
}

UserInfo GetUserInfo(const User& u, const RuleEnv& env) {
  UserInfo info;
  info.flags = UserFlagNames(u.flags);
  info.passwords = u.passwords;
  info.root = DescribeSelectorInfo(u.root(), env);
  for (size_t i = 1; i < u.selectors.size(); i++) {
    info.selectors.push_back(DescribeSelectorInfo(u.selectors[i], env));
  }
  return info;
}

}  // namespace kv::acl
