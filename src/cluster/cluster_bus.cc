// The cluster bus's messages: what each does, as Redis 7.0's clusterProcessPacket, and the
// functions that build and send them (the links themselves are cluster_link.cc's).
#include <algorithm>

#include "cluster/cluster.h"
#include "cluster/cluster_types.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/logging.h"

namespace kv::cluster {

namespace {

// The IP of a connection's peer ("127.0.0.1" of "127.0.0.1:5000").
std::string PeerIp(int fd) {
  std::string p = net::PeerName(fd);
  size_t colon = p.rfind(':');
  return colon == std::string::npos ? p : p.substr(0, colon);
}

}  // namespace

BusMessage Cluster::BuildHeader(MsgType type) {
  Node* primary = (myself_->is_replica() && myself_->primary) ? myself_->primary : myself_;
  BusMessage m;
  BusHeader& h = m.hdr;
  h.type = type;
  h.sender = myself_->name;
  h.myip = host_.ConfigString("cluster-announce-ip");
  AnnouncedPorts(&h.port, &h.pport, &h.cport);
  h.myslots = primary->slots;
  h.replicaof = myself_->primary ? myself_->primary->name : "";
  h.flags = myself_->flags;
  h.state = state_ok_ ? 0 : 1;
  h.current_epoch = current_epoch_;
  h.config_epoch = primary->config_epoch;
  h.offset = static_cast<uint64_t>(host_.ReplOffset());
  if (myself_->is_primary() && mf_end_) h.mflags[0] |= kMsgFlag0Paused;
  return m;
}

void Cluster::SendPing(Link* l, MsgType type) {
  if (!l || l->dead) return;
  int freshnodes = static_cast<int>(nodes_.size()) - 2;
  int wanted = std::max(3, static_cast<int>(nodes_.size() / 10));
  wanted = std::min(wanted, freshnodes);
  if (!l->inbound && type == MsgType::kPing && l->node) l->node->ping_sent = WallMs();
  BusMessage m = BuildHeader(type);
  // A random sample of the healthy nodes, then every node in PFAIL, so that failure reports
  // spread fast.
  std::vector<Node*> candidates;
  for (const auto& [name, n] : nodes_) {
    if (n.get() == myself_ || (n->flags & kFlagPFail)) continue;
    if ((n->flags & (kFlagHandshake | kFlagNoAddr)) || (!n->link && n->numslots == 0)) continue;
    candidates.push_back(n.get());
  }
  size_t take = std::min(candidates.size(), static_cast<size_t>(std::max(wanted, 0)));
  for (size_t i = 0; i < take; i++) {
    std::swap(candidates[i], candidates[i + RandomBelow(candidates.size() - i)]);
  }
  auto add = [&](const Node& n) {
    GossipEntry g;
    g.name = n.name;
    g.ping_sent_s = static_cast<uint32_t>(n.ping_sent / 1000);
    g.pong_received_s = static_cast<uint32_t>(n.pong_received / 1000);
    g.ip = n.ip;
    g.port = n.port;
    g.cport = n.cport;
    g.pport = n.pport;
    g.flags = n.flags;
    m.gossip.push_back(std::move(g));
  };
  for (size_t i = 0; i < take; i++) add(*candidates[i]);
  for (const auto& [name, n] : nodes_) {
    if ((n->flags & kFlagPFail) && !(n->flags & (kFlagHandshake | kFlagNoAddr))) add(*n);
  }
  m.hostname = myself_->hostname;
  Send(l, Encode(m), type);
}

void Cluster::BroadcastPong(bool local_replicas_only) {
  for (const auto& [name, n] : nodes_) {
    if (!n->link || n.get() == myself_ || n->in_handshake()) continue;
    if (local_replicas_only) {
      bool local = n->is_replica() && n->primary &&
                   (n->primary == myself_ || n->primary == myself_->primary);
      if (!local) continue;
    }
    SendPing(n->link, MsgType::kPong);
  }
}

void Cluster::SendFail(const std::string& name) {
  BusMessage m = BuildHeader(MsgType::kFail);
  m.fail_about = name;
  Broadcast(Encode(m), MsgType::kFail);
}

void Cluster::SendUpdate(Link* l, Node* n) {
  if (!l) return;
  BusMessage m = BuildHeader(MsgType::kUpdate);
  m.update.name = n->name;
  m.update.config_epoch = n->config_epoch;
  m.update.slots = n->slots;
  Send(l, Encode(m), MsgType::kUpdate);
}

void Cluster::Publish(std::string_view channel, std::string_view message, bool shard) {
  BusMessage m = BuildHeader(shard ? MsgType::kPublishShard : MsgType::kPublish);
  m.publish.channel = channel;
  m.publish.message = message;
  std::string bytes = Encode(m);
  if (!shard) {
    Broadcast(bytes, MsgType::kPublish);
    return;
  }
  // The shard: this node's primary (or itself) and that primary's replicas.
  Node* primary = myself_->is_replica() ? myself_->primary : myself_;
  if (!primary) return;
  if (primary != myself_ && primary->link) Send(primary->link, bytes, MsgType::kPublishShard);
  for (Node* r : primary->replicas) {
    if (r != myself_ && r->link) Send(r->link, bytes, MsgType::kPublishShard);
  }
}

bool Cluster::UpdateAddressIfNeeded(Node* n, Link* l, const BusHeader& h) {
  if (l == n->link) return false;
  std::string ip = h.myip.empty() ? PeerIp(l->fd.get()) : h.myip;
  if (n->port == h.port && n->cport == h.cport && n->pport == h.pport && ip == n->ip) return false;
  std::string old_ip = n->ip;
  int old_replication_port = ReplicationPort(*n);
  n->ip = ip;
  n->port = h.port;
  n->pport = h.pport;
  n->cport = h.cport;
  if (n->link) FreeLink(n->link);
  n->flags &= ~kFlagNoAddr;
  LOG_WARNING("Address updated for node %.40s, now %s:%d", n->name.c_str(), n->ip.c_str(), n->port);
  // A sync under way goes on unless the primary's address for it changed (the plain port, which
  // nodes.conf does not keep, arrives with the first PING after a restart).
  if (myself_->is_replica() && myself_->primary == n &&
      (n->ip != old_ip || ReplicationPort(*n) != old_replication_port)) {
    host_.Follow(n->ip, ReplicationPort(*n));
  }
  return true;
}

void Cluster::ProcessGossip(const BusMessage& m, Link* l, Node* sender) {
  int64_t now = WallMs();
  for (const GossipEntry& g : m.gossip) {
    Node* n = Lookup(g.name);
    if (n) {
      // Failure reports count only from primaries.
      if (sender && sender->is_primary() && n != myself_) {
        if (g.flags & (kFlagFail | kFlagPFail)) {
          bool added = false;
          AddFailureReport(n, sender, &added);
          if (added) {
            LOG_VERBOSE("Node %.40s reported node %.40s as not reachable.", sender->name.c_str(),
                        n->name.c_str());
          }
          MarkFailingIfNeeded(n);
        } else if (DelFailureReport(n, sender)) {
          LOG_VERBOSE("Node %.40s reported node %.40s is back online.", sender->name.c_str(),
                      n->name.c_str());
        }
      }
      // Another node's recent PONG from it counts as ours while we suspect nothing.
      if (!(g.flags & (kFlagFail | kFlagPFail)) && n->ping_sent == 0 &&
          FailureReportsCount(n) == 0) {
        int64_t pong = int64_t{g.pong_received_s} * 1000;
        if (pong <= now + 500 && pong > n->pong_received) n->pong_received = pong;
      }
      // A node we cannot reach, seen at another address by one that can: try that one.
      if ((n->flags & (kFlagFail | kFlagPFail)) && !(g.flags & kFlagNoAddr) &&
          !(g.flags & (kFlagFail | kFlagPFail)) &&
          (strcasecmp(n->ip.c_str(), g.ip.c_str()) != 0 || n->port != g.port ||
           n->cport != g.cport)) {
        if (n->link) FreeLink(n->link);
        n->ip = g.ip;
        n->port = g.port;
        n->pport = g.pport;
        n->cport = g.cport;
        n->flags &= ~kFlagNoAddr;
      }
    } else if (sender && !(g.flags & kFlagNoAddr) && !Blacklisted(g.name)) {
      // Only a known node may introduce new ones (so as not to join another cluster), and
      // with the name it gossips: the handshake with the address alone could reach another.
      // Never a second "myself" (a gossip entry carries another node's view of a third).
      Node* nn = CreateNode(g.name, static_cast<uint16_t>(g.flags & ~kFlagMyself));
      nn->ip = g.ip;
      nn->port = g.port;
      nn->pport = g.pport;
      nn->cport = g.cport;
    }
  }
  (void)l;
}

void Cluster::SendFailoverAuthIfNeeded(Node* n, const BusHeader& req) {
  Node* primary = n->primary;
  bool force_ack = req.mflags[0] & kMsgFlag0ForceAck;
  // Only primaries serving slots vote.
  if (myself_->is_replica() || myself_->numslots == 0) return;
  if (req.current_epoch < current_epoch_) {
    LOG_WARNING("Failover auth denied to %.40s: reqEpoch (%llu) < curEpoch(%llu)", n->name.c_str(),
                static_cast<unsigned long long>(req.current_epoch),
                static_cast<unsigned long long>(current_epoch_));
    return;
  }
  if (last_vote_epoch_ == current_epoch_) {
    LOG_WARNING("Failover auth denied to %.40s: already voted for epoch %llu", n->name.c_str(),
                static_cast<unsigned long long>(current_epoch_));
    return;
  }
  if (n->is_primary() || !primary || (!primary->failed() && !force_ack)) {
    if (n->is_primary()) {
      LOG_WARNING("Failover auth denied to %.40s: it is a master node", n->name.c_str());
    } else if (!primary) {
      LOG_WARNING("Failover auth denied to %.40s: I don't know its master", n->name.c_str());
    } else {
      LOG_WARNING("Failover auth denied to %.40s: its master is up", n->name.c_str());
    }
    return;
  }
  int64_t timeout = host_.ConfigInt("cluster-node-timeout");
  int64_t now = WallMs();
  if (now - primary->voted_time < timeout * 2) {
    LOG_WARNING(
        "Failover auth denied to %.40s: can't vote about this master before %lld milliseconds",
        n->name.c_str(), static_cast<long long>(timeout * 2 - (now - primary->voted_time)));
    return;
  }
  for (int s = 0; s < kClusterSlots; s++) {
    if (!req.myslots.test(s)) continue;
    if (!slots_[s] || slots_[s]->config_epoch <= req.config_epoch) continue;
    LOG_WARNING("Failover auth denied to %.40s: slot %d epoch (%llu) > reqEpoch (%llu)",
                n->name.c_str(), s, static_cast<unsigned long long>(slots_[s]->config_epoch),
                static_cast<unsigned long long>(req.config_epoch));
    return;
  }
  last_vote_epoch_ = current_epoch_;
  primary->voted_time = now;
  Todo(kTodoSaveConfig);
  if (n->link)
    Send(n->link, Encode(BuildHeader(MsgType::kFailoverAuthAck)), MsgType::kFailoverAuthAck);
  LOG_WARNING("Failover auth granted to %.40s for epoch %llu", n->name.c_str(),
              static_cast<unsigned long long>(current_epoch_));
}

bool Cluster::ProcessMessage(Link* l, std::string_view bytes) {
  auto decoded = Decode(bytes);
  uint16_t raw_type = bytes.size() >= 14
                          ? static_cast<uint16_t>((static_cast<uint8_t>(bytes[12]) << 8) |
                                                  static_cast<uint8_t>(bytes[13]))
                          : 0xffff;
  if (raw_type < kMsgTypeCount) received_[raw_type]++;
  if (!decoded.ok()) {
    LOG_WARNING("Dropping a cluster bus message from %s: %s", net::PeerName(l->fd.get()).c_str(),
                decoded.status().ToString().c_str());
    return true;
  }
  const BusMessage& m = *decoded;
  const BusHeader& h = m.hdr;
  MsgType type = h.type;
  if (static_cast<int>(type) == drop_filter_) {
    LOG_WARNING("Dropping packet that matches debug drop filter");
    return true;
  }
  int64_t now = WallMs();

  Node* sender = nullptr;
  if (l->node && !l->node->in_handshake()) {
    sender = l->node;
  } else {
    sender = Lookup(h.sender);
    // A known node's first message on a link it opened: the link is its inbound one.
    if (sender && !l->node && l->inbound) {
      if (sender->inbound_link && sender->inbound_link != l) FreeLink(sender->inbound_link);
      sender->inbound_link = l;
      l->node = sender;
    }
  }
  if (sender) sender->data_received = now;

  uint64_t sender_config_epoch = 0;
  if (sender && !sender->in_handshake()) {
    if (h.current_epoch > current_epoch_) current_epoch_ = h.current_epoch;
    sender_config_epoch = h.config_epoch;
    if (sender_config_epoch > sender->config_epoch) {
      sender->config_epoch = sender_config_epoch;
      Todo(kTodoSaveConfig | kTodoFsyncConfig);
    }
    sender->repl_offset = static_cast<int64_t>(h.offset);
    sender->repl_offset_time = now;
    // A replica in a manual failover learns the offset its paused primary stopped at.
    if (mf_end_ && myself_->is_replica() && myself_->primary == sender &&
        (h.mflags[0] & kMsgFlag0Paused) && mf_primary_offset_ == -1) {
      mf_primary_offset_ = sender->repl_offset;
      Todo(kTodoHandleManualFailover);
      LOG_WARNING("Received replication offset for paused master manual failover: %lld",
                  static_cast<long long>(mf_primary_offset_));
    }
  }

  bool ping_like = type == MsgType::kPing || type == MsgType::kPong || type == MsgType::kMeet;
  if (type == MsgType::kPing || type == MsgType::kMeet) {
    // A MEET (or any PING while this node knows no address of its own) tells it its address:
    // the one the peer reached it at.
    if ((type == MsgType::kMeet || myself_->ip.empty()) &&
        host_.ConfigString("cluster-announce-ip").empty()) {
      std::string ip = net::LocalIp(l->fd.get());
      if (!ip.empty() && ip != myself_->ip) {
        myself_->ip = ip;
        LOG_WARNING("IP address for this node updated to %s", ip.c_str());
        Todo(kTodoSaveConfig);
      }
    }
    if (!sender && type == MsgType::kMeet) {
      Node* n = CreateNode("", kFlagHandshake);
      n->ip = h.myip.empty() ? PeerIp(l->fd.get()) : h.myip;
      n->port = h.port;
      n->pport = h.pport;
      n->cport = h.cport;
      Todo(kTodoSaveConfig);
      ProcessGossip(m, l, nullptr);
    }
    SendPing(l, MsgType::kPong);
  }

  if (ping_like) {
    if (!l->inbound) {
      if (l->node->in_handshake()) {
        if (sender) {
          LOG_VERBOSE("Handshake: we already know node %.40s, updating the address if needed.",
                      sender->name.c_str());
          if (UpdateAddressIfNeeded(sender, l, h)) Todo(kTodoSaveConfig | kTodoUpdateState);
          DelNode(l->node);  // frees the link
          return false;
        }
        RenameNode(l->node, h.sender);
        LOG_DEBUG("Handshake with node %.40s completed.", l->node->name.c_str());
        l->node->flags &= ~kFlagHandshake;
        l->node->flags |= h.flags & (kFlagMaster | kFlagReplica);
        Todo(kTodoSaveConfig);
      } else if (l->node->name != h.sender) {
        LOG_DEBUG(
            "PONG contains mismatching sender ID. About node %.40s added %d ms ago, "
            "having flags %d",
            l->node->name.c_str(), static_cast<int>(now - l->node->ctime), l->node->flags);
        Node* n = l->node;
        n->flags |= kFlagNoAddr;
        n->ip.clear();
        n->port = n->pport = n->cport = 0;
        FreeLink(l);
        Todo(kTodoSaveConfig);
        return false;
      }
    }
    if (sender) {
      sender->flags =
          static_cast<uint16_t>((sender->flags & ~kFlagNoFailover) | (h.flags & kFlagNoFailover));
    }
    if (sender && type == MsgType::kPing && !sender->in_handshake() &&
        UpdateAddressIfNeeded(sender, l, h)) {
      Todo(kTodoSaveConfig | kTodoUpdateState);
    }
    if (!l->inbound && type == MsgType::kPong) {
      Node* n = l->node;
      n->pong_received = now;
      n->ping_sent = 0;
      if (n->timed_out()) {
        n->flags &= ~kFlagPFail;
        Todo(kTodoSaveConfig | kTodoUpdateState);
      } else if (n->failed()) {
        ClearFailureIfNeeded(n);
      }
    }
    // Role changes: a replica turned primary or the reverse, a replica of another primary.
    if (sender) {
      if (h.replicaof.empty()) {
        SetNodeAsPrimary(sender);
      } else {
        Node* primary = Lookup(h.replicaof);
        if (sender->is_primary()) {
          DelNodeSlots(sender);
          sender->flags &= ~(kFlagMaster | kFlagMigrateTo);
          sender->flags |= kFlagReplica;
          Todo(kTodoSaveConfig | kTodoUpdateState);
        }
        if (primary && sender->primary != primary) {
          if (sender->primary) RemoveReplica(sender->primary, sender);
          AddReplica(primary, sender);
          sender->primary = primary;
          Todo(kTodoSaveConfig);
        }
      }
    }
    // Slots: what the sender (or its primary) claims against what this node believes.
    Node* sender_primary = nullptr;
    bool dirty = false;
    if (sender) {
      sender_primary = sender->is_primary() ? sender : sender->primary;
      if (sender_primary) dirty = sender_primary->slots != h.myslots;
    }
    if (sender && sender->is_primary() && dirty) {
      UpdateSlotsConfigWith(sender, sender_config_epoch, h.myslots);
    }
    // The sender claims slots a node with a greater epoch serves: tell it.
    if (sender && dirty) {
      for (int s = 0; s < kClusterSlots; s++) {
        if (!h.myslots.test(s)) continue;
        if (slots_[s] == sender || !slots_[s]) continue;
        if (slots_[s]->config_epoch > sender_config_epoch) {
          LOG_VERBOSE(
              "Node %.40s has old slots configuration, sending an UPDATE message about "
              "%.40s",
              sender->name.c_str(), slots_[s]->name.c_str());
          SendUpdate(sender->link, slots_[s]);
          break;
        }
      }
    }
    if (sender && myself_->is_primary() && sender->is_primary() &&
        sender_config_epoch == myself_->config_epoch) {
      HandleConfigEpochCollision(sender);
    }
    if (sender) {
      ProcessGossip(m, l, sender);
      if (sender->hostname != m.hostname) {
        sender->hostname = m.hostname;
        Todo(kTodoSaveConfig);
      }
    }
  } else if (type == MsgType::kFail) {
    if (sender) {
      Node* failing = Lookup(m.fail_about);
      if (failing && !(failing->flags & (kFlagFail | kFlagMyself))) {
        LOG_NOTICE("FAIL message received from %.40s about %.40s", h.sender.c_str(),
                   m.fail_about.c_str());
        failing->flags |= kFlagFail;
        failing->fail_time = now;
        failing->flags &= ~kFlagPFail;
        Todo(kTodoSaveConfig | kTodoUpdateState);
      }
    } else {
      LOG_NOTICE("Ignoring FAIL message from unknown node %.40s about %.40s", h.sender.c_str(),
                 m.fail_about.c_str());
    }
  } else if (type == MsgType::kPublish || type == MsgType::kPublishShard) {
    if (!sender) return true;
    host_.PublishLocal(m.publish.channel, m.publish.message, type == MsgType::kPublishShard);
  } else if (type == MsgType::kFailoverAuthRequest) {
    if (!sender) return true;
    SendFailoverAuthIfNeeded(sender, h);
  } else if (type == MsgType::kFailoverAuthAck) {
    if (!sender) return true;
    // A vote counts from a primary serving slots, for this election's epoch or a later one.
    if (sender->is_primary() && sender->numslots > 0 && h.current_epoch >= failover_auth_epoch_) {
      failover_auth_count_++;
      Todo(kTodoHandleFailover);
    }
  } else if (type == MsgType::kMfStart) {
    if (!sender || sender->primary != myself_) return true;
    ResetManualFailover();
    mf_end_ = now + kMfTimeout;
    mf_replica_ = sender;
    host_.PauseWritesForFailover(now + kMfTimeout * kMfPauseMult);
    LOG_WARNING("Manual failover requested by replica %.40s.", sender->name.c_str());
    // The PING carries the offset the pause stopped at (and the PAUSED flag).
    SendPing(l, MsgType::kPing);
  } else if (type == MsgType::kUpdate) {
    if (!sender) return true;
    Node* n = Lookup(m.update.name);
    if (!n) return true;
    if (n->config_epoch >= m.update.config_epoch) return true;
    if (n->is_replica()) SetNodeAsPrimary(n);
    n->config_epoch = m.update.config_epoch;
    Todo(kTodoSaveConfig | kTodoFsyncConfig);
    UpdateSlotsConfigWith(n, m.update.config_epoch, m.update.slots);
  }
  // MODULE messages go to modules; kvstore has none.
  return !l->dead;
}

}  // namespace kv::cluster
