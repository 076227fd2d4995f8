// The replica side of replication: REPLICAOF host port | NO ONE, and the link to the primary.
//
// A dedicated link thread runs each connection attempt as an explicit sequence of states
// (below) with blocking, time-limited socket IO, so the poll groups never wait on the primary.
// When the primary sends a snapshot (+FULLRESYNC), the thread receives it into a temp file
// (showing progress in the log and INFO), then, under the keyspace lock, replaces the dataset
// with it; with repl-diskless-load swapdb it loads into a second dataset as the bytes arrive
// and swaps it in. Over the RDMA data link the snapshot comes through the link, the same two
// ways (replica_data.cc), and so does the stream after it (replica_stream.cc). The
// socket is then handed to a poll group as the "master client", whose commands are applied
// without replies; the bytes they took are the replication offset, and they are passed on
// verbatim to this server's own replicas (chained replication).
//
// Locking: public methods run with the keyspace lock held; the link thread takes it to change
// state. Progress counters read by INFO are atomics.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "cmd/context.h"
#include "common/status.h"
#include "persist/rdb_loader.h"
#include "persist/sink.h"
#include "repl/host.h"
#include "store/keyspace.h"
#include "transport/channel.h"

namespace kv::repl {

class LinkIo;
class Primary;

// Talks to the server through Host only (server/repl_host.h implements it), and to this server's
// primary side, whose history it sets (a full sync, +CONTINUE, REPLICAOF NO ONE) and through
// which it passes its primary's stream on to its own replicas.
class Replica {
 public:
  // kBlocking: from the socket into a second dataset; kInPlace: a snapshot received to disk,
  // loaded into the live dataset; kAsync: see async_loading().
  enum class Loading { kNone, kBlocking, kInPlace, kAsync };
  // The link's states, as ROLE and INFO report them.
  enum class State {
    kNone,        // not a replica
    kConnect,     // waiting to (re)connect
    kConnecting,  // TCP connect in progress
    kHandshake,   // PING, AUTH, REPLCONF, PSYNC
    kTransfer,    // receiving the snapshot
    kConnected,   // streaming
  };

  Replica(Host& server, Primary& primary);
  ~Replica();
  // Stops the link thread. Call without the keyspace lock (the thread may be waiting for it).
  void Stop();

  bool is_replica() const { return state_ != State::kNone; }
  bool link_up() const { return state_ == State::kConnected; }
  // How long (ms) since the primary last sent anything while the link is up, since the link
  // went down when it is not (a cluster replica's data age). Lock held.
  int64_t data_age_ms(int64_t now_ms) const {
    return now_ms - (link_up() ? last_io_ms_ : link_down_since_ms_);
  }
  // A full sync loading from the socket into a second dataset while clients run: with
  // repl-diskless-load swapdb and the same replication history, clients keep the old dataset
  // (Redis' async loading: only the no-async-loading commands are refused); otherwise (a new
  // primary's data, or on-empty-db) clients get -LOADING, as during Redis' blocking load, and
  // the old dataset stays only in case the load fails. Any thread.
  bool async_loading() const { return loading_ == Loading::kAsync; }
  bool loading() const {
    Loading l = loading_;
    return l == Loading::kBlocking || l == Loading::kInPlace;
  }
  // The load into the live dataset: the keyspace lock is let go now and then (clients get
  // -LOADING, INFO shows loading:1, the cluster bus goes on), and nothing else may change the
  // dataset meanwhile (no cron, no save). Any thread.
  bool loading_in_place() const { return loading_ == Loading::kInPlace; }
  uint64_t master_client_id() const { return master_id_; }
  // The db the primary's stream has selected (where the next unprefixed command applies).
  int stream_db() const;
  void set_stream_db(int db) { master_db_ = db; }

  void ReplicaOf(cmd::Context& c);
  // Starts following host:port (config `replicaof` at startup). Lock held or before start.
  void Follow(const std::string& host, int port);
  // FAILOVER: this primary follows the replica it chose, whose PSYNC carries FAILOVER (the
  // replica becomes a primary on it); `done` hears whether the PSYNC was accepted (+CONTINUE,
  // +FULLRESYNC) or refused, on the link thread with the keyspace lock held. Lock held.
  void FollowForFailover(const std::string& host, int port, std::function<void(bool)> done);
  // Stops following and becomes a primary, as REPLICAOF NO ONE does (without its reply and
  // log line: FAILOVER's abort, and a replica that a PSYNC FAILOVER promotes). Lock held.
  void Unfollow();
  // The master client applied one command of `raw` bytes.
  void OnMasterCommand(std::string_view raw);
  // A client went away (the master client, if it is `id`, whose stream had selected `db`).
  void OnClientClosed(uint64_t id, int db);
  // REPLCONF GETACK from the master.
  void SendAck();
  void Cron(int64_t now_ms);
  void AppendInfo(std::string* out, int64_t now_ms) const;
  void Role(cmd::Context& c) const;
  // DEBUG REPLICATION-BREAK-DATA-LINK.
  // DEBUG REPLICATION-BREAK-DATA-LINK: fails the data link once `after` more bytes arrived.
  void BreakDataLink(uint64_t after = 0) {
    break_at_ = static_cast<int64_t>(data_bytes_.load() + after);
  }

 private:
  struct Target {
    std::string host;
    int port = 0;
    uint64_t generation = 0;
  };
  void ThreadMain();
  // One connection attempt, from TCP connect to the adopted master client.
  Status Attempt(const Target& t);
  // tls-replication: the TLS session on the new connection, its handshake done (link_tls_).
  Status StartTls(int fd);
  Status Handshake(int fd, const Target& t, std::string* reply);
  // Reads the snapshot's header (either framing) after the PSYNC reply's leftover bytes, and
  // starts the INFO master_sync_* progress with its size (-1: an $EOF: transfer).
  Status StartSnapshot(repl::LinkIo& io, int64_t* total, std::string* mark);
  Status ReceiveSnapshot(int fd, const Target& t, std::string* leftover, std::string* path);
  // Keyspace lock held. `fd`: the connection to the primary, for the load's keepalives.
  Status LoadSnapshot(int fd, const std::string& path, const std::string& replid, int64_t offset);
  // Loads a snapshot from `src` into a new dataset with the live one's settings (no lock held;
  // clients keep reading the live one). `from` says where, for progress lines; `fd` is the
  // connection to the primary, for the load's keepalives. *functions gets the snapshot's
  // function libraries.
  Status LoadSide(int fd, persist::Source& src, const char* from,
                  std::unique_ptr<store::Keyspace>* side, uint64_t* keys,
                  std::vector<std::string>* functions);
  // Keyspace lock held: the loaded dataset and function libraries replace the live ones (the
  // old dataset goes to `side`, to be freed outside the lock) and this server takes the
  // primary's history. Corruption, and nothing changed, when a library fails to load.
  Status InstallSide(store::Keyspace& side, const std::vector<std::string>& functions,
                     const std::string& replid, int64_t offset);
  // repl-diskless-load: loads the snapshot straight from the socket into a second dataset and
  // swaps it in, then adopts the master client.
  Status ReceiveAndLoad(int fd, const Target& t, const std::string& replid, int64_t offset);
  class SocketSource;
  class ChannelSource;
  // The RDMA data plane. SetupDataLink negotiates it in the handshake (REPLCONF rdma); false
  // when the primary does not offer it (the link stays on TCP). LoadFromDataLink receives a
  // full resync's snapshot through it; PumpDataLink then feeds the stream to the master client
  // until the link or the connection ends.
  Result<bool> SetupDataLink(repl::LinkIo& io, const Target& t);
  Status LoadFromDataLink(const Target& t, int fd, const std::string& replid, int64_t offset);
  // repl-diskless-load disabled: the snapshot from the data link goes to a file first (walked
  // on the way, to find its end and check it before the dataset is dropped), which is then
  // loaded from its mapping as over TCP.
  Status ReceiveFromDataLink(const Target& t, int fd, const std::string& replid, int64_t offset);
  void PumpDataLink(const Target& t, uint64_t client_id, std::string pending);
  // The two ways PumpDataLink drives the link (see there); both return why the link ended.
  std::string DriveDataLink(const Target& t, uint64_t client_id);
  std::string PumpFromThread(const Target& t, uint64_t client_id);
  // Hands `bytes` to the master client on its loop; `posted` (optional) counts them until then.
  void PostToMaster(uint64_t client_id, std::string bytes,
                    std::shared_ptr<std::atomic<size_t>> posted = nullptr);
  bool UseDataLink() const;
  // Whether repl-diskless-load says to load as the snapshot arrives (else it goes to disk).
  bool DisklessLoad() const;
  static std::string TempSnapshotPath();
  // The options of a sync's load: expired keys stay (the primary decides when keys expire),
  // key-load-delay, and progress once a second: a log line ("<n MB> <done> <from>, <rate>")
  // and a newline to the primary on `fd`, as Redis' replicas send while they load (the
  // primary takes it as a sign of life: a load longer than its repl-timeout does not get the
  // replica cut off; through `tls` on a TLS link). The checksum is checked where
  // `verify_checksum` (Host::VerifyRdbChecksum).
  static persist::RdbLoadOptions SyncLoadOptions(int fd, net::TlsConn* tls, const char* done,
                                                 const char* from, int key_load_delay_us,
                                                 bool verify_checksum);
  // Host::VerifyRdbChecksum, under the keyspace lock (from the sync's threads).
  bool VerifyRdbChecksum();
  // A numeric config parameter, read under the keyspace lock (from the sync's threads).
  int64_t ConfigInt(const char* name);
  // Whether a load from `replid`'s primary is an asynchronous one (repl-diskless-load swapdb
  // within the same history). Takes the keyspace lock.
  bool LoadsAsync(const std::string& replid);
  void DataLinkFailed(const std::string& why);
  // The data link delivered its first bytes: it no longer counts as failing.
  void DataLinkDelivered();
  // `db`: the db the stream continues in (0 after a full sync, whose stream starts with SELECT).
  void AdoptMaster(int fd, std::string leftover, int db);
  void SetState(State s);
  bool Cancelled(const Target& t) const { return generation_.load() != t.generation; }
  void StopFollowing();

  Host& server_;
  Primary& primary_;
  // Guarded by the keyspace lock:
  std::string host_;
  int port_ = 0;
  std::atomic<State> state_{State::kNone};
  std::atomic<Loading> loading_{Loading::kNone};
  // Marks a load for its scope (see loading()); for a load into a second dataset InstallSide
  // ends it under the keyspace lock, as the loaded dataset takes over.
  class LoadingScope {
   public:
    LoadingScope(Replica& r, Loading kind);
    ~LoadingScope();

   private:
    Replica& r_;
    Loading kind_;
  };
  uint64_t master_id_ = 0;
  int master_db_ = 0;  // the stream's selected db when the last master client went away
  int64_t link_down_since_ms_ = 0;
  int64_t last_io_ms_ = 0;
  int64_t last_ack_ms_ = 0;
  std::function<void(bool)> failover_done_;  // FollowForFailover's, until the PSYNC's reply
  // The link thread.
  std::thread thread_;
  std::mutex mu_;  // guards target_, wake_, stop_ (never held with the keyspace lock waited on)
  std::condition_variable cv_;
  Target target_;
  bool wake_ = false, stop_ = false;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> link_fd_{-1};  // shut down to cancel an attempt
  // The link's TLS session (tls-replication; link thread only until AdoptMaster hands it to
  // the master client).
  std::unique_ptr<net::TlsConn> link_tls_;
  std::string link_pending_;      // link thread only: bytes read past the PSYNC reply
  // The data link (link thread only) and its statistics (INFO; atomics or keyspace lock).
  std::unique_ptr<transport::StreamReceiver> data_;
  std::atomic<bool> data_up_{false};
  // True (once) when the DEBUG failure point is reached. Data-link threads.
  bool ShouldBreakDataLink() {
    int64_t at = break_at_.load();
    return at >= 0 && static_cast<int64_t>(data_bytes_.load()) >= at &&
           break_at_.compare_exchange_strong(at, -1);
  }
  std::atomic<int64_t> break_at_{-1};
  std::string data_provider_;   // the provider the data link was set up with (link thread)
  std::string data_poll_mode_;  // and its poll mode
  bool data_doorbell_ = true;   // and repl-rdma-doorbell
  // and the address its listener binds to: the one the control connection leaves from, which
  // is where the primary reaches this replica (on verbs, an RDMA interface's IP)
  std::string data_bind_addr_;
  // The data link's options from the four above. Link thread.
  transport::ChannelOptions DataLinkOptionsHere() const;
  std::atomic<uint64_t> data_bytes_{0};
  std::string data_describe_;                                         // keyspace lock
  int data_failures_ = 0;                                             // consecutive; keyspace lock
  uint64_t data_errors_ = 0, data_resumes_ = 0, data_fallbacks_ = 0;  // keyspace lock
  bool fell_back_ = false;  // this primary keeps failing over RDMA: TCP only; keyspace lock
  std::atomic<uint64_t> master_epoch_{0};  // bumped when the master client goes away
  // Snapshot transfer progress (INFO master_sync_*).
  std::atomic<int64_t> sync_total_{-1}, sync_read_{0}, sync_last_io_ms_{0};
};

}  // namespace kv::repl
