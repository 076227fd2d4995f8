// A shutdown that waits for its replicas, as Redis 7.0 does (`shutdown-timeout`): SHUTDOWN, or
// SIGTERM/SIGINT, on a primary whose replicas have not acknowledged its whole stream pauses
// writes, asks them for an ACK (REPLCONF GETACK *), and finishes once every replica has
// acknowledged the primary's offset or shutdown-timeout seconds have passed; NOW (or a
// timeout of 0) skips the wait, SHUTDOWN ABORT cancels it. Finishing is the server's last
// work under the keyspace lock: the lagging replicas are logged, the AOF is flushed and the
// final snapshot saved (Server::PrepareShutdown), then Server::RequestShutdown, after which no
// command runs and WaitForShutdown stops the process.
//
// A signal only schedules the shutdown (Redis' shutdown_asap): the cron begins it, so DEBUG
// PAUSE-CRON holds it and SHUTDOWN ABORT cancels it before it begins.
//
// The SHUTDOWN clients get no reply while the shutdown waits: on success the process exits
// (their connections close), on failure or ABORT they get Redis' error.
//
// Thread safety: every call is made with the keyspace lock held, but signal_pending().
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "server/process_params.h"

namespace kv::server {

class Client;
class Server;

class ShutdownWait {
 public:
  explicit ShutdownWait(Server& server) : server_(server) {}

  enum class Outcome {
    kDone,     // finished: RequestShutdown was called
    kWaiting,  // waiting for replicas (or for the shutdown already in progress)
    kFailed,   // the final save failed (logged): the server keeps running
  };
  // Redis' prepareForShutdown. `client`, when not null, is SHUTDOWN's client: it is parked
  // (no reply) while the outcome is kWaiting.
  Outcome Begin(const ShutdownFlags& flags, Client* client);
  // SHUTDOWN ABORT: false when no shutdown is in progress or scheduled.
  bool Abort();
  // SIGTERM or SIGINT: the next cron begins a shutdown with `flags` (shutdown-on-sig*).
  void Schedule(const ShutdownFlags& flags);
  // A signal's shutdown is scheduled or under way (until it fails or is aborted). Any thread.
  bool signal_pending() const { return signal_pending_.load(std::memory_order_acquire); }
  // Begins a scheduled shutdown; finishes the one in progress once the replicas caught up or
  // the time is up.
  void Cron(int64_t now_ms);
  bool in_progress() const { return deadline_ms_ != 0; }
  // The time left for the replicas while a shutdown waits for them (INFO's
  // shutdown_in_milliseconds); -1 when none waits.
  int64_t remaining_ms(int64_t now_ms) const {
    return in_progress() ? std::max<int64_t>(deadline_ms_ - now_ms, 0) : -1;
  }

 private:
  // Every replica acknowledged the whole stream (true with none).
  bool ReadyToShutdown() const;
  // Redis' finishShutdown: logs the lagging replicas, saves, and requests the exit; on a
  // failure the shutdown is cancelled.
  bool Finish();
  // Ends the wait: the parked clients get the error, writes resume.
  void Cancel();

  Server& server_;
  ShutdownFlags flags_;
  ShutdownFlags signal_flags_;  // those of the scheduled shutdown
  bool scheduled_ = false;      // a signal's shutdown waits for the cron to begin it
  std::atomic<bool> signal_pending_{false};
  int64_t deadline_ms_ = 0;        // wall clock; 0: no shutdown waits
  std::vector<uint64_t> waiters_;  // the parked SHUTDOWN clients' ids
};

}  // namespace kv::server
