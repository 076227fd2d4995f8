// FAILOVER, as Redis 7.0: a primary hands its role to one of its replicas without losing a
// write. It pauses writes (as CLIENT PAUSE WRITE, until the failover ends), waits until the
// chosen replica (TO host port, or the first to catch up) has acknowledged the primary's
// whole stream, then becomes a replica of it; the PSYNC it sends carries FAILOVER, on which
// the replica becomes a primary and continues the history (+CONTINUE), so this server follows
// it from where both stand. TIMEOUT gives the replica that long to catch up, after which the
// failover is aborted, or (FORCE) goes ahead anyway. ABORT returns to normal at any point.
//
// States, as INFO replication's master_failover_state names them:
//   kNone        no-failover
//   kWaitSync    waiting-for-sync: writes paused, waiting for the target's ACK
//   kInProgress  failover-in-progress: following the target, until its reply to the PSYNC
//
// Thread safety: every call is made with the keyspace lock held (the PSYNC's outcome comes
// from the replica link's thread, which holds it too).
#pragma once

#include <cstdint>
#include <string>

#include "cmd/context.h"

namespace kv::server {

class Server;

class Failover {
 public:
  explicit Failover(Server& server) : server_(server) {}

  enum class State { kNone, kWaitSync, kInProgress };
  State state() const { return state_; }

  // FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms].
  void Command(cmd::Context& c);
  // Redis' updateFailoverStatus: the timeout, and the target caught up.
  void Cron(int64_t now_ms);

 private:
  // Aborts with `why` logged; a failover in progress makes this server a primary again.
  void Abort(const char* why);
  // Back to no failover: writes resume.
  void Clear();
  void SetState(State s);
  // The target caught up (or FORCE after the timeout): follow it, PSYNC with FAILOVER.
  void FailOver();
  // The target's reply to the PSYNC: accepted ends the failover, refused aborts it.
  void OnPsyncReply(bool accepted);

  Server& server_;
  State state_ = State::kNone;
  std::string host_;  // the target; empty: the first replica to catch up
  int port_ = 0;
  int64_t end_ms_ = 0;  // TIMEOUT's end (wall clock); 0: none
  bool force_ = false;
};

}  // namespace kv::server
