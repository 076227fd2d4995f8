// One client connection: reads and parses requests, runs them through the dispatcher with the
// keyspace lock held (run-to-completion, in order), and writes replies.
//
// Threading: a Client belongs to one poll group and is driven only by that group's loop thread,
// except the methods marked otherwise. Fields that commands on other threads read (CLIENT LIST)
// are either changed only under the keyspace lock or atomic.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "acl/user.h"
#include "cmd/context.h"
#include "net/event_loop.h"
#include "net/socket.h"
#include "net/tls.h"
#include "repl/host.h"
#include "resp/parser.h"
#include "server/client_eviction.h"
#include "server/io_buffer.h"
#include "server/tracking.h"

namespace kv::repl {
class DataLinkSender;
}  // namespace kv::repl

namespace kv::server {

class Server;
class PollGroup;

// The primary side of replication sees a client as a repl::ClientConn (a replica, or the client
// whose REPLCONF, PSYNC or WAIT runs).
class Client final : public net::FdHandler, public repl::ClientConn {
 public:
  // Client flags shown by CLIENT LIST ("flags=").
  enum Flag : uint32_t {
    kMonitor = 1u << 0,
    kPubSub = 1u << 1,
    kMulti = 1u << 2,
    kMaster = 1u << 3,
    kReplica = 1u << 4,
    // A whole-slot migration's writer on the target (slot_import.cc): no connection, never
    // held by a pause (its thread applies the source's stream in order, as it arrives).
    kSlotImport = 1u << 5,
  };

  Client(Server& server, PollGroup& group, net::Fd fd, uint64_t id);
  ~Client() override;

  // Registers with the loop and the server. Loop thread.
  void Start();
  void OnEvents(uint32_t events) override;
  // Initializes this thread's per-round state (a poll group's thread, as it starts).
  static void InitThreadState();
  // Closes the connection now and hands the object to the poll group for deletion.
  void Close(const std::string& reason);

  // Queues bytes produced by another client's command (MONITOR lines, pub/sub messages).
  // Any thread, keyspace lock held. With a nonzero `hard_limit`, a client whose unsent output
  // would pass it is closed instead (client-output-buffer-limit), and so is one that stays over
  // `soft_limit` for `soft_seconds`; returns false then.
  bool Push(std::string_view data, size_t hard_limit = 0, size_t soft_limit = 0,
            int64_t soft_seconds = 0);
  // The replication stream to a replica, written from the shared buffer (repl::ClientConn).
  void StartStream(repl::Backlog::Cursor from) override;
  void StreamMore() override;
  int64_t stream_sent() const override { return stream_sent_.load(std::memory_order_relaxed); }
  // Asks the owning loop to close this client (CLIENT KILL). Any thread, keyspace lock held.
  void RequestClose() override;
  bool closing() const override { return close_requested_.load(std::memory_order_relaxed); }
  // CLIENT KILL: the connection ends at once, as Redis frees a killed client at once; the peer
  // sees it even while this server is still busy (with the rest of a MULTI, a DEBUG SLEEP).
  // The socket is shut down here and closed by the owning loop. Keyspace lock held (so the
  // client is registered and its loop has not closed the socket yet).
  void Kill();
  // Logs that this client is closed for its output buffer limit (Redis' line).
  void LogOverLimit() const override;

  // A connection accepted on tls-port: everything read and written goes through `tls`, after
  // its handshake (client_tls.cc). `reject`, when not empty, is written once the handshake is
  // done and the connection closed (protected mode's -DENIED). Loop thread, before Start.
  void SetTls(std::unique_ptr<net::TlsConn> tls, std::string reject);
  bool tls() const override { return tls_ != nullptr; }
  void Send(std::string_view bytes) override { Push(bytes); }
  // A snapshot relayed from a pipe (client_tls.cc).
  void RelayFrom(net::Fd fd) override;
  // The pipe is readable: what it holds joins the output, up to a high-water mark. Loop thread.
  void RelayRead();
  // Whether the TLS handshake has gone on for over `timeout_ms` (the cron closes such a
  // client). Any thread.
  bool TlsHandshakeOverdue(int64_t now_ms, int64_t timeout_ms) const {
    return tls_handshaking_.load(std::memory_order_relaxed) && now_ms - created_ms_ > timeout_ms;
  }

  // CLIENT LIST / CLIENT INFO line, without the trailing newline. Keyspace lock held.
  std::string Describe(int64_t now_ms) const;

  uint64_t id() const override { return session_.id; }
  cmd::Session& session() { return session_; }
  // The ACL user the client runs its commands as (AUTH, HELLO AUTH; the default user until
  // then); session().user is its name. Keyspace lock held.
  const std::shared_ptr<acl::User>& acl_user() const { return acl_user_; }
  void set_acl_user(std::shared_ptr<acl::User> u) { acl_user_ = std::move(u); }
  int session_db() const { return session_.db; }
  const std::string& peer() const override { return peer_; }
  // A local connection as Redis' islocalClient sees one: from 127.0.0.1 or ::1 (what
  // enable-debug-command local and its siblings allow).
  // Loopback or the Unix socket: what enable-debug-command local and the like allow.
  bool is_local() const {
    return unix_socket_ || peer_.rfind("127.0.0.1:", 0) == 0 || peer_.rfind("::1:", 0) == 0;
  }
  bool unix_socket() const { return unix_socket_; }
  // The socket, for the replication snapshot child and +FULLRESYNC (written directly).
  int fd() const override { return fd_.get(); }
  const std::string& local() const { return local_; }
  uint32_t flags() const { return flags_; }
  void set_flag(Flag f, bool on) { flags_ = on ? flags_ | f : flags_ & ~f; }
  bool is_master() const override { return flags_ & kMaster; }
  bool is_monitor() const override { return flags_ & kMonitor; }
  bool in_multi() const override { return flags_ & kMulti; }
  void MarkReplica() override { set_flag(kReplica, true); }
  PollGroup& group() { return group_; }
  // Replies not yet written to the socket, or pushed by other threads and not yet taken.
  // Loop thread.
  bool HasPendingOutput() override {
    if (out_sent_ < out_.size()) return true;
    std::lock_guard lock(push_mu_);
    return !pushed_.empty();
  }
  // The full name of the last command ("client|list"), for CLIENT LIST cmd=.
  void set_last_command(const std::string* name) { last_cmd_ = name; }
  int64_t last_interaction_ms() const { return last_interaction_ms_.load(std::memory_order_relaxed); }
  size_t output_pending() const override { return out_pending_.load(std::memory_order_relaxed); }
  // The reply buffer commands append to. Loop thread, during dispatch.
  std::string& out() { return out_; }

  // MULTI/EXEC/WATCH state. Keyspace lock held.
  struct WatchedKey {
    int db;
    std::string key;
    bool expired_when_watched;  // a key already expired at WATCH does not abort EXEC later
  };
  struct Transaction {
    bool active = false;  // between MULTI and EXEC/DISCARD
    bool abort = false;   // a command was refused while queuing: EXEC answers EXECABORT
    bool dirty = false;   // a watched key changed: EXEC answers null
    std::vector<std::vector<std::string>> queued;
    size_t executing = 0;  // while EXEC runs them: how many (CLIENT LIST's multi=)
    // Summed as commands are queued (Redis' mstate.cmd_flags), for judging EXEC: the write,
    // deny-oom and no-async-loading flags any of them has, and the stale and loading flags
    // one of them lacks.
    uint32_t flags_any = 0, flags_lacking = 0;
    std::vector<WatchedKey> watched;
  };
  Transaction& tx() { return tx_; }

  // Blocking commands (BLPOP...). Keyspace lock held, except blocked(), which the client's loop
  // reads between requests.
  struct Blocked {
    uint64_t generation = 0;  // identifies one blocking episode (for its timeout timer)
    int db = 0;
    std::vector<std::string> argv;  // the command, run again when a key is ready
    std::vector<std::string> keys;
    std::vector<std::vector<std::string>> key_argv;  // per key, when that key wakes it
    bool unblock_on_delete = false;                  // see cmd::BlockRequest
    store::ObjType type = store::ObjType::kList;  // what a ready key must hold to wake it
    int64_t first_run_us = 0;  // the blocking run's duration, for the stats at its end
  };
  Blocked& block_state() { return block_; }
  bool blocked() const { return blocked_.load(std::memory_order_acquire); }
  void set_blocked(bool b) { blocked_.store(b, std::memory_order_release); }
  // Held by CLIENT PAUSE (pause.cc): the request that was held stays unread in the input and
  // runs when the server releases the client; nothing after it runs before. The flags are
  // changed under the keyspace lock; the client's loop reads paused() between requests.
  bool paused() const { return paused_.load(std::memory_order_acquire); }
  void set_paused(bool p) { paused_.store(p, std::memory_order_release); }
  // Released from the pause and not yet through the input it held: the next held client's
  // turn comes when this one is done (Server::ResumedClientDone).
  bool resuming() const { return resuming_.load(std::memory_order_acquire); }
  void set_resuming(bool r) { resuming_.store(r, std::memory_order_release); }
  // Continues with input that waited while the client was blocked. Loop thread.
  void ResumeInput();
  // ResumeInput again in a while: a client released from CLIENT PAUSE, or a replica's or the
  // primary's stream, whose input came while a busy script holds the lock, runs what it holds
  // once the script is over. Loop thread.
  void RetryAfterScript();
  // While a script of this poll group is busy: reads what arrived and answers it (-BUSY, or
  // SCRIPT KILL's reply) without the keyspace lock. True when the peer has closed the
  // connection: the caller closes the client, after its walk over the group. Loop thread.
  bool ServeWhileBusy();
  // The replication offset this client's last write reached (WAIT). Keyspace lock held.
  int64_t write_offset() const override { return woff_; }
  void set_write_offset(int64_t o) { woff_ = o; }
  // Answers this client's blocked WAIT. Keyspace lock held.
  void AnswerWait(int64_t replicas) override;
  // The AOF offset this client's replies wait for (aof.h). Any thread.
  void set_aof_offset(uint64_t o) { aof_offset_.store(o, std::memory_order_relaxed); }
  // Input that arrived before the client existed (the replication stream read past the
  // snapshot). Before Start, loop thread.
  void InjectInput(std::string_view data);
  // The master client's bytes read from its primary and not applied yet (INFO's
  // slave_read_repl_offset counts them: CLIENT PAUSE WRITE holds them unapplied). Any thread.
  size_t master_pending_input() const { return master_pending_.load(std::memory_order_relaxed); }

  // CLIENT REPLY, as Redis' CLIENT_REPLY_OFF / SKIP / SKIP_NEXT flags. Replies are written to
  // out() as usual; at each checkpoint (the end of a command, and CLIENT REPLY ON or OFF before
  // it changes the mode) what was written since the last one is dropped if the client was
  // silenced meanwhile, except push frames (pub/sub confirmations and messages), which Redis
  // sends whatever the mode. The primary's link gets nothing at all. Keyspace lock held; all
  // but replies_silenced() and EndReplyCommand() (a blocked client's reply) on the loop thread.
  bool replies_silenced() const;
  void StartReplies() {
    reply_mark_ = out_.size();
    push_spans_.clear();
  }
  void CheckpointReplies();
  // Appends a push frame to the running command's replies; it survives the silencing.
  void AppendPush(std::string_view frame);
  // CLIENT REPLY SKIP: the command after this one is not answered.
  void SkipNextReply() { reply_skip_next_ = true; }
  // CLIENT REPLY ON: answers again, this command included.
  void ClearReplySkip() { reply_skip_ = false; }
  // The end of a command (or of its blocking): SKIP moves on to the next command.
  void EndReplyCommand() {
    reply_skip_ = reply_skip_next_;
    reply_skip_next_ = false;
  }
  // Between StartReplies and the end of the command (Server::Execute).
  bool in_execute() const { return in_execute_; }
  void set_in_execute(bool on) { in_execute_ = on; }

  // Pub/sub subscriptions. Keyspace lock held. Shard channels (SSUBSCRIBE) are a namespace of
  // their own; any subscription puts a RESP2 client in subscribed context, but SUBSCRIBE's
  // confirmations count channels and patterns only (Redis' clientSubscriptionsCount) and
  // SSUBSCRIBE's shard channels only.
  std::set<std::string>& channels() { return channels_; }
  std::set<std::string>& patterns() { return patterns_; }
  std::set<std::string>& shard_channels() { return shard_channels_; }
  size_t channel_and_pattern_count() const { return channels_.size() + patterns_.size(); }
  size_t subscriptions() const { return channel_and_pattern_count() + shard_channels_.size(); }

  // Client-side caching (tracking.h). Keyspace lock held.
  ClientTracking& tracking() { return tracking_; }
  const ClientTracking& tracking() const { return tracking_; }

  // Client eviction (client_eviction.h; defined in client_eviction.cc). Whether the client
  // counts toward maxmemory-clients (not the primary's link, not a replica), and may be
  // evicted (not NO-EVICT either): its own thread, or keyspace lock held.
  bool EvictionCounted() const;
  bool EvictionAllowed() const;
  ClientMemSlot& mem_slot() { return mem_slot_; }
  // CLIENT LIST's tot-mem and the figure eviction compares. Keyspace lock held.
  size_t MemoryUsage() const;
  // The cron's upkeep of the buffers (client_buffers.cc), as Redis' clientsCron: the query
  // buffer is given back when idle or far bigger than the latest peak of its use, and the reply
  // buffer kept between replies shrinks to what the last replies took or doubles (up to 16 KiB)
  // when they filled it. Loop thread.
  void CronBuffers(int64_t now_ms);
  // Whether the unsent output has passed the client's output limit (hard, or soft for long
  // enough), for the cron: as Redis' clientsCron, a client over its soft limit is closed once
  // the time is up even if no more output comes. Loop thread; the caller closes it.
  bool CronOverOutputLimit();
  size_t MultiMemory() const;

 private:
  // Whether unsent replies pass client-output-buffer-limit normal (client.cc).
  bool OverNormalOutputLimit();
  void HandleReadable();
  void ProcessInput();
  // Writes the data links this thread gave stream bytes (round_kicks): now for the event loop
  // round's first batch (or off the loop thread), at the end of the round for its later ones.
  void KickDataLinksAfterRound();
  struct RoundKicks {
    std::vector<std::shared_ptr<repl::DataLinkSender>> links;
    bool posted = false;  // this round kicked once and posted its end-of-round kick
  };
  static thread_local RoundKicks round_kicks;
  // The AOF's work at the end of this thread's event-loop round: writing what the round's
  // commands appended, and (appendfsync always) the fsync the waiting clients' replies need.
  struct RoundAof {
    std::vector<uint64_t> waiting;  // client ids whose replies wait for the fsync
    bool posted = false;
  };
  static thread_local RoundAof round_aof;
  void PostAofRoundEnd();
  // Replies written at the end of this thread's event-loop round (DeferFlush).
  struct RoundFlush {
    std::vector<uint64_t> waiting;  // client ids with replies to write
    bool posted = false;
  };
  static thread_local RoundFlush round_flush;
  // True when this client's replies wait for the round's end instead of going out now.
  bool DeferFlush();
  size_t ParseBatch(resp::ParserLimits& limits, bool* protocol_error);
  bool IsDataLinkResume(std::span<const std::string_view> args);
  void DropReplicaThatGotAReply(std::span<const std::string_view> args, size_t reply_at);
  // Writes what it can; arms EPOLLOUT when the socket is full. Returns false if closed.
  bool Flush();
  void UpdateInterest();
  void DrainPushed();
  // Moves what was pushed so far into the output, before new input is processed.
  void TakePushed();
  // Posts DrainPushed to the loop unless it is posted already. push_mu_ held.
  void SchedulePushedLocked();
  // Writes the replication stream from stream_ once the replies before it are out. Returns
  // false if closed.
  bool FlushStream();
  // The stream waits for a relayed snapshot to end.
  bool StreamPending() { return stream_.valid() && !relay_.valid() && !stream_.Readable().empty(); }
  void RequestCloseLocked();  // push_mu_ held
  // Client eviction (client_eviction.cc). NoteMemory: reports this client's figure after its
  // IO, and has the eviction run when the total passed the limit. CheckMemoryLocked: the same
  // before a batch of commands, evicting at once; true when this client was evicted.
  // CheckMemoryAfterCommand: the same after each command, as Redis updates a client's figure
  // after each (its reply counts, an argument's room it no longer needs does not). Loop thread
  // (the Check* with the keyspace lock held).
  void NoteMemory();
  bool CheckMemoryLocked();
  bool CheckMemoryAfterCommand();
  void ReleaseIdleInput();
  size_t StateMemory() const;
  size_t OwnMemory() const;

  Server& server_;
  PollGroup& group_;
  net::Fd fd_;
  std::string peer_, local_;
  bool unix_socket_ = false;
  int64_t created_ms_;
  std::atomic<int64_t> last_interaction_ms_;

  // A request parsed ahead: its arguments are batch_args_[first_arg, first_arg + argc).
  struct Pending {
    size_t first_arg, argc, size;
  };
  static constexpr size_t kBatch = 32;
  // Argument lists longer than this are given back once their request ran, as Redis frees a
  // command's argv: a SADD of 100,000 members must not keep megabytes per client.
  static constexpr size_t kKeepArgs = 1024;

  IoBuffer in_;
  resp::RequestParser parser_;
  std::vector<Pending> batch_;
  std::vector<std::string_view> batch_args_;  // slices of in_
  std::vector<std::string_view> prefetch_keys_;
  std::string out_;        // replies not yet written
  size_t out_sent_ = 0;    // bytes of out_ already written
  std::atomic<size_t> in_pending_{0}, in_cap_{0}, out_pending_{0}, out_cap_{0};  // CLIENT LIST
  // The buffers' sizing (client_buffers.cc; loop thread). in_peak_: the most input held since
  // the last cron. The reply buffer: out_ keeps rb_size_ bytes between replies; rb_peak_ is the
  // most of it the replies used since the peak was last reset (CLIENT LIST's rbs and rbp).
  static constexpr size_t kReplyChunk = 16 * 1024;  // Redis' PROTO_REPLY_CHUNK_BYTES
  static constexpr size_t kReadChunk =
      16 * 1024;  // a read's room, unless a big argument wants more
  size_t in_peak_ = 0;
  size_t rb_size_ = kReplyChunk, rb_peak_ = kReplyChunk;
  int64_t rb_peak_reset_ms_ = 0;
  std::atomic<size_t> rbs_{kReplyChunk}, rbp_{kReplyChunk};  // for CLIENT LIST
  // Reads what the socket holds (in_), as one read, or more while a big argument's bytes keep
  // filling the room. kFilled: the last read filled its room (more may wait). Loop thread.
  enum class ReadResult { kClosed, kNothing, kDrained, kFilled };
  ReadResult ReadInput();
  // The socket's read(2) and write(2), through TLS on a TLS connection (client_tls.cc).
  ssize_t SockRead(void* buf, size_t n);
  ssize_t SockWrite(const void* buf, size_t n);
  // Advances a TLS handshake on an event; true once the connection is ready for commands (at
  // once without TLS). On failure the client is closed and the error logged. Loop thread.
  bool TlsReady();
  // What the TLS connection waits for besides the replies: the socket writable while a read
  // needs it (a handshake or a renegotiation under way).
  // The relay (client_tls.cc): polls the pipe while little output waits; stops at its end.
  // Loop thread.
  void UpdateRelay();
  void StopRelay();
  bool TlsWantsWrite() const {
    return tls_ && (tls_handshake_wants_write_ || tls_->read_wants_write());
  }
  // Notes what the replies in out_ take of the reply buffer, before they are written.
  void NoteReplyPeak() {
    rb_peak_ = std::max(rb_peak_, std::min(out_.size(), rb_size_));
    rbp_.store(rb_peak_, std::memory_order_relaxed);
  }
  // Once out_ is all written: its room back to the reply buffer's size.
  void ResetOutput();
  bool want_write_ = false;
  bool ev_reading_ = true;       // EPOLLIN is armed
  bool reading_paused_ = false;  // backpressure: the peer is not reading its replies
  bool closed_ = false;

  cmd::Session session_;
  uint32_t flags_ = 0;                    // keyspace lock
  // The primary's transaction so far (MULTI and what it queued): applied, but counted toward
  // the replication offset (and passed to sub-replicas) only with its EXEC, as Redis' reploff,
  // so that a link lost midway resumes before the MULTI instead of inside it.
  std::string master_multi_;
  std::atomic<size_t> master_pending_{0};  // read, not yet counted: in_ and master_multi_
  void NoteMasterPending() {
    if (flags_ & kMaster) {
      master_pending_.store(in_.size() + master_multi_.size(), std::memory_order_relaxed);
    }
  }
  Transaction tx_;                        // keyspace lock
  Blocked block_;                         // keyspace lock
  std::atomic<bool> blocked_{false};
  std::atomic<bool> paused_{false}, resuming_{false};
  // CLIENT REPLY state (keyspace lock, own thread): see replies_silenced().
  bool reply_skip_ = false, reply_skip_next_ = false, in_execute_ = false;
  size_t reply_mark_ = 0;
  std::vector<std::pair<size_t, size_t>> push_spans_;  // (offset, length) in out_ since the mark
  std::set<std::string> channels_, patterns_, shard_channels_;  // keyspace lock
  std::shared_ptr<acl::User> acl_user_;                         // keyspace lock
  ClientTracking tracking_;                                     // keyspace lock
  const std::string* last_cmd_ = nullptr; // keyspace lock
  int64_t woff_ = 0;                      // keyspace lock
  std::atomic<uint64_t> aof_offset_{0};
  bool aof_held_ = false;  // replies wait in round_aof for the AOF's write (loop thread)
  bool retry_armed_ = false;  // RetryAfterScript's timer is set (loop thread)

  // A replica's place in the replication stream (loop thread), handed over through
  // pending_stream_ (push_mu_); stream_sent_ is its offset, for the primary's output limit.
  repl::Backlog::Cursor stream_;
  std::atomic<int64_t> stream_sent_{0};
  std::atomic<bool> stream_wake_{false};  // a StreamMore wake-up is posted

  std::mutex push_mu_;
  repl::Backlog::Cursor pending_stream_;  // guarded by push_mu_
  std::string pushed_;          // guarded by push_mu_
  bool push_scheduled_ = false; // guarded by push_mu_
  int64_t over_soft_since_ms_ = 0;  // guarded by push_mu_; 0 when under the soft limit
  int64_t over_normal_soft_since_ms_ = 0;  // own thread; the same for the normal class
  std::atomic<bool> close_requested_{false};
  std::unique_ptr<net::TlsConn> tls_;  // loop thread
  net::Fd relay_;                      // loop thread: the snapshot's pipe (RelayFrom)
  net::Fd relay_pending_;              // push_mu_: handed over to the loop by DrainPushed
  std::unique_ptr<net::FdHandler> relay_reader_;  // loop thread
  bool relay_registered_ = false;                 // loop thread: the pipe is in the loop
  bool relay_reading_ = false;                    // loop thread: ...for reading
  std::string tls_reject_;             // loop thread
  std::atomic<bool> tls_handshaking_{false};
  bool tls_handshake_wants_write_ = false;  // loop thread
  ClientMemSlot mem_slot_;      // see client_eviction.h
  friend class ClientEviction;  // measures the client whose CONFIG SET it runs (OwnMemory)
};

}  // namespace kv::server
