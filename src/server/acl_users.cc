#include "server/acl_users.h"

#include <algorithm>
#include <set>

#include "acl/check.h"
#include "common/clock.h"
#include "common/logging.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {

namespace {

// Closes a client a change of users took access from: the one running the command once its
// reply is written, any other at once.
void Disconnect(Client* c, Client* me) {
  if (c == me) {
    c->session().close_after_reply = true;
  } else {
    c->Kill();
  }
}

std::string AclDenialError(const acl::CheckResult& r, const cmd::CommandSpec& spec,
                           AclContext where) {
  switch (where) {
    case AclContext::kTopLevel:
      if (r.denial == acl::Denial::kKey) {
        return "-NOPERM this user has no permissions to access one of the keys used as arguments";
      }
      if (r.denial == acl::Denial::kChannel) {
        return "-NOPERM this user has no permissions to access one of the channels used as "
               "arguments";
      }
      return "-NOPERM this user has no permissions to run the '" + spec.name + "' command";
    case AclContext::kExec: {
      std::string reason = r.denial == acl::Denial::kKey
                               ? "no permission to touch the specified keys"
                           : r.denial == acl::Denial::kChannel
                               ? "no permission to access one of the channels used as arguments"
                               : "no permission to execute the command or subcommand";
      return "-NOPERM ACLs rules changed between the moment the transaction was accumulated and "
             "the EXEC call. This command is no longer allowed for the following reason: " +
             reason;
    }
    case AclContext::kScript:
      if (r.denial == acl::Denial::kKey) {
        return "The user executing the script can't access at least one of the keys mentioned "
               "in the command arguments";
      }
      if (r.denial == acl::Denial::kChannel) {
        return "The user executing the script can't publish to the channel mentioned in the "
               "command";
      }
      return "The user executing the script can't run this command or subcommand";
  }
  return "-NOPERM no permission";
}

}  // namespace

AclUsers::AclUsers(Server& server, const cmd::CommandTable& commands)
    // acl-pubsub-default is Redis 7.0's default, resetchannels: new users start with no channel.
    : server_(server), index_(commands), env_{index_, /*pubsub_allchannels=*/false} {
  default_ = std::make_shared<acl::User>(acl::User::Default(env_));
  users_.emplace("default", default_);
}

std::shared_ptr<acl::User> AclUsers::Find(std::string_view name) const {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

std::string AclUsers::SetUser(std::string_view name, std::span<const std::string_view> rules) {
  std::shared_ptr<acl::User> existing = Find(name);
  acl::User staged = existing ? *existing : acl::User::Create(std::string(name), env_);
  std::string error = acl::SetUser(staged, rules, env_);
  if (!error.empty()) return error;
  if (existing) {
    KillPubsubClientsIfNeeded(*existing, staged);
    *existing = std::move(staged);  // in place: its clients see the new rules
  } else {
    users_.emplace(std::string(name), std::make_shared<acl::User>(std::move(staged)));
  }
  if (existing == default_) DefaultChanged();
  return "";
}

bool AclUsers::DelUser(std::string_view name) {
  auto it = users_.find(name);
  if (it == users_.end()) return false;
  std::shared_ptr<acl::User> gone = it->second;
  users_.erase(it);
  // As Redis' ACLFreeUserAndKillClients: each client of the user goes back to the default
  // user, unauthenticated, and is closed (the caller once its reply is written).
  Client* me = server_.current_client_if_any();
  for (const auto& [id, c] : server_.clients()) {
    if (c->acl_user() != gone) continue;
    c->set_acl_user(default_);
    c->session().authenticated = false;
    c->session().user = "default";
    Disconnect(c, me);
  }
  return true;
}

void AclUsers::SetDefaultPassword(const std::string& password) {
  // Redis' ACLUpdateDefaultUserPassword.
  std::string rule = password.empty() ? "nopass" : ">" + password;
  const std::string_view rules[] = {"resetpass", rule};
  acl::SetUser(*default_, rules, env_);
  DefaultChanged();
}

std::shared_ptr<acl::User> AclUsers::Authenticate(std::string_view name, std::string_view password,
                                                  Client& client, std::string_view command) {
  std::shared_ptr<acl::User> u = Find(name);
  if (u && u->enabled() && u->CheckPassword(password)) return u;
  Log(client, acl::LogReason::kAuth,
      client.tx().active ? acl::LogContext::kMulti : acl::LogContext::kTopLevel,
      std::string(command), std::string(name));
  return nullptr;
}

std::string AclUsers::Deny(const acl::CheckResult& r, const cmd::CommandSpec& spec,
                           std::span<const std::string_view> args, AclContext where,
                           Client& client) {
  acl::LogReason reason = r.denial == acl::Denial::kKey       ? acl::LogReason::kKey
                          : r.denial == acl::Denial::kChannel ? acl::LogReason::kChannel
                                                              : acl::LogReason::kCommand;
  acl::LogContext context = where == AclContext::kScript ? acl::LogContext::kLua
                            : where == AclContext::kExec || client.tx().active
                                ? acl::LogContext::kMulti
                                : acl::LogContext::kTopLevel;
  std::string object = reason == acl::LogReason::kCommand ? spec.name : std::string(args[r.arg]);
  Log(client, reason, context, std::move(object), client.acl_user()->name);
  return AclDenialError(r, spec, where);
}

void AclUsers::Log(Client& client, acl::LogReason reason, acl::LogContext context,
                   std::string object, std::string username) {
  acl::LogEntry e;
  e.reason = reason;
  e.context = context;
  e.object = std::move(object);
  e.username = std::move(username);
  e.time_ms = WallMs();
  e.client_info = client.Describe(MonoMs());
  log_.Add(std::move(e), log_max_len_);
}

void AclUsers::DefaultChanged() {
  server_.set_auth_required(!(default_->enabled() && (default_->flags & acl::kUserNoPass)));
}

void AclUsers::KillPubsubClientsIfNeeded(const acl::User& u, const acl::User& updated) {
  Client* me = server_.current_client_if_any();
  for (const auto& [id, c] : server_.clients()) {
    if (c->acl_user().get() != &u || c->subscriptions() == 0) continue;
    auto allows = [&](const std::set<std::string>& names, bool patterns) {
      return std::all_of(names.begin(), names.end(), [&](const std::string& n) {
        return acl::CheckChannel(updated, n, patterns);
      });
    };
    if (allows(c->channels(), false) && allows(c->shard_channels(), false) &&
        allows(c->patterns(), true)) {
      continue;
    }
    LOG_VERBOSE("Disconnecting client id=%llu: user '%s' lost a channel it is subscribed to",
                static_cast<unsigned long long>(id), u.name.c_str());
    Disconnect(c, me);
  }
}

bool Server::ReadsAnyKey(const cmd::Context& c) const {
  // The primary's link and the AOF loader are obeyed; a script runs as its caller, the running
  // client.
  if (c.session.obey || current_client_ == nullptr || c.spec == nullptr) return true;
  return acl::RunsWithUnrestrictedKeys(*current_client_->acl_user(), *c.spec, c.args,
                                       acl::kKeyRead);
}

}  // namespace kv::server
