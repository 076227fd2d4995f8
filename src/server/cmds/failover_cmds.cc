// FAILOVER's table entry (the command is server/failover.h's), and the replica's side of it:
// PSYNC <replid> <offset> FAILOVER from the primary that fails over to this replica, on which
// the replica becomes a primary before it answers the PSYNC.
#include "cmd/command.h"
#include "cmd/context.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "server/client.h"
#include "server/failover.h"
#include "server/server.h"

namespace kv::server {

bool PsyncFailoverRefused(cmd::Context& c) {
  Server& s = ServerOf(c);
  if (c.argc() > 3 && EqualsIgnoreCase(c.arg(0), "psync") &&
      EqualsIgnoreCase(c.arg(3), "failover")) {
    LOG_WARNING("Failover request received for replid %s.", std::string(c.arg(1)).c_str());
    if (!s.replica().is_replica()) {
      c.Error("PSYNC FAILOVER can't be sent to a master.");
      return true;
    }
    if (!EqualsIgnoreCase(c.arg(1), s.primary().replid())) {
      c.Error("PSYNC FAILOVER replid must match my replid.");
      return true;
    }
    s.replica().Unfollow();
    LOG_NOTICE("MASTER MODE enabled (failover request from '%s')",
               s.current_client().Describe(MonoMs()).c_str());
  }
  // No replica syncs with a primary that is failing over.
  if (s.failover().state() != Failover::State::kNone) {
    c.Error("-NOMASTERLINK Can't SYNC while failing over");
    return true;
  }
  return false;
}

void RegisterFailoverCommand(cmd::CommandTable& t) {
  using namespace cmd;
  t.Add({.name = "failover",
         .arity = -1,
         .flags = kAdmin | kNoScript | kStale,
         .handler =
             [](Context& c) {
               if (ServerOf(c).cluster()) {
                 c.Error(
                     "FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.");
                 return;
               }
               ServerOf(c).failover().Command(c);
             },
         .group = "server",
         .summary = "Start a coordinated failover between this server and one of its replicas.",
         .since = "6.2.0"});
}

}  // namespace kv::server
