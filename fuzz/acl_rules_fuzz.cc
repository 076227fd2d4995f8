// The ACL rules' fuzz target. The input is a flags byte (bit 0: acl-pubsub-default
// allchannels; bit 1: start from a user that has every kind of rule) then a list of rules
// separated by '\n' (NUL bytes and anything else kept inside a rule), applied with ACL SETUSER's all-or-nothing SetUser to a
// fresh user and to one with every kind of rule already; then, whatever happened:
//   - a refused list leaves the user as it was, and the error is one of Redis' forms;
//   - an accepted one describes (ACL LIST) to rules that rebuild the same user, directly and
//     through the ACL file's parser;
//   - the permission check runs over commands whose arguments come from the input.
// The input is also parsed whole as an ACL file. Nothing may crash (CVE-2024-31227 and
// CVE-2024-51741 crashed Redis on malformed selectors and key patterns).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "acl/acl_test_util.h"
#include "acl/check.h"
#include "acl/describe.h"
#include "acl/file.h"
#include "acl/user.h"

namespace {

using kv::acl::User;

[[noreturn]] void Fail(const char* what, const std::string& a, const std::string& b) {
  fprintf(stderr, "%s\n  %s\n  %s\n", what, a.c_str(), b.c_str());
  abort();
}

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); i++) {
    if (i == s.size() || s[i] == '\n') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// The rules of an ACL LIST line after "user <name> ", split as ACL SETUSER would receive them.
std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); i++) {
    if (i == s.size() || s[i] == ' ') {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

void CheckPermissions(const User& u, std::span<const std::string_view> args);

// The user its description rebuilds.
User Rebuilt(const User& u, const kv::acl::RuleEnv& env) {
  std::string line = kv::acl::DescribeUser(u, env);
  User again = User::Create(u.name, env);
  std::vector<std::string_view> words = Words(line);
  std::string err = kv::acl::SetUser(again, words, env);
  if (!err.empty()) Fail("a description does not re-apply", line, err);
  return again;
}

// Whether a selector has the pattern "*" with read and write ("%RW~*", which, unlike "~*", is
// a pattern and not allkeys). Redis describes it as "~*", which re-applies as allkeys and drops
// the other patterns: its description rebuilds another user, in Redis as in kvstore.
bool HasReadWriteStarPattern(const User& u) {
  for (const kv::acl::Selector& s : u.selectors) {
    for (const kv::acl::KeyPattern& k : s.keys) {
      if (k.pattern == "*" && k.perms == kv::acl::kKeyReadWrite) return true;
    }
  }
  return false;
}

// Whether a pattern or an allowed first argument holds a parenthesis: ACL LIST writes it as it
// is, and re-read, "(~a( ~b)" is a selector that ends early (as in Redis, whose format it is).
bool HasParenthesis(const User& u) {
  auto paren = [](std::string_view s) { return s.find_first_of("()") != std::string_view::npos; };
  for (const kv::acl::Selector& s : u.selectors) {
    for (const kv::acl::KeyPattern& k : s.keys) {
      if (paren(k.pattern)) return true;
    }
    for (const std::string& c : s.channels) {
      if (paren(c)) return true;
    }
    for (const auto& [id, args] : s.firstargs) {
      for (const std::string& a : args) {
        if (paren(a)) return true;
      }
    }
  }
  return false;
}

void CheckUser(const User& u, const kv::acl::RuleEnv& env, std::span<const std::string_view> args) {
  if (HasParenthesis(u)) {
    (void)kv::acl::DescribeUser(u, env);  // described, but not re-read
    CheckPermissions(u, args);
    return;
  }
  std::string line = kv::acl::DescribeUser(u, env);
  User again = Rebuilt(u, env);
  if (HasReadWriteStarPattern(u)) {
    // Rebuilt once, the user has allkeys there and describes to itself from then on.
    line = kv::acl::DescribeUser(again, env);
    again = Rebuilt(again, env);
  }
  if (kv::acl::DescribeUser(again, env) != line) {
    Fail("a description re-applies to another user", line, kv::acl::DescribeUser(again, env));
  }
  kv::acl::UserSet loaded;
  std::string file = kv::acl::AclListLine(u, env) + "\n";
  std::string err = kv::acl::ParseAclFile(file, "fuzz.acl", env, &loaded);
  if (!err.empty() && u.name.find_first_of(" \t\r\n\v\f") == std::string::npos) {
    Fail("an ACL LIST line does not load as an ACL file", file, err);
  }
  CheckPermissions(u, args);
}

// The check, over a few commands with the input's strings as keys and channels.
void CheckPermissions(const User& u, std::span<const std::string_view> args) {
  static const kv::acl::AclTestTable* table = new kv::acl::AclTestTable();
  for (const char* name : {"get", "set", "publish", "subscribe", "psubscribe", "mset"}) {
    const kv::cmd::CommandSpec* spec = table->table().Find(name);
    std::vector<std::string_view> argv = {name};
    for (size_t i = 0; i < 4 && i < args.size(); i++) argv.push_back(args[i]);
    while (argv.size() < 3) argv.push_back("k");
    if (!kv::cmd::ArityOk(spec->arity, argv.size())) argv.resize(3);
    (void)kv::acl::CheckCommand(u, *spec, argv);
    (void)kv::acl::CheckKey(u, argv[1], kv::acl::kKeyRead | kv::acl::kKeyWrite);
    (void)kv::acl::CheckChannel(u, argv[1], true);
  }
}

}  // namespace

// How many inputs SetUser accepted (the replay driver reports it).
size_t acl_rules_fuzz_accepted = 0;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kv::acl::AclTestTable* table = new kv::acl::AclTestTable();
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const kv::acl::RuleEnv env = table->env(flags & 1);
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string_view> rules = SplitLines(in);
  static const std::vector<std::string_view> kFull = {
      "on",      ">pw",   "~a*",       "%R~r*",   "%W~w*",       "&c*", "+@read",
      "-@admin", "+get",  "+config|get", "+select|0", "(~s* +set)", "(%RW~x &y +@hash)"};
  User base = User::Create("u", env);
  if (flags & 2) kv::acl::SetUser(base, kFull, env);
  User u = base;
  std::string before = kv::acl::DescribeUser(u, env);
  std::string err = kv::acl::SetUser(u, rules, env);
  if (!err.empty()) {
    if (kv::acl::DescribeUser(u, env) != before) Fail("a refused list changed the user", before, err);
    if (err.rfind("Error in ACL SETUSER modifier '", 0) != 0 &&
        err.rfind("Unmatched parenthesis in acl selector starting at '", 0) != 0) {
      Fail("an error in no form of Redis'", err, "");
    }
  } else {
    acl_rules_fuzz_accepted++;
    CheckUser(u, env, rules);
  }
  kv::acl::UserSet loaded;
  (void)kv::acl::ParseAclFile(in, "fuzz.acl", env, &loaded);
  return 0;
}
