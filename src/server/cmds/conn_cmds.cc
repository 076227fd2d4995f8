// Connection commands that need the server: HELLO, AUTH, RESET, QUIT and CLIENT.
#include "cmd/context.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "server/acl_users.h"
#include "server/client.h"
#include "server/server.h"
#include "server/tracking.h"

namespace kv::server {
namespace {

using cmd::Context;

constexpr std::string_view kWrongPass =
    "-WRONGPASS invalid username-password pair or user is disabled.";

// Authenticates the running client as `user` with `pass` (AUTH, HELLO AUTH): its commands run
// as that user from now on.
bool Authenticate(Server& s, Context& c, std::string_view user, std::string_view pass) {
  std::shared_ptr<acl::User> u = s.acl().Authenticate(user, pass, s.current_client(), c.arg(0));
  if (!u) return false;
  c.session.authenticated = true;
  c.session.user = u->name;
  s.current_client().set_acl_user(std::move(u));
  return true;
}

void Auth(Context& c) {
  Server& s = ServerOf(c);
  if (c.argc() > 3) {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  // MONITOR and SLOWLOG never show the credentials (Redis redacts them at this point too).
  for (size_t i = 1; i < c.argc(); i++) c.Redact(i);
  const acl::User& def = *s.acl().Default();
  if (c.argc() == 2 && (def.flags & acl::kUserNoPass)) {
    c.Error(
        "AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?");
    return;
  }
  std::string_view user = c.argc() == 3 ? c.arg(1) : "default";
  if (!Authenticate(s, c, user, c.arg(c.argc() - 1))) {
    c.Error(kWrongPass);
    return;
  }
  c.out.Ok();
}

void HelloReply(Context& c) {
  c.out.Map(7);
  c.out.Bulk("server");
  c.out.Bulk("redis");
  c.out.Bulk("version");
  c.out.Bulk(kRedisCompatVersion);
  c.out.Bulk("proto");
  c.out.Int(c.session.resp);
  c.out.Bulk("id");
  c.out.Int(static_cast<int64_t>(c.session.id));
  c.out.Bulk("mode");
  c.out.Bulk("standalone");
  c.out.Bulk("role");
  c.out.Bulk("master");
  c.out.Bulk("modules");
  c.out.Array(0);
}

bool ValidClientName(std::string_view n) {
  for (unsigned char ch : n) {
    if (ch < '!' || ch > '~') return false;
  }
  return true;
}

void Hello(Context& c) {
  Server& s = ServerOf(c);
  int64_t ver = 0;
  size_t i = 1;
  if (c.argc() >= 2) {
    auto v = ParseInt64(c.arg(1));
    if (!v) {
      c.Error("Protocol version is not an integer or out of range");
      return;
    }
    ver = *v;
    i = 2;
    if (ver < 2 || ver > 3) {
      c.Error("-NOPROTO unsupported protocol version");
      return;
    }
  }
  std::string_view user, pass, name;
  bool has_auth = false, has_name = false;
  for (; i < c.argc(); i++) {
    size_t left = c.argc() - i - 1;
    if (EqualsIgnoreCase(c.arg(i), "AUTH") && left >= 2) {
      has_auth = true;
      c.Redact(i + 1);
      c.Redact(i + 2);
      user = c.arg(i + 1);
      pass = c.arg(i + 2);
      i += 2;
    } else if (EqualsIgnoreCase(c.arg(i), "SETNAME") && left >= 1) {
      has_name = true;
      name = c.arg(++i);
      if (!ValidClientName(name)) {
        c.Error("Client names cannot contain spaces, newlines or special characters.");
        return;
      }
    } else {
      c.Error("Syntax error in HELLO option '" + std::string(c.arg(i)) + "'");
      return;
    }
  }
  if (has_auth && !Authenticate(s, c, user, pass)) {
    c.Error(kWrongPass);
    return;
  }
  if (!c.session.authenticated) {
    c.Error(
        "-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
        "select the RESP protocol version at the same time");
    return;
  }
  if (has_name) c.session.name = std::string(name);
  if (ver) {
    c.session.resp = static_cast<int>(ver);
    c.out.set_proto(c.session.resp);
  }
  HelloReply(c);
}

void Quit(Context& c) {
  c.out.Ok();
  c.session.close_after_reply = true;
}

void Reset(Context& c) {
  Server& s = ServerOf(c);
  c.session.db = 0;
  c.session.resp = 2;
  c.out.set_proto(2);
  c.session.name.clear();
  c.session.reply_mode = cmd::ReplyMode::kOn;
  c.session.no_evict = false;
  c.session.asking = false;
  c.session.cluster_readonly = false;
  c.session.authenticated = !s.auth_required();
  c.session.user = "default";
  Client& me = s.current_client();
  me.set_acl_user(s.acl().Default());
  s.RemoveMonitor(&me);
  s.EndTransaction(me);
  s.UnsubscribeAll(me);
  s.tracking().Disable(me);
  c.out.Simple("RESET");
}

}  // namespace

void RegisterClientCommands(cmd::CommandTable& t);

void RegisterConnectionServerCommands(cmd::CommandTable& t) {
  using namespace cmd;
  t.Add({.name = "auth",
         .arity = -2,
         .flags = kNoScript | kLoading | kStale | kFast | kNoAuth,
         .handler = Auth,
         .group = "connection",
         .summary = "Authenticate to the server",
         .since = "1.0.0"});
  t.Add({.name = "hello",
         .arity = -1,
         .flags = kNoScript | kLoading | kStale | kFast | kNoAuth,
         .handler = Hello,
         .group = "connection",
         .summary = "Handshake with Redis",
         .since = "6.0.0"});
  t.Add({.name = "quit",
         .arity = -1,
         .flags = kAllowBusy | kNoScript | kLoading | kStale | kFast | kNoAuth,
         .handler = Quit,
         .group = "connection",
         .summary = "Close the connection",
         .since = "1.0.0"});
  t.Add({.name = "reset",
         .arity = 1,
         .flags = kNoScript | kLoading | kStale | kFast | kNoAuth,
         .handler = Reset,
         .group = "connection",
         .summary = "Reset the connection",
         .since = "6.2.0"});
  RegisterClientCommands(t);
}

}  // namespace kv::server
