// The replication commands: REPLICAOF (SLAVEOF) and ROLE, which both sides answer, and WAIT,
// REPLCONF, PSYNC and SYNC, which the primary side (repl/primary/) answers for the client that
// runs them.
#include "cmd/command.h"
#include "cmd/context.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "server/client.h"
#include "server/failover.h"
#include "server/server.h"

namespace kv::server {

// failover_cmds.cc: PSYNC ... FAILOVER, and SYNC while this server fails over; true when
// answered with an error.
bool PsyncFailoverRefused(cmd::Context& c);

namespace {

using cmd::Context;

// The primary side answers them for the client that runs them.
void Wait(Context& c) { ServerOf(c).primary().Wait(c, ServerOf(c).current_client()); }
void Replconf(Context& c) { ServerOf(c).primary().Replconf(c, ServerOf(c).current_client()); }
void Psync(Context& c) {
  // A replica already is one (Redis ignores its SYNC); FAILOVER's PSYNC promotes this server.
  if (!(ServerOf(c).current_client().flags() & Client::kReplica) && PsyncFailoverRefused(c)) {
    return;
  }
  ServerOf(c).primary().Psync(c, ServerOf(c).current_client());
}

void ReplicaOf(Context& c) {
  if (ServerOf(c).cluster()) {
    c.Error("REPLICAOF not allowed in cluster mode.");
    return;
  }
  if (ServerOf(c).failover().state() != Failover::State::kNone) {
    c.Error("REPLICAOF not allowed while failing over.");
    return;
  }
  ServerOf(c).replica().ReplicaOf(c);
}

}  // namespace

void RegisterReplCommands(cmd::CommandTable& t) {
  using namespace cmd;
  for (const char* name : {"replicaof", "slaveof"}) {
    t.Add({.name = name,
           .arity = 3,
           .flags = kAdmin | kNoScript | kStale,
           .handler = ReplicaOf,
           .group = "server",
           .summary = "Make the server a replica of another instance, or promote it as master.",
           .since = name[0] == 'r' ? "5.0.0" : "1.0.0"});
  }
  t.Add({.name = "wait",
         .arity = 3,
         .flags = kNoScript,
         .handler = Wait,
         .group = "generic",
         .summary = "Wait for the synchronous replication of all the write commands sent in the "
                    "context of the current connection",
         .since = "3.0.0"});
  t.Add({.name = "role",
         .arity = 1,
         .flags = kNoScript | kLoading | kStale | kFast,
         .handler =
             [](Context& c) {
               Server& s = ServerOf(c);
               if (s.replica().is_replica()) {
                 s.replica().Role(c);
               } else {
                 s.primary().Role(c);
               }
             },
         .group = "server",
         .summary = "Return the role of the instance in the context of replication",
         .since = "2.8.12"});
  t.Add({.name = "replconf",
         .arity = -1,
         .flags = kAdmin | kNoScript | kLoading | kStale,
         .handler = Replconf,
         .group = "server",
         .summary = "An internal command for configuring the replication stream",
         .since = "3.0.0"});
  t.Add({.name = "psync",
         .arity = -3,
         .flags = kAdmin | kNoScript | kNoMulti,
         .handler = Psync,
         .group = "server",
         .summary = "Internal command used for replication",
         .since = "2.8.0"});
  t.Add({.name = "sync",
         .arity = 1,
         .flags = kAdmin | kNoScript | kNoMulti,
         .handler = Psync,
         .group = "server",
         .summary = "Internal command used for replication",
         .since = "1.0.0"});
}

}  // namespace kv::server
