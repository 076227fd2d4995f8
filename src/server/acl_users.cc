#include "server/acl_users.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "acl/check.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
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
  DisconnectClientsOf(*gone);
  return true;
}

void AclUsers::DisconnectClientsOf(const acl::User& gone) {
  // As Redis' ACLFreeUserAndKillClients: each client of the user goes back to the default
  // user, unauthenticated, and is closed (the caller once its reply is written).
  Client* me = server_.current_client_if_any();
  for (const auto& [id, c] : server_.clients()) {
    if (c->acl_user().get() != &gone) continue;
    c->set_acl_user(default_);
    c->session().authenticated = false;
    c->session().user = "default";
    Disconnect(c, me);
  }
}

void AclUsers::Replace(acl::UserSet loaded) {
  std::map<std::string, std::shared_ptr<acl::User>, std::less<>> old;
  old.swap(users_);
  for (auto& [name, u] : loaded) {
    if (name == "default") {
      *default_ = std::move(u);
      users_.emplace(name, default_);
    } else {
      users_.emplace(name, std::make_shared<acl::User>(std::move(u)));
    }
  }
  for (const auto& [name, u] : old) {
    if (u != default_) DisconnectClientsOf(*u);
  }
  DefaultChanged();
}

Status AclUsers::LoadAtStartup(const std::vector<ConfigDirective>& directives,
                               const std::string& aclfile) {
  if (!aclfile.empty() && !directives.empty()) {
    return Status::Invalid(
        "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
        "path is invalid. This setup is very likely to lead to configuration errors and "
        "security holes, please define either an ACL file or declare users directly in your "
        "redis.conf, but not both.");
  }
  for (const ConfigDirective& d : directives) {
    std::vector<std::string> argv = {"user"};
    argv.insert(argv.end(), d.args.begin(), d.args.end());
    const std::string& name = argv[1];
    std::string error;
    if (!acl::ValidUserName(name)) {
      error = "Spaces not allowed in ACL usernames";
    } else {
      std::shared_ptr<acl::User> u = Find(name);
      if (u) {
        const std::string_view reset[] = {"reset"};
        acl::SetUser(*u, reset, env_);  // only "default" exists before: it starts over
      } else {
        u = users_.emplace(name, std::make_shared<acl::User>(acl::User::Create(name, env_)))
                .first->second;
      }
      error = acl::LoadUserDirective(argv, env_, u.get());
      if (error.empty() && !u->enabled()) {
        LOG_NOTICE(
            "The user '%s' is disabled (there is no 'on' modifier in the user description). "
            "Make sure this is not a configuration error.",
            name.c_str());
      }
    }
    if (!error.empty()) {
      LOG_WARNING("%s", error.c_str());
      return Status::Invalid("Critical error while loading ACLs. Exiting.");
    }
  }
  DefaultChanged();
  if (aclfile.empty()) return Status::Ok();
  std::string errors = LoadFile(aclfile);
  if (!errors.empty()) {
    return Status::Invalid("Aborting Redis startup because of ACL errors: " + errors);
  }
  return Status::Ok();
}

std::string AclUsers::LoadFile(const std::string& aclfile) {
  std::ifstream in(aclfile, std::ios::binary);
  if (!in) return "Error loading ACLs, opening file '" + aclfile + "': " + strerror(errno);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  acl::UserSet loaded;
  std::string errors = acl::ParseAclFile(text, aclfile, env_, &loaded);
  if (!errors.empty()) return errors;
  Replace(std::move(loaded));
  return "";
}

bool AclUsers::SaveFile(const std::string& aclfile) const {
  std::string text;
  for (const std::string& line : Lines()) text += line + "\n";
  std::string tmp = aclfile + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(WallMs());
  const char* step = "Opening temp ACL file for ACL SAVE";
  FILE* f = fopen(tmp.c_str(), "w");
  bool ok = f != nullptr;
  if (ok) {
    step = "Writing ACL file for ACL SAVE";
    ok = fwrite(text.data(), 1, text.size(), f) == text.size() && fflush(f) == 0 &&
         fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
  }
  if (ok) {
    step = "Renaming ACL file for ACL SAVE";
    ok = rename(tmp.c_str(), aclfile.c_str()) == 0;
  }
  if (!ok) {
    LOG_WARNING("%s: %s", step, strerror(errno));
    unlink(tmp.c_str());
  }
  return ok;
}

std::vector<std::string> AclUsers::Lines() const {
  std::vector<const acl::User*> list;
  for (const auto& [name, u] : users_) list.push_back(u.get());
  return acl::UserLines(list, env_);
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

void Server::WireAclConfig(Config& c) {
  // CONFIG REWRITE keeps the users as `user` lines, unless they live in the ACL file.
  c.OnRewriteUsers([this] {
    return config_->GetString("aclfile").empty() ? acl_->Lines() : std::vector<std::string>{};
  });
  c.OnApply("acl-pubsub-default", [this](const std::string& v) {
    acl_->set_pubsub_allchannels(v == "allchannels");
    return Status::Ok();
  });
  c.OnApply("acllog-max-len", [this](const std::string& v) {
    acl_->set_log_max_len(static_cast<size_t>(ParseInt64(v).value_or(128)));
    return Status::Ok();
  });
}

Status Server::CheckUserDirectives() {
  std::set<std::string, std::less<>> declared;
  for (const ConfigDirective& d : config_->users()) {
    std::vector<std::string> argv = {"user"};
    argv.insert(argv.end(), d.args.begin(), d.args.end());
    std::string error = acl::CheckUserDirective(
        argv, [&](std::string_view name) { return declared.count(name) > 0; }, acl_->env());
    if (!error.empty()) {
      // As a config file error: on stderr, before anything starts.
      fprintf(stderr, "\n%s\n", Config::DirectiveError(d, error).message().c_str());
      return Status::Invalid("");
    }
    declared.insert(d.args[0]);
  }
  return Status::Ok();
}

bool Server::ReadsAnyKey(const cmd::Context& c) const {
  // The primary's link and the AOF loader are obeyed; a script runs as its caller, the running
  // client.
  if (c.session.obey || current_client_ == nullptr || c.spec == nullptr) return true;
  return acl::RunsWithUnrestrictedKeys(*current_client_->acl_user(), *c.spec, c.args,
                                       acl::kKeyRead);
}

}  // namespace kv::server
