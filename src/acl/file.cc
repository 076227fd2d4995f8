#include "acl/file.h"

#include "acl/describe.h"

namespace kv::acl {

namespace {

std::string_view Trim(std::string_view s, std::string_view chars) {
  size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(chars) - b + 1);
}

// Redis' sdssplitlen on one separator: empty fields kept ("a  b" is "a", "", "b").
std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  if (s.empty()) return out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); i++) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// Merges "(a" "b)" into one selector argument; false when a parenthesis stays open.
bool Merge(std::span<const std::string> args, std::vector<std::string>* merged, size_t* open) {
  std::vector<std::string_view> views(args.begin(), args.end());
  return MergeSelectorArgs(views, merged, open);
}

}  // namespace

std::string ParseAclFile(std::string_view text, std::string_view filename, const RuleEnv& env,
                         UserSet* users) {
  std::string errors;
  std::string file(filename);
  UserSet loaded;
  std::vector<std::string_view> lines = SplitOn(text, '\n');
  for (size_t i = 0; i < lines.size(); i++) {
    std::string where = file + ":" + std::to_string(i + 1);
    std::string_view line = Trim(lines[i], " \t\r\n");
    if (line.empty()) continue;
    std::vector<std::string_view> argv = SplitOn(line, ' ');
    if (argv[0] != "user" || argv.size() < 2) {
      errors += where + " should start with user keyword followed by the username. ";
      continue;
    }
    std::string name(argv[1]);
    if (!ValidUserName(name)) {
      errors += "'" + where + ": username '" + name + "' contains invalid characters. ";
      continue;
    }
    auto [it, added] = loaded.emplace(name, User::Create(name, env));
    if (!added) {
      errors +=
          "WARNING: Duplicate user '" + name + "' found on line " + std::to_string(i + 1) + ". ";
      continue;
    }
    std::vector<std::string> merged;
    size_t open = 0;
    std::span<const std::string_view> rules(argv.begin() + 2, argv.end());
    if (!MergeSelectorArgs(rules, &merged, &open)) {
      errors += where + ": Unmatched parenthesis in selector definition.";
      continue;
    }
    bool syntax_error = false;
    for (const std::string& arg : merged) {
      std::string op(Trim(arg, "\t\r\n"));
      RuleError e = ApplyUserRule(it->second, op, env);
      if (e == RuleError::kNone) continue;
      if (e == RuleError::kUnknownName) {
        // Every unknown name is reported: it says nothing a password would.
        errors += where + ": Error in applying operation '" + op +
                  "': " + std::string(RuleErrorMessage(e)) + ". ";
      } else if (!syntax_error) {
        // Only the first other error, as it may be what the later ones follow from.
        errors += where + ": " + std::string(RuleErrorMessage(e)) + ". ";
        syntax_error = true;
      }
    }
  }
  if (!errors.empty()) {
    return errors +
           "WARNING: ACL errors detected, no change to the previously active ACL rules was "
           "performed";
  }
  if (!loaded.count("default")) loaded.emplace("default", User::Default(env));
  *users = std::move(loaded);
  return "";
}

std::vector<std::string> UserLines(const std::vector<const User*>& users, const RuleEnv& env) {
  std::vector<std::string> out;
  for (const User* u : users) out.push_back(AclListLine(*u, env));
  return out;
}

std::string CheckUserDirective(std::span<const std::string> argv,
                               const std::function<bool(std::string_view)>& defined,
                               const RuleEnv& env) {
  // Redis names the failing argument by its index among the merged rules but takes it from the
  // whole directive, two places earlier ("user", the name); its messages are kept as they are.
  auto error = [&](size_t index, std::string_view reason) {
    return "Error in user declaration '" + argv[index] + "': " + std::string(reason);
  };
  if (argv.size() < 2) return error(0, "Syntax error");
  if (defined(argv[1])) {
    return error(1, "Duplicate user found. A user can only be defined once in config files");
  }
  std::vector<std::string> merged;
  size_t open = 0;
  if (!Merge(argv.subspan(2), &merged, &open)) return error(open, "Syntax error");
  User probe = User::Create(argv[1], env);
  for (size_t j = 0; j < merged.size(); j++) {
    RuleError e = ApplyUserRule(probe, merged[j], env);
    if (e != RuleError::kNone && e != RuleError::kUnknownName) {
      return error(j, RuleErrorMessage(e));
    }
  }
  return "";
}

std::string LoadUserDirective(std::span<const std::string> argv, const RuleEnv& env, User* u) {
  std::vector<std::string> merged;
  size_t open = 0;
  Merge(argv.subspan(2), &merged, &open);  // checked by CheckUserDirective
  for (const std::string& op : merged) {
    RuleError e = ApplyUserRule(*u, op, env);
    if (e != RuleError::kNone) {
      return "Error loading ACL rule '" + op + "' for the user named '" + argv[1] +
             "': " + std::string(RuleErrorMessage(e));
    }
  }
  return "";
}

}  // namespace kv::acl
