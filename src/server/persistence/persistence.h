// Snapshots for the server: SAVE, BGSAVE (a forked child writes the RDB while the server keeps
// serving; copy-on-write keeps the child's view consistent), `save <seconds> <changes>` points,
// loading at startup, saving at shutdown, DEBUG RELOAD, and the INFO persistence fields.
//
// Thread safety: every method runs with the keyspace lock held (commands, the cron, shutdown);
// LoadAtStartup lets it go now and then (Server::YieldWhileLoading) so that clients are
// answered (-LOADING, INFO) while the server loads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "persist/rdb_loader.h"
#include "persist/snapshot.h"
#include "server/server.h"

namespace kv::server {

class Server;

class Persistence {
 public:
  explicit Persistence(Server& server);
  ~Persistence();

  // Loads `dbfilename` from the working directory when it exists. An unreadable or corrupt
  // file is an error: the server must not start (and must not overwrite it later).
  Status LoadAtStartup();
  // INFO's loading_* fields while LoadAtStartup runs (nothing otherwise).
  void AppendLoadingInfo(std::string* out, int64_t now_ms) const;
  bool loading_at_startup() const { return loading_start_ms_ != 0; }
  // The startup load of `total_bytes` (the RDB, or the AOF's files) begins, has read `done`
  // bytes, is over: INFO's loading_* fields.
  void BeginLoading(uint64_t total_bytes);
  void LoadingProgress(uint64_t done) { loading_done_ = done; }
  void EndLoading() { loading_start_ms_ = 0; }

  // SAVE: writes the snapshot now, blocking everyone (as Redis does).
  Status SaveNow();
  // After FLUSHALL, as Redis' flushAllDataAndResetRDB: a background save in progress is
  // killed (it would write the old data), and with save points set the empty dataset is saved
  // at once, so the file on disk and rdb_changes_since_last_save agree with memory. True when
  // it saved.
  bool ResetAfterFlushAll();
  // BGSAVE: forks a child that writes the snapshot. Fails if a child already runs.
  Status StartBackgroundSave();
  bool child_running() const { return child_pid_ > 0; }
  // BGSAVE SCHEDULE: starts once no child runs (the cron checks).
  void ScheduleBackgroundSave() { bgsave_scheduled_ = true; }
  // This one's child or the replication snapshot's (which may be sending dbfilename): SAVE and
  // BGSAVE wait for both, as Redis' wait for any RDB child.
  bool AnyRdbChild() const;

  // Periodic work: reaps the child, reads its progress, triggers save points.
  void Cron(int64_t now_ms);

  // Before exiting: stops a running child and saves when save points are configured (or
  // `force_save`), unless `nosave`. A failed save is returned (the caller decides whether to go
  // on).
  Status PrepareShutdown(bool force_save, bool nosave);

  // DEBUG RELOAD: empty the keyspace (unless !flush) and load the file; `merge` lets the
  // file's keys replace existing ones instead of being an error.
  Status Reload(bool flush, bool merge);

  // MISCONF: writes are refused while the last background save failed, save points are
  // configured and stop-writes-on-bgsave-error is on.
  bool WritesDenied() const;

  int64_t last_save_s() const { return last_save_s_; }
  // The replication history recorded in the snapshot loaded at startup (repl-id, repl-offset,
  // repl-stream-db), if any.
  struct History {
    std::string replid;
    int64_t offset = -1;
    int stream_db = 0;
  };
  const std::optional<History>& startup_history() const { return startup_history_; }
  // The keys a primary's startup load dropped because their TTL had passed, with their
  // databases: the restarted primary sends their DELs to its replicas through the backlog
  // (Redis' RDBFLAGS_FEED_REPL). Empty after the first call.
  std::vector<std::pair<int, std::string>> TakeStartupExpired() {
    return std::move(startup_expired_);
  }
  void AppendInfo(std::string* out, int64_t now_ms) const;
  void AppendForkStats(std::string* out) const;
  // Counts a fork made by another part of the server (the AOF rewrite) in INFO's fork stats.
  void CountFork(int64_t fork_us) {
    total_forks_++;
    latest_fork_us_ = fork_us;
  }

  // How snapshots are written (rdbcompression, rdbchecksum, ...), and the AUX fields of an AOF
  // base with the RDB preamble (aof-base 1, no replication history, as Redis writes them).
  persist::RdbWriteOptions WriteOptions() const;
  persist::AuxFields AofBaseAux() const;

 private:
  std::string RdbPath() const;
  persist::AuxFields Aux() const;
  std::vector<std::pair<int64_t, int64_t>> SavePoints() const;
  // `expired` (when set) receives the keys dropped as expired; `keep_expired` loads them
  // instead (a replica's: its primary sends their DELs).
  Status Load(const std::string& path, bool merge, persist::RdbLoadResult* res,
              Server::FunctionsLoad functions,
              std::vector<std::pair<int, std::string>>* expired = nullptr,
              bool keep_expired = false);
  void RunChild();
  void ReapChild(int status);
  void KillChild();

  Server& server_;
  int64_t last_save_s_;
  int64_t last_bgsave_try_s_ = 0;
  bool bgsave_scheduled_ = false;
  bool last_bgsave_ok_ = true;
  int64_t last_bgsave_duration_s_ = -1;
  uint64_t rdb_saves_ = 0;
  uint64_t load_keys_loaded_ = 0, load_keys_expired_ = 0;
  // The startup load in progress (INFO's loading_* fields): wall-clock start, files' size,
  // bytes read so far; start 0 when none runs.
  int64_t loading_start_ms_ = 0;
  uint64_t loading_total_ = 0, loading_done_ = 0;
  // The running child, if any.
  pid_t child_pid_ = -1;
  int64_t child_start_ms_ = 0;
  uint64_t dirty_at_fork_ = 0;
  uint64_t total_forks_ = 0;
  int64_t latest_fork_us_ = 0;
  std::optional<History> startup_history_;
  std::vector<std::pair<int, std::string>> startup_expired_;
};

}  // namespace kv::server
