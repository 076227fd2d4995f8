// The server: wiring of config, keyspace, command table, poll groups and listeners.
//
// Locking: one keyspace lock (`mu()`) is taken by a poll group for each batch of parsed
// commands from one connection, and by the cron. Everything reachable from commands (keyspace,
// command table, config, client registry, slowlog, stats marked so) is guarded by it. That keeps
// every command atomic, each pipeline in order, and gives writes one total order, which
// replication streams. IO (read, parse, write) happens outside the lock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cmd/command.h"
#include "cmd/context.h"
#include "common/histogram.h"
#include "common/sharded_counter.h"
#include "common/version.h"
#include "net/event_loop.h"
#include "net/output_limit.h"
#include "net/socket.h"
#include "net/tls.h"
#include "persist/child_info.h"
#include "server/config/config.h"
#include "server/debug_state.h"
#include "server/poll_group.h"
#include "server/scripting/script_run.h"
#include "store/keyspace.h"

namespace kv::cluster {
class Cluster;
}  // namespace kv::cluster

namespace kv::repl {
class Primary;
class Replica;
}  // namespace kv::repl

namespace kv::script {
class FunctionLibraries;
class LuaEngine;
}  // namespace kv::script

namespace kv::server {

class Client;
class Persistence;
class Aof;
class ServerReplHost;
class ServerClusterHost;
class AclUsers;
class Evictor;
class ClientEviction;
class MigrateSockets;
class Tracking;
class Failover;
class ShutdownWait;
class SlotMigrations;

struct SlowlogEntry {
  uint64_t id;
  int64_t time_s;
  int64_t duration_us;
  std::vector<std::string> args;
  std::string peer, name;
};

struct LatencySample {
  int64_t time_s;
  int64_t latency_ms;
};

struct LatencyEvent {
  std::deque<LatencySample> history;  // at most 160 samples, as Redis
  int64_t max_ms = 0;
};

// Counters for INFO. Atomics are touched by IO threads without the lock.
struct ServerStats {
  std::atomic<uint64_t> total_connections{0};
  std::atomic<uint64_t> rejected_connections{0};
  ShardedCounter net_input_bytes;
  ShardedCounter net_output_bytes;
  std::atomic<uint64_t> connected_clients{0};
  // The cron's resizes of the clients' reply buffers (Client::CronBuffers).
  std::atomic<uint64_t> reply_buffer_shrinks{0}, reply_buffer_expands{0};
  // Guarded by the keyspace lock:
  uint64_t total_commands = 0;
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
  // RESTOREs whose payload Redis would check in depth by sanitize-dump-payload (kvstore checks
  // every one; this counts those the setting asks for, as Redis' INFO does).
  uint64_t dump_payload_sanitizations = 0;
  uint64_t dirty = 0;                           // changes since the last save
  std::map<std::string, uint64_t> error_codes;  // INFO errorstats, by error code
  cmd::ExecStats exec;
  // Instantaneous metrics: ring of (time, commands) samples taken by the cron.
  static constexpr int kSamples = 16;
  int64_t sample_time[kSamples] = {};
  uint64_t sample_cmds[kSamples] = {}, sample_in[kSamples] = {}, sample_out[kSamples] = {};
  int sample_idx = 0;
};

// Poll groups for `io-threads 0` on a machine with `cores` CPUs: three for every four cores, at
// least one (Redis' advice for its IO threads: 2-3 on 4 cores, 6 on 8). The rest is left to the
// kernel's network processing and to clients on the same machine; one group per core, on two
// cores, served fewer requests than one group, at pipeline 1 and 16 alike (bench/README.md).
int DefaultPollGroups(unsigned cores);

class Server : public cmd::ServerHooks, public store::KeyspaceObserver {
 public:
  explicit Server(std::unique_ptr<Config> config);
  ~Server() override;

  // Binds the listeners and starts the poll groups.
  Status Start();
  // Blocks until SIGINT/SIGTERM or SHUTDOWN, then stops the threads. Call from main.
  void WaitForShutdown();
  // Asks the server to stop. Any thread. Once asked (after the final save), no command runs
  // and nothing more reaches the replicas: what the server acknowledged is what it saved.
  void RequestShutdown() { shutdown_requested_ = true; }
  bool shutdown_requested() const { return shutdown_requested_; }
  // The data is being loaded at startup: clients are served meanwhile, with -LOADING for
  // what Redis refuses then.
  bool loading_at_startup() const { return startup_loading_.load(std::memory_order_acquire); }
  // Called by the startup load now and then: lets the keyspace lock go for a moment (at most
  // every few milliseconds) so that clients are answered, and turns a SIGTERM or SIGINT into
  // a shutdown without a save, as Redis does while it loads. A no-op outside that load.
  void YieldWhileLoading();
  // Stops listening at once (the final step of a shutdown, as Redis closes its listening
  // sockets before exiting): a connection attempt from here on is refused. Lock held.
  void CloseListenersForExit();
  // Stops the poll groups and closes the listeners (WaitForShutdown does this; tests that run a
  // server in-process call it directly). Not from a poll-group thread.
  void Stop();

  std::timed_mutex& mu() { return mu_; }
  // The cron's frequency (hz); any thread.
  int hz() const { return hz_.load(std::memory_order_relaxed); }
  // Takes the keyspace lock for a poll group's thread, unless a busy script holds it: then
  // false, at once or as soon as the script becomes busy, so that the thread goes on serving
  // its clients (-BUSY, SCRIPT KILL) instead of waiting for a script that may never end.
  bool LockUnlessBusy(std::unique_lock<std::timed_mutex>& lock);
  // Runs `fn` under the keyspace lock: here, or, while a script is busy, on the script's
  // thread between two of its instructions, waiting for it there. For what must not wait for
  // the script's end: a connection that opens or closes (CONNECTED_SLAVES in a script's INFO).
  void RunLocked(const std::function<void()>& fn);
  // Runs `fn` under the keyspace lock on `loop`'s thread (the caller's): now, or, while a busy
  // script holds the lock, once it is over (Redis runs no timed work meanwhile either).
  void WhenLocked(net::EventLoop& loop, std::function<void()> fn);
  store::Keyspace& keyspace() { return *keyspace_; }
  cmd::CommandTable& commands() { return commands_; }
  Config& config() { return *config_; }
  ServerStats& stats() { return stats_; }
  int port() const { return port_; }
  int tls_port() const { return tls_port_; }
  // The process title from set-proc-title and proc-title-template (ps, top), and the titles of
  // the snapshot children, computed here so that a child only has to show its own.
  void UpdateProcTitle();
  enum class ChildKind { kBgsave, kToReplicas, kAofRewrite };
  void ShowChildProcTitle(ChildKind kind) const;
  // tcp-keepalive (seconds; 0: off), for sockets that do not come through the listeners.
  int64_t tcp_keepalive_s() const { return tcp_keepalive_s_.load(); }
  int64_t start_time_ms() const { return start_time_ms_; }
  const std::string& run_id() const { return run_id_; }
  size_t num_groups() const { return groups_.size(); }
  PollGroup& group(size_t i) { return *groups_[i]; }
  Persistence& persistence() { return *persistence_; }
  Aof& aof() { return *aof_; }
  // A child process of any kind runs (BGSAVE, a replication snapshot, an AOF rewrite): Redis
  // runs one at a time. Keyspace lock held.
  bool AnyChild() const;
  // Inside EXEC (a fork or an AOF switch must wait for the transaction's end).
  bool in_exec() const { return running_queued_; }
  // Before exiting: the AOF's last writes and fsync, then the final snapshot when save points
  // (or `save`) ask for one. An error refuses the shutdown (unless `force`).
  Status PrepareShutdown(bool save, bool nosave, bool force);
  repl::Primary& primary() { return *primary_; }
  repl::Replica& replica() { return *replica_; }
  // Cluster mode (cluster-enabled): the node, or null outside cluster mode.
  cluster::Cluster* cluster() { return cluster_.get(); }
  bool ClusterMode() const override { return cluster_ != nullptr; }
  // Whole-slot migrations (slot_migration.h); cluster mode only.
  SlotMigrations& slot_migrations() { return *slot_migrations_; }
  bool has_slot_migrations() const { return slot_migrations_ != nullptr; }
  // Deletes every key of `slot` (db 0), each propagated as a DEL; returns how many.
  size_t DeleteSlotKeys(int slot);
  // Deletes key `k` of db 0, propagated as a DEL (a key that moved to another node).
  void DeleteMovedKey(const std::string& k);
  Evictor& evictor() { return *evictor_; }
  // maxmemory-clients (client_eviction.h).
  ClientEviction& client_eviction() { return *client_eviction_; }
  // The running snapshot child's reports (one child at a time: BGSAVE, replication, AOF).
  persist::ChildInfo& child_info() { return child_info_; }
  const persist::ChildInfo& child_info() const { return child_info_; }
  // MIGRATE's cached connections (cmds/migrate_sockets.h). Keyspace lock held.
  MigrateSockets& migrate_sockets() { return *migrate_sockets_; }
  // Client-side caching (tracking.h). Keyspace lock held.
  Tracking& tracking() { return *tracking_; }
  AclUsers& acl() { return *acl_; }
  // The TLS context new TLS connections use (tls_setup.cc); null until TLS is configured.
  std::shared_ptr<net::TlsContext> tls_context() const {
    std::lock_guard lock(tls_mu_);
    return tls_ctx_;
  }
  // FAILOVER (failover.h) and the shutdown that waits for replicas (shutdown.h). Keyspace
  // lock held.
  Failover& failover() { return *failover_; }
  ShutdownWait& shutdown_wait() { return *shutdown_wait_; }
  // Removes a key maxmemory evicts, as DEL would: WATCH sees it, the "evicted" event fires and
  // the replicas get a DEL. Keyspace lock held. Returns the bytes the deletion itself freed:
  // not what the invalidations, events and DEL then add (Redis' mem_freed), which must not
  // make eviction go on (a tracking client's invalidations would outgrow each key freed).
  size_t EvictKey(int db, std::string_view key);
  // The DEL (UNLINK when `lazy`) that tells replicas of a key the primary removed on its own
  // (expired, evicted).
  void PropagateDeletion(int db, std::string_view key, bool lazy = false);
  // Handles a child's exit (an AOF rewrite's, a replication snapshot's, and the replication
  // work that waited for it: repl::Primary::OnChildExit) as soon as `pid` exits, instead of at
  // the next cron tick. Any thread; where the kernel has no pidfd (before Linux 5.3) the cron
  // does it, as before.
  void WatchSnapshotChild(pid_t pid);
  // client-output-buffer-limit replica. Keyspace lock held.
  const net::OutputLimit& replica_limits() const { return replica_limits_; }
  // client-output-buffer-limit normal and pubsub. Any thread (a client checks them as it
  // flushes, a publisher as it pushes).
  net::OutputLimit normal_limits() const { return normal_limits_.Load(); }
  net::OutputLimit pubsub_limits() const { return pubsub_limits_.Load(); }
  // The master client applied one command of the replication stream (`raw`: its bytes).
  void OnMasterCommand(Client& c, std::string_view raw);
  // In a forked child: closes the listening sockets so the port is free when the parent exits.
  void CloseListenersInChild();

  // Runs one command for a client. Keyspace lock held, client's loop thread.
  void Execute(Client& c, std::span<const std::string_view> args);
  // The first key a request names, or "" (for prefetching; no checks beyond that).
  std::string_view FirstKey(std::span<const std::string_view> args) const;
  // Prefetches the table slots of these keys so that a pipeline's lookups overlap their cache
  // misses. Keyspace lock held.
  void PrefetchKeys(int db, std::span<const std::string_view> keys);
  // The client whose command is running (server commands use it). Keyspace lock held.
  Client& current_client() { return *current_client_; }
  // The client whose command runs now, or null (lock held).
  const Client* running_client() const { return current_client_; }
  // The arguments of the command Execute runs for `c` now; empty when it runs none (lock held).
  std::span<const std::string_view> executing_args(const Client* c) const {
    return c == executing_ ? executing_args_ : std::span<const std::string_view>();
  }
  // The AOF's replay runs commands as a client without a connection (aof_load.cc).
  void set_current_client(Client* c) { current_client_ = c; }
  Client* current_client_if_any() { return current_client_; }

  // Values the IO threads read without the lock.
  int64_t max_bulk_len() const { return max_bulk_len_.load(std::memory_order_relaxed); }
  int64_t query_buffer_limit() const { return query_buf_limit_.load(std::memory_order_relaxed); }
  bool auth_required() const { return auth_required_.load(std::memory_order_relaxed); }
  // Whether new clients must authenticate: the default user is off or has passwords (acl_users).
  void set_auth_required(bool v) { auth_required_.store(v, std::memory_order_relaxed); }

  // Client registry. Keyspace lock held.
  void RegisterClient(Client* c);
  void UnregisterClient(Client* c);
  const std::map<uint64_t, Client*>& clients() const { return clients_; }
  uint64_t NextClientId() { return next_client_id_.fetch_add(1); }
  void AddMonitor(Client* c);
  void RemoveMonitor(Client* c);

  // Slowlog and latency monitor. Keyspace lock held.
  std::deque<SlowlogEntry>& slowlog() { return slowlog_; }
  std::map<std::string, LatencyEvent>& latency_events() { return latency_events_; }
  void RecordLatency(const std::string& event, int64_t ms);
  // Records the sample only when latency-monitor-threshold is set and `ms` reaches it (Redis'
  // latencyAddSampleIfNeeded).
  void RecordLatencyIfNeeded(const std::string& event, int64_t ms);
  // Per-command latency histograms (latency-tracking; LATENCY HISTOGRAM, INFO latencystats):
  // a command's first tracked call creates its histogram, CONFIG RESETSTAT drops them all, as
  // Redis does. Keyspace lock held.
  void RecordCommandLatency(const cmd::CommandSpec& spec, int64_t dur_us);
  const Histogram* command_latency(const cmd::CommandSpec& spec) const {
    auto it = latency_histograms_.find(&spec);
    return it == latency_histograms_.end() ? nullptr : &it->second;
  }
  void ResetCommandLatencies() { latency_histograms_.clear(); }
  bool latency_tracking() const { return latency_tracking_; }
  // latency-tracking-info-percentiles, parsed.
  const std::vector<double>& latency_percentiles() const { return latency_percentiles_; }

  // Transactions (multi.cc). Keyspace lock held.
  // Queues the command when `c` is inside MULTI (answering QUEUED or an error); false when the
  // command must run now.
  bool QueueInTransaction(Client& c, const cmd::CommandSpec* spec,
                          std::span<const std::string_view> args, resp::ReplyWriter& w);
  void FlagTransactionError(Client& c);
  // The error of a command that may not run while the dataset loads.
  static constexpr std::string_view kLoadingError =
      "-LOADING Redis is loading the dataset in memory";
  // Refuses a command before it runs (dispatch.cc): its error, or for EXEC inside MULTI the
  // transaction discarded with EXECABORT naming the error, as Redis' rejectCommand.
  void RejectCommand(Client& c, cmd::CommandSpec& spec, resp::ReplyWriter& w,
                     std::string_view error);
  void EndTransaction(Client& c);
  void WatchKey(Client& c, int db, std::string_view key, int64_t now_ms);
  void Unwatch(Client& c);
  // Runs one command of an EXEC.
  void RunQueued(Client& c, std::span<const std::string_view> args, resp::ReplyWriter& w) {
    running_queued_ = true;  // EXEC itself passed the checks made once per command
    Run(c, args, w);
    running_queued_ = false;
  }
  // Releases a blocked client from every key it waits on (not its reply). Keyspace lock held.
  void UnblockClient(Client& c);
  // Answers a blocked client with `reply`, unblocks it and resumes its input. Keyspace lock held.
  void CompleteBlocked(Client& c, const std::string& reply);
  // A blocked command that ends without running again (its deadline, CLIENT UNBLOCK, WAIT's
  // acks, its stream deleted) counts as one call here, as Redis' updateStatsOnUnblock; one
  // that runs again once woken counts as that run.
  void CountUnblocked(Client& c, bool failed);
  // A full sync replaces the dataset (repl::Host::DatasetReplaced). Keyspace lock held.
  void DatasetReplaced();
  // Clients blocked in a blocking command or held by CLIENT PAUSE (INFO blocked_clients, which
  // counts both in Redis 7.0).
  size_t blocked_clients() const { return blocked_count_ + held_.size(); }
  // CLIENT UNBLOCK: answers `c`'s blocking command as its timeout would (or with -UNBLOCKED
  // when `error`) and resumes it; false if it is not blocked (a client held by CLIENT PAUSE
  // is not). Keyspace lock held.
  bool UnblockByCommand(Client& c, bool error);

  // CLIENT PAUSE (pause.cc). Keyspace lock held. Types in order of strictness.
  enum class PauseType { kOff, kWrite, kAll };
  // Pauses clients until `end_ms` (wall clock; in the past: no pause). A pause in force keeps
  // the later end and the stricter type. `loop` (the caller's) times the end.
  void PauseClients(int64_t end_ms, PauseType type, net::EventLoop& loop);
  void UnpauseClients();
  // Writes paused until unpaused for the same purpose, whatever CLIENT PAUSE and UNPAUSE do
  // (Redis' PAUSE_DURING_SHUTDOWN and PAUSE_DURING_FAILOVER).
  enum class PausePurpose { kShutdown, kFailover, kSlotMigration };
  void PauseWritesFor(PausePurpose purpose);
  void UnpauseFor(PausePurpose purpose);
  // Whether clients are paused now (a pause past its end is ended first).
  bool clients_paused();
  // Whether `c`'s command must wait: held clients run again, in the order they were held,
  // once the pause ends (or no longer covers their command). Marks `c` paused if so.
  bool HoldForPause(Client& c, const cmd::CommandSpec& spec, std::span<const std::string_view> args,
                    uint32_t flags);
  // A client released from the pause has gone through its input: the next one's turn.
  void ResumedClientDone(Client& c);
  // A client went through the input it had (its lock is released next): the exemption of
  // the client whose CLIENT UNPAUSE released the others ends with it.
  // The WAITs it ran get their GETACK then, unless writes are paused.
  void InputDone(Client& c);

  // Pub/sub (pubsub.cc). Keyspace lock held.
  int64_t Publish(std::string_view channel, std::string_view message);
  // SPUBLISH: to the subscribers of the shard channel alone (no patterns); the receiver count.
  int64_t PublishShard(std::string_view channel, std::string_view message);
  void UnsubscribeAll(Client& c);  // channels, patterns and shard channels, without replies
  // Cluster mode: the shard channels of a slot this shard no longer serves lose their
  // subscribers, each told with a sunsubscribe message (Redis' removeChannelsInSlot).
  void UnsubscribeShardSlot(int slot);
  using Subscribers = std::map<std::string, std::vector<Client*>>;
  Subscribers& channel_subscribers() { return channels_; }
  Subscribers& pattern_subscribers() { return patterns_; }
  Subscribers& shard_channel_subscribers() { return shard_channels_; }

  // Scripting (scripting.cc, functions.cc). Keyspace lock held.
  script::LuaEngine& lua();
  script::FunctionLibraries& functions();
  // The same if made already, else nullptr: INFO memory measures them without making them (a
  // first INFO would otherwise grow used_memory by the interpreters' tens of KiB).
  script::LuaEngine* lua_if_made() { return lua_.get(); }
  script::FunctionLibraries* functions_if_made() { return functions_.get(); }
  // The libraries' codes, for a snapshot or an AOF rewrite (none before any was loaded).
  std::vector<std::string> FunctionCodes() const;
  // The libraries of a loaded RDB replace the current ones (with `merge`, DEBUG RELOAD MERGE,
  // only those of the same names). Corruption when one fails to load; nothing changed then.
  // How a loaded snapshot's function libraries meet the live ones: they replace them all (a
  // load after a flush, a full sync), replace those of the same names (DEBUG RELOAD MERGE), or
  // join them, a name clash failing the load (DEBUG RELOAD NOFLUSH), as in Redis.
  enum class FunctionsLoad { kReplaceAll, kMerge, kAdd };
  Status InstallFunctions(const std::vector<std::string>& codes,
                          FunctionsLoad how = FunctionsLoad::kReplaceAll);
  // The flags an EVAL or FCALL runs under (Redis' getCommandFlags): a script that declares
  // flags (a shebang, a registered function) is a write and denies OOM unless it says
  // otherwise, and is stale-safe only with allow-stale; others keep the command's `flags`.
  uint32_t ScriptCommandFlags(std::span<const std::string_view> args, uint32_t flags);
  // EVAL and FCALL show in MONITOR when they start, before the commands they run.
  void FeedScriptToMonitors(std::span<const std::string_view> args);
  // The error a write gets while writes are stopped (MISCONF), or "" (dispatch.cc).
  std::string WritesDeniedError() const;
  // min-replicas-to-write is met (or off).
  bool GoodReplicasForWrites() const;
  // A script past busy-reply-threshold: commands get -BUSY; SCRIPT KILL, FUNCTION KILL,
  // FUNCTION STATS, SHUTDOWN NOSAVE and QUIT are served, all without the keyspace lock (which
  // the script holds). Any thread; `resp` is the client's protocol. True when the connection
  // is to be closed once the reply is written (QUIT).
  bool script_busy() const { return script_busy_.load(std::memory_order_acquire); }
  bool ReplyWhileBusy(std::span<const std::string_view> args, std::string* out, int resp = 2);
  // What a busy script's server must run with the keyspace lock for client `c` (its own
  // thread): the allow-busy commands that change the client's or the server's state (HELLO,
  // AUTH, MULTI, DISCARD, WATCH, UNWATCH, RESET), and anything sent inside MULTI (queued, or
  // refused with -BUSY, which aborts the transaction; EXEC answers EXECABORT).
  bool NeedsScriptThread(Client& c, std::span<const std::string_view> args);
  // Runs such a command on the script's thread, between two of the script's instructions
  // (script_run.cc), and waits for it: false when the script ended first (the command then
  // runs as any other).
  bool RunOnScriptThread(Client& c, std::span<const std::string_view> args);
  // The command running now found memory over maxmemory with nothing left to evict.
  bool oom_before_command() const { return oom_before_command_; }

  // ServerHooks.
  void KeyModified(int db, std::string_view key) override;  // multi.cc
  void Flushed() override;                                  // multi.cc
  void DbReplaced(int db, int replaced_with) override;      // multi.cc
  void FlushedAll() override;                               // dispatch.cc
  // The running command leaves no change pending a save (rdb_changes_since_last_save is 0 after
  // it): DEBUG LOADAOF, as Redis' resets server.dirty.
  void ForgetChangesOfThisCommand() { dirty_reset_ = true; }
  void Notify(int klass, std::string_view event, std::string_view key, int db) override;
  int64_t MaxBulkLen() const override { return max_bulk_len(); }
  bool ReadsAnyKey(const cmd::Context& c) const override;  // acl_users.cc
  int64_t HllSparseMaxBytes() const override {
    return hll_sparse_max_bytes_.load(std::memory_order_relaxed);
  }
  bool SharesIntegers() const override;  // evict.cc
  // KeyspaceObserver.
  void OnKeyExpired(int db, std::string_view key) override;
  void OnExpiredKeyRemoved(int64_t us) override;

  bool active_expire_enabled() const { return active_expire_; }
  void set_active_expire(bool on) { active_expire_ = on; }
  DebugState& debug_state() { return debug_state_; }
  int notify_flags() const { return notify_flags_; }

 private:
  friend class ServerClusterHost;  // cluster_host.cc: the bus listens where clients do
  friend class ScriptRun;  // script_run.cc: redis.call runs commands as the dispatcher does
  friend class Tracking;   // tracking.cc: delivers as pub/sub does, to the running client first
  class Listener;
  class ChildWatch;
  void WireConfig();
  void WireTlsConfig(Config& c);  // tls_setup.cc
  void WireAclConfig(Config& c);  // acl_users.cc
  // The config file's `user` lines, checked as Redis reads them (acl_users.cc): a bad one is a
  // config file error, on stderr (the status' message is then empty).
  Status CheckUserDirectives();
  // maxmemory-clients or maxmemory changed (client_eviction.cc). Keyspace lock held.
  void ApplyClientEviction();
  Status StartListeners();
  // CONFIG SET port / bind: binds the TCP listeners anew (the Unix socket stays). Keyspace
  // lock held.
  Status Rebind(int port, const std::string& bind);
  Result<std::vector<net::Fd>> ListenTcpOn(int port, const std::string& bind);
  // Replaces the TCP listeners with `fds` (CONFIG SET port or bind). Listeners' loop, lock held.
  void SwapListeners(std::vector<net::Fd>& fds, bool tls = false);
  void PostSwapListeners(std::vector<net::Fd> fds, bool tls);
  // A restarted primary's backlog gets the DELs of the keys its load found expired, after the
  // history the snapshot recorded, so its replicas delete them too when they continue.
  void FeedExpiredAtLoad();
  // A new connection; `input` is what it already sent (one accepted while a script was busy).
  void OnAccept(net::Fd fd, bool unix_socket, std::string input = "");
  // A new connection on tls-port: it becomes a client whose handshake runs in its poll group.
  void OnAcceptTls(net::Fd fd);
  // Why a new connection is refused (maxclients, protected mode: the error line), or null.
  const char* AcceptRefusal(int fd, bool unix_socket);
  // Counts a connection accepted and sets its socket up (tcp-keepalive).
  void Admit(int fd, bool unix_socket);
  // TLS (tls_setup.cc): the tls-* parameters as OpenSSL options; the context the next TLS
  // connections use, rebuilt when one of them changes (atomically: a bad setting leaves the
  // old one); the TLS listeners.
  net::TlsOptions TlsOptionsFromConfig() const;
  Status ApplyTls();
  Status StartTlsListeners(const std::vector<std::string>& addrs, int backlog);
  Status RebindTls(int port);
  // The listening sockets (fd, whether a Unix socket).
  std::vector<std::pair<int, bool>> ListenFds() const;
  // Periodic work (hz times a second): expiry, rehashing, metrics. Keyspace lock taken inside.
  int64_t Cron();
  // Execute's body: resolve, check, run and account one command.
  // Returns the block request of a blocking command that must wait.
  std::optional<cmd::BlockRequest> Run(Client& c, std::span<const std::string_view> args,
                                       resp::ReplyWriter& w);
  // Ends a replication unit: its writes go to the stream (wrapped in MULTI/EXEC when several,
  // unless `wrap` is false). A replica's units go to its AOF alone.
  bool EndReplicationUnit(bool wrap = true);
  // Blocking (blocking.cc). Keyspace lock held.
  void BlockClient(Client& c, std::span<const std::string_view> args, cmd::BlockRequest req);
  void ServeReadyKeys();
  void ServeKey(const std::pair<int, std::string>& k);
  bool TryServe(Client& c, const std::string& key);
  // KeyModified with the client the change counts as (nullptr: the server's own, as an
  // eviction's) for client-side caching (multi.cc).
  void KeyModifiedBy(int db, std::string_view key, const Client* modifier);
  // Answers the timeout reply if `c` is still in the blocking episode `generation`.
  bool TimeOutClient(Client& c, uint64_t generation);
  int64_t blocked_run_us_ = 0;  // the duration of the run that just blocked (BlockClient)
  // Adds the errors `w` wrote since it was last counted to INFO's error statistics.
  void CountErrors(resp::ReplyWriter& w);
  // Counts an error that is no reply of its own (a command a script's redis.pcall was refused:
  // Redis counts it there), from its text ("-CODE msg", or a message that counts as ERR).
  void CountErrorText(std::string_view err);
  void CountErrorCode(std::string_view code, uint64_t n);

 public:
  // Redis' afterErrorReply for the peers that expect no errors: an error answered to our
  // primary's link ("replica" to "master"), to a replica ("master" to "replica") or to the AOF
  // loader ("server" to "AOF-loading-client") is logged as CRITICAL and counted in
  // unexpected_error_replies; under propagation-error-behavior panic (panic-on-replicas: the
  // primary's link only, on a read-only replica) the server panics.
  void UnexpectedErrorReply(std::string_view from, std::string_view to, std::string_view error,
                            std::string_view command);

 private:
  // Hands a pub/sub frame to a subscriber (directly into the running client's replies).
  void Deliver(Client* target, const std::string& frame);
  void FeedMonitors(const Client& c, std::span<const std::string_view> args, int64_t now_us);
  // `who` as MONITOR shows the client ("127.0.0.1:5000", "unix:/path", "lua").
  void FeedMonitors(int db, std::string_view who, std::span<const std::string_view> args,
                    int64_t now_us);
  void MaybeSlowlog(const Client& c, std::span<const std::string_view> args, int64_t dur_us);

  std::unique_ptr<Config> config_;
  std::timed_mutex mu_;
  std::unique_ptr<store::Keyspace> keyspace_;
  // Before the children's owners: they end their children as they go.
  persist::ChildInfo child_info_;
  std::unique_ptr<Persistence> persistence_;
  std::unique_ptr<Aof> aof_;
  std::unique_ptr<ServerReplHost> repl_host_;  // what replication reaches of this server
  std::unique_ptr<ServerClusterHost> cluster_host_;
  std::unique_ptr<cluster::Cluster> cluster_;
  std::unique_ptr<SlotMigrations> slot_migrations_;
  std::unique_ptr<repl::Primary> primary_;
  std::unique_ptr<repl::Replica> replica_;
  std::unique_ptr<Evictor> evictor_;
  std::unique_ptr<ClientEviction> client_eviction_;
  std::unique_ptr<MigrateSockets> migrate_sockets_;
  std::unique_ptr<Tracking> tracking_;
  std::unique_ptr<AclUsers> acl_;  // after the command table, which it indexes
  std::unique_ptr<Failover> failover_;
  std::unique_ptr<ShutdownWait> shutdown_wait_;
  cmd::CommandTable commands_;
  ServerStats stats_;
  std::vector<std::unique_ptr<PollGroup>> groups_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<std::unique_ptr<Listener>> retired_listeners_;
  std::string bound_;  // the addresses the TCP listeners are bound to (bind, as applied)  // closed
                       // by Rebind, freed at the end
  std::vector<std::unique_ptr<ChildWatch>> child_watches_;  // the cron's loop thread only
  std::thread fabric_loader_;  // loads the data plane's providers after startup (Start)
  std::atomic<size_t> next_group_{0};
  std::atomic<uint64_t> next_client_id_{1};
  std::atomic<bool> shutdown_requested_{false};
  int port_ = 0;
  int tls_port_ = 0;
  // How long a TLS client may take over its handshake before the cron closes it.
  static constexpr int64_t kTlsHandshakeTimeoutMs = 10000;
  mutable std::mutex tls_mu_;                 // leaf
  std::shared_ptr<net::TlsContext> tls_ctx_;  // tls_mu_; null until TLS is configured
  std::atomic<net::TlsClientAuth> tls_auth_clients_{net::TlsClientAuth::kYes};
  std::string unix_socket_path_;                  // the unixsocket listener's file, removed at Stop
  std::string bgsave_title_, to_replicas_title_, aof_rewrite_title_;  // UpdateProcTitle
  bool listening_ = false;
  std::atomic<bool> startup_loading_{false};
  std::unique_lock<std::timed_mutex>* load_lock_ = nullptr;  // the startup load's hold on mu_
  int64_t last_load_yield_ms_ = 0;
  // Start's loading, with the keyspace lock held and the poll groups serving.
  Status LoadAtStartup();
  // cluster-enabled: the node's identity from its nodes file, and the bus.
  Status StartCluster();
  // Cluster mode (cluster_route.cc): whether the command's keys are served here; if not, answers
  // the redirection (MOVED, ASK, CROSSSLOT, TRYAGAIN, CLUSTERDOWN) and returns false.
  bool RouteInCluster(Client& c, cmd::CommandSpec& spec, std::span<const std::string_view> args,
                      uint32_t flags, resp::ReplyWriter& w);
  // Clients blocked on keys of slots no longer served here (or while the cluster is down) get
  // the redirection and are unblocked (the cron, as Redis' clientsCron).
  void RedirectBlockedClients();
  // The keys (or shard channels) the cluster routes a command by, into `out` (cleared first).
  void ClusterKeys(const cmd::CommandSpec& spec, std::span<const std::string_view> args,
                   std::vector<std::string_view>* out, bool* shard);
  // A script's command in cluster mode (Redis' scriptVerifyClusterState): "" when it may run,
  // else the error. `slot` (-2 at first) keeps the slot the script's keys are in; `caller_args`
  // is the EVAL or FCALL, whose declared keys set it first.
  std::string RouteScriptCall(Client& caller, const cmd::CommandSpec& spec,
                              std::span<const std::string_view> args, uint32_t flags,
                              std::span<const std::string_view> caller_args, bool allow_cross_slot,
                              int* slot);
  int64_t start_time_ms_;
  std::string run_id_;

  std::atomic<int64_t> max_bulk_len_{512LL * 1024 * 1024};
  std::atomic<int64_t> hll_sparse_max_bytes_{3000};
  std::atomic<int64_t> query_buf_limit_{1024LL * 1024 * 1024};
  std::atomic<bool> auth_required_{false};
  std::atomic<int64_t> maxclients_{10000};
  std::atomic<int64_t> tcp_keepalive_s_{300};
  std::atomic<bool> protected_mode_{true};

  // Guarded by mu_:
  std::map<uint64_t, Client*> clients_;
  Client* current_client_ = nullptr;
  const Client* executing_ = nullptr;  // Execute's client and arguments (CLIENT LIST argv-mem)
  std::span<const std::string_view> executing_args_;
  bool running_queued_ = false;  // RunQueued
  // The command being run on its own may expire keys it was not given (kTouchesArbitraryKeys):
  // its unit is not wrapped in MULTI/EXEC (Execute).
  bool unwrapped_unit_ = false;
  bool evict_after_command_ = false;  // CONFIG SET maxmemory: evict once the command is done
  bool dirty_reset_ = false;  // FLUSHALL saved the dataset (or DEBUG LOADAOF): no change pending
  bool oom_before_command_ = false;
  std::atomic<bool> script_busy_{false}, script_kill_{false}, script_dirty_{false},
      script_obey_{false};
  std::unique_ptr<script::LuaEngine> lua_;
  std::unique_ptr<script::FunctionLibraries> functions_;
  std::mutex busy_mu_;      // guards busy_script_ (read by every thread while busy)
  // Work handed to the busy script's thread (RunOnScriptThread, RunLocked); guarded by busy_mu_.
  struct BusyHandoff {
    const std::function<void()>* run;
    bool taken = false, done = false;
  };
  // Runs `fn` on the busy script's thread (this one, if it is that thread) and waits for it;
  // false when no script is busy (any more), `fn` not run.
  bool HandToScript(const std::function<void()>& fn);
  std::vector<BusyHandoff*> busy_handoffs_;  // guarded by busy_mu_
  std::condition_variable busy_cv_;          // a handoff done, or the script over
  std::thread::id script_thread_;            // guarded by busy_mu_; set while busy
  void ServeBusyHandoffs();                  // the script's thread, keyspace lock held
  void RunForBusyClient(Client& c, std::span<const std::string_view> args);
  BusyScript busy_script_;  // set while script_busy_
  std::map<std::pair<int, std::string>, std::vector<Client*>> watchers_;
  // Redis' touchWatchedKey: `exists` is whether the key is still there after the change.
  void TouchWatchedKey(int db, std::string_view key, bool exists);
  void WakeBlockedOn(int db, std::string_view key);
  // Keys a writable replica's own clients changed, handed to the keyspace's local expiry
  // (those with a TTL) once their command is done.
  std::vector<std::pair<int, std::string>> local_writes_;
  void TrackLocalWrites();
  static constexpr size_t kLocalExpireVisits = 200;  // keys checked per cron tick
  // Clients blocked on each key, in arrival order (served first come, first served).
  std::map<std::pair<int, std::string>, std::deque<Client*>> blocked_;
  std::vector<std::pair<int, std::string>> ready_keys_;
  size_t blocked_count_ = 0;
  // CLIENT PAUSE (pause.cc).
  enum class HoldKind { kWrite, kAny, kOrder };  // see pause.cc
  struct Held {
    Client* client;
    HoldKind kind;
  };
  PauseType pause_type_ = PauseType::kOff;         // in force: the strictest of the two below
  PauseType client_pause_type_ = PauseType::kOff;  // CLIENT PAUSE's, until pause_end_ms_
  bool purpose_paused_[3] = {false, false, false};  // writes, by PausePurpose
  int64_t pause_end_ms_ = 0;
  std::deque<Held> held_;             // in the order they were held
  size_t held_kinds_[3] = {0, 0, 0};  // held_ by HoldKind
  Client* resuming_ = nullptr;        // the released client whose turn it is
  Client* unpauser_ = nullptr;        // the client whose CLIENT UNPAUSE started the turns
  bool pause_timer_armed_ = false;    // a loop times the pause's end
  void EndPauseIfDue();
  void UpdatePauseType();
  bool Releasable(HoldKind kind) const;
  size_t ReleasableCount() const;
  void ReleaseNextHeld();
  void ForgetHeld(Client& c);  // a closed client
  bool MayReplicate(Client& c, const cmd::CommandSpec& spec, std::span<const std::string_view> args,
                    uint32_t flags);
  bool ExecMayReplicate(Client& c);
  uint64_t block_generation_ = 0;
  Subscribers channels_, patterns_, shard_channels_;
  net::OutputLimit replica_limits_;
  net::AtomicOutputLimit normal_limits_, pubsub_limits_;
  std::vector<Client*> monitors_;
  std::deque<SlowlogEntry> slowlog_;
  uint64_t slowlog_next_id_ = 0;
  std::map<std::string, LatencyEvent> latency_events_;
  std::unordered_map<const cmd::CommandSpec*, Histogram> latency_histograms_;
  bool latency_tracking_ = true;
  std::vector<double> latency_percentiles_;
  bool active_expire_ = true;
  DebugState debug_state_;
  int notify_flags_ = 0;
  std::atomic<int> hz_{10};  // read by the poll groups' cron (PollGroup)
  int busy_poll_us_ = 0;  // io-busy-poll-us
  // Mirrors of configuration read on every command.
  int64_t slowlog_slower_than_us_ = 10000;
  int64_t busy_reply_threshold_ms_ = 5000;
  int64_t slowlog_max_len_ = 128;
  int64_t latency_threshold_ms_ = 0;
  int64_t min_replicas_to_write_ = 0;  // the config, read on every write
};

// Bytes allocated by the process (INFO used_memory).
size_t UsedMemory();

// Registration of the server-level command families (connection, admin, introspection).
void RegisterServerCommands(cmd::CommandTable& table);

// The Server behind a command's hooks (server commands only run inside a Server).
inline Server& ServerOf(cmd::Context& c) { return static_cast<Server&>(c.hooks); }

}  // namespace kv::server
