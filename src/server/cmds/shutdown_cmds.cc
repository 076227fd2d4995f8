// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as Redis 7.0: a final snapshot when save points
// are configured or SAVE is given (not with NOSAVE; a failed save refuses the shutdown unless
// FORCE), after waiting up to shutdown-timeout for lagging replicas (not with NOW); ABORT
// cancels a shutdown that waits. The wait is ShutdownWait's (server/shutdown.h). On success
// there is no reply: the connection closes and the process exits with status 0
// (Server::WaitForShutdown, main).
#include "cmd/command.h"
#include "cmd/context.h"
#include "common/strutil.h"
#include "repl/replica/replica.h"
#include "server/client.h"
#include "server/server.h"
#include "server/shutdown.h"

namespace kv::server {
namespace {

using cmd::Context;

void Shutdown(Context& c) {
  ShutdownFlags f;
  bool abort = false;
  for (size_t i = 1; i < c.argc(); i++) {
    std::string_view a = c.arg(i);
    if (EqualsIgnoreCase(a, "NOSAVE")) {
      f.nosave = true;
    } else if (EqualsIgnoreCase(a, "SAVE")) {
      f.save = true;
    } else if (EqualsIgnoreCase(a, "NOW")) {
      f.now = true;
    } else if (EqualsIgnoreCase(a, "FORCE")) {
      f.force = true;
    } else if (EqualsIgnoreCase(a, "ABORT")) {
      abort = true;
    } else {
      c.Error(cmd::OpStatus::kSyntax);
      return;
    }
  }
  bool any_flag = f.save || f.nosave || f.now || f.force;
  if ((abort && any_flag) || (f.save && f.nosave)) {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  Server& s = ServerOf(c);
  if (abort) {
    if (s.shutdown_wait().Abort()) {
      c.out.Ok();
    } else {
      c.Error("No shutdown in progress.");
    }
    return;
  }
  // What is half loaded is not saved over the file it comes from, as in Redis.
  if (s.loading_at_startup() || s.replica().loading()) {
    f.save = false;
    f.nosave = true;
  }
  if (!f.now && c.session.deny_blocking) {
    c.Error("SHUTDOWN without NOW or ABORT isn't allowed for DENY BLOCKING client");
    return;
  }
  switch (s.shutdown_wait().Begin(f, &s.current_client())) {
    case ShutdownWait::Outcome::kDone:
      c.session.close_after_reply = true;  // nothing is written, so the connection just closes
      return;
    case ShutdownWait::Outcome::kWaiting:
      c.block = cmd::BlockRequest{};  // parked with no keys, until the shutdown ends
      return;
    case ShutdownWait::Outcome::kFailed:
      c.Error("Errors trying to SHUTDOWN. Check logs.");
      return;
  }
}

}  // namespace

void RegisterShutdownCommand(cmd::CommandTable& t) {
  using namespace cmd;
  t.Add({.name = "shutdown",
         .arity = -1,
         .flags = kAdmin | kNoScript | kLoading | kStale | kNoMulti | kAllowBusy,
         .handler = Shutdown,
         .group = "server",
         .summary = "Synchronously save the dataset to disk and then shut down the server",
         .since = "1.0.0"});
}

}  // namespace kv::server
