#include "server/shutdown.h"

#include <string>

#include "common/clock.h"
#include "common/logging.h"
#include "repl/primary/primary.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {
namespace {

// Redis' replicationGetSlaveName: the address the replica announced, with its listening port.
std::string ReplicaName(const repl::Primary::ReplicaStatus& r) {
  std::string ip = r.ip.find(':') != std::string::npos ? "[" + r.ip + "]" : r.ip;
  if (r.port == 0) return ip + ":<unknown-replica-port>";
  return ip + ":" + std::to_string(r.port);
}

}  // namespace

ShutdownWait::Outcome ShutdownWait::Begin(const ShutdownFlags& flags, Client* client) {
  if (in_progress()) {  // this one ends with the shutdown already waiting
    if (client) waiters_.push_back(client->id());
    return Outcome::kWaiting;
  }
  flags_ = flags;
  LOG_WARNING("User requested shutdown...");
  int64_t timeout_s = server_.config().GetInt("shutdown-timeout");
  if (!flags.now && timeout_s != 0 && !ReadyToShutdown()) {
    deadline_ms_ = WallMs() + timeout_s * 1000;
    // The GETACK moves the offset, so not while writes are paused already (a FAILOVER, CLIENT
    // PAUSE): the replicas' own ACKs, once a second, tell where they are then, as in Redis.
    if (!server_.clients_paused()) server_.primary().SendGetack();
    server_.PauseWritesFor(Server::PausePurpose::kShutdown);
    LOG_NOTICE("Waiting for replicas before shutting down.");
    if (client) waiters_.push_back(client->id());
    return Outcome::kWaiting;
  }
  return Finish() ? Outcome::kDone : Outcome::kFailed;
}

bool ShutdownWait::ReadyToShutdown() const {
  int64_t offset = server_.primary().feed().offset();
  for (const auto& r : server_.primary().ReplicaStatuses()) {
    if (r.ack_offset != offset) return false;
  }
  return true;
}

void ShutdownWait::Schedule(const ShutdownFlags& flags) {
  signal_pending_.store(true, std::memory_order_release);
  if (in_progress()) return;  // the shutdown already under way goes on
  signal_flags_ = flags;
  scheduled_ = true;
}

void ShutdownWait::Cron(int64_t now_ms) {
  if (scheduled_ && !in_progress()) {
    scheduled_ = false;
    Begin(signal_flags_, nullptr);  // on a failure, Cancel ends the signal's shutdown
    return;
  }
  if (!in_progress()) return;
  if (now_ms >= deadline_ms_ || ReadyToShutdown()) Finish();
}

bool ShutdownWait::Finish() {
  int64_t offset = server_.primary().feed().offset();
  int64_t now_s = WallMs() / 1000;
  auto replicas = server_.primary().ReplicaStatuses();
  int lagging = 0;
  for (const auto& r : replicas) {
    if (r.ack_offset == offset) continue;
    lagging++;
    LOG_WARNING("Lagging replica %s reported offset %lld behind master, lag=%lld, state=%s.",
                ReplicaName(r).c_str(), static_cast<long long>(offset - r.ack_offset),
                static_cast<long long>(r.online ? now_s - r.ack_ms / 1000 : 0), r.state);
  }
  if (!replicas.empty()) {
    LOG_NOTICE("%d of %zu replicas are in sync when shutting down.",
               static_cast<int>(replicas.size()) - lagging, replicas.size());
  }
  if (!server_.PrepareShutdown(flags_.save, flags_.nosave, flags_.force).ok() && !flags_.force) {
    LOG_WARNING("Errors trying to shut down the server. Check the logs for more information.");
    Cancel();
    return false;
  }
  // The parked SHUTDOWN clients get no reply: their connections close as the process exits.
  waiters_.clear();
  deadline_ms_ = 0;
  server_.RequestShutdown();  // under the lock: no command runs after the final save
  server_.CloseListenersForExit();
  return true;
}

void ShutdownWait::Cancel() {
  deadline_ms_ = 0;
  flags_ = {};
  scheduled_ = false;
  signal_pending_.store(false, std::memory_order_release);
  for (uint64_t id : waiters_) {
    auto it = server_.clients().find(id);
    if (it == server_.clients().end()) continue;
    server_.CompleteBlocked(*it->second, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n");
  }
  waiters_.clear();
  server_.UnpauseFor(Server::PausePurpose::kShutdown);
}

bool ShutdownWait::Abort() {
  if (!in_progress() && !scheduled_) return false;
  Cancel();
  LOG_NOTICE("Shutdown manually aborted.");
  return true;
}

}  // namespace kv::server
