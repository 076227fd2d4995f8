// Cluster mode: this server as a member of a Redis 7.0 cluster. The node table, the slot map and
// the epochs (cluster.cc), the bus connections and their messages (cluster_bus.cc), the cron's
// pings, failure detection and state (cluster_cron.cc), and the CLUSTER command
// (cluster_cmds.cc), each as Redis 7.0's cluster.c has them, so that a mixed cluster of kvstore
// and redis-server nodes converges and heals as an all-Redis one does.
//
// Threads: the bus runs on a thread of its own with its own event loop (the listener, one link
// to each node and the links nodes open to us, and the cron every 100 ms). Everything here is
// guarded by the host's keyspace lock (Host::mu()): the bus thread takes it for each event and
// each cron tick; commands and the dispatcher's redirection run with it held already.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cluster/bus_wire.h"
#include "cluster/node_info.h"
#include "cluster/nodes_conf.h"
#include "cmd/context.h"
#include "common/status.h"
#include "net/event_loop.h"
#include "net/socket.h"
#include "net/tls.h"
#include "store/keyspace.h"

namespace kv::cluster {

// What the cluster needs from the server it runs in. Every call is made with mu() held.
class Host {
 public:
  virtual ~Host() = default;
  virtual std::timed_mutex& mu() = 0;
  virtual store::Keyspace& keyspace() = 0;
  // Settings, by their Redis names.
  virtual int64_t ConfigInt(const char* name) = 0;
  virtual std::string ConfigString(const char* name) = 0;
  virtual bool ConfigBool(const char* name) = 0;
  // The client ports this server listens on (0 when none).
  virtual int port() = 0;
  virtual int tls_port() = 0;
  // The server's TLS context, for the bus's links with tls-cluster (null while TLS is not set
  // up). Read once per link: a CONFIG SET's new context serves the next links.
  virtual std::shared_ptr<net::TlsContext> TlsContext() = 0;
  // The replication offset this node announces: its own stream's as a primary, what it has
  // processed of its primary's as a replica.
  virtual int64_t ReplOffset() = 0;
  // Listening sockets on `port` at the addresses `bind` names (the bus listens where clients
  // do).
  virtual Result<std::vector<net::Fd>> ListenTcp(int port) = 0;
  // Replicates ip:port from now on (a full or partial sync, as REPLICAOF starts), or stops
  // replicating and becomes a primary with the data it has (as REPLICAOF NO ONE).
  virtual void Follow(const std::string& ip, int port) = 0;
  virtual void StopFollowing() = 0;
  // Whether a primary is set (REPLICAOF's host), and for how long (ms) the replica has had no
  // data from it: since its last byte while the link is up, since the link went down when not.
  virtual bool Following() = 0;
  // A full sync being loaded (clients get -LOADING): no failover starts meanwhile, as Redis
  // runs no cluster cron while it loads.
  virtual bool LoadingSync() = 0;
  virtual int64_t PrimaryDataAgeMs() = 0;
  // A manual failover's pause of writes on this primary, until `end_ms` (wall clock) or until
  // ended.
  virtual void PauseWritesForFailover(int64_t end_ms) = 0;
  virtual void EndFailoverPause() = 0;
  // A PUBLISH or SPUBLISH that came over the bus, delivered to this server's subscribers.
  virtual void PublishLocal(std::string_view channel, std::string_view message, bool shard) = 0;
  // The shard channels of `slot` lose their subscribers here (told with sunsubscribe).
  virtual void UnsubscribeShardSlot(int slot) = 0;
  // Deletes every key of `slot`, propagated to replicas and the AOF as DELs.
  virtual void DeleteKeysInSlot(int slot) = 0;
  // Whole-slot migration's commands (CLUSTER MIGRATESLOTS, GETSLOTMIGRATIONS,
  // CANCELSLOTMIGRATIONS and the internal SYNCSLOTS), which the server runs.
  virtual void SlotMigrationCommand(cmd::Context& c) = 0;
};

// Slots `first` to `last`, both included.
struct SlotRange {
  int first = 0, last = 0;
};
// A new random name of 40 hex characters (a node's, a slot migration's).
std::string RandomName();
// "0-99 200-200", as CLUSTER GETSLOTMIGRATIONS shows ranges.
std::string FormatSlotRanges(std::span<const SlotRange> ranges);

// Where a command goes, decided before it runs (Redis' getNodeByQuery).
struct Route {
  enum Kind {
    kHere,       // run it
    kMoved,      // -MOVED slot endpoint
    kAsk,        // -ASK slot endpoint
    kCrossSlot,  // -CROSSSLOT Keys in request don't hash to the same slot
    kTryAgain,   // -TRYAGAIN Multiple keys request during rehashing of slot
    kDown,       // -CLUSTERDOWN The cluster is down
    kDownRo,     // -CLUSTERDOWN The cluster is down and only accepts read commands
    kUnbound,    // -CLUSTERDOWN Hash slot not served
  } kind = kHere;
  int slot = -1;         // the slot of the keys (-1 when the command has none)
  std::string endpoint;  // "host:port" for kMoved and kAsk
  // The reply to send for anything but kHere ("-MOVED 3999 127.0.0.1:7001", ...).
  std::string ErrorLine() const;
};

// What the dispatcher knows of a command when it asks for its route.
struct Query {
  std::span<const std::string_view> keys;        // every key (and shard channel) it names
  bool write = false;                            // it may write
  bool pubsub_shard = false;                     // SSUBSCRIBE, SPUBLISH, ...: `keys` are channels
  bool migrate = false;                          // MIGRATE: served while the slot moves
  bool asking = false;                           // the client sent ASKING, or RESTORE-ASKING
  bool readonly = false;                         // the client sent READONLY
  bool tls = false;                              // the client's connection is TLS
  std::function<bool(std::string_view)> exists;  // whether a key is here (db 0)
};

class Cluster {
 public:
  struct Node;
  struct Link;

  // Reads the nodes file (cluster-config-file) or, when there is none, creates this node with a
  // new name and writes the file, as Redis' clusterInit does. Checks the ports first.
  static Result<std::unique_ptr<Cluster>> Create(Host& host);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Listens on the bus port and starts the bus thread (no lock held).
  Status Start();
  // Stops the bus thread and closes every link (no lock held).
  void Stop();

  // After the data is loaded at startup: keys of slots this node does not serve are taken
  // (unassigned slots) or marked importing, as Redis' verifyClusterConfigWithData. An error
  // when another database than 0 has keys.
  Status VerifyWithData();

  // After the data is loaded at startup: a replica (by its nodes file) starts replicating its
  // primary at once, as a `replicaof` setting would, so that it neither expires keys nor takes
  // writes meanwhile (the cron would only start it on its next tick).
  void StartReplication();
  Route RouteQuery(const Query& q);
  // A client blocked on keys of `slot` (BLPOP...): kHere while they are served here (or being
  // imported), else the error that unblocks it (Redis' clusterRedirectBlockedClientIfNeeded).
  Route RouteBlocked(std::string_view key, bool readonly, bool write, bool tls);
  // The CLUSTER command (every subcommand), ASKING's and READONLY's checks are the caller's.
  // `tls`: the client's connection is TLS (the ports CLUSTER NODES, SLOTS... give it).
  void Command(cmd::Context& c, bool tls);
  // INFO's cluster section lines after cluster_enabled.
  bool state_ok() const { return state_ok_; }
  const std::string& myid() const;
  bool myself_is_replica() const;
  // Plain PUBLISH reaches every node; SPUBLISH the nodes of this shard (its primary and
  // replicas).
  void Publish(std::string_view channel, std::string_view message, bool shard);
  // DEBUG CLUSTERLINK KILL <to|from|all> <node>: closes the links; "" or Redis' error.
  std::string DebugKillLinks(std::string_view direction, std::string_view node);
  // DEBUG DROP-CLUSTER-PACKET-FILTER: messages of this type are dropped on arrival (-1: none).
  void set_drop_filter(int type) { drop_filter_ = type; }
  // CONFIG SET of cluster-announce-*: this node's own entry follows at once.
  void AnnouncedChanged();
  // Whole-slot migration (server/slot_migration.*): the checks and the slot map's changes.
  // The source: this primary serves every slot of `ranges`, none is migrating or importing,
  // and `target` is another primary, known and not failing, whose client endpoint is returned.
  Status CheckExport(std::span<const SlotRange> ranges, std::string_view target, std::string* ip,
                     int* port);
  // The target: this primary serves none of `ranges`, `source` serves all of them in this
  // node's view, and none is migrating or importing by hand.
  Status CheckImport(std::span<const SlotRange> ranges, std::string_view source);
  // The target, once every key and write is in: the slots are this node's under a new epoch
  // (as SETSLOT NODE on an importing node), saved to disk and told to every node at once.
  void ClaimSlots(std::span<const SlotRange> ranges);
  // The source, once the target has claimed them: the slots are the target's in this node's
  // view too (the target's epoch makes the claim win everywhere), saved to disk.
  void HandOverSlots(std::span<const SlotRange> ranges, std::string_view target);
  // Whether this node serves `slot`.
  bool ServesSlot(int slot) const;
  // The source's hand-over: while on, a claim of these slots that reaches this node by the bus
  // leaves their keys for the migration to delete (after its write pause) instead of deleting
  // them at once.
  void MarkExporting(std::span<const SlotRange> ranges, bool on);
  // The key-by-key fallback (a target that is not kvstore): `slot` migrating to `target`, as
  // CLUSTER SETSLOT MIGRATING sets it (empty `target`: stable again).
  void SetMigrating(int slot, std::string_view target);

  // INFO: the bus connections (both directions) and the memory their buffers hold.
  size_t link_count() const { return links_.size(); }
  size_t links_memory() const;

 private:
  explicit Cluster(Host& host);

  // cluster.cc: the node table and the slot map.
  Node* Lookup(std::string_view name) const;
  Node* CreateNode(std::string name, uint16_t flags);  // a random name when `name` is empty
  void AddNode(std::unique_ptr<Node> n);
  void DelNode(Node* n);
  void RenameNode(Node* n, const std::string& name);
  void AddReplica(Node* primary, Node* replica);
  void RemoveReplica(Node* primary, Node* replica);
  bool AddSlot(Node* n, int slot);
  bool DelSlot(int slot);
  int DelNodeSlots(Node* n);
  void CloseAllSlots();
  void SetNodeAsPrimary(Node* n);
  void SetMyPrimary(Node* n);
  void UpdateSlotsConfigWith(Node* sender, uint64_t config_epoch, const SlotBitmap& slots);
  void HandleConfigEpochCollision(Node* sender);
  bool BumpEpochWithoutConsensus();
  void UpdateState();
  Status LoadConfig(const NodesFile& f);
  NodesFile ToNodesFile() const;
  NodeInfo ToInfo(const Node& n) const;
  // Writes the nodes file; `fsync` makes it durable before it returns (Redis fsyncs only
  // after changes of epochs and of slots learnt from the bus, and failovers).
  void SaveConfigOrDie(bool fsync);
  // Writes one state's text unless a later state (a greater `gen`) is in the file already; file
  // writes of the bus thread and of commands are ordered by file_mu_ (no keyspace lock needed).
  void WriteConfigOrDie(const std::string& text, uint64_t gen, bool fsync);
  void Todo(int flags) { todo_ |= flags; }
  void AfterEvent();  // what Todo asked for: the state, the file
  void AddFailureReport(Node* failing, Node* sender, bool* added);
  bool DelFailureReport(Node* failing, Node* sender);
  int FailureReportsCount(Node* n);
  void MarkFailingIfNeeded(Node* n);
  void ClearFailureIfNeeded(Node* n);
  bool StartHandshake(const std::string& ip, int port, int cport);
  void BlacklistAdd(const std::string& name);
  bool Blacklisted(const std::string& name);
  void AnnouncedPorts(int* port, int* pport, int* cport);
  int ClientPort(const Node& n, bool tls) const;
  std::string Endpoint(const Node& n, bool tls) const;
  int ReplicationPort(const Node& n) const;
  void ResetNode(bool hard);

  // cluster_bus.cc: links and messages.
  struct ListenHandler;
  struct LinkHandler;
  void OnAccept(int listen_fd);
  void PostToLoop(std::function<void()> fn);
  void ConnectLink(Node* n);
  void FreeLink(Link* l);
  void OnLinkEvents(Link* l, uint32_t events);
  void ReadFromLink(Link* l);
  // read(2) and write(2) on a link, through its TLS session where it has one.
  ssize_t LinkRead(Link* l, char* buf, size_t n);
  ssize_t LinkWrite(Link* l, const char* buf, size_t n);
  // Sets what the loop watches the link for by its output and what TLS waits for.
  void WatchLink(Link* l);
  bool ProcessMessage(Link* l, std::string_view bytes);  // false when the link was freed
  void ProcessGossip(const BusMessage& m, Link* l, Node* sender);
  bool UpdateAddressIfNeeded(Node* n, Link* l, const BusHeader& h);
  void Send(Link* l, const std::string& bytes, MsgType type);
  void FlushLink(Link* l);
  void Broadcast(const std::string& bytes, MsgType type);
  BusMessage BuildHeader(MsgType type);
  void SendPing(Link* l, MsgType type);
  void SendFail(const std::string& name);
  void SendUpdate(Link* l, Node* n);
  void SendPublish(Link* l, std::string_view channel, std::string_view message, bool shard);
  void SendFailoverAuthIfNeeded(Node* n, const BusHeader& request);
  void BroadcastPong(bool local_replicas_only);
  void FreeDeadLinks();

  // cluster_cron.cc: the 100 ms tick.
  int64_t CronTick();
  void Cron();
  void HandleReplicaFailover();
  void HandleManualFailover();
  void ResetManualFailover();
  void HandleReplicaMigration(int max_replicas);
  void FailoverReplacePrimary();
  int ReplicaRank();

  Host& host_;
  std::map<std::string, std::unique_ptr<Node>, std::less<>> nodes_;
  Node* myself_ = nullptr;
  std::array<Node*, kClusterSlots> slots_{};
  std::array<Node*, kClusterSlots> migrating_to_{};
  std::array<Node*, kClusterSlots> importing_from_{};
  std::array<bool, kClusterSlots> exporting_{};  // MarkExporting
  uint64_t current_epoch_ = 0;
  uint64_t last_vote_epoch_ = 0;
  bool state_ok_ = false;
  int size_ = 0;  // primaries serving at least one slot
  int todo_ = 0;
  int64_t first_update_ms_ = 0, among_minority_ms_ = 0;
  std::map<std::string, int64_t> blacklist_;  // FORGET's names, until when (s)
  uint64_t sent_[kMsgTypeCount] = {}, received_[kMsgTypeCount] = {};
  uint64_t links_buffer_limit_exceeded_ = 0;
  int pfail_nodes_ = 0;
  int drop_filter_ = -1;
  uint64_t iteration_ = 0;
  std::string config_file_;
  uint64_t config_gen_ = 0;  // states of the nodes file made so far
  std::mutex file_mu_;       // guards written_gen_ and the file's writes
  uint64_t written_gen_ = 0;

  // Failover (as a replica) and manual failover.
  int64_t failover_auth_time_ = 0;
  int failover_auth_count_ = 0;
  bool failover_auth_sent_ = false;
  int failover_auth_rank_ = 0;
  uint64_t failover_auth_epoch_ = 0;
  int cant_failover_reason_ = 0;
  int64_t cant_failover_log_s_ = 0;
  int64_t mf_end_ = 0;  // a manual failover's deadline, 0 when none
  Node* mf_replica_ = nullptr;
  int64_t mf_primary_offset_ = -1;
  bool mf_can_start_ = false;

  // The bus.
  net::EventLoop loop_;
  std::thread thread_;
  std::vector<std::unique_ptr<net::FdHandler>> listeners_;
  std::vector<net::Fd> listen_fds_;
  std::map<Link*, std::unique_ptr<Link>> links_;
  // Links freed (FreeLink) wait here for a task of the bus loop's own, outside every event
  // handler, to unregister and delete them.
  std::vector<std::unique_ptr<Link>> dead_links_;
  std::vector<Link*> unflushed_;  // output queued from another thread than the bus's
  bool flush_posted_ = false, reap_posted_ = false, save_posted_ = false;
  int bus_port_ = 0;
};

}  // namespace kv::cluster
