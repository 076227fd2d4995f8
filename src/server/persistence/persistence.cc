#include "server/persistence/persistence.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cluster/cluster.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "server/process_params.h"
#include "server/server.h"

namespace kv::server {
namespace {

constexpr int64_t kBgsaveRetryDelayS = 5;  // Redis' CONFIG_BGSAVE_RETRY_DELAY

std::string HumanBytes(uint64_t n) {
  char buf[32];
  if (n >= (1ULL << 30)) {
    snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(n) / (1ULL << 30));
  } else {
    snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(n) / (1ULL << 20));
  }
  return buf;
}

}  // namespace

Persistence::Persistence(Server& server) : server_(server), last_save_s_(WallMs() / 1000) {}

Persistence::~Persistence() { KillChild(); }

std::string Persistence::RdbPath() const {
  // The server runs in `dir` (it chdirs there), so the file name alone is the path.
  return server_.config().GetString("dbfilename");
}

persist::RdbWriteOptions Persistence::WriteOptions() const {
  persist::RdbWriteOptions o;
  Config& c = server_.config();
  o.compression = c.GetBool("rdbcompression");
  o.checksum = c.GetBool("rdbchecksum");
  o.key_save_delay_us = static_cast<int>(c.GetInt("rdb-key-save-delay"));
  o.autosync_bytes = c.GetBool("rdb-save-incremental-fsync") ? persist::kAutoSyncBytes : 0;
  o.limits = server_.keyspace().limits();
  std::string policy = c.GetString("maxmemory-policy");
  if (policy.find("lru") != std::string::npos) o.access = persist::RdbWriteOptions::Access::kIdle;
  if (policy.find("lfu") != std::string::npos) o.access = persist::RdbWriteOptions::Access::kFreq;
  o.functions = server_.FunctionCodes();
  return o;
}

persist::AuxFields Persistence::Aux() const {
  persist::SnapshotInfo info;
  info.version = kRedisCompatVersion;
  info.used_memory = static_cast<int64_t>(UsedMemory());
  // The replication history the snapshot belongs to, so a restarted replica (or primary) can
  // continue with a partial resync.
  repl::Primary& primary = server_.primary();
  if (primary.feed().active()) {
    info.has_repl = true;
    info.repl_id = primary.replid();
    info.repl_offset = primary.feed().offset();
    info.repl_stream_db = server_.replica().stream_db();
  }
  return persist::StandardAux(info);
}

persist::AuxFields Persistence::AofBaseAux() const {
  persist::SnapshotInfo info;
  info.version = kRedisCompatVersion;
  info.used_memory = static_cast<int64_t>(UsedMemory());
  info.aof_base = true;
  return persist::StandardAux(info);
}

std::vector<std::pair<int64_t, int64_t>> Persistence::SavePoints() const {
  std::vector<std::pair<int64_t, int64_t>> points;
  auto words = SplitArgs(server_.config().GetString("save")).value_or(std::vector<std::string>{});
  for (size_t i = 0; i + 1 < words.size(); i += 2) {
    auto s = ParseInt64(words[i]), n = ParseInt64(words[i + 1]);
    if (s && n) points.emplace_back(*s, *n);
  }
  return points;
}

Status Persistence::Load(const std::string& path, bool merge, persist::RdbLoadResult* res,
                         Server::FunctionsLoad functions,
                         std::vector<std::pair<int, std::string>>* expired, bool keep_expired) {
  persist::RdbLoadOptions opts;
  opts.now_ms = WallMs();
  opts.drop_expired = !keep_expired;
  if (expired) {
    opts.on_expired = [expired](int db, std::string_view key) {
      expired->emplace_back(db, std::string(key));
    };
  }
  opts.verify_checksum =
      server_.config().GetBool("rdbchecksum") && !server_.debug_state().skip_checksum_validation;
  opts.replace_existing = merge;
  opts.key_load_delay_us = static_cast<int>(server_.config().GetInt("key-load-delay"));
  int64_t start = MonoMs(), last_log = start;
  opts.progress_bytes =
      static_cast<uint64_t>(server_.config().GetInt("loading-process-events-interval-bytes"));
  opts.progress = [&](uint64_t offset) {
    loading_done_ = offset;
    server_.YieldWhileLoading();
    int64_t now = MonoMs();
    if (now - last_log < 1000) return;
    last_log = now;
    LOG_NOTICE("Loading RDB: %s read", HumanBytes(offset).c_str());
  };
  opts.stop = [this] { return server_.shutdown_requested(); };
  opts.warn = [](const std::string& w) { LOG_WARNING("RDB load: %s", w.c_str()); };
  Status st = persist::LoadRdbFile(path, server_.keyspace(), opts, res);
  if (st.ok()) st = server_.InstallFunctions(res->functions, functions);
  if (st.ok()) {
    load_keys_loaded_ = res->keys_loaded;
    load_keys_expired_ = res->expired_skipped;
    if (res->empty_skipped > 0) {
      LOG_WARNING(
          "Done loading RDB, keys loaded: %llu, keys expired: %llu, empty keys skipped: %llu.",
          static_cast<unsigned long long>(res->keys_loaded),
          static_cast<unsigned long long>(res->expired_skipped),
          static_cast<unsigned long long>(res->empty_skipped));
    } else {
      LOG_NOTICE("Done loading RDB, keys loaded: %llu, keys expired: %llu.",
                 static_cast<unsigned long long>(res->keys_loaded),
                 static_cast<unsigned long long>(res->expired_skipped));
    }
    LOG_NOTICE("DB loaded from disk: %.3f seconds", (MonoMs() - start) / 1000.0);
  }
  return st;
}

Status Persistence::LoadAtStartup() {
  std::string path = RdbPath();
  persist::RdbLoadResult res;
  // As Redis: a replica keeps the keys whose TTL passed (its primary will send their DELs); a
  // primary drops them and remembers them for its replicas.
  // In cluster mode the nodes file says whether this node is a replica.
  bool replica = !server_.config().GetString("replicaof").empty() ||
                 (server_.cluster() && server_.cluster()->myself_is_replica());
  struct stat file {};
  BeginLoading(stat(path.c_str(), &file) == 0 ? static_cast<uint64_t>(file.st_size) : 0);
  Status st = Load(path, false, &res, Server::FunctionsLoad::kReplaceAll,
                   replica ? nullptr : &startup_expired_, replica);
  EndLoading();
  if (st.code() == Code::kNotFound) return Status::Ok();
  if (server_.shutdown_requested()) return Status::Ok();  // a signal stopped the load
  if (st.code() == Code::kCorruption) {
    // As Redis: the reason ("Internal error in RDB reading offset N -> ..."), then its last line.
    LOG_WARNING("%s", st.message().c_str());
    LOG_WARNING("Terminating server after rdb file reading failure.");
    return Status::Invalid("");  // said
  }
  if (!st.ok()) {
    LOG_WARNING("Fatal error loading the DB: %s. Exiting.", st.message().c_str());
    return Status::Invalid("");  // said, in the log's last line
  }
  auto id = res.aux.find("repl-id");
  auto off = res.aux.find("repl-offset");
  if (id != res.aux.end() && off != res.aux.end() && id->second.size() == 40 &&
      ParseInt64(off->second)) {
    auto db = res.aux.find("repl-stream-db");
    startup_history_ = {
        id->second, *ParseInt64(off->second),
        db == res.aux.end() ? 0 : static_cast<int>(ParseInt64(db->second).value_or(0))};
  }
  if (auto it = res.aux.find("redis-ver"); it != res.aux.end()) {
    LOG_NOTICE("Loading RDB produced by version %s", it->second.c_str());
  }
  return Status::Ok();
}

Status Persistence::SaveNow() {
  if (child_running()) return Status::Invalid("Background save already in progress");
  int64_t start = MonoMs();
  persist::SaveStats stats;
  Status st = persist::SaveRdbFile(server_.keyspace(), RdbPath(), WriteOptions(), Aux(), &stats);
  if (!st.ok()) {
    LOG_WARNING("Failed saving the DB: %s", st.message().c_str());
    return st;
  }
  LOG_NOTICE("DB saved on disk (%llu keys, %s, %.3f seconds)",
             static_cast<unsigned long long>(stats.keys), HumanBytes(stats.bytes).c_str(),
             (MonoMs() - start) / 1000.0);
  server_.stats().dirty = 0;
  last_save_s_ = WallMs() / 1000;
  last_bgsave_ok_ = true;
  rdb_saves_++;
  return Status::Ok();
}

void Persistence::RunChild() {
  SetLogRole('C');
  server_.CloseListenersInChild();
  int64_t start = MonoMs(), last_log = start;
  persist::RdbWriteOptions opts = WriteOptions();
  persist::ChildInfo& info = server_.child_info();
  uint64_t total = info.keys_total();
  opts.progress = [&](uint64_t bytes, uint64_t keys) {
    info.Progress(keys);
    int64_t now = MonoMs();
    if (now - last_log >= 1000) {
      last_log = now;
      double secs = (now - start) / 1000.0;
      LOG_NOTICE("Background saving: %s written, %llu/%llu keys (%.0f%%), %.1f MB/s",
                 HumanBytes(bytes).c_str(), static_cast<unsigned long long>(keys),
                 static_cast<unsigned long long>(total), total ? 100.0 * keys / total : 100.0,
                 bytes / 1e6 / secs);
    }
  };
  persist::SaveStats stats;
  Status st = persist::SaveRdbFile(server_.keyspace(), RdbPath(), opts, Aux(), &stats);
  if (!st.ok()) {
    LOG_WARNING("Failed saving the DB: %s", st.message().c_str());
    _exit(1);
  }
  LOG_NOTICE("DB saved on disk (%llu keys, %s, %.3f seconds)",
             static_cast<unsigned long long>(stats.keys), HumanBytes(stats.bytes).c_str(),
             (MonoMs() - start) / 1000.0);
  info.Finish(stats.keys);
  _exit(0);
}

bool Persistence::AnyRdbChild() const {
  return child_running() || server_.primary().child_running();
}

Status Persistence::StartBackgroundSave() {
  if (AnyRdbChild()) return Status::Invalid("Background save already in progress");
  if (server_.AnyChild()) return Status::Invalid("Another child process is active");
  bgsave_scheduled_ = false;
  persist::ChildInfo& info = server_.child_info();
  KV_TRY(info.Prepare(persist::ChildInfo::Kind::kRdb, server_.keyspace().TotalKeys()));
  last_bgsave_try_s_ = WallMs() / 1000;
  int64_t fork_start = MonoUs();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    info.EndChild();
    last_bgsave_ok_ = false;
    LOG_WARNING("Can't save in background: fork: %s", strerror(err));
    return Status::FromErrno("fork", err);
  }
  if (pid == 0) {
    info.EnterChild();
    EnterChildProcess(server_.config(), /*aof_rewrite=*/false);
    server_.ShowChildProcTitle(Server::ChildKind::kBgsave);
    RunChild();  // never returns
  }
  info.EnterParent();
  latest_fork_us_ = MonoUs() - fork_start;
  total_forks_++;
  child_pid_ = pid;
  child_start_ms_ = WallMs();
  dirty_at_fork_ = server_.stats().dirty;
  // Growing tables now would copy pages the child shares with us.
  server_.keyspace().SetResizeAllowed(false);
  LOG_NOTICE("Background saving started by pid %d", static_cast<int>(pid));
  return Status::Ok();
}

void Persistence::ReapChild(int status) {
  server_.child_info().EndChild();
  int64_t now_ms = WallMs();
  last_bgsave_duration_s_ = (now_ms - child_start_ms_) / 1000;
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (ok) {
    LOG_NOTICE("Background saving terminated with success");
    uint64_t& dirty = server_.stats().dirty;
    dirty = dirty > dirty_at_fork_ ? dirty - dirty_at_fork_ : 0;
    last_save_s_ = now_ms / 1000;
    rdb_saves_++;
  } else if (WIFSIGNALED(status)) {
    LOG_WARNING("Background saving terminated by signal %d", WTERMSIG(status));
    // The temp file of a killed child stays behind; remove it.
    unlink(("temp-" + std::to_string(child_pid_) + ".rdb").c_str());
  } else {
    LOG_WARNING("Background saving error");
  }
  // A child we killed on purpose (SIGUSR1) does not count as a failure, as in Redis.
  if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1)) last_bgsave_ok_ = ok;
  child_pid_ = -1;
  if (!server_.AnyChild()) server_.keyspace().SetResizeAllowed(true);
}

bool Persistence::ResetAfterFlushAll() {
  KillChild();
  if (SavePoints().empty()) return false;
  return SaveNow().ok();  // a failure is logged, and seen in INFO
}

void Persistence::KillChild() {
  if (!child_running()) return;
  kill(child_pid_, SIGUSR1);
  int status = 0;
  while (waitpid(child_pid_, &status, 0) < 0 && errno == EINTR) {
  }
  ReapChild(status);
}

void Persistence::Cron(int64_t now_ms) {
  if (child_running()) {
    int status = 0;
    if (waitpid(child_pid_, &status, WNOHANG) == child_pid_) ReapChild(status);
    return;
  }
  if (server_.AnyChild()) return;  // one child at a time (an AOF rewrite, a replica's sync)
  if (bgsave_scheduled_ && !server_.in_exec()) {
    (void)StartBackgroundSave();
    return;
  }
  int64_t now_s = now_ms / 1000;
  uint64_t dirty = server_.stats().dirty;
  for (const auto& [seconds, changes] : SavePoints()) {
    if (dirty >= static_cast<uint64_t>(changes) && now_s - last_save_s_ > seconds &&
        (last_bgsave_ok_ || now_s - last_bgsave_try_s_ > kBgsaveRetryDelayS)) {
      LOG_NOTICE("%lld changes in %lld seconds. Saving...", static_cast<long long>(changes),
                 static_cast<long long>(seconds));
      (void)StartBackgroundSave();
      return;
    }
  }
}

Status Persistence::PrepareShutdown(bool force_save, bool nosave) {
  KillChild();
  if (nosave || (!force_save && SavePoints().empty())) return Status::Ok();
  LOG_NOTICE("Saving the final RDB snapshot before exiting.");
  return SaveNow();
}

Status Persistence::Reload(bool flush, bool merge) {
  if (flush) server_.keyspace().FlushAll();
  persist::RdbLoadResult res;
  // Without a flush the live libraries stay: the file's join them (MERGE: replace them).
  Server::FunctionsLoad functions = flush   ? Server::FunctionsLoad::kReplaceAll
                                    : merge ? Server::FunctionsLoad::kMerge
                                            : Server::FunctionsLoad::kAdd;
  Status st = Load(RdbPath(), merge, &res, functions);
  if (st.ok()) LOG_NOTICE("DB reloaded by DEBUG RELOAD");
  return st;
}

bool Persistence::WritesDenied() const {
  return !last_bgsave_ok_ && server_.config().GetBool("stop-writes-on-bgsave-error") &&
         !SavePoints().empty();
}

void Persistence::AppendInfo(std::string* out, int64_t now_ms) const {
  // The running child's figures, whichever child it is (BGSAVE, replication, AOF rewrite).
  const persist::ChildInfo& info = server_.child_info();
  char buf[1024];
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  snprintf(
      buf, sizeof(buf),
      "loading:%d\r\nasync_loading:%d\r\ncurrent_cow_peak:%llu\r\ncurrent_cow_size:%llu\r\n"
      "current_cow_size_age:%lld\r\ncurrent_fork_perc:%.2f\r\n"
      "current_save_keys_processed:%llu\r\ncurrent_save_keys_total:%llu\r\n"
      "rdb_changes_since_last_save:%llu\r\nrdb_bgsave_in_progress:%d\r\n"
      "rdb_last_save_time:%lld\r\nrdb_last_bgsave_status:%s\r\n"
      "rdb_last_bgsave_time_sec:%lld\r\nrdb_current_bgsave_time_sec:%lld\r\n"
      "rdb_saves:%llu\r\nrdb_last_cow_size:%llu\r\n"
      "rdb_last_load_keys_expired:%llu\r\nrdb_last_load_keys_loaded:%llu\r\n",
      server_.replica().loading() || loading_at_startup() ? 1 : 0,
      server_.replica().async_loading() ? 1 : 0, u(info.cow_peak()), u(info.cow()),
      static_cast<long long>(info.cow_age_s()),
      info.keys_total() ? 100.0 * static_cast<double>(info.keys_done()) / info.keys_total() : 0.0,
      u(info.keys_done()), u(info.keys_total()),
      // As in Redis, a replication snapshot's child is an RDB save in progress too.
      u(server_.stats().dirty), child_running() || server_.primary().child_running() ? 1 : 0,
      static_cast<long long>(last_save_s_), last_bgsave_ok_ ? "ok" : "err",
      static_cast<long long>(last_bgsave_duration_s_),
      static_cast<long long>(child_running() ? (now_ms - child_start_ms_) / 1000 : -1),
      u(rdb_saves_), u(info.last_rdb_cow()), u(load_keys_expired_), u(load_keys_loaded_));
  out->append(buf);
}

void Persistence::BeginLoading(uint64_t total_bytes) {
  loading_total_ = total_bytes;
  loading_done_ = 0;
  loading_start_ms_ = WallMs();
}

void Persistence::AppendLoadingInfo(std::string* out, int64_t now_ms) const {
  if (loading_start_ms_ == 0) return;
  // As Redis: the estimate assumes the rest loads at the speed so far.
  double perc = loading_total_ ? 100.0 * static_cast<double>(loading_done_) / loading_total_ : 0;
  int64_t elapsed_s = (now_ms - loading_start_ms_) / 1000;
  int64_t eta = loading_done_
                    ? static_cast<int64_t>(
                          (loading_total_ - std::min(loading_done_, loading_total_)) /
                          (static_cast<double>(loading_done_) / std::max<int64_t>(elapsed_s, 1)))
                    : 1;
  char buf[512];
  snprintf(buf, sizeof(buf),
           "loading_start_time:%lld\r\nloading_total_bytes:%llu\r\nloading_rdb_used_mem:0\r\n"
           "loading_loaded_bytes:%llu\r\nloading_loaded_perc:%.2f\r\nloading_eta_seconds:%lld\r\n",
           static_cast<long long>(loading_start_ms_ / 1000),
           static_cast<unsigned long long>(loading_total_),
           static_cast<unsigned long long>(loading_done_), perc, static_cast<long long>(eta));
  out->append(buf);
}

void Persistence::AppendForkStats(std::string* out) const {
  char buf[128];
  snprintf(buf, sizeof(buf), "latest_fork_usec:%lld\r\ntotal_forks:%llu\r\n",
           static_cast<long long>(latest_fork_us_), static_cast<unsigned long long>(total_forks_));
  out->append(buf);
}

}  // namespace kv::server
