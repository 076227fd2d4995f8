#include "acl/selector.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "cmd/acl_categories.h"
#include "common/strutil.h"

namespace kv::acl {

std::string_view RuleErrorMessage(RuleError e) {
  switch (e) {
    case RuleError::kNone:
      return "";
    case RuleError::kUnknownName:
      return "Unknown command or category name in ACL";
    case RuleError::kSyntax:
      return "Syntax error";
    case RuleError::kKeyPatternAfterAll:
      return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and "
             "does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    case RuleError::kChannelPatternAfterAll:
      return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
             "does not have any effect. Try 'resetchannels' to start with an empty list of "
             "channels";
    case RuleError::kNoSuchPassword:
      return "The password you are trying to remove from the user does not exist";
    case RuleError::kBadHash:
      return "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters";
    case RuleError::kFirstArgOfSubcommand:
      return "Allowing first-arg of a subcommand is not supported";
  }
  return "Wrong format";
}

Selector Selector::Create(const RuleEnv& env, bool root) {
  Selector s;
  s.root = root;
  s.allchannels = env.pubsub_allchannels;
  s.allowed.assign((static_cast<size_t>(env.commands.id_count()) + 63) / 64, 0);
  return s;
}

void Selector::SetCommandBit(int id, bool value) {
  size_t w = static_cast<size_t>(id) / 64;
  if (w >= allowed.size()) return;
  uint64_t bit = uint64_t{1} << (id % 64);
  if (value) {
    allowed[w] |= bit;
  } else {
    allowed[w] &= ~bit;
    allcommands = false;
  }
}

void Selector::ChangeCommand(const cmd::CommandSpec& spec, bool allow) {
  SetCommandBit(spec.id, allow);
  firstargs.erase(spec.id);
  for (const auto& sub : spec.subcommands) SetCommandBit(sub->id, allow);
}

void Selector::ChangeCategory(const CommandIndex& commands, int category, bool allow) {
  uint32_t bit = 1u << category;
  for (const cmd::CommandSpec* spec : commands.top()) {
    if (commands.CategoriesOf(spec->id) & bit) ChangeCommand(*spec, allow);
    for (const auto& sub : spec->subcommands) {
      if (commands.CategoriesOf(sub->id) & bit) ChangeCommand(*sub, allow);
    }
  }
}

void Selector::SetAllCommands(bool allow) {
  std::fill(allowed.begin(), allowed.end(), allow ? ~uint64_t{0} : 0);
  allcommands = allow;
  future_commands = allow;
  firstargs.clear();
}

namespace {

// Redis refuses patterns with whitespace or NUL, to keep ACL LIST output re-parseable.
bool HasSpaces(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return c == 0 || std::isspace(static_cast<unsigned char>(c)); });
}

RuleError AddKeyPattern(Selector& s, std::string_view op) {
  if (s.allkeys) return RuleError::kKeyPatternAfterAll;
  uint8_t perms = 0;
  size_t offset = 1;
  if (op[0] == '%') {
    for (; offset < op.size(); offset++) {
      char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[offset])));
      if (c == 'R' && !(perms & kKeyRead)) {
        perms |= kKeyRead;
      } else if (c == 'W' && !(perms & kKeyWrite)) {
        perms |= kKeyWrite;
      } else if (op[offset] == '~') {
        offset++;
        break;
      } else {
        return RuleError::kSyntax;
      }
    }
    // A bare "%" grants nothing; Redis would store a pattern it cannot describe.
    if (perms == 0) return RuleError::kSyntax;
  } else {
    perms = kKeyReadWrite;
  }
  // "%R" with no '~' ends with offset == size and perms set: Redis accepts it as the empty
  // pattern, and so does kvstore.
  std::string_view pattern = op.substr(std::min(offset, op.size()));
  if (HasSpaces(pattern)) return RuleError::kSyntax;
  auto it = std::find_if(s.keys.begin(), s.keys.end(),
                         [&](const KeyPattern& k) { return k.pattern == pattern; });
  if (it == s.keys.end()) {
    s.keys.push_back({std::string(pattern), perms});
  } else {
    it->perms |= perms;
  }
  return RuleError::kNone;
}

RuleError AddChannelPattern(Selector& s, std::string_view op) {
  if (s.allchannels) return RuleError::kChannelPatternAfterAll;
  std::string_view pattern = op.substr(1);
  if (HasSpaces(pattern)) return RuleError::kSyntax;
  if (std::find(s.channels.begin(), s.channels.end(), pattern) == s.channels.end()) {
    s.channels.emplace_back(pattern);
  }
  return RuleError::kNone;
}

// +name, +name|sub (a subcommand) or +name|arg (a first argument of a command without
// subcommands).
RuleError AllowCommand(Selector& s, std::string_view name, const RuleEnv& env) {
  size_t bar = name.rfind('|');
  if (bar == std::string_view::npos) {
    const cmd::CommandSpec* spec = env.commands.Find(name);
    if (!spec) return RuleError::kUnknownName;
    s.ChangeCommand(*spec, true);
    return RuleError::kNone;
  }
  const cmd::CommandSpec* spec = env.commands.Find(name.substr(0, bar));
  if (!spec) return RuleError::kUnknownName;
  if (spec->parent) return RuleError::kFirstArgOfSubcommand;
  std::string_view sub = name.substr(bar + 1);
  if (sub.empty()) return RuleError::kSyntax;
  if (!spec->subcommands.empty()) {
    const cmd::CommandSpec* subspec = env.commands.Find(name);
    if (!subspec) return RuleError::kUnknownName;
    s.ChangeCommand(*subspec, true);
    return RuleError::kNone;
  }
  std::vector<std::string>& args = s.firstargs[spec->id];
  for (const std::string& a : args) {
    if (EqualsIgnoreCase(a, sub)) return RuleError::kNone;
  }
  args.emplace_back(sub);
  return RuleError::kNone;
}

}  // namespace

RuleError ApplySelectorRule(Selector& s, std::string_view op, const RuleEnv& env) {
  auto is = [&](std::string_view word) { return EqualsIgnoreCase(op, word); };
  if (is("allkeys") || is("~*")) {
    s.allkeys = true;
    s.keys.clear();
  } else if (is("resetkeys")) {
    s.allkeys = false;
    s.keys.clear();
  } else if (is("allchannels") || is("&*")) {
    s.allchannels = true;
    s.channels.clear();
  } else if (is("resetchannels")) {
    s.allchannels = false;
    s.channels.clear();
  } else if (is("allcommands") || is("+@all")) {
    s.SetAllCommands(true);
  } else if (is("nocommands") || is("-@all")) {
    s.SetAllCommands(false);
  } else if (op.empty()) {
    return RuleError::kSyntax;
  } else if (op[0] == '~' || op[0] == '%') {
    RuleError e = AddKeyPattern(s, op);
    if (e != RuleError::kNone) return e;
    s.allkeys = false;
  } else if (op[0] == '&') {
    return AddChannelPattern(s, op);
  } else if ((op[0] == '+' || op[0] == '-') && op.size() >= 2 && op[1] == '@') {
    int cat = cmd::AclCategoryIndex(op.substr(2));
    if (cat < 0) return RuleError::kUnknownName;
    s.ChangeCategory(env.commands, cat, op[0] == '+');
  } else if (op[0] == '+') {
    return AllowCommand(s, op.substr(1), env);
  } else if (op[0] == '-') {
    const cmd::CommandSpec* spec = env.commands.Find(op.substr(1));
    if (!spec) return RuleError::kUnknownName;
    s.ChangeCommand(*spec, false);
  } else {
    return RuleError::kSyntax;
  }
  return RuleError::kNone;
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Redis' sdssplitargs: words separated by whitespace, "double quoted" with \n \r \t \b \a
// \xHH and \<c> escapes, or 'single quoted' with \' only. A closing quote must be followed by
// whitespace or the end. Nullopt on unbalanced quotes.
std::optional<std::vector<std::string>> SplitArgs(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0, n = line.size();
  auto space = [&](size_t k) { return std::isspace(static_cast<unsigned char>(line[k])) != 0; };
  while (true) {
    while (i < n && space(i)) i++;
    if (i >= n) return out;
    std::string cur;
    bool inq = false, insq = false;
    for (;; i++) {
      if (inq) {
        if (i >= n) return std::nullopt;
        char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && HexValue(line[i + 2]) >= 0 &&
            HexValue(line[i + 3]) >= 0) {
          cur.push_back(static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3])));
          i += 3;
        } else if (c == '\\' && i + 1 < n) {
          static constexpr std::string_view kFrom = "nrtba", kTo = "\n\r\t\b\a";
          char e = line[++i];
          size_t k = kFrom.find(e);
          cur.push_back(k == std::string_view::npos ? e : kTo[k]);
        } else if (c == '"') {
          if (i + 1 < n && !space(i + 1)) return std::nullopt;
          i++;
          break;
        } else {
          cur.push_back(c);
        }
      } else if (insq) {
        if (i >= n) return std::nullopt;
        char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          cur.push_back('\'');
          i++;
        } else if (c == '\'') {
          if (i + 1 < n && !space(i + 1)) return std::nullopt;
          i++;
          break;
        } else {
          cur.push_back(c);
        }
      } else {
        if (i >= n || space(i)) break;
        if (line[i] == '"') {
          inq = true;
        } else if (line[i] == '\'') {
          insq = true;
        } else {
          cur.push_back(line[i]);
        }
      }
    }
    out.push_back(std::move(cur));
  }
}

}  // namespace

RuleError SelectorFromOpSet(std::string_view opset, const RuleEnv& env, Selector* out) {
  Selector s = Selector::Create(env, /*root=*/false);
  // Redis applies no rule at all when the inside does not split (unbalanced quotes): the
  // selector is added empty.
  auto args = SplitArgs(opset.substr(1, opset.size() - 2));
  if (args) {
    for (const std::string& op : *args) {
      RuleError e = ApplySelectorRule(s, op, env);
      if (e != RuleError::kNone) return e;
    }
  }
  *out = std::move(s);
  return RuleError::kNone;
}

}  // namespace kv::acl
