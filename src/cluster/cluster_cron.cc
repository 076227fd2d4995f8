// The cluster's 100 ms cron: links to every node, pings, failure detection, and a replica's
// failover (automatic and manual) and migration, as Redis 7.0's clusterCron and
// clusterHandleSlaveFailover.
#include <algorithm>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/cluster_types.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/logging.h"

namespace kv::cluster {

namespace {

// Why a replica whose primary failed does not fail over (logged now and then).
enum CantFailover {
  kCantNone = 0,
  kCantDataAge,
  kCantWaitingDelay,
  kCantExpired,
  kCantWaitingVotes,
};
constexpr int64_t kCantFailoverRelogS = 10;

}  // namespace

int64_t Cluster::CronTick() {
  std::lock_guard lock(host_.mu());
  Cron();
  AfterEvent();
  return 100;
}

void Cluster::Cron() {
  iteration_++;
  int64_t now = WallMs();
  int64_t timeout = host_.ConfigInt("cluster-node-timeout");
  int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);
  // cluster-replica-no-failover shows in this node's flags, which its messages carry.
  uint16_t nofailover = host_.ConfigBool("cluster-replica-no-failover") ? kFlagNoFailover : 0;
  if ((myself_->flags & kFlagNoFailover) != nofailover) {
    myself_->flags = static_cast<uint16_t>((myself_->flags & ~kFlagNoFailover) | nofailover);
    Todo(kTodoSaveConfig);
  }
  int64_t sendbuf_limit = host_.ConfigInt("cluster-link-sendbuf-limit");

  std::vector<Node*> all;
  for (const auto& [name, n] : nodes_) all.push_back(n.get());
  pfail_nodes_ = 0;
  for (Node* n : all) {
    for (Link* l : {n->link, n->inbound_link}) {
      if (l && sendbuf_limit > 0 && l->wbuf.capacity() > static_cast<size_t>(sendbuf_limit)) {
        LOG_WARNING(
            "Freeing cluster link(%s node %.40s, used memory: %zu) due to exceeding "
            "send buffer memory limit.",
            l->inbound ? "from" : "to", n->name.c_str(), l->wbuf.capacity());
        FreeLink(l);
        links_buffer_limit_exceeded_++;
      }
    }
    if (n->flags & (kFlagMyself | kFlagNoAddr)) continue;
    if (n->flags & kFlagPFail) pfail_nodes_++;
    if (n->in_handshake() && now - n->ctime > handshake_timeout) {
      DelNode(n);
      continue;
    }
    if (!n->link) ConnectLink(n);
  }

  // Once a second, PING the node with the oldest PONG of a few picked at random.
  if (iteration_ % 10 == 0) {
    all.clear();
    for (const auto& [name, n] : nodes_) all.push_back(n.get());
    Node* min_node = nullptr;
    for (int j = 0; j < 5 && !all.empty(); j++) {
      Node* n = all[RandomBelow(all.size())];
      if (!n->link || n->ping_sent != 0) continue;
      if (n->flags & (kFlagMyself | kFlagHandshake)) continue;
      if (!min_node || min_node->pong_received > n->pong_received) min_node = n;
    }
    if (min_node) SendPing(min_node->link, MsgType::kPing);
  }

  bool update_state = false;
  int orphaned = 0, max_replicas = 0, my_replicas = 0;
  all.clear();
  for (const auto& [name, n] : nodes_) all.push_back(n.get());
  for (Node* n : all) {
    now = WallMs();
    if (n->flags & (kFlagMyself | kFlagNoAddr | kFlagHandshake)) continue;
    if (myself_->is_replica() && n->is_primary() && !n->failed()) {
      int ok = 0;
      for (Node* r : n->replicas) {
        if (!r->failed()) ok++;
      }
      if (ok == 0 && n->numslots > 0 && (n->flags & kFlagMigrateTo)) orphaned++;
      max_replicas = std::max(max_replicas, ok);
      if (myself_->primary == n) my_replicas = ok;
    }
    int64_t ping_delay = now - n->ping_sent;
    int64_t data_delay = now - n->data_received;
    // No answer and no data for half the timeout: the link may be broken, open a new one.
    if (n->link && now - n->link->ctime > timeout && n->ping_sent && ping_delay > timeout / 2 &&
        data_delay > timeout / 2) {
      FreeLink(n->link);
    }
    if (n->link && n->ping_sent == 0 && now - n->pong_received > timeout / 2) {
      SendPing(n->link, MsgType::kPing);
      continue;
    }
    if (mf_end_ && myself_->is_primary() && mf_replica_ == n && n->link) {
      SendPing(n->link, MsgType::kPing);
      continue;
    }
    if (n->ping_sent == 0) continue;
    int64_t node_delay = std::min(ping_delay, data_delay);
    if (node_delay > timeout && !(n->flags & (kFlagPFail | kFlagFail))) {
      LOG_DEBUG("*** NODE %.40s possibly failing", n->name.c_str());
      n->flags |= kFlagPFail;
      update_state = true;
    }
  }

  // A replica that knows its primary's address but replicates nothing starts now.
  if (myself_->is_replica() && !host_.Following() && myself_->primary &&
      myself_->primary->has_addr() && ReplicationPort(*myself_->primary) != 0) {
    host_.Follow(myself_->primary->ip, ReplicationPort(*myself_->primary));
  }
  if (mf_end_ && mf_end_ < WallMs()) {
    LOG_WARNING("Manual failover timed out.");
    ResetManualFailover();
  }
  if (myself_->is_replica() && !host_.LoadingSync()) {
    HandleManualFailover();
    HandleReplicaFailover();
    if (orphaned && max_replicas >= 2 && my_replicas == max_replicas &&
        host_.ConfigBool("cluster-allow-replica-migration")) {
      HandleReplicaMigration(max_replicas);
    }
  }
  if (update_state || !state_ok_) UpdateState();
}

int Cluster::ReplicaRank() {
  Node* primary = myself_->primary;
  if (!primary) return 0;
  int64_t mine = host_.ReplOffset();
  int rank = 0;
  for (Node* r : primary->replicas) {
    if (r != myself_ && !(r->flags & kFlagNoFailover) && r->repl_offset > mine) rank++;
  }
  return rank;
}

void Cluster::HandleReplicaFailover() {
  todo_ &= ~kTodoHandleFailover;
  int64_t now = WallMs();
  int64_t auth_age = now - failover_auth_time_;
  int needed_quorum = size_ / 2 + 1;
  bool manual = mf_end_ != 0 && mf_can_start_;
  int64_t timeout = host_.ConfigInt("cluster-node-timeout");
  int64_t auth_timeout = std::max<int64_t>(timeout * 2, 2000);
  int64_t auth_retry_time = auth_timeout * 2;
  Node* primary = myself_->primary;
  if (myself_->is_primary() || !primary || (!primary->failed() && !manual) ||
      (host_.ConfigBool("cluster-replica-no-failover") && !manual) || primary->numslots == 0) {
    cant_failover_reason_ = kCantNone;
    return;
  }
  auto log_cant = [&](int reason) {
    int64_t now_s = now / 1000;
    if (reason == cant_failover_reason_ && now_s - cant_failover_log_s_ < kCantFailoverRelogS) {
      return;
    }
    cant_failover_reason_ = reason;
    if (primary->failed() && now - primary->fail_time < timeout + 5000) return;
    const char* msg = "Unknown reason code.";
    switch (reason) {
      case kCantDataAge:
        msg =
            "Disconnected from master for longer than allowed. Please check the "
            "'cluster-replica-validity-factor' configuration option.";
        break;
      case kCantWaitingDelay:
        msg = "Waiting the delay before I can start a new failover.";
        break;
      case kCantExpired:
        msg = "Failover attempt expired.";
        break;
      case kCantWaitingVotes:
        msg = "Waiting for votes, but majority still not reached.";
        break;
    }
    cant_failover_log_s_ = now_s;
    LOG_WARNING("Currently unable to failover: %s", msg);
  };
  int64_t data_age = host_.PrimaryDataAgeMs();
  if (data_age > timeout) data_age -= timeout;
  int64_t factor = host_.ConfigInt("cluster-replica-validity-factor");
  if (factor && data_age > host_.ConfigInt("repl-ping-replica-period") * 1000 + timeout * factor) {
    if (!manual) {
      log_cant(kCantDataAge);
      return;
    }
  }
  if (auth_age > auth_retry_time) {
    failover_auth_time_ = now + 500 + static_cast<int64_t>(RandomBelow(500));
    failover_auth_count_ = 0;
    failover_auth_sent_ = false;
    failover_auth_rank_ = ReplicaRank();
    failover_auth_time_ += failover_auth_rank_ * 1000;
    if (mf_end_) {
      failover_auth_time_ = now;
      failover_auth_rank_ = 0;
      Todo(kTodoHandleFailover);
    }
    LOG_WARNING("Start of election delayed for %lld milliseconds (rank #%d, offset %lld).",
                static_cast<long long>(failover_auth_time_ - now), failover_auth_rank_,
                static_cast<long long>(host_.ReplOffset()));
    BroadcastPong(true);
    return;
  }
  if (!failover_auth_sent_ && mf_end_ == 0) {
    int newrank = ReplicaRank();
    if (newrank > failover_auth_rank_) {
      int64_t added = (newrank - failover_auth_rank_) * 1000;
      failover_auth_time_ += added;
      failover_auth_rank_ = newrank;
      LOG_WARNING("Replica rank updated to #%d, added %lld milliseconds of delay.", newrank,
                  static_cast<long long>(added));
    }
  }
  if (now < failover_auth_time_) {
    log_cant(kCantWaitingDelay);
    return;
  }
  if (auth_age > auth_timeout) {
    log_cant(kCantExpired);
    return;
  }
  if (!failover_auth_sent_) {
    current_epoch_++;
    failover_auth_epoch_ = current_epoch_;
    LOG_WARNING("Starting a failover election for epoch %llu.",
                static_cast<unsigned long long>(current_epoch_));
    BusMessage m = BuildHeader(MsgType::kFailoverAuthRequest);
    if (mf_end_) m.hdr.mflags[0] |= kMsgFlag0ForceAck;
    Broadcast(Encode(m), MsgType::kFailoverAuthRequest);
    failover_auth_sent_ = true;
    Todo(kTodoSaveConfig | kTodoFsyncConfig | kTodoUpdateState);
    return;
  }
  if (failover_auth_count_ >= needed_quorum) {
    LOG_WARNING("Failover election won: I'm the new master.");
    if (myself_->config_epoch < failover_auth_epoch_) {
      myself_->config_epoch = failover_auth_epoch_;
      LOG_WARNING("configEpoch set to %llu after successful failover",
                  static_cast<unsigned long long>(myself_->config_epoch));
    }
    FailoverReplacePrimary();
  } else {
    log_cant(kCantWaitingVotes);
  }
}

void Cluster::FailoverReplacePrimary() {
  Node* old = myself_->primary;
  if (myself_->is_primary() || !old) return;
  SetNodeAsPrimary(myself_);
  host_.StopFollowing();
  for (int s = 0; s < kClusterSlots; s++) {
    if (old->slots.test(s)) {
      DelSlot(s);
      AddSlot(myself_, s);
    }
  }
  UpdateState();
  SaveConfigOrDie(true);
  // Every node learns the new owner of the slots at once.
  BroadcastPong(false);
  ResetManualFailover();
}

void Cluster::ResetManualFailover() {
  if (mf_replica_) host_.EndFailoverPause();
  mf_end_ = 0;
  mf_can_start_ = false;
  mf_replica_ = nullptr;
  mf_primary_offset_ = -1;
}

void Cluster::HandleManualFailover() {
  if (mf_end_ == 0 || mf_can_start_ || mf_primary_offset_ == -1) return;
  if (mf_primary_offset_ == host_.ReplOffset()) {
    mf_can_start_ = true;
    LOG_WARNING("All master replication stream processed, manual failover can start.");
    Todo(kTodoHandleFailover);
    return;
  }
  Todo(kTodoHandleManualFailover);
}

void Cluster::HandleReplicaMigration(int max_replicas) {
  if (!state_ok_) return;
  Node* mine = myself_->primary;
  if (!mine) return;
  int ok = 0;
  for (Node* r : mine->replicas) {
    if (!r->failed() && !r->timed_out()) ok++;
  }
  if (ok <= host_.ConfigInt("cluster-migration-barrier")) return;
  Node* target = nullptr;
  Node* candidate = myself_;
  int64_t now = WallMs();
  for (const auto& [name, n] : nodes_) {
    int okr = 0;
    bool orphaned = true;
    if (n->is_replica() || n->failed()) orphaned = false;
    if (!(n->flags & kFlagMigrateTo)) orphaned = false;
    if (n->is_primary()) {
      for (Node* r : n->replicas) {
        if (!r->failed()) okr++;
      }
    }
    if (okr > 0) orphaned = false;
    if (orphaned) {
      if (!target && n->numslots > 0) target = n.get();
      if (!n->orphaned_time) n->orphaned_time = now;
    } else {
      n->orphaned_time = 0;
    }
    if (okr == max_replicas) {
      for (Node* r : n->replicas) {
        if (r->name < candidate->name) candidate = r;
      }
    }
  }
  if (target && candidate == myself_ && now - target->orphaned_time > kReplicaMigrationDelay) {
    LOG_WARNING("Migrating to orphaned master %.40s", target->name.c_str());
    SetMyPrimary(target);
  }
}

}  // namespace kv::cluster
