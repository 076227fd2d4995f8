// The append-only file, as Redis 7.0 keeps it: a directory (`appenddirname`) holding a manifest,
// one base file (an RDB with `aof-use-rdb-preamble yes`, else commands) and incremental files
// of commands, written in the form the replication stream has (persist/aof_manifest.h,
// persist/aof_file.h).
//
// Write path: the propagation feed hands every unit of writes to Append (keyspace lock held),
// which adds it to a buffer. The buffer goes to the file at the end of the poll group's event-
// loop round that produced it (one write(2) per round and thread, as Redis writes once per
// event-loop iteration), and from the cron for writes made outside commands. Replies wait for
// that write (Client::Flush defers them to the round's end), so a process that dies never took
// back an acknowledged write. Durability follows `appendfsync`:
//   - always: the replies wait for an fdatasync too, one per round covering every client of
//     the round (and the other poll group's writes when they are in the buffer by then);
//   - everysec: a background thread fsyncs once a second (Redis' bio job);
//   - no: the kernel decides.
// `no-appendfsync-on-rewrite yes` skips the fsyncs while a child process runs.
//
// Rewrite (BGREWRITEAOF, automatic on growth, CONFIG SET appendonly yes): the parent switches to
// a new incremental file (listed in the manifest before the fork), a forked child writes the new
// base to a temporary file, and when it exits the parent renames it into place, turns the old
// base and increments into history in a new manifest (written to a temporary file, fsynced and
// renamed: the switch is atomic), and removes the history files in the background.
//
// Loading (aof_load.cc): at startup, when appendonly is on, the AOF replaces the RDB as the
// source of the dataset, as in Redis.
//
// Threading: methods run with the keyspace lock held unless marked otherwise. The file
// descriptor and the write offsets are guarded by io_mu_ (taken after the keyspace lock, never
// before it); the buffer by buf_mu_ (innermost).
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/status.h"
#include "persist/aof_manifest.h"

namespace kv::server {

class Server;
class AofBio;

// Redis' dirCreateIfMissing: 0 when `dir` is a directory (made now or before), else the errno
// (ENOTDIR for something else by that name).
int CreateDirIfMissing(const std::string& dir);

class Aof {
 public:
  enum class State { kOff, kOn, kWaitRewrite };

  explicit Aof(Server& server);
  ~Aof();

  // Startup, before the poll groups run: with appendonly on, loads the AOF (aof_load.cc) and
  // sets `*used` (the RDB is then not read). An error means the server must not start.
  Status LoadAtStartup(bool* used);
  // Startup, after loading: creates a base for an empty AOF, opens the last incremental file
  // (or a new one) and writes the manifest, as Redis' aofOpenIfNeededOnServerStart.
  Status OpenOnStart();

  State state() const { return state_; }
  bool enabled() const { return state_ != State::kOff; }

  // A unit of writes, as the feed encodes it for the AOF.
  void Append(std::string_view bytes);
  // Bytes appended, written and fsynced so far (offsets in the AOF's whole history, not file
  // sizes). Any thread.
  uint64_t appended() const { return appended_.load(std::memory_order_acquire); }
  uint64_t durable() const { return durable_.load(std::memory_order_acquire); }
  bool NeedsWrite() const {
    return appended_.load(std::memory_order_acquire) != written_.load(std::memory_order_acquire);
  }
  // appendfsync always: replies wait for durable() to pass their writes. Any thread.
  bool always() const { return always_.load(std::memory_order_relaxed); }
  // What a reply waits for: its writes in the file (write(2) done, as Redis writes the AOF
  // before it replies), and on disk under appendfsync always. Any thread.
  uint64_t reply_offset() const {
    return std::max(released_.load(std::memory_order_acquire),
                    always() ? durable() : written_.load(std::memory_order_acquire));
  }
  // A replica's full sync replaced the dataset: the AOF starts over with a rewrite of it
  // (Redis' restartAOFAfterSYNC).
  void RestartAfterSync();
  // Writes the buffer (and fsyncs it under `always`). The round-end task of a poll group and
  // the cron. Without the keyspace lock.
  void WriteBuffer();

  // BGREWRITEAOF: the reply's text (a status, or an error starting with '-').
  std::string BgRewriteCommand(bool in_exec);
  // CONFIG SET appendonly yes / no.
  Status Start();
  void Stop();
  bool child_running() const { return child_pid_ > 0; }
  // Handles the rewrite child's exit if it has exited (the cron, and the child's pidfd watch
  // at once).
  void ReapChild();
  void Cron(int64_t now_ms);
  // Before exiting: stops a rewrite, writes and fsyncs what is buffered. While the first
  // rewrite of a runtime `appendonly yes` runs there is no complete AOF yet: refused unless
  // `force`, as in Redis (which refuses SIGTERM then too).
  Status PrepareShutdown(bool force);
  // Writes are refused while writing the AOF fails (Redis' MISCONF for the AOF).
  bool WritesDenied(std::string* error) const;
  void AppendInfo(std::string* out, int64_t now_ms) const;
  size_t buffer_length() const;
  // Config changes that take effect at once.
  void ApplySettings();
  // Removes the history files the manifest lists (unless aof-disable-auto-gc).
  void DeleteHistory();
  // DEBUG LOADAOF (Redis' sequence): writes the buffer, empties the dataset, reads the manifest
  // from disk again, removes the history files and loads the AOF. NotFound when there is no
  // AOF; an error otherwise when a file does not load (the log says why). An empty AOF loads.
  // Leaves no current client (the caller restores its own).
  Status DebugLoad();
  // True while DebugLoad runs: a script it replays that turns busy answers other clients
  // -LOADING, as Redis does while it loads. Any thread.
  bool debug_loading() const { return debug_loading_.load(std::memory_order_acquire); }

 private:
  friend class AofLoader;
  std::string DirPath(const std::string& name) const { return dir_ + "/" + name; }
  Status PersistManifest(const persist::AofManifest& m);
  // Loads the files manifest_ lists; `*empty` when they hold nothing.
  Status LoadFiles(bool* empty);
  std::string NewBaseName(persist::AofManifest* m) const;
  std::string NewIncrName(persist::AofManifest* m) const;
  Status OpenNewIncr();
  Status StartRewrite();
  // Writes the dataset as a base file at `path` (through a temporary file, fsynced, renamed):
  // an RDB with aof-use-rdb-preamble, else commands. Redis' rewriteAppendOnlyFile.
  Status WriteBaseFile(const std::string& path);
  void RunChild();
  void RewriteDone(int status);
  void KillChild();
  bool RewriteLimited(int64_t now_s);
  void SetFeedSink();
  // Writes the buffer with io_mu_ held; `force` writes even while a background fsync runs.
  void WriteLocked(bool fsync_always);
  int64_t FileSize(const std::string& name, bool* exists) const;

  Server& server_;
  State state_ = State::kOff;
  std::string dir_, filename_;
  persist::AofManifest manifest_;

  std::unique_ptr<AofBio> bio_;  // fsyncs, closes and unlinks in the background
  // The buffer, guarded by buf_mu_.
  mutable std::mutex buf_mu_;
  std::string buf_;
  std::atomic<bool> debug_loading_{false};
  std::atomic<uint64_t> appended_{0};
  // The file, guarded by io_mu_.
  std::mutex io_mu_;
  int fd_ = -1;
  std::atomic<uint64_t> written_{0}, durable_{0};
  // Replies up to here go out though the file does not have them: a write error under
  // everysec or no (Redis replies then too, and refuses the writes that follow with MISCONF).
  std::atomic<uint64_t> released_{0};
  std::string io_buf_;  // the buffer being written (io_mu_), swapped with buf_
  // Settings the round-end writes read without the keyspace lock (ApplySettings mirrors them).
  std::atomic<bool> always_{false}, everysec_{true}, no_fsync_on_rewrite_{false};
  std::atomic<bool> child_active_{false};   // a child process runs (any kind; the cron updates it)
  std::atomic<int64_t> current_size_{0};    // aof_current_size: base + increments
  std::atomic<int64_t> last_incr_size_{0};  // the open increment's size
  std::atomic<int64_t> fsync_size_{0};      // aof_fsync_offset
  int64_t rewrite_base_size_ = 0;
  std::atomic<int64_t> last_fsync_s_{0};
  std::atomic<bool> write_ok_{true};
  std::atomic<int> write_errno_{0};
  int64_t last_write_error_log_s_ = 0;

  // Rewrite state.
  pid_t child_pid_ = -1;
  int64_t rewrite_start_s_ = -1;
  int64_t last_rewrite_duration_s_ = -1;
  bool rewrite_scheduled_ = false;
  bool last_rewrite_ok_ = true;
  uint64_t rewrites_ = 0;
  int consecutive_failures_ = 0;
  int next_delay_minutes_ = 0;
  int64_t next_rewrite_s_ = 0;
  uint64_t delayed_fsync_ = 0;
};

}  // namespace kv::server
