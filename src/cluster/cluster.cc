// The node table, the slot map, epochs, failure reports, the state and the nodes file, as
// Redis 7.0's cluster.c keeps them.
#include "cluster/cluster.h"

#include <arpa/inet.h>
#include <strings.h>

#include <algorithm>
#include <cstring>

#include "cluster/cluster_types.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/logging.h"

namespace kv::cluster {

std::string RandomName() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(kNameLen, '0');
  for (int i = 0; i < kNameLen; i += 16) {
    uint64_t r = RandomU64();
    for (int j = i; j < std::min(i + 16, kNameLen); j++, r >>= 4) s[j] = kHex[r & 15];
  }
  return s;
}

std::string Route::ErrorLine() const {
  switch (kind) {
    case kHere:
      return "";
    case kMoved:
      return "-MOVED " + std::to_string(slot) + " " + endpoint;
    case kAsk:
      return "-ASK " + std::to_string(slot) + " " + endpoint;
    case kCrossSlot:
      return "-CROSSSLOT Keys in request don't hash to the same slot";
    case kTryAgain:
      return "-TRYAGAIN Multiple keys request during rehashing of slot";
    case kDown:
      return "-CLUSTERDOWN The cluster is down";
    case kDownRo:
      return "-CLUSTERDOWN The cluster is down and only accepts read commands";
    case kUnbound:
      return "-CLUSTERDOWN Hash slot not served";
  }
  return "";
}

Cluster::Cluster(Host& host) : host_(host) {}

Cluster::~Cluster() { Stop(); }

Result<std::unique_ptr<Cluster>> Cluster::Create(Host& host) {
  // The bus port is the client port + 10000 unless cluster-port says otherwise.
  int port = host.port() != 0 ? host.port() : host.tls_port();
  int bus_port = static_cast<int>(host.ConfigInt("cluster-port"));
  if (bus_port == 0 && port > 65535 - 10000) {
    return Status::Invalid(
        "Redis port number too high. Cluster communication port is 10,000 port numbers higher "
        "than your Redis port. Your Redis port number must be 55535 or less.");
  }
  if (port == 0 && bus_port == 0) {
    return Status::Invalid(
        "Redis port number is 0 and no cluster-port is set: the cluster bus needs a port.");
  }
  std::unique_ptr<Cluster> c(new Cluster(host));
  c->bus_port_ = bus_port != 0 ? bus_port : port + 10000;
  c->config_file_ = host.ConfigString("cluster-config-file");
  auto loaded = LoadNodesFile(c->config_file_);
  if (!loaded.ok()) return loaded.status();
  if (loaded->has_value()) {
    Status s = c->LoadConfig(**loaded);
    if (!s.ok()) return s;
    LOG_NOTICE("Node configuration loaded, I'm %.40s", c->myself_->name.c_str());
  } else {
    c->myself_ = c->CreateNode("", kFlagMyself | kFlagMaster);
    LOG_NOTICE("No cluster configuration found, I'm %.40s", c->myself_->name.c_str());
    c->SaveConfigOrDie(true);
  }
  // What the file says of myself's address is what this process announces now.
  c->myself_->hostname = host.ConfigString("cluster-announce-hostname");
  std::string announce_ip = host.ConfigString("cluster-announce-ip");
  if (!announce_ip.empty()) c->myself_->ip = announce_ip;
  c->AnnouncedPorts(&c->myself_->port, &c->myself_->pport, &c->myself_->cport);
  if (c->myself_->is_replica()) c->state_ok_ = false;
  return c;
}

Status Cluster::LoadConfig(const NodesFile& f) {
  int64_t now = WallMs();
  for (const NodeInfo& info : f.nodes) {
    Node* n = Lookup(info.name);
    if (!n) n = CreateNode(info.name, 0);
    n->ip = info.ip;
    n->port = info.port;
    n->cport = info.cport;
    n->hostname = info.hostname;
    n->flags = info.flags & ~kFlagMeet;
    if (n->flags & kFlagMyself) {
      if (myself_ && myself_ != n) return Status::Corruption("two nodes are myself");
      myself_ = n;
    }
    if (!info.primary.empty()) {
      Node* p = Lookup(info.primary);
      if (!p) p = CreateNode(info.primary, 0);
      n->primary = p;
      AddReplica(p, n);
    }
    if (info.ping_sent_ms) n->ping_sent = now;
    if (info.pong_received_ms) n->pong_received = now;
    if (n->failed()) n->fail_time = now;
    n->config_epoch = n->is_replica() ? 0 : info.config_epoch;
    for (int s = 0; s < kClusterSlots; s++) {
      if (info.slots.test(s)) AddSlot(n, s);
    }
    for (const auto& [slot, name] : info.migrating) {
      Node* to = Lookup(name);
      if (!to) to = CreateNode(name, 0);
      migrating_to_[slot] = to;
    }
    for (const auto& [slot, name] : info.importing) {
      Node* from = Lookup(name);
      if (!from) from = CreateNode(name, 0);
      importing_from_[slot] = from;
    }
  }
  if (!myself_) return Status::Corruption("no node is myself");
  current_epoch_ = f.current_epoch;
  last_vote_epoch_ = f.last_vote_epoch;
  for (const auto& [name, n] : nodes_) current_epoch_ = std::max(current_epoch_, n->config_epoch);
  return Status::Ok();
}

const std::string& Cluster::myid() const { return myself_->name; }
bool Cluster::myself_is_replica() const { return myself_->is_replica(); }

Cluster::Node* Cluster::Lookup(std::string_view name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.get();
}

Cluster::Node* Cluster::CreateNode(std::string name, uint16_t flags) {
  auto n = std::make_unique<Node>();
  n->name = name.empty() ? RandomName() : std::move(name);
  n->flags = flags;
  n->ctime = WallMs();
  Node* raw = n.get();
  AddNode(std::move(n));
  return raw;
}

void Cluster::AddNode(std::unique_ptr<Node> n) { nodes_[n->name] = std::move(n); }

void Cluster::DelNode(Node* del) {
  // Its slots' migrating and importing states end, as do its failure reports about others.
  for (int s = 0; s < kClusterSlots; s++) {
    if (importing_from_[s] == del) importing_from_[s] = nullptr;
    if (migrating_to_[s] == del) migrating_to_[s] = nullptr;
    if (slots_[s] == del) DelSlot(s);
  }
  for (auto& [name, n] : nodes_) n->fail_reports.erase(del);
  if (del->primary) RemoveReplica(del->primary, del);
  for (Node* r : del->replicas) r->primary = nullptr;
  if (mf_replica_ == del) mf_replica_ = nullptr;
  if (del->link) FreeLink(del->link);
  if (del->inbound_link) FreeLink(del->inbound_link);
  nodes_.erase(del->name);
}

void Cluster::RenameNode(Node* n, const std::string& name) {
  LOG_DEBUG("Renaming node %.40s into %.40s", n->name.c_str(), name.c_str());
  auto it = nodes_.find(n->name);
  std::unique_ptr<Node> owned = std::move(it->second);
  nodes_.erase(it);
  owned->name = name;
  nodes_[name] = std::move(owned);
  Todo(kTodoSaveConfig);
}

void Cluster::AddReplica(Node* primary, Node* replica) {
  if (std::find(primary->replicas.begin(), primary->replicas.end(), replica) !=
      primary->replicas.end()) {
    return;
  }
  primary->replicas.push_back(replica);
  primary->flags |= kFlagMigrateTo;
}

void Cluster::RemoveReplica(Node* primary, Node* replica) {
  auto& v = primary->replicas;
  v.erase(std::remove(v.begin(), v.end(), replica), v.end());
  if (v.empty()) primary->flags &= ~kFlagMigrateTo;
}

bool Cluster::AddSlot(Node* n, int slot) {
  if (slots_[slot]) return false;
  if (!n->slots.test(slot)) {
    n->slots.set(slot);
    n->numslots++;
    // A primary's first slot makes it a target for replica migration when other primaries
    // have replicas (Redis' clusterNodeSetSlotBit).
    if (n->numslots == 1) {
      for (const auto& [name, o] : nodes_) {
        if (o->is_primary() && !o->replicas.empty()) {
          n->flags |= kFlagMigrateTo;
          break;
        }
      }
    }
  }
  slots_[slot] = n;
  return true;
}

bool Cluster::DelSlot(int slot) {
  Node* n = slots_[slot];
  if (!n) return false;
  // This shard stops serving it: its shard channels' subscribers here are let go.
  if (n == myself_ || (myself_->is_replica() && myself_->primary == n)) {
    host_.UnsubscribeShardSlot(slot);
  }
  n->slots.reset(slot);
  n->numslots--;
  slots_[slot] = nullptr;
  return true;
}

int Cluster::DelNodeSlots(Node* n) {
  int deleted = 0;
  for (int s = 0; s < kClusterSlots; s++) {
    if (n->slots.test(s)) {
      DelSlot(s);
      deleted++;
    }
  }
  return deleted;
}

void Cluster::CloseAllSlots() {
  migrating_to_.fill(nullptr);
  importing_from_.fill(nullptr);
}

void Cluster::SetNodeAsPrimary(Node* n) {
  if (n->is_primary()) return;
  if (n->primary) {
    RemoveReplica(n->primary, n);
    if (n != myself_) n->flags |= kFlagMigrateTo;
  }
  n->flags &= ~kFlagReplica;
  n->flags |= kFlagMaster;
  n->primary = nullptr;
  Todo(kTodoSaveConfig | kTodoUpdateState);
}

void Cluster::SetMyPrimary(Node* n) {
  if (myself_->is_primary()) {
    myself_->flags &= ~(kFlagMaster | kFlagMigrateTo);
    myself_->flags |= kFlagReplica;
    CloseAllSlots();
  } else if (myself_->primary) {
    RemoveReplica(myself_->primary, myself_);
  }
  myself_->primary = n;
  AddReplica(n, myself_);
  host_.Follow(n->ip, ReplicationPort(*n));
  ResetManualFailover();
}

void Cluster::UpdateSlotsConfigWith(Node* sender, uint64_t sender_epoch, const SlotBitmap& slots) {
  if (sender == myself_) {
    LOG_WARNING("Discarding UPDATE message about myself.");
    return;
  }
  Node* curprimary = myself_->is_primary() ? myself_ : myself_->primary;
  Node* newprimary = nullptr;
  std::vector<int> dirty;
  int sender_slots = 0, migrated_ours = 0;
  for (int s = 0; s < kClusterSlots; s++) {
    if (!slots.test(s)) continue;
    sender_slots++;
    if (slots_[s] == sender) continue;
    // A slot being imported changes hands only by CLUSTER SETSLOT.
    if (importing_from_[s]) continue;
    if (slots_[s] == nullptr || slots_[s]->config_epoch < sender_epoch) {
      // A whole-slot migration's source deletes the keys itself, once its writes resume.
      if (slots_[s] == myself_ && !exporting_[s] && host_.keyspace().db(0).KeysInSlot(s) > 0) {
        dirty.push_back(s);
      }
      if (slots_[s] != nullptr && slots_[s] == curprimary) {
        newprimary = sender;
        migrated_ours++;
      }
      DelSlot(s);
      AddSlot(sender, s);
      Todo(kTodoSaveConfig | kTodoFsyncConfig | kTodoUpdateState);
    }
  }
  if (newprimary && curprimary->numslots == 0 &&
      (host_.ConfigBool("cluster-allow-replica-migration") || sender_slots == migrated_ours)) {
    LOG_WARNING("Configuration change detected. Reconfiguring myself as a replica of %.40s",
                sender->name.c_str());
    SetMyPrimary(sender);
    Todo(kTodoSaveConfig | kTodoFsyncConfig | kTodoUpdateState);
  } else if (myself_->primary && myself_->primary->primary) {
    LOG_WARNING("I'm a sub-replica! Reconfiguring myself as a replica of grandmaster %.40s",
                myself_->primary->primary->name.c_str());
    SetMyPrimary(myself_->primary->primary);
    Todo(kTodoSaveConfig | kTodoFsyncConfig | kTodoUpdateState);
  } else {
    for (int s : dirty) host_.DeleteKeysInSlot(s);
  }
}

void Cluster::HandleConfigEpochCollision(Node* sender) {
  if (sender->config_epoch != myself_->config_epoch || !sender->is_primary() ||
      !myself_->is_primary()) {
    return;
  }
  // The node with the greater name keeps its epoch; the other takes the next one.
  if (sender->name <= myself_->name) return;
  current_epoch_++;
  myself_->config_epoch = current_epoch_;
  SaveConfigOrDie(true);
  LOG_VERBOSE("WARNING: configEpoch collision with node %.40s. configEpoch set to %llu",
              sender->name.c_str(), static_cast<unsigned long long>(myself_->config_epoch));
}

bool Cluster::BumpEpochWithoutConsensus() {
  uint64_t max_epoch = 0;
  for (const auto& [name, n] : nodes_) max_epoch = std::max(max_epoch, n->config_epoch);
  if (myself_->config_epoch == 0 || myself_->config_epoch != max_epoch) {
    current_epoch_++;
    myself_->config_epoch = current_epoch_;
    Todo(kTodoSaveConfig | kTodoFsyncConfig);
    LOG_WARNING("New configEpoch set to %llu",
                static_cast<unsigned long long>(myself_->config_epoch));
    return true;
  }
  return false;
}

void Cluster::AddFailureReport(Node* failing, Node* sender, bool* added) {
  auto [it, inserted] = failing->fail_reports.insert_or_assign(sender, WallMs());
  *added = inserted;
}

bool Cluster::DelFailureReport(Node* failing, Node* sender) {
  return failing->fail_reports.erase(sender) > 0;
}

int Cluster::FailureReportsCount(Node* n) {
  int64_t maxtime = host_.ConfigInt("cluster-node-timeout") * kFailReportValidityMult;
  int64_t now = WallMs();
  std::erase_if(n->fail_reports, [&](const auto& r) { return now - r.second > maxtime; });
  return static_cast<int>(n->fail_reports.size());
}

void Cluster::MarkFailingIfNeeded(Node* n) {
  if (!n->timed_out() || n->failed()) return;
  int failures = FailureReportsCount(n);
  if (myself_->is_primary()) failures++;
  if (failures < size_ / 2 + 1) return;
  LOG_NOTICE("Marking node %.40s as failing (quorum reached).", n->name.c_str());
  n->flags &= ~kFlagPFail;
  n->flags |= kFlagFail;
  n->fail_time = WallMs();
  SendFail(n->name);
  Todo(kTodoUpdateState | kTodoSaveConfig);
}

void Cluster::ClearFailureIfNeeded(Node* n) {
  if (n->is_replica() || n->numslots == 0) {
    LOG_NOTICE("Clear FAIL state for node %.40s: %s is reachable again.", n->name.c_str(),
               n->is_replica() ? "replica" : "master without slots");
    n->flags &= ~kFlagFail;
    Todo(kTodoUpdateState | kTodoSaveConfig);
  }
  if (n->is_primary() && n->numslots > 0 &&
      WallMs() - n->fail_time > host_.ConfigInt("cluster-node-timeout") * kFailUndoTimeMult) {
    LOG_NOTICE(
        "Clear FAIL state for node %.40s: is reachable again and nobody is serving its slots "
        "after some time.",
        n->name.c_str());
    n->flags &= ~kFlagFail;
    Todo(kTodoUpdateState | kTodoSaveConfig);
  }
}

bool Cluster::StartHandshake(const std::string& ip, int port, int cport) {
  // The address in its normal form, so that one node is not met twice under two spellings.
  char norm[INET6_ADDRSTRLEN] = {0};
  unsigned char buf[sizeof(struct in6_addr)];
  if (inet_pton(AF_INET, ip.c_str(), buf) == 1) {
    inet_ntop(AF_INET, buf, norm, sizeof(norm));
  } else if (inet_pton(AF_INET6, ip.c_str(), buf) == 1) {
    inet_ntop(AF_INET6, buf, norm, sizeof(norm));
  } else {
    errno = EINVAL;
    return false;
  }
  if (port <= 0 || port > 65535 || cport <= 0 || cport > 65535) {
    errno = EINVAL;
    return false;
  }
  for (const auto& [name, n] : nodes_) {
    if (n->in_handshake() && strcasecmp(n->ip.c_str(), norm) == 0 && n->port == port &&
        n->cport == cport) {
      errno = EAGAIN;
      return false;
    }
  }
  Node* n = CreateNode("", kFlagHandshake | kFlagMeet);
  n->ip = norm;
  n->port = port;
  n->cport = cport;
  return true;
}

void Cluster::BlacklistAdd(const std::string& name) {
  Blacklisted("");  // drops the expired entries
  blacklist_[name] = WallMs() / 1000 + kBlacklistTtlS;
}

bool Cluster::Blacklisted(const std::string& name) {
  int64_t now = WallMs() / 1000;
  std::erase_if(blacklist_, [&](const auto& e) { return e.second < now; });
  return blacklist_.count(name) > 0;
}

void Cluster::AnnouncedPorts(int* port, int* pport, int* cport) {
  bool tls = host_.ConfigBool("tls-cluster");
  *port = tls ? host_.tls_port() : host_.port();
  *pport = tls ? host_.port() : 0;
  *cport = bus_port_;
  if (tls) {
    if (int p = static_cast<int>(host_.ConfigInt("cluster-announce-tls-port"))) *port = p;
    if (int p = static_cast<int>(host_.ConfigInt("cluster-announce-port"))) *pport = p;
  } else if (int p = static_cast<int>(host_.ConfigInt("cluster-announce-port"))) {
    *port = p;
  }
  if (int p = static_cast<int>(host_.ConfigInt("cluster-announce-bus-port"))) *cport = p;
}

int Cluster::ClientPort(const Node& n, bool tls) const {
  // With tls-cluster the announced port is the TLS one; a plain-text client gets pport.
  if (host_.ConfigBool("tls-cluster") && !tls) return n.pport;
  return n.port;
}

int Cluster::ReplicationPort(const Node& n) const {
  // The port for the link tls-replication makes (Redis 7.2's choice: 7.0 takes the announced
  // port, the TLS one with tls-cluster, even for a plain-text link).
  return ClientPort(n, host_.ConfigBool("tls-replication"));
}

std::string Cluster::Endpoint(const Node& n, bool tls) const {
  std::string type = host_.ConfigString("cluster-preferred-endpoint-type");
  std::string host;
  if (type == "hostname") {
    host = n.hostname.empty() ? "?" : n.hostname;
  } else if (type == "unknown-endpoint") {
    host = "";  // "MOVED 3999 :7001": the client uses the address it knows
  } else {
    host = n.ip;
  }
  return host + ":" + std::to_string(ClientPort(n, tls));
}

void Cluster::UpdateState() {
  todo_ &= ~kTodoUpdateState;
  int64_t now = WallMs();
  if (first_update_ms_ == 0) first_update_ms_ = now;
  // A primary that starts waits a little before it serves, so that the cluster may tell it
  // that it was failed over meanwhile.
  if (myself_->is_primary() && !state_ok_ && now - first_update_ms_ < kWritableDelayMs) return;
  bool ok = true;
  if (host_.ConfigBool("cluster-require-full-coverage")) {
    for (int s = 0; s < kClusterSlots; s++) {
      if (!slots_[s] || slots_[s]->failed()) {
        ok = false;
        break;
      }
    }
  }
  int reachable = 0;
  size_ = 0;
  for (const auto& [name, n] : nodes_) {
    if (n->is_primary() && n->numslots) {
      size_++;
      if (!(n->flags & (kFlagFail | kFlagPFail))) reachable++;
    }
  }
  if (reachable < size_ / 2 + 1) {
    ok = false;
    among_minority_ms_ = now;
  }
  if (ok != state_ok_) {
    int64_t rejoin_delay = std::clamp<int64_t>(host_.ConfigInt("cluster-node-timeout"),
                                               kMinRejoinDelayMs, kMaxRejoinDelayMs);
    if (ok && myself_->is_primary() && now - among_minority_ms_ < rejoin_delay) return;
    LOG_WARNING("Cluster state changed: %s", ok ? "ok" : "fail");
    state_ok_ = ok;
  }
}

NodeInfo Cluster::ToInfo(const Node& n) const {
  NodeInfo i;
  i.name = n.name;
  i.ip = n.ip;
  i.port = n.port;
  i.cport = n.cport;
  i.pport = n.pport;
  i.hostname = n.hostname;
  i.flags = n.flags;
  i.primary = n.primary ? n.primary->name : "";
  i.ping_sent_ms = n.ping_sent;
  i.pong_received_ms = n.pong_received;
  i.config_epoch = (n.is_replica() && n.primary) ? n.primary->config_epoch : n.config_epoch;
  i.link_connected = n.link != nullptr;
  i.slots = n.slots;
  if (&n == myself_) {
    for (int s = 0; s < kClusterSlots; s++) {
      if (migrating_to_[s]) i.migrating[s] = migrating_to_[s]->name;
      if (importing_from_[s]) i.importing[s] = importing_from_[s]->name;
    }
  }
  return i;
}

NodesFile Cluster::ToNodesFile() const {
  NodesFile f;
  // Myself first, then the others by name: a stable order (Redis writes its dict's order).
  f.nodes.push_back(ToInfo(*myself_));
  for (const auto& [name, n] : nodes_) {
    if (n.get() != myself_) f.nodes.push_back(ToInfo(*n));
  }
  f.current_epoch = current_epoch_;
  f.last_vote_epoch = last_vote_epoch_;
  return f;
}

void Cluster::SaveConfigOrDie(bool fsync) {
  todo_ &= ~(kTodoSaveConfig | kTodoFsyncConfig);
  WriteConfigOrDie(FormatNodesFile(ToNodesFile()), ++config_gen_, fsync);
}

void Cluster::WriteConfigOrDie(const std::string& text, uint64_t gen, bool fsync) {
  std::lock_guard lock(file_mu_);
  if (gen <= written_gen_) return;  // a newer state is in the file already
  Status s = WriteNodesTextAtomically(config_file_, text, fsync);
  if (!s.ok()) {
    LOG_WARNING("Fatal: can't update cluster config file: %s", s.ToString().c_str());
    _exit(1);
  }
  written_gen_ = gen;
}

void Cluster::AfterEvent() {
  int todo = todo_;
  todo_ = 0;
  if (myself_->is_replica() && !host_.LoadingSync()) {
    if (todo & kTodoHandleManualFailover) {
      HandleManualFailover();
      HandleReplicaFailover();
    } else if (todo & kTodoHandleFailover) {
      HandleReplicaFailover();
    }
  }
  if (todo & kTodoUpdateState) UpdateState();
  int save = (todo | todo_) & (kTodoSaveConfig | kTodoFsyncConfig);
  todo_ &= ~(kTodoUpdateState | kTodoSaveConfig | kTodoFsyncConfig);
  if (!(save & kTodoSaveConfig)) return;
  // A command's save that need not reach the disk is left to the bus thread, which makes one
  // of many (a reshard's SETSLOTs): replacing the file costs more than the command.
  if (!(save & kTodoFsyncConfig) && !loop_.InLoopThread() && thread_.joinable()) {
    if (!save_posted_) {
      save_posted_ = true;
      // The text is made under the keyspace lock, the file written without it.
      loop_.Post([this] {
        std::string text;
        uint64_t gen;
        {
          std::lock_guard lock(host_.mu());
          save_posted_ = false;
          text = FormatNodesFile(ToNodesFile());
          gen = ++config_gen_;
        }
        WriteConfigOrDie(text, gen, false);
      });
    }
    return;
  }
  SaveConfigOrDie(save & kTodoFsyncConfig);
}

Status Cluster::VerifyWithData() {
  store::Keyspace& ks = host_.keyspace();
  for (int db = 1; db < ks.num_dbs(); db++) {
    if (ks.db(db).size() > 0) {
      return Status::Invalid(
          "You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.");
    }
  }
  if (myself_->is_replica()) return Status::Ok();
  bool changed = false;
  for (int s = 0; s < kClusterSlots; s++) {
    if (ks.db(0).KeysInSlot(s) == 0) continue;
    if (slots_[s] == myself_ || importing_from_[s]) continue;
    changed = true;
    if (!slots_[s]) {
      LOG_WARNING("I have keys for unassigned slot %d. Taking responsibility for it.", s);
      AddSlot(myself_, s);
    } else {
      LOG_WARNING(
          "I have keys for slot %d, but the slot is assigned to another node. Setting it to "
          "importing state.",
          s);
      importing_from_[s] = slots_[s];
    }
  }
  if (changed) SaveConfigOrDie(true);
  return Status::Ok();
}

void Cluster::StartReplication() {
  if (myself_->is_replica() && myself_->primary && myself_->primary->has_addr() &&
      !myself_->primary->ip.empty() && ReplicationPort(*myself_->primary) != 0) {
    host_.Follow(myself_->primary->ip, ReplicationPort(*myself_->primary));
  }
}

Route Cluster::RouteQuery(const Query& q) {
  Route r;
  Node* n = nullptr;
  bool migrating = false, importing = false, multiple_keys = false, missing = false;
  bool existing = false;
  for (std::string_view key : q.keys) {
    int slot = KeyHashSlot(key);
    if (r.slot < 0) {
      r.slot = slot;
      n = slots_[slot];
      if (!n) {
        r.kind = Route::kUnbound;
        return r;
      }
      if (n == myself_ && migrating_to_[slot]) migrating = true;
      if (importing_from_[slot]) importing = true;
    } else if (slot != r.slot) {
      r.kind = Route::kCrossSlot;
      return r;
    } else {
      multiple_keys = true;
    }
    if ((migrating || importing) && !q.pubsub_shard && q.exists) {
      if (q.exists(key)) {
        existing = true;
      } else {
        missing = true;
      }
    }
  }
  if (!n) return r;  // no keys: runs here
  if (!state_ok_) {
    if (q.pubsub_shard) {
      if (!host_.ConfigBool("cluster-allow-pubsubshard-when-down")) {
        r.kind = Route::kDown;
        return r;
      }
    } else if (!host_.ConfigBool("cluster-allow-reads-when-down")) {
      r.kind = Route::kDown;
      return r;
    } else if (q.write) {
      r.kind = Route::kDownRo;
      return r;
    }
  }
  if ((migrating || importing) && q.migrate) return r;
  // Some keys moved already and some not: the client tries again once they all have.
  if (migrating && missing && existing) {
    r.kind = Route::kTryAgain;
    return r;
  }
  if (migrating && missing) {
    r.kind = Route::kAsk;
    r.endpoint = Endpoint(*migrating_to_[r.slot], q.tls);
    return r;
  }
  if (importing && q.asking) {
    if (multiple_keys && missing) r.kind = Route::kTryAgain;
    return r;
  }
  // A replica serves reads of its primary's slots to a READONLY client, and the shard channels
  // of its shard to anyone.
  if ((q.readonly || q.pubsub_shard) && !q.write && myself_->is_replica() &&
      myself_->primary == n) {
    return r;
  }
  if (n != myself_) {
    r.kind = Route::kMoved;
    r.endpoint = Endpoint(*n, q.tls);
  }
  return r;
}

Route Cluster::RouteBlocked(std::string_view key, bool readonly, bool write, bool tls) {
  Route r;
  // Down: even reads allowed when down would wait for a write that may never come.
  if (!state_ok_) {
    r.kind = Route::kDown;
    return r;
  }
  int slot = KeyHashSlot(key);
  Node* n = slots_[slot];
  if (readonly && !write && myself_->is_replica() && myself_->primary == n) n = myself_;
  if (n != myself_ && !importing_from_[slot]) {
    r.slot = slot;
    if (!n) {
      r.kind = Route::kUnbound;
    } else {
      r.kind = Route::kMoved;
      r.endpoint = Endpoint(*n, tls);
    }
  }
  return r;
}

std::string Cluster::DebugKillLinks(std::string_view direction, std::string_view name) {
  Node* n = Lookup(name);
  if (!n) return "Unknown node " + std::string(name);
  bool to = strcasecmp(std::string(direction).c_str(), "to") == 0;
  bool from = strcasecmp(std::string(direction).c_str(), "from") == 0;
  bool all = strcasecmp(std::string(direction).c_str(), "all") == 0;
  if (!to && !from && !all) return "Unknown direction " + std::string(direction);
  if ((to || all) && n->link) FreeLink(n->link);
  if ((from || all) && n->inbound_link) FreeLink(n->inbound_link);
  return "";
}

void Cluster::AnnouncedChanged() {
  myself_->hostname = host_.ConfigString("cluster-announce-hostname");
  std::string ip = host_.ConfigString("cluster-announce-ip");
  if (!ip.empty()) myself_->ip = ip;
  AnnouncedPorts(&myself_->port, &myself_->pport, &myself_->cport);
  Todo(kTodoSaveConfig);
}

void Cluster::ResetNode(bool hard) {
  if (myself_->is_replica()) {
    SetNodeAsPrimary(myself_);
    host_.StopFollowing();
  }
  CloseAllSlots();
  ResetManualFailover();
  for (int s = 0; s < kClusterSlots; s++) DelSlot(s);
  std::vector<Node*> others;
  for (const auto& [name, n] : nodes_) {
    if (n.get() != myself_) others.push_back(n.get());
  }
  for (Node* n : others) DelNode(n);
  if (hard) {
    current_epoch_ = 0;
    last_vote_epoch_ = 0;
    myself_->config_epoch = 0;
    LOG_WARNING("configEpoch set to 0 via CLUSTER RESET HARD");
    std::string old = myself_->name;
    RenameNode(myself_, RandomName());
    LOG_NOTICE("Node hard reset, now I'm %.40s", myself_->name.c_str());
  }
  Todo(kTodoSaveConfig | kTodoFsyncConfig | kTodoUpdateState);
}

}  // namespace kv::cluster
