// The CLUSTER command in cluster mode: every Redis 7.0 subcommand, with Redis' replies and
// errors (clusterCommand in Redis' cluster.c).
#include <strings.h>

#include <cerrno>
#include <cstring>

#include "cluster/cluster.h"
#include "cluster/cluster_types.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"

namespace kv::cluster {

namespace {

bool Is(std::string_view a, const char* b) {
  return a.size() == strlen(b) && strncasecmp(a.data(), b, a.size()) == 0;
}

std::optional<int64_t> Int(std::string_view s) { return ParseInt64(s); }

// A slot argument, or Redis' error.
bool SlotArg(cmd::Context& c, std::string_view arg, int* slot) {
  auto v = Int(arg);
  if (!v || *v < 0 || *v >= kClusterSlots) {
    c.Error("Invalid or out of range slot");
    return false;
  }
  *slot = static_cast<int>(*v);
  return true;
}

constexpr std::string_view kHelp[] = {
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current "
    "node.",
    "FAILOVER [FORCE|TAKEOVER]",
    "    Promote current replica node to being a master.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "MYID",
    "    Return the node id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICATE <node-id>",
    "    Configure current node as replica to <node-id>.",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "LINKS",
    "    Return information about all network links between this node and its peers.",
    "    Output format is an array where each array element is a map containing attributes of "
    "a link",
};

}  // namespace

void Cluster::Command(cmd::Context& c, bool tls) {
  resp::ReplyWriter& w = c.out;
  std::string_view sub = c.arg(1);
  size_t argc = c.argc();
  store::Db& db0 = host_.keyspace().db(0);
  // The node argument 2 names, or null with Redis' error replied.
  auto named_node = [&]() -> Node* {
    Node* n = Lookup(c.arg(2));
    if (!n) c.Error("Unknown node " + std::string(c.arg(2)));
    return n;
  };

  if (Is(sub, "help") && argc == 2) {
    c.ReplyHelp(kHelp);
  } else if (Is(sub, "migrateslots") || Is(sub, "getslotmigrations") ||
             Is(sub, "cancelslotmigrations") || Is(sub, "syncslots")) {
    host_.SlotMigrationCommand(c);
  } else if (Is(sub, "meet") && (argc == 4 || argc == 5)) {
    auto port = Int(c.arg(3));
    if (!port) {
      c.Error("Invalid TCP base port specified: " + std::string(c.arg(3)));
      return;
    }
    int64_t cport = *port + 10000;
    if (argc == 5) {
      auto v = Int(c.arg(4));
      if (!v) {
        c.Error("Invalid TCP bus port specified: " + std::string(c.arg(4)));
        return;
      }
      cport = *v;
    }
    if (*port < 0 || *port > 65535 || cport < 0 || cport > 65535 ||
        (!StartHandshake(std::string(c.arg(2)), static_cast<int>(*port), static_cast<int>(cport)) &&
         errno == EINVAL)) {
      c.Error("Invalid node address specified: " + std::string(c.arg(2)) + ":" +
              std::string(c.arg(3)));
      return;
    }
    w.Ok();
  } else if (Is(sub, "nodes") && argc == 2) {
    std::string text;
    for (const NodeInfo& n : ToNodesFile().nodes) {
      text += NodeLine(n, host_.ConfigBool("tls-cluster") && !tls);
      text += '\n';
    }
    // Nodes in handshake are shown here (the file leaves them out).
    w.Verbatim(text);
  } else if (Is(sub, "myid") && argc == 2) {
    w.Bulk(myself_->name);
  } else if (Is(sub, "slots") && argc == 2) {
    std::vector<std::tuple<int, int, Node*>> ranges;
    for (int s = 0; s < kClusterSlots; s++) {
      if (!slots_[s]) continue;
      if (!ranges.empty() && std::get<2>(ranges.back()) == slots_[s] &&
          std::get<1>(ranges.back()) == s - 1) {
        std::get<1>(ranges.back()) = s;
      } else {
        ranges.emplace_back(s, s, slots_[s]);
      }
    }
    std::string type = host_.ConfigString("cluster-preferred-endpoint-type");
    auto node_reply = [&](const Node& n) {
      w.Array(4);
      if (type == "hostname") {
        w.Bulk(n.hostname.empty() ? "?" : n.hostname);
      } else if (type == "unknown-endpoint") {
        w.Null();
      } else {
        w.Bulk(n.ip);
      }
      w.Int(ClientPort(n, tls));
      w.Bulk(n.name);
      int extra = (type != "ip" ? 1 : 0) + (type != "hostname" && !n.hostname.empty() ? 1 : 0);
      w.Map(extra);
      if (type != "ip") {
        w.Bulk("ip");
        w.Bulk(n.ip);
      }
      if (type != "hostname" && !n.hostname.empty()) {
        w.Bulk("hostname");
        w.Bulk(n.hostname);
      }
    };
    auto available = [&](const Node& r) {
      if (r.failed()) return false;
      int64_t off = &r == myself_ ? host_.ReplOffset() : r.repl_offset;
      return off != 0;
    };
    w.Array(ranges.size());
    for (const auto& [first, last, n] : ranges) {
      size_t replicas = 0;
      for (Node* r : n->replicas) replicas += available(*r) ? 1 : 0;
      w.Array(3 + replicas);
      w.Int(first);
      w.Int(last);
      node_reply(*n);
      for (Node* r : n->replicas) {
        if (available(*r)) node_reply(*r);
      }
    }
  } else if (Is(sub, "shards") && argc == 2) {
    std::vector<Node*> primaries;
    for (const auto& [name, n] : nodes_) {
      if (!n->is_replica()) primaries.push_back(n.get());
    }
    bool tls_cluster = host_.ConfigBool("tls-cluster");
    auto details = [&](const Node& n) {
      int plain = tls_cluster ? n.pport : n.port;
      int tls_port = tls_cluster ? n.port : 0;
      int64_t off = &n == myself_ ? host_.ReplOffset() : n.repl_offset;
      w.Map(6 + (plain ? 1 : 0) + (tls_port ? 1 : 0) + (n.hostname.empty() ? 0 : 1));
      w.Bulk("id");
      w.Bulk(n.name);
      if (plain) {
        w.Bulk("port");
        w.Int(plain);
      }
      if (tls_port) {
        w.Bulk("tls-port");
        w.Int(tls_port);
      }
      w.Bulk("ip");
      w.Bulk(n.ip);
      w.Bulk("endpoint");
      std::string ep = Endpoint(n, true);
      w.Bulk(ep.substr(0, ep.rfind(':')));
      if (!n.hostname.empty()) {
        w.Bulk("hostname");
        w.Bulk(n.hostname);
      }
      w.Bulk("role");
      w.Bulk(n.is_replica() ? "replica" : "master");
      w.Bulk("replication-offset");
      w.Int(off);
      w.Bulk("health");
      w.Bulk(n.failed() ? "fail" : (n.is_replica() && off == 0) ? "loading" : "online");
    };
    w.Array(primaries.size());
    for (Node* p : primaries) {
      w.Map(2);
      w.Bulk("slots");
      auto ranges = SlotRanges(p->slots);
      w.Array(ranges.size() * 2);
      for (const auto& [a, b] : ranges) {
        w.Int(a);
        w.Int(b);
      }
      w.Bulk("nodes");
      w.Array(1 + p->replicas.size());
      details(*p);
      for (Node* r : p->replicas) details(*r);
    }
  } else if (Is(sub, "flushslots") && argc == 2) {
    if (db0.size() != 0) {
      c.Error("DB must be empty to perform CLUSTER FLUSHSLOTS.");
      return;
    }
    DelNodeSlots(myself_);
    Todo(kTodoUpdateState | kTodoSaveConfig);
    w.Ok();
  } else if ((Is(sub, "addslots") || Is(sub, "delslots") || Is(sub, "addslotsrange") ||
              Is(sub, "delslotsrange")) &&
             argc >= 3) {
    bool del = Is(sub, "delslots") || Is(sub, "delslotsrange");
    bool range = Is(sub, "addslotsrange") || Is(sub, "delslotsrange");
    if (range && argc % 2 == 1) {
      c.Error("wrong number of arguments for '" + ToLower(c.arg(0)) + "|" + ToLower(sub) +
              "' command");
      return;
    }
    std::vector<std::pair<int, int>> pairs;
    for (size_t j = 2; j < argc; j += range ? 2 : 1) {
      int a, b;
      if (!SlotArg(c, c.arg(j), &a)) return;
      b = a;
      if (range) {
        if (!SlotArg(c, c.arg(j + 1), &b)) return;
        if (a > b) {
          c.Error("start slot number " + std::to_string(a) + " is greater than end slot number " +
                  std::to_string(b));
          return;
        }
      }
      pairs.emplace_back(a, b);
    }
    std::vector<uint8_t> seen(kClusterSlots, 0);
    for (const auto& [a, b] : pairs) {
      for (int s = a; s <= b; s++) {
        if (del && !slots_[s]) {
          c.Error("Slot " + std::to_string(s) + " is already unassigned");
          return;
        }
        if (!del && slots_[s]) {
          c.Error("Slot " + std::to_string(s) + " is already busy");
          return;
        }
        if (seen[s]++ == 1) {
          c.Error("Slot " + std::to_string(s) + " specified multiple times");
          return;
        }
      }
    }
    for (int s = 0; s < kClusterSlots; s++) {
      if (!seen[s]) continue;
      importing_from_[s] = nullptr;
      if (del) {
        DelSlot(s);
      } else {
        AddSlot(myself_, s);
      }
    }
    Todo(kTodoUpdateState | kTodoSaveConfig);
    w.Ok();
  } else if (Is(sub, "setslot") && argc >= 4) {
    if (myself_->is_replica()) {
      c.Error("Please use SETSLOT only with masters.");
      return;
    }
    int slot;
    if (!SlotArg(c, c.arg(2), &slot)) return;
    std::string_view action = c.arg(3);
    auto node_arg = [&](const char* unknown) -> Node* {
      Node* n = Lookup(c.arg(4));
      if (!n) {
        c.Error(std::string(unknown) + std::string(c.arg(4)));
        return nullptr;
      }
      if (n->is_replica()) {
        c.Error("Target node is not a master");
        return nullptr;
      }
      return n;
    };
    if (Is(action, "migrating") && argc == 5) {
      if (slots_[slot] != myself_) {
        c.Error("I'm not the owner of hash slot " + std::to_string(slot));
        return;
      }
      Node* n = node_arg("I don't know about node ");
      if (!n) return;
      migrating_to_[slot] = n;
    } else if (Is(action, "importing") && argc == 5) {
      if (slots_[slot] == myself_) {
        c.Error("I'm already the owner of hash slot " + std::to_string(slot));
        return;
      }
      Node* n = node_arg("I don't know about node ");
      if (!n) return;
      importing_from_[slot] = n;
    } else if (Is(action, "stable") && argc == 4) {
      importing_from_[slot] = nullptr;
      migrating_to_[slot] = nullptr;
    } else if (Is(action, "node") && argc == 5) {
      Node* n = node_arg("Unknown node ");
      if (!n) return;
      size_t keys = db0.KeysInSlot(slot);
      if (slots_[slot] == myself_ && n != myself_ && keys != 0) {
        c.Error("Can't assign hashslot " + std::to_string(slot) +
                " to a different node while I still hold keys for this hash slot.");
        return;
      }
      if (keys == 0 && migrating_to_[slot]) migrating_to_[slot] = nullptr;
      bool was_mine = slots_[slot] == myself_;
      DelSlot(slot);
      AddSlot(n, slot);
      if (was_mine && n != myself_ && myself_->numslots == 0 &&
          host_.ConfigBool("cluster-allow-replica-migration")) {
        LOG_WARNING("Configuration change detected. Reconfiguring myself as a replica of %.40s",
                    n->name.c_str());
        SetMyPrimary(n);
        Todo(kTodoSaveConfig | kTodoFsyncConfig | kTodoUpdateState);
      }
      if (n == myself_ && importing_from_[slot]) {
        // Imported by hand: a new epoch makes this node's claim win everywhere.
        if (BumpEpochWithoutConsensus()) {
          LOG_WARNING("configEpoch updated after importing slot %d", slot);
        }
        importing_from_[slot] = nullptr;
        BroadcastPong(false);
      }
    } else {
      c.Error("Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
      return;
    }
    Todo(kTodoSaveConfig | kTodoUpdateState);
    w.Ok();
  } else if (Is(sub, "bumpepoch") && argc == 2) {
    bool bumped = BumpEpochWithoutConsensus();
    w.Simple(std::string(bumped ? "BUMPED " : "STILL ") + std::to_string(myself_->config_epoch));
  } else if (Is(sub, "info") && argc == 2) {
    int assigned = 0, ok = 0, pfail = 0, fail = 0;
    for (int s = 0; s < kClusterSlots; s++) {
      Node* n = slots_[s];
      if (!n) continue;
      assigned++;
      if (n->failed()) {
        fail++;
      } else if (n->timed_out()) {
        pfail++;
      } else {
        ok++;
      }
    }
    uint64_t myepoch = (myself_->is_replica() && myself_->primary) ? myself_->primary->config_epoch
                                                                   : myself_->config_epoch;
    std::string info = "cluster_state:" + std::string(state_ok_ ? "ok" : "fail") + "\r\n";
    info += "cluster_slots_assigned:" + std::to_string(assigned) + "\r\n";
    info += "cluster_slots_ok:" + std::to_string(ok) + "\r\n";
    info += "cluster_slots_pfail:" + std::to_string(pfail) + "\r\n";
    info += "cluster_slots_fail:" + std::to_string(fail) + "\r\n";
    info += "cluster_known_nodes:" + std::to_string(nodes_.size()) + "\r\n";
    info += "cluster_size:" + std::to_string(size_) + "\r\n";
    info += "cluster_current_epoch:" + std::to_string(current_epoch_) + "\r\n";
    info += "cluster_my_epoch:" + std::to_string(myepoch) + "\r\n";
    uint64_t total = 0;
    for (int i = 0; i < kMsgTypeCount; i++) {
      if (!sent_[i]) continue;
      total += sent_[i];
      info += "cluster_stats_messages_" + std::string(MsgTypeName(static_cast<MsgType>(i))) +
              "_sent:" + std::to_string(sent_[i]) + "\r\n";
    }
    info += "cluster_stats_messages_sent:" + std::to_string(total) + "\r\n";
    total = 0;
    for (int i = 0; i < kMsgTypeCount; i++) {
      if (!received_[i]) continue;
      total += received_[i];
      info += "cluster_stats_messages_" + std::string(MsgTypeName(static_cast<MsgType>(i))) +
              "_received:" + std::to_string(received_[i]) + "\r\n";
    }
    info += "cluster_stats_messages_received:" + std::to_string(total) + "\r\n";
    info += "total_cluster_links_buffer_limit_exceeded:" +
            std::to_string(links_buffer_limit_exceeded_) + "\r\n";
    w.Verbatim(info);
  } else if (Is(sub, "saveconfig") && argc == 2) {
    Status s = WriteNodesFileAtomically(config_file_, ToNodesFile());
    if (s.ok()) {
      w.Ok();
    } else {
      c.Error("error saving the cluster node config: " + s.ToString());
    }
  } else if (Is(sub, "keyslot") && argc == 3) {
    w.Int(KeyHashSlot(c.arg(2)));
  } else if (Is(sub, "countkeysinslot") && argc == 3) {
    auto slot = Int(c.arg(2));
    if (!slot) {
      c.Error(cmd::OpStatus::kNotInteger);
      return;
    }
    if (*slot < 0 || *slot >= kClusterSlots) {
      c.Error("Invalid slot");
      return;
    }
    w.Int(static_cast<int64_t>(db0.KeysInSlot(static_cast<int>(*slot))));
  } else if (Is(sub, "getkeysinslot") && argc == 4) {
    auto slot = Int(c.arg(2));
    auto max = Int(c.arg(3));
    if (!slot || !max) {
      c.Error(cmd::OpStatus::kNotInteger);
      return;
    }
    if (*slot < 0 || *slot >= kClusterSlots || *max < 0) {
      c.Error("Invalid slot or number of keys");
      return;
    }
    auto keys = db0.SlotKeys(static_cast<int>(*slot));
    size_t n = std::min(keys.size(), static_cast<size_t>(*max));
    w.Array(n);
    // Newest first, as Redis lists a slot's keys.
    for (size_t i = 0; i < n; i++) w.Bulk(keys[keys.size() - 1 - i]->key());
  } else if (Is(sub, "forget") && argc == 3) {
    Node* n = named_node();
    if (!n) return;
    if (n == myself_) {
      c.Error("I tried hard but I can't forget myself...");
      return;
    }
    if (myself_->is_replica() && myself_->primary == n) {
      c.Error("Can't forget my master!");
      return;
    }
    BlacklistAdd(n->name);
    DelNode(n);
    Todo(kTodoUpdateState | kTodoSaveConfig);
    w.Ok();
  } else if (Is(sub, "replicate") && argc == 3) {
    Node* n = named_node();
    if (!n) return;
    if (n == myself_) {
      c.Error("Can't replicate myself");
      return;
    }
    if (n->is_replica()) {
      c.Error("I can only replicate a master, not a replica.");
      return;
    }
    if (myself_->is_primary() && (myself_->numslots != 0 || db0.size() != 0)) {
      c.Error("To set a master the node must be empty and without assigned slots.");
      return;
    }
    SetMyPrimary(n);
    Todo(kTodoUpdateState | kTodoSaveConfig);
    w.Ok();
  } else if ((Is(sub, "slaves") || Is(sub, "replicas")) && argc == 3) {
    Node* n = named_node();
    if (!n) return;
    if (n->is_replica()) {
      c.Error("The specified node is not a master");
      return;
    }
    w.Array(n->replicas.size());
    for (Node* r : n->replicas) {
      w.Bulk(NodeLine(ToInfo(*r), host_.ConfigBool("tls-cluster") && !tls));
    }
  } else if (Is(sub, "count-failure-reports") && argc == 3) {
    Node* n = named_node();
    if (!n) return;
    w.Int(FailureReportsCount(n));
  } else if (Is(sub, "failover") && (argc == 2 || argc == 3)) {
    bool force = false, takeover = false;
    if (argc == 3) {
      if (Is(c.arg(2), "force")) {
        force = true;
      } else if (Is(c.arg(2), "takeover")) {
        takeover = force = true;
      } else {
        c.Error(cmd::OpStatus::kSyntax);
        return;
      }
    }
    if (myself_->is_primary()) {
      c.Error("You should send CLUSTER FAILOVER to a replica");
      return;
    }
    if (!myself_->primary) {
      c.Error("I'm a replica but my master is unknown to me");
      return;
    }
    if (!force && (myself_->primary->failed() || !myself_->primary->link)) {
      c.Error("Master is down or failed, please use CLUSTER FAILOVER FORCE");
      return;
    }
    ResetManualFailover();
    mf_end_ = WallMs() + kMfTimeout;
    if (takeover) {
      LOG_WARNING("Taking over the master (user request).");
      BumpEpochWithoutConsensus();
      FailoverReplacePrimary();
    } else if (force) {
      LOG_WARNING("Forced failover user request accepted.");
      mf_can_start_ = true;
      Todo(kTodoHandleFailover);
    } else {
      LOG_WARNING("Manual failover user request accepted.");
      Node* p = myself_->primary;
      if (p->link) Send(p->link, Encode(BuildHeader(MsgType::kMfStart)), MsgType::kMfStart);
    }
    w.Ok();
  } else if (Is(sub, "set-config-epoch") && argc == 3) {
    auto epoch = Int(c.arg(2));
    if (!epoch) {
      c.Error(cmd::OpStatus::kNotInteger);
      return;
    }
    if (*epoch < 0) {
      c.Error("Invalid config epoch specified: " + std::to_string(*epoch));
    } else if (nodes_.size() > 1) {
      c.Error(
          "The user can assign a config epoch only when the node does not know any other "
          "node.");
    } else if (myself_->config_epoch != 0) {
      c.Error("Node config epoch is already non-zero");
    } else {
      myself_->config_epoch = static_cast<uint64_t>(*epoch);
      LOG_WARNING("configEpoch set to %llu via CLUSTER SET-CONFIG-EPOCH",
                  static_cast<unsigned long long>(myself_->config_epoch));
      current_epoch_ = std::max(current_epoch_, myself_->config_epoch);
      Todo(kTodoUpdateState | kTodoSaveConfig);
      w.Ok();
    }
  } else if (Is(sub, "reset") && (argc == 2 || argc == 3)) {
    bool hard = false;
    if (argc == 3) {
      if (Is(c.arg(2), "hard")) {
        hard = true;
      } else if (!Is(c.arg(2), "soft")) {
        c.Error(cmd::OpStatus::kSyntax);
        return;
      }
    }
    if (myself_->is_primary() && c.db().size() != 0) {
      c.Error("CLUSTER RESET can't be called with master nodes containing keys");
      return;
    }
    ResetNode(hard);
    w.Ok();
  } else if (Is(sub, "links") && argc == 2) {
    std::vector<Link*> links;
    for (const auto& [name, n] : nodes_) {
      if (n->link) links.push_back(n->link);
      if (n->inbound_link) links.push_back(n->inbound_link);
    }
    w.Array(links.size());
    for (Link* l : links) {
      w.Map(6);
      w.Bulk("direction");
      w.Bulk(l->inbound ? "from" : "to");
      w.Bulk("node");
      w.Bulk(l->node->name);
      w.Bulk("create-time");
      w.Int(l->ctime);
      w.Bulk("events");
      std::string ev;
      if (l->events & net::EventLoop::kReadable) ev += 'r';
      if (l->events & net::EventLoop::kWritable) ev += 'w';
      w.Bulk(ev);
      w.Bulk("send-buffer-allocated");
      w.Int(static_cast<int64_t>(l->wbuf.capacity()));
      w.Bulk("send-buffer-used");
      w.Int(static_cast<int64_t>(l->wbuf.size() - l->wpos));
    }
  } else {
    c.Error("unknown subcommand or wrong number of arguments for '" + std::string(sub) +
            "'. Try CLUSTER HELP.");
    return;
  }
  AfterEvent();
}

}  // namespace kv::cluster
