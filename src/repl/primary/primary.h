// The primary side of replication: replicas attach with REPLCONF and PSYNC (Redis 7.0's
// protocol, so a `redis-server` replica follows a kvstore primary), get a full resync (the
// snapshot streamed by a forked child straight to their sockets, "diskless", in the $EOF: framing)
// or a partial one from the backlog (+CONTINUE), then the live stream of writes.
//
// Replica states: kWaitSnapshot (waiting for repl-diskless-sync-delay or for another child to
// end), kSendingSnapshot (a child writes the RDB to the socket; stream bytes are held back), and
// kOnline (stream bytes go out as they are produced; after a diskless snapshot on the socket,
// only from the replica's first REPLCONF ACK on, so that the RDB's end mark ends what it reads).
//
// Thread safety: everything runs with the keyspace lock held.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/context.h"
#include "repl/datalink/data_link.h"
#include "repl/feed.h"
#include "repl/host.h"

namespace kv::repl {

// A new replication ID (40 hex digits), or a diskless transfer's $EOF: mark.
std::string RandomHex40();

// Full and partial resyncs served (INFO stats sync_full, sync_partial_ok, sync_partial_err;
// CONFIG RESETSTAT zeroes them).
struct SyncStats {
  uint64_t full = 0, partial_ok = 0, partial_err = 0;
};

class Primary {
 public:
  explicit Primary(Host& host);
  ~Primary();

  Feed& feed() { return feed_; }
  const std::string& replid() const { return replid_; }
  bool child_running() const { return child_pid_ > 0; }
  SyncStats& sync_stats() { return sync_stats_; }

  // History changes. SetHistory: a replica adopts its primary's replid and offset after a full
  // sync (new backlog there). ContinueWith: the primary continues under a new replid (+CONTINUE
  // <id>); the old one stays valid up to here. Promote: REPLICAOF NO ONE keeps the old history
  // as replid2 so the other replicas can resync partially.
  void SetHistory(const std::string& replid, int64_t offset);
  void ContinueWith(const std::string& replid);
  void Promote();
  // DEBUG CHANGE-REPL-ID: a new random replid and no replid2 (Redis' changeReplicationId and
  // clearReplicationId2); the backlog stays.
  void ChangeReplId();
  // A replica passes its primary's stream on verbatim (chained replication).
  void ProxyStream(std::string_view raw);
  void DisconnectReplicas();
  // CONFIG SET repl-backlog-size.
  void ResizeBacklog(size_t bytes);
  // DEBUG REPLICATION-BREAK-DATA-LINK: fails every data link once `after` more bytes are sent
  // (the replicas resume: the snapshot from the byte reached, the stream with PSYNC).
  void BreakDataLinks(uint64_t after = 0);
  // DEBUG REPLICATION-FAIL-SNAPSHOT: the next diskless snapshot child fails once it has written
  // `after` bytes to a replica, as a child that crashed mid-transfer would.
  void FailNextSnapshot(uint64_t after) { fail_snapshot_after_ = static_cast<int64_t>(after); }
  void Role(cmd::Context& c) const;
  // A client's batch of commands (keyspace lock): from HoldDataLinkBytes on, stream bytes for
  // data links are gathered and handed to each link once per flush, one chunk per batch instead
  // of one per command (sockets coalesce on their own: a replica client drains what was pushed
  // in one go). ReleaseDataLinkBytes flushes, stops gathering and hands the caller the links
  // that got bytes, which KickDataLinks writes once the lock is released (primary_links.cc).
  using DataLinks = std::vector<std::shared_ptr<DataLinkSender>>;
  void HoldDataLinkBytes();
  void FlushDataLinkBytes();
  void ReleaseDataLinkBytes(DataLinks* kicks);
  static void KickDataLinks(DataLinks* links);

  // The replication commands, run by `client`.
  void Replconf(cmd::Context& c, ClientConn& client);
  // An empty line from a replica: it is alive (a replica sends one a second while it loads a
  // snapshot, and has no ACK to send until it is loaded). Counts as its ACK for repl-timeout,
  // as in Redis.
  void ReplicaNewline(ClientConn& client);
  // WAIT numreplicas timeout.
  void Wait(cmd::Context& c, ClientConn& client);
  // CLIENT UNBLOCK of a client blocked in WAIT: forgets its wait and returns how many replicas
  // acknowledged its offset (its timeout's answer); nullopt if it was not waiting.
  std::optional<int64_t> CancelWait(ClientConn* client);
  // min-replicas-to-write: false when too few replicas are connected with a small enough lag.
  bool EnoughGoodReplicas(int64_t now_ms) const;
  int64_t GoodReplicas(int64_t now_ms) const;
  // PSYNC replid offset, and SYNC.
  void Psync(cmd::Context& c, ClientConn& client);
  // Periodic work: starts waiting full syncs, reaps the snapshot child, pings replicas.
  void Cron(int64_t now_ms);
  // Reaps the snapshot child if it has ended (its replicas go online, a disk-based sync's data
  // link sends the file) and starts the syncs that waited for it. Called when the child exits
  // (Host::WatchSnapshotChild), and from Cron and PSYNC in case that has not been handled yet.
  void OnChildExit(int64_t now_ms);
  void OnClientClosed(ClientConn* c);
  // Whether `c` is a replica whose snapshot and stream go over an RDMA data link.
  bool HasDataLink(ClientConn* c) {
    AttachedReplica* r = Find(c);
    return r && r->data;
  }
  // The memory of the shared replication buffer and of the replicas' output (INFO memory's
  // mem_total_replication_buffers, mem_replication_backlog, mem_clients_slaves), split as
  // Redis 7.0 splits it: the backlog is the configured size, the replicas the rest.
  struct Memory {
    size_t total_buffers = 0, backlog = 0, replicas = 0;
  };
  Memory ReplicationMemory() const;
  // Memory maxmemory leaves out, as Redis' freeMemoryGetNotCountedMemory: the shared buffer's
  // part past what a backlog of repl-backlog-size takes (with replicas attached or not), and
  // the replicas' other output.
  size_t OutputBytes() const;
  // INFO replication; `role` adds the role line (a replica writes its own first).
  void AppendInfo(std::string* out, int64_t now_ms, bool role) const;
  // INFO's master_failover_state (FAILOVER's state, which the server keeps).
  void set_failover_state(const char* name) { failover_state_ = name; }

  // The attached replicas, as FAILOVER and a shutdown that waits for them see them.
  struct ReplicaStatus {
    std::string ip;  // REPLCONF ip-address, else the connection's
    int port = 0;    // REPLCONF listening-port
    bool online = false;
    int64_t ack_offset = 0;
    int64_t ack_ms = 0;
    const char* state = "";  // as INFO names it
  };
  std::vector<ReplicaStatus> ReplicaStatuses() const;
  // REPLCONF GETACK * to every replica, through the stream (so it moves the offset). WAIT asks
  // for one with RequestAcks: one GETACK goes at the end of the batch (SendRequestedAcks), for
  // all the WAITs of the batch, and not while writes are paused (a FAILOVER or a shutdown waits
  // for the offsets to stay put), as Redis sends it from beforeSleep. SendGetack sends now.
  void RequestAcks() { acks_requested_ = true; }
  bool acks_requested() const { return acks_requested_; }
  void SendRequestedAcks(bool writes_paused);
  void SendGetack();

 private:
  enum class State { kWaitSnapshot, kSendingSnapshot, kOnline };
  // What a replica asked the snapshot to hold (Redis' REPLCONF rdb-only and rdb-filter-only,
  // as redis-cli --rdb and --functions-rdb send them): replicas that differ get separate
  // snapshots, and one that wants the snapshot alone is disconnected once it is sent.
  struct SnapshotFilter {
    bool rdb_only = false;
    bool keys = true;
    bool functions = true;
    bool operator==(const SnapshotFilter&) const = default;
  };
  struct AttachedReplica {
    ClientConn* client;
    State state;
    int64_t since_ms;  // when it asked for a full sync
    // Its place in the shared buffer while its stream waits (for its snapshot, or for its
    // first ACK): it keeps the stream from the snapshot's offset on (Backlog::Cursor).
    Backlog::Cursor pin;
    // Online after a diskless snapshot on its socket, its stream waits for its first ACK: the
    // RDB's end mark must be the last thing the replica reads (Redis'
    // repl_start_cmd_stream_on_ack).
    bool stream_on_ack = false;
    bool acked = false;  // sent an ACK (so it has read its snapshot's end)
    // A disk-based sync over a data link: the child saved the file, which the link is
    // sending; the replica goes online once it is delivered (Redis keeps a replica that gets
    // its file in send_bulk, out of repl-timeout's reach and of WAIT's and
    // min-replicas-to-write's count).
    bool file_on_link = false;
    bool over_limit = false;  // its output passed client-output-buffer-limit replica: closing
    int64_t over_soft_since_ms = 0;
    int64_t ack_offset = 0;
    int64_t ack_ms = 0;
    int listening_port = 0;
    std::string ip;
    bool capa_eof = false;   // understands the $EOF: framing (diskless transfers)
    bool pre_psync = false;  // came with SYNC: gets the payload without a +FULLRESYNC line
    SnapshotFilter filter;   // REPLCONF rdb-only / rdb-filter-only
    std::shared_ptr<DataLinkSender> data;  // the RDMA data plane, when negotiated
    std::string data_batch;  // stream bytes for `data` gathered while held (HoldDataLinkBytes)
  };
  // What a replica said with REPLCONF before PSYNC made it one.
  struct Announced {
    int port = 0;
    std::string ip;  // REPLCONF ip-address (replica-announce-ip); empty: the connection's
    bool capa_eof = false;
    SnapshotFilter filter;
    std::shared_ptr<DataLinkSender> data;
  };
  // What the snapshot child did for each replica of its batch, in memory it shares with the
  // primary: one replica's failed transfer (it went away, say) does not fail the others'.
  // Byte 0: the snapshot was made (a disk-based sync's file saved); then one byte per target
  // (the data links' rings in order, then the sockets): 1 sent whole, 2 failed, 0 unknown.
  class ChildReport {
   public:
    // nullptr when shared memory is not to be had (then the exit status decides for all).
    static std::unique_ptr<ChildReport> Create(std::vector<uint64_t> targets);
    ~ChildReport();
    uint8_t* bytes() const { return bytes_; }
    // Whether the child says it delivered the snapshot to client `id`. A replica with no
    // target of its own gets it if `gets_file` (a data link of a disk-based sync: the saved
    // file, once made); any other was never served (its setup failed).
    bool Delivered(uint64_t id, bool gets_file) const;

   private:
    ChildReport(std::vector<uint64_t> targets, uint8_t* bytes, size_t size)
        : targets_(std::move(targets)), bytes_(bytes), size_(size) {}
    std::vector<uint64_t> targets_;  // client ids
    uint8_t* bytes_;
    size_t size_;
  };
  // A client blocked in WAIT.
  struct Waiter {
    ClientConn* client;
    int64_t offset;       // the stream offset its writes reached
    int64_t replicas;     // how many must acknowledge it
    int64_t deadline_ms;  // 0: none
  };

  AttachedReplica* Find(ClientConn* c);
  // The replicas' output besides the shared buffer: their own buffers, gathered and queued
  // data-link bytes.
  size_t OwnOutput() const;
  // A data-link replica's copies of the stream: gathered, and queued on the link.
  size_t DataLinkBuffers(const AttachedReplica& r) const;
  AttachedReplica* Register(ClientConn& c);
  void OnStream(std::string_view bytes);
  void ShiftReplid(const std::string& next);
  void StartSnapshot(int64_t now_ms);
  // Reaps the snapshot child if it has exited, and finishes its syncs (SnapshotDone).
  void ReapChildIfDone();
  // A disk-based snapshot child that no replica waits for any more is killed (no save points).
  void KillSnapshotIfUseless();
  // The snapshot child: diskless (the RDB streamed to the sockets `fds`, and written into the
  // data links' `rings`) or disk-based (the RDB saved to dbfilename, then sent from the file).
  void RunChild(const std::vector<int>& fds, const std::vector<SnapshotRing*>& rings,
                int64_t offset, bool disk, uint8_t* report);
  int64_t CountAcked(int64_t offset) const;
  void ServeWaiters(int64_t now_ms);
  void SnapshotDone(bool ok);
  // A replica whose snapshot is delivered: it counts for WAIT, min-replicas-to-write and
  // repl-timeout from now on.
  void PutOnline(AttachedReplica& r);
  // The replica's state in INFO.
  const char* StateName(const AttachedReplica& r) const;
  // Sends what was held for `r` and streams to it from now on.
  void StartStream(AttachedReplica& r);
  // Tells the backlog from which offset on the replicas still need the stream (their places
  // in the shared buffer): older blocks may go. A replica being closed needs none.
  void UpdateNeededFrom();
  // The stream bytes `r` has yet to be sent: from its place in the shared buffer (or queued
  // on its data link) to the end.
  size_t Unsent(const AttachedReplica& r) const;
  // client-output-buffer-limit replica on `pending` bytes kept or queued for `r` and not yet
  // sent: past the limit the replica is closed (it resyncs), as Redis closes a replica whose
  // output buffer grows so, during its sync or after. True when it is closing.
  bool OverOutputLimit(AttachedReplica& r, size_t pending);
  bool TryPartial(cmd::Context& c, ClientConn& client, std::string_view replid, int64_t offset);
  // REPLCONF rdma <provider> <hex blob>: sets up the data link's sender; answers +RDMA <blob>.
  void ResumeDataLink(cmd::Context& c, ClientConn& client, std::string_view hex_blob);
  void SetupDataLink(cmd::Context& c, ClientConn& client, std::string_view provider,
                     std::string_view hex_blob);
  // Breaks a data link and lets this reference go; a kick still holding one finds it broken.
  // The link itself is destroyed off-thread once its last reference goes (SetupDataLink).
  static void DropDataLink(std::shared_ptr<DataLinkSender> link);
  // Sends stream bytes to a replica's data link (a copy: the link writes from its own
  // registered memory).
  void SendTo(AttachedReplica& r, std::string_view bytes);

  Host& host_;
  Feed feed_;
  std::string replid_, replid2_;
  int64_t second_offset_ = -1;
  std::vector<std::unique_ptr<AttachedReplica>> replicas_;
  std::map<uint64_t, Announced> announced_;  // by client id
  std::vector<Waiter> waiters_;
  pid_t child_pid_ = -1;
  SnapshotFilter child_filter_;  // what the running snapshot holds (its batch's filter)
  std::string child_file_;  // the snapshot file of a disk-based sync (absolute path), else empty
  // rdb-del-sync-files: the file a disk-based sync saved, to delete once no replica needs it
  // when the server has no persistence (Redis' RDBGeneratedByReplication); empty when none.
  std::string sync_file_to_delete_;
  void RemoveSyncFileIfUnused();
  std::unique_ptr<ChildReport> child_report_;  // of the running snapshot child
  int64_t last_ping_ms_ = 0;
  int64_t last_keepalive_ms_ = 0;  // newlines to replicas waiting for their snapshot
  bool hold_data_links_ = false;
  DataLinks to_kick_;  // links given bytes by FlushDataLinkBytes, for ReleaseDataLinkBytes
  int64_t fail_snapshot_after_ = -1;  // FailNextSnapshot; the child inherits it, then it resets
  bool acks_requested_ = false;       // RequestAcks, until SendRequestedAcks sends the GETACK
  int64_t no_replicas_since_ms_ = 0;  // for repl-backlog-ttl; 0 while replicas are attached
  SyncStats sync_stats_;
  const char* failover_state_ = "no-failover";
};

}  // namespace kv::repl
