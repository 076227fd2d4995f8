// ACL: Redis 7.0's user commands over the server's users (acl_users.h) and acl/'s rules.
#include <algorithm>
#include <vector>

#include "acl/check.h"
#include "acl/describe.h"
#include "acl/password.h"
#include "cmd/acl_categories.h"
#include "cmd/context.h"
#include "cmd/errors.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "server/acl_users.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;

void AclSetUser(Context& c) {
  // Nothing of a user's rules reaches MONITOR or SLOWLOG, as in Redis.
  for (size_t i = 2; i < c.argc(); i++) c.Redact(i);
  std::string_view name = c.arg(2);
  if (!acl::ValidUserName(name)) {
    c.Error("Usernames can't contain spaces or null characters");
    return;
  }
  std::vector<std::string_view> rules;
  for (size_t i = 3; i < c.argc(); i++) rules.push_back(c.arg(i));
  std::string error = ServerOf(c).acl().SetUser(name, rules);
  if (!error.empty()) {
    c.Error(error);
    return;
  }
  c.out.Ok();
}

void AclDelUser(Context& c) {
  AclUsers& users = ServerOf(c).acl();
  for (size_t i = 2; i < c.argc(); i++) {
    if (c.arg(i) == "default") {
      c.Error("The 'default' user cannot be removed");
      return;
    }
  }
  int64_t deleted = 0;
  for (size_t i = 2; i < c.argc(); i++) deleted += users.DelUser(c.arg(i));
  c.out.Int(deleted);
}

void ReplySelector(Context& c, const acl::SelectorInfo& s) {
  c.out.Bulk("commands");
  c.out.Bulk(s.commands);
  c.out.Bulk("keys");
  c.out.Bulk(s.keys);
  c.out.Bulk("channels");
  c.out.Bulk(s.channels);
}

void AclGetUser(Context& c) {
  AclUsers& users = ServerOf(c).acl();
  std::shared_ptr<acl::User> u = users.Find(c.arg(2));
  if (!u) {
    c.out.Null();
    return;
  }
  acl::UserInfo info = acl::GetUserInfo(*u, users.env());
  c.out.Map(6);
  c.out.Bulk("flags");
  c.out.Set(info.flags.size());
  for (std::string_view f : info.flags) c.out.Bulk(f);
  c.out.Bulk("passwords");
  c.out.Array(info.passwords.size());
  for (const std::string& p : info.passwords) c.out.Bulk(p);
  ReplySelector(c, info.root);
  c.out.Bulk("selectors");
  c.out.Array(info.selectors.size());
  for (const acl::SelectorInfo& s : info.selectors) {
    c.out.Map(3);
    ReplySelector(c, s);
  }
}

void AclList(Context& c) {
  AclUsers& users = ServerOf(c).acl();
  c.out.Array(users.all().size());
  for (const auto& [name, u] : users.all()) c.out.Bulk(acl::AclListLine(*u, users.env()));
}

void AclUsersCommand(Context& c) {
  AclUsers& users = ServerOf(c).acl();
  c.out.Array(users.all().size());
  for (const auto& [name, u] : users.all()) c.out.Bulk(name);
}

void AclWhoAmI(Context& c) { c.out.Bulk(ServerOf(c).current_client().acl_user()->name); }

void AclLog(Context& c) {
  acl::Log& log = ServerOf(c).acl().log();
  int64_t count = 10;
  if (c.argc() > 3) {
    c.Error(cmd::SubcommandSyntax(c.arg(1), "acl"));
    return;
  }
  if (c.argc() == 3) {
    if (EqualsIgnoreCase(c.arg(2), "reset")) {
      log.Reset();
      c.out.Ok();
      return;
    }
    if (!c.ParseInt(c.arg(2), &count)) return;
  }
  size_t n = std::min(static_cast<size_t>(std::max<int64_t>(count, 0)), log.entries().size());
  int64_t now = WallMs();
  c.out.Array(n);
  for (size_t i = 0; i < n; i++) {
    const acl::LogEntry& e = log.entries()[i];
    c.out.Map(7);
    c.out.Bulk("count");
    c.out.Int(static_cast<int64_t>(e.count));
    c.out.Bulk("reason");
    c.out.Bulk(acl::LogReasonName(e.reason));
    c.out.Bulk("context");
    c.out.Bulk(acl::LogContextName(e.context));
    c.out.Bulk("object");
    c.out.Bulk(e.object);
    c.out.Bulk("username");
    c.out.Bulk(e.username);
    c.out.Bulk("age-seconds");
    c.out.Double(static_cast<double>(now - e.time_ms) / 1000);
    c.out.Bulk("client-info");
    c.out.Bulk(e.client_info);
  }
}

// The ACL file ACL LOAD and SAVE use; refuses the command (false) when there is none.
bool AclFile(Context& c, std::string* path) {
  *path = ServerOf(c).config().GetString("aclfile");
  if (!path->empty()) return true;
  c.Error(
      "This Redis instance is not configured to use an ACL file. You may want to specify users "
      "via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
      "configuration file set) in order to store users in the Redis configuration.");
  return false;
}

void AclLoad(Context& c) {
  std::string path;
  if (!AclFile(c, &path)) return;
  std::string errors = ServerOf(c).acl().LoadFile(path);
  if (!errors.empty()) {
    c.Error(errors);
    return;
  }
  c.out.Ok();
}

void AclSave(Context& c) {
  std::string path;
  if (!AclFile(c, &path)) return;
  if (!ServerOf(c).acl().SaveFile(path)) {
    c.Error(
        "There was an error trying to save the ACLs. Please check the server logs for more "
        "information");
    return;
  }
  c.out.Ok();
}

// The commands of a category, a container's subcommands included (Redis' aclCatWithFlags).
void CatCommands(const cmd::CommandSpec& spec, int category, std::vector<std::string>* out) {
  if (cmd::Categories(spec) & (1u << category)) out->push_back(spec.name);
  for (const auto& sub : spec.subcommands) CatCommands(*sub, category, out);
}

void AclCat(Context& c) {
  const auto& names = cmd::AclCategoryNames();
  if (c.argc() == 2) {
    c.out.Array(names.size());
    for (std::string_view n : names) c.out.Bulk(n);
    return;
  }
  if (c.argc() != 3) {
    c.Error(cmd::SubcommandSyntax(c.arg(1), "acl"));
    return;
  }
  int category = cmd::AclCategoryIndex(ToLower(c.arg(2)));
  if (category < 0) {
    c.Error("Unknown category '" + std::string(c.arg(2).substr(0, 128)) + "'");
    return;
  }
  std::vector<std::string> out;
  for (const cmd::CommandSpec* spec : ServerOf(c).acl().commands().top()) {
    CatCommands(*spec, category, &out);
  }
  c.out.Array(out.size());
  for (const std::string& n : out) c.out.Bulk(n);
}

void AclGenPass(Context& c) {
  int64_t bits = acl::kGenPassDefaultBits;
  if (c.argc() > 3) {
    c.Error(cmd::SubcommandSyntax(c.arg(1), "acl"));
    return;
  }
  if (c.argc() == 3 && !c.ParseInt(c.arg(2), &bits)) return;
  if (bits <= 0 || bits > acl::kGenPassMaxBits) {
    c.Error(
        "ACL GENPASS argument must be the number of bits for the output password, a positive "
        "number up to " +
        std::to_string(acl::kGenPassMaxBits));
    return;
  }
  c.out.Bulk(acl::GenPass(static_cast<int>(bits)));
}

void AclDryRun(Context& c) {
  AclUsers& users = ServerOf(c).acl();
  std::shared_ptr<acl::User> u = users.Find(c.arg(2));
  if (!u) {
    c.Error("User '" + std::string(c.arg(2)) + "' not found");
    return;
  }
  std::span<const std::string_view> args = c.args.subspan(3);
  const cmd::CommandSpec* spec = users.commands().Find(args[0]);
  // A container with a subcommand named is that subcommand, or unknown (Redis' lookupCommand).
  if (spec && !spec->subcommands.empty() && args.size() >= 2) spec = spec->FindSub(args[1]);
  if (!spec) {
    c.Error("Command '" + std::string(args[0]) + "' not found");
    return;
  }
  if (!cmd::ArityOk(spec->arity, args.size())) {
    c.Error("wrong number of arguments for '" + spec->name + "' command");
    return;
  }
  acl::CheckResult r = acl::CheckCommand(*u, *spec, args);
  if (r.denial == acl::Denial::kCommand) {
    c.out.Bulk("This user has no permissions to run the '" + spec->name + "' command");
  } else if (r.denial == acl::Denial::kKey) {
    c.out.Bulk("This user has no permissions to access the '" + std::string(args[r.arg]) + "' key");
  } else if (r.denial == acl::Denial::kChannel) {
    c.out.Bulk("This user has no permissions to access the '" + std::string(args[r.arg]) +
               "' channel");
  } else {
    c.out.Ok();
  }
}

void AclHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the "
      "command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
  };
  c.ReplyHelp(kLines);
}

}  // namespace

void RegisterAclCommands(cmd::CommandTable& t) {
  cmd::CommandSpec* parent = t.Add({.name = "acl",
                                    .arity = -2,
                                    .group = "server",
                                    .summary = "A container for Access List Control commands ",
                                    .since = "6.0.0"});
  constexpr uint32_t kAdmin = cmd::kAdmin | cmd::kNoScript | cmd::kLoading | cmd::kStale;
  constexpr uint32_t kPlain = cmd::kNoScript | cmd::kLoading | cmd::kStale;
  static constexpr cmd::CommandRow kSubs[] = {
      {"cat", -2, kPlain, 0, 0, 0, AclCat,
       "List the ACL categories or the commands inside a category", "6.0.0"},
      {"deluser", -3, kAdmin, 0, 0, 0, AclDelUser,
       "Remove the specified ACL users and the associated rules", "6.0.0"},
      {"dryrun", -4, kAdmin, 0, 0, 0, AclDryRun,
       "Returns whether the user can execute the given command without executing the command.",
       "7.0.0"},
      {"genpass", -2, kPlain, 0, 0, 0, AclGenPass,
       "Generate a pseudorandom secure password to use for ACL users", "6.0.0"},
      {"getuser", 3, kAdmin, 0, 0, 0, AclGetUser, "Get the rules for a specific ACL user", "6.0.0"},
      {"help", 2, cmd::kLoading | cmd::kStale, 0, 0, 0, AclHelp,
       "Show helpful text about the different subcommands", "6.0.0"},
      {"list", 2, kAdmin, 0, 0, 0, AclList, "List the current ACL rules in ACL config file format",
       "6.0.0"},
      {"log", -2, kAdmin, 0, 0, 0, AclLog, "List latest events denied because of ACLs in place",
       "6.0.0"},
      {"load", 2, kAdmin, 0, 0, 0, AclLoad, "Reload the ACLs from the configured ACL file",
       "6.0.0"},
      {"save", 2, kAdmin, 0, 0, 0, AclSave, "Save the current ACL rules in the configured ACL file",
       "6.0.0"},
      {"setuser", -3, kAdmin, 0, 0, 0, AclSetUser,
       "Modify or create the rules for a specific ACL user", "6.0.0"},
      {"users", 2, kAdmin, 0, 0, 0, AclUsersCommand,
       "List the username of all the configured ACL rules", "6.0.0"},
      {"whoami", 2, kPlain, 0, 0, 0, AclWhoAmI,
       "Return the name of the user associated to the current connection", "6.0.0"},
  };
  cmd::AddSubRows(t, parent, kSubs, "server");
}

}  // namespace kv::server
