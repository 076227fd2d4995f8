// The server's ACL users (acl/ holds the rules and the check): the user table, the default
// user that `requirepass` sets the password of, and the clients a change of users affects.
// Every call is made with the keyspace lock held (commands, CONFIG SET), which serializes them;
// a user's object stays where it is while it exists, so the clients authenticated as it see
// each change at their next command, as in Redis.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "acl/check.h"
#include "acl/command_index.h"
#include "acl/file.h"
#include "acl/log.h"
#include "acl/selector.h"
#include "acl/user.h"
#include "cmd/command.h"
#include "common/config_parser.h"
#include "common/status.h"

namespace kv::server {

class Client;
class Server;

// Where a command the ACL refuses was on its way to run: each has Redis' own error text.
enum class AclContext {
  kTopLevel,  // sent by the client (or queued in MULTI)
  kExec,      // queued, and refused when EXEC runs it (the rules changed meanwhile)
  kScript,    // redis.call from a script
};

class AclUsers {
 public:
  AclUsers(Server& server, const cmd::CommandTable& commands);

  const acl::RuleEnv& env() const { return env_; }
  const acl::CommandIndex& commands() const { return index_; }

  // nullptr when there is no such user.
  std::shared_ptr<acl::User> Find(std::string_view name) const;
  std::shared_ptr<acl::User> Default() const { return default_; }
  // Users in name order (ACL LIST, ACL USERS).
  const std::map<std::string, std::shared_ptr<acl::User>, std::less<>>& all() const {
    return users_;
  }

  // ACL SETUSER: creates the user if needed and applies the rules, all or nothing. Returns ""
  // or Redis' error. Subscribed clients of the user that lose a channel are disconnected.
  std::string SetUser(std::string_view name, std::span<const std::string_view> rules);
  // ACL DELUSER of one user (not "default"): false if there is none. Its clients are
  // disconnected (the caller's after its reply).
  bool DelUser(std::string_view name);
  // requirepass: the default user's only password, or nopass when empty.
  void SetDefaultPassword(const std::string& password);

  // The user `name` authenticated by `password` (enabled, and the password is one of its own
  // or it is nopass); nullptr otherwise, and the failure goes to ACL LOG with `client`'s
  // details and `args`[0] (AUTH or HELLO as sent).
  std::shared_ptr<acl::User> Authenticate(std::string_view name, std::string_view password,
                                          Client& client, std::string_view command);

  // A command `client` may not run: logs it in ACL LOG and returns Redis' error for `where`,
  // with its leading '-' and code ("-NOPERM ...") except in a script, whose error Redis words
  // without them ("The user executing the script ..."). A script's client is its caller.
  std::string Deny(const acl::CheckResult& r, const cmd::CommandSpec& spec,
                   std::span<const std::string_view> args, AclContext where, Client& client);

  // At startup (Redis' ACLLoadUsersAtStartup): the config file's `user` directives, already
  // checked (CheckUserDirective), or the ACL file `aclfile`, never both. Redis' log lines; a
  // failed status stops the start (its message is logged; empty when logged already).
  Status LoadAtStartup(const std::vector<ConfigDirective>& directives, const std::string& aclfile);
  // ACL LOAD: every user from `aclfile`, all or nothing. "" or Redis' error text. The clients
  // of every user but "default" are disconnected (the caller's after its reply), as in Redis.
  std::string LoadFile(const std::string& aclfile);
  // ACL SAVE: the users to `aclfile` through a temporary file renamed over it. False (and a log
  // line) on an I/O error.
  bool SaveFile(const std::string& aclfile) const;
  // Every user's ACL LIST line, in name order (ACL SAVE, CONFIG REWRITE).
  std::vector<std::string> Lines() const;

  // ACL LOG and acllog-max-len (applied at the next entry, as in Redis).
  acl::Log& log() { return log_; }
  void set_log_max_len(size_t n) { log_max_len_ = n; }
  // acl-pubsub-default: the channels of users and selectors created (or reset) from now on.
  void set_pubsub_allchannels(bool all) { env_.pubsub_allchannels = all; }

 private:
  // Whether new clients start authenticated (the default user is on and nopass): the server's
  // auth_required flag, updated after every change to the default user.
  void DefaultChanged();
  // Disconnects the subscribed clients of `u` whose channels or patterns `updated` no longer
  // allows (Redis' ACLKillPubsubClientsIfNeeded).
  void KillPubsubClientsIfNeeded(const acl::User& u, const acl::User& updated);
  // Disconnects the clients of `gone` (deleted or replaced), as Redis' ACLFreeUserAndKillClients.
  void DisconnectClientsOf(const acl::User& gone);
  // Makes `loaded` (which has "default") the users: "default" is updated in place, every
  // other user is replaced and its clients disconnected.
  void Replace(acl::UserSet loaded);
  // Adds an ACL LOG entry for `client`.
  void Log(Client& client, acl::LogReason reason, acl::LogContext context, std::string object,
           std::string username);

  Server& server_;
  acl::CommandIndex index_;
  acl::RuleEnv env_;
  std::map<std::string, std::shared_ptr<acl::User>, std::less<>> users_;
  std::shared_ptr<acl::User> default_;
  acl::Log log_;
  size_t log_max_len_ = 128;
};

}  // namespace kv::server
