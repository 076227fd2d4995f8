// Connection commands that need only the session: PING, ECHO, SELECT.
// (HELLO, AUTH, CLIENT, RESET and QUIT need the server and live in server/.)
#include "cmd/context.h"
#include "cmd/registry.h"

namespace kv::cmd {
namespace {

void Ping(Context& c) {
  if (c.argc() > 2) {
    c.Error(WrongArity("ping"));
    return;
  }
  std::string_view msg = c.argc() == 2 ? c.arg(1) : std::string_view();
  if (c.session.resp == 2 && c.session.subscriptions > 0) {
    // A RESP2 subscriber's replies look like messages, as in Redis.
    c.out.Array(2);
    c.out.Bulk("pong");
    c.out.Bulk(msg);
    return;
  }
  if (c.argc() == 2) c.out.Bulk(msg);
  else c.out.Simple("PONG");
}

void Echo(Context& c) { c.out.Bulk(c.arg(1)); }

void Select(Context& c) {
  int64_t id;
  if (!c.ParseInt(c.arg(1), &id, OpStatus::kNotInteger)) return;
  if (id < INT32_MIN || id > INT32_MAX) {  // Redis reads the index as an int first
    c.Error(CountOutOfRange(INT32_MIN, INT32_MAX));
    return;
  }
  if (c.hooks.ClusterMode() && id != 0) {
    c.Error("SELECT is not allowed in cluster mode");
    return;
  }
  if (id < 0 || id >= c.ks.num_dbs()) {
    c.Error(OpStatus::kDbIndex);
    return;
  }
  c.session.db = static_cast<int>(id);
  c.out.Ok();
}

}  // namespace

void RegisterConnectionCommands(CommandTable& t) {
  t.Add({.name = "ping", .arity = -1, .flags = kFast, .handler = Ping,
         .group = "connection", .summary = "Ping the server", .since = "1.0.0"});
  t.Add({.name = "echo", .arity = 2, .flags = kFast | kStale | kLoading, .handler = Echo,
         .group = "connection", .summary = "Echo the given string", .since = "1.0.0"});
  t.Add({.name = "select", .arity = 2, .flags = kFast | kStale | kLoading, .handler = Select,
         .group = "connection",
         .summary = "Change the selected database for the current connection", .since = "1.0.0"});
}

}  // namespace kv::cmd
