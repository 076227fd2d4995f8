#include "server/failover.h"

#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "server/server.h"

namespace kv::server {
namespace {

// Redis' findReplica: by the address the replica announced (or its connection's) and its
// listening port.
const repl::Primary::ReplicaStatus* FindReplica(
    const std::vector<repl::Primary::ReplicaStatus>& replicas, const std::string& host, int port) {
  for (const auto& r : replicas) {
    if (EqualsIgnoreCase(r.ip, host) && r.port == port) return &r;
  }
  return nullptr;
}

}  // namespace

void Failover::SetState(State s) {
  static const char* const kNames[] = {"no-failover", "waiting-for-sync", "failover-in-progress"};
  if (s != state_) {
    LOG_VERBOSE("Failover state: %s -> %s", kNames[static_cast<int>(state_)],
                kNames[static_cast<int>(s)]);
  }
  state_ = s;
  server_.primary().set_failover_state(kNames[static_cast<int>(s)]);
}

void Failover::Command(cmd::Context& c) {
  if (c.argc() == 2 && EqualsIgnoreCase(c.arg(1), "abort")) {
    if (state_ == State::kNone) {
      c.Error("No failover in progress.");
      return;
    }
    Abort("Failover manually aborted");
    c.out.Ok();
    return;
  }
  int64_t timeout_ms = 0, port = 0;
  bool force = false;
  std::string host;
  bool have_host = false;
  // As Redis parses them: each option once, in any order.
  for (size_t j = 1; j < c.argc(); j++) {
    if (EqualsIgnoreCase(c.arg(j), "timeout") && j + 1 < c.argc() && timeout_ms == 0) {
      if (!c.ParseInt(c.arg(j + 1), &timeout_ms)) return;
      if (timeout_ms <= 0) {
        c.Error("FAILOVER timeout must be greater than 0");
        return;
      }
      j++;
    } else if (EqualsIgnoreCase(c.arg(j), "to") && j + 2 < c.argc() && !have_host) {
      if (!c.ParseInt(c.arg(j + 2), &port)) return;
      host = std::string(c.arg(j + 1));
      have_host = true;
      j += 2;
    } else if (EqualsIgnoreCase(c.arg(j), "force") && !force) {
      force = true;
    } else {
      c.Error(cmd::OpStatus::kSyntax);
      return;
    }
  }
  if (state_ != State::kNone) {
    c.Error("FAILOVER already in progress.");
    return;
  }
  if (server_.replica().is_replica()) {
    c.Error("FAILOVER is not valid when server is a replica.");
    return;
  }
  auto replicas = server_.primary().ReplicaStatuses();
  if (replicas.empty()) {
    c.Error("FAILOVER requires connected replicas.");
    return;
  }
  if (force && (timeout_ms == 0 || !have_host)) {
    c.Error("FAILOVER with force option requires both a timeout and target HOST and IP.");
    return;
  }
  if (have_host) {
    const auto* r = FindReplica(replicas, host, static_cast<int>(port));
    if (r == nullptr) {
      c.Error("FAILOVER target HOST and PORT is not a replica.");
      return;
    }
    if (!r->online) {
      c.Error("FAILOVER target replica is not online.");
      return;
    }
    host_ = host;
    port_ = static_cast<int>(port);
    LOG_NOTICE("FAILOVER requested to %s:%lld.", host.c_str(), static_cast<long long>(port));
  } else {
    LOG_NOTICE("FAILOVER requested to any replica.");
  }
  end_ms_ = timeout_ms ? WallMs() + timeout_ms : 0;
  force_ = force;
  SetState(State::kWaitSync);
  server_.PauseWritesFor(Server::PausePurpose::kFailover);
  c.out.Ok();
}

void Failover::Cron(int64_t now_ms) {
  if (state_ != State::kWaitSync) return;
  if (end_ms_ != 0 && end_ms_ <= now_ms) {
    if (force_) {
      LOG_NOTICE("FAILOVER to %s:%d time out exceeded, failing over.", host_.c_str(), port_);
      FailOver();
    } else {
      Abort("Replica never caught up before timeout");
    }
    return;
  }
  int64_t offset = server_.primary().feed().offset();
  auto replicas = server_.primary().ReplicaStatuses();
  const repl::Primary::ReplicaStatus* target = nullptr;
  if (!host_.empty()) {
    target = FindReplica(replicas, host_, port_);
  } else {
    // Any replica: the first that has acknowledged the whole stream becomes the target.
    for (const auto& r : replicas) {
      if (r.ack_offset != offset) continue;
      host_ = r.ip;
      port_ = r.port;
      target = &r;
      break;
    }
  }
  if (target == nullptr || target->ack_offset != offset) return;
  LOG_NOTICE("Failover target %s:%d is synced, failing over.", host_.c_str(), port_);
  FailOver();
}

void Failover::FailOver() {
  SetState(State::kInProgress);
  server_.replica().FollowForFailover(host_, port_,
                                      [this](bool accepted) { OnPsyncReply(accepted); });
}

void Failover::OnPsyncReply(bool accepted) {
  if (state_ != State::kInProgress) return;
  // A full resync is not what a failover expects, but nothing is wrong with it either.
  if (accepted) {
    Clear();
  } else {
    Abort("Failover target rejected psync request");
  }
}

void Failover::Abort(const char* why) {
  if (state_ == State::kNone) return;
  if (!host_.empty()) {
    LOG_NOTICE("FAILOVER to %s:%d aborted: %s", host_.c_str(), port_, why);
  } else {
    LOG_NOTICE("FAILOVER to any replica aborted: %s", why);
  }
  if (state_ == State::kInProgress) server_.replica().Unfollow();
  Clear();
}

void Failover::Clear() {
  end_ms_ = 0;
  force_ = false;
  host_.clear();
  port_ = 0;
  SetState(State::kNone);
  server_.UnpauseFor(Server::PausePurpose::kFailover);
}

}  // namespace kv::server
