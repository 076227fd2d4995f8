#include "server/persistence/aof.h"

#include "server/persistence/aof_bio.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"
#include "persist/aof_file.h"
#include "persist/snapshot.h"
#include "repl/feed.h"
#include "repl/primary/primary.h"
#include "server/persistence/persistence.h"
#include "server/server.h"

namespace kv::server {
namespace {

constexpr int kRewriteLimitThreshold = 3;    // Redis' AOF_REWRITE_LIMITE_THRESHOLD
constexpr int kRewriteLimitMaxMinutes = 60;  // AOF_REWRITE_LIMITE_MAX_MINUTES
constexpr int64_t kWriteErrorLogRateS = 30;  // AOF_WRITE_LOG_ERROR_RATE

// write(2) until done, retrying EINTR and short writes (Redis' aofWrite).
ssize_t WriteAll(int fd, const char* p, size_t n) {
  ssize_t total = 0;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return total ? total : -1;
    }
    p += w;
    n -= static_cast<size_t>(w);
    total += w;
  }
  return total;
}

Status FsyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open " + dir, errno);
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  return rc == 0 ? Status::Ok() : Status::FromErrno("fsync " + dir, err);
}

}  // namespace

Aof::Aof(Server& server) : server_(server), bio_(std::make_unique<AofBio>()) {}

Aof::~Aof() {
  // The server is going away: no bookkeeping, only no orphan child and no temporary file.
  if (child_running()) {
    kill(child_pid_, SIGUSR1);
    int status;
    while (waitpid(child_pid_, &status, 0) < 0 && errno == EINTR) {
    }
    unlink(("temp-rewriteaof-bg-" + std::to_string(child_pid_) + ".aof").c_str());
    unlink(("temp-rewriteaof-" + std::to_string(child_pid_) + ".aof").c_str());
  }
  if (fd_ >= 0) close(fd_);
}

void Aof::ApplySettings() {
  Config& c = server_.config();
  always_ = c.GetString("appendfsync") == "always";
  everysec_ = c.GetString("appendfsync") == "everysec";
  no_fsync_on_rewrite_ = c.GetBool("no-appendfsync-on-rewrite");
  if (enabled()) SetFeedSink();
}

void Aof::SetFeedSink() {
  repl::Feed& feed = server_.primary().feed();
  // Redis buffers in WAIT_REWRITE only while its rewrite child runs: what came before is in
  // the child's snapshot.
  bool on = state_ == State::kOn || (state_ == State::kWaitRewrite && child_running());
  if (!on) {
    feed.SetAofSink(nullptr, false);
    return;
  }
  bool ts = server_.config().GetBool("aof-timestamp-enabled");
  if (feed.aof_on()) {
    // Keep the selected db: only the annotation setting may have changed.
    feed.SetAofTimestamps(ts);
    return;
  }
  feed.SetAofSink([this](std::string_view b) { Append(b); }, ts);
}

void Aof::Append(std::string_view bytes) {
  std::lock_guard lock(buf_mu_);
  buf_.append(bytes);
  appended_.fetch_add(bytes.size(), std::memory_order_release);
}

size_t Aof::buffer_length() const {
  std::lock_guard lock(buf_mu_);
  return buf_.size();
}

void Aof::WriteBuffer() {
  std::lock_guard lock(io_mu_);
  WriteLocked(always());
}

void Aof::WriteLocked(bool fsync_always) {
  if (fd_ < 0) return;  // off: Stop() dropped the buffer
  std::string& pending = io_buf_;
  {
    std::lock_guard lock(buf_mu_);
    pending.swap(buf_);
  }
  struct Reuse {  // keeps the capacity for the next round, unless a burst made it big
    std::string& s;
    ~Reuse() {
      if (s.capacity() > (4u << 20)) std::string().swap(s);
      s.clear();
    }
  } reuse{pending};
  int64_t now_s = WallMs() / 1000;
  if (!pending.empty()) {
    // DEBUG AOF-FLUSH-SLEEP: tests widen the window between a write and its reply with it.
    int sleep_us = server_.debug_state().aof_flush_sleep_us.load(std::memory_order_relaxed);
    if (sleep_us > 0) usleep(static_cast<useconds_t>(sleep_us));
    ssize_t n = WriteAll(fd_, pending.data(), pending.size());
    if (n != static_cast<ssize_t>(pending.size())) {
      int err = n < 0 ? errno : ENOSPC;
      bool log = now_s - last_write_error_log_s_ > kWriteErrorLogRateS;
      if (log) last_write_error_log_s_ = now_s;
      if (n < 0) {
        if (log) LOG_WARNING("Error writing to the AOF file: %s", strerror(err));
      } else {
        if (log) {
          LOG_WARNING(
              "Short write while writing to the AOF file: (nwritten=%lld, "
              "expected=%lld)",
              static_cast<long long>(n), static_cast<long long>(pending.size()));
        }
        // Take the partial record back out, so the file ends on a whole command.
        if (ftruncate(fd_, last_incr_size_.load()) == 0) {
          n = -1;
        } else if (log) {
          LOG_WARNING(
              "Could not remove short write from the append-only file.  kvstore may "
              "refuse to load the AOF the next time it starts.  ftruncate: %s",
              strerror(errno));
        }
      }
      write_errno_ = err;
      if (always()) {
        // The replies may already be queued and the writes are in memory: the contract that
        // an acknowledged write is on disk cannot be kept any more.
        LOG_WARNING(
            "Can't recover from AOF write error when the AOF fsync policy is "
            "'always'. Exiting...");
        _exit(1);
      }
      write_ok_ = false;
      released_.store(appended_.load());
      size_t done = n > 0 ? static_cast<size_t>(n) : 0;
      current_size_ += static_cast<int64_t>(done);
      last_incr_size_ += static_cast<int64_t>(done);
      written_ += done;
      // The rest goes back to the front of the buffer, for the next try.
      std::lock_guard lock(buf_mu_);
      buf_.insert(0, pending, done, std::string::npos);
      return;
    }
    if (!write_ok_) {
      LOG_WARNING("AOF write error looks solved, kvstore can write again.");
      write_ok_ = true;
    }
    current_size_ += n;
    last_incr_size_ += n;
    written_ += static_cast<uint64_t>(n);
  }
  if (no_fsync_on_rewrite_.load(std::memory_order_relaxed) &&
      child_active_.load(std::memory_order_relaxed)) {
    // no-appendfsync-on-rewrite: no fsync while a child writes, and (under always) the replies
    // do not wait for one, as in Redis.
    durable_.store(written_.load(), std::memory_order_release);
    return;
  }
  if (fsync_always) {
    if (written_.load() == durable_.load()) return;
    if (fdatasync(fd_) != 0) {
      LOG_WARNING(
          "Can't persist AOF for fsync error when the AOF fsync policy is 'always': "
          "%s. Exiting...",
          strerror(errno));
      _exit(1);
    }
    durable_.store(written_.load(), std::memory_order_release);
    fsync_size_.store(current_size_.load());
    last_fsync_s_ = now_s;
  } else if (everysec_.load(std::memory_order_relaxed) &&
             fsync_size_.load() != current_size_.load() && now_s > last_fsync_s_) {
    if (bio_->pending_fsyncs() == 0) {
      bio_->Fsync(fd_);
      fsync_size_.store(current_size_.load());
    } else {
      delayed_fsync_++;
    }
    last_fsync_s_ = now_s;
  }
}

int CreateDirIfMissing(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) == 0) return 0;
  if (errno != EEXIST) return errno;
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

int64_t Aof::FileSize(const std::string& name, bool* exists) const {
  struct stat st;
  if (stat(DirPath(name).c_str(), &st) != 0) {
    if (exists) *exists = false;
    return 0;
  }
  if (exists) *exists = true;
  return st.st_size;
}

Status Aof::PersistManifest(const persist::AofManifest& m) {
  std::string name = persist::AofManifestName(filename_);
  std::string tmp = persist::AofTempManifestName(filename_);
  std::string text = persist::FormatAofManifest(m);
  int fd = open(DirPath(tmp).c_str(), O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    LOG_WARNING("Can't open the AOF manifest file %s: %s", tmp.c_str(), strerror(errno));
    return Status::FromErrno("open " + tmp, errno);
  }
  ssize_t n = WriteAll(fd, text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) {
    int err = n < 0 ? errno : ENOSPC;
    LOG_WARNING("Error trying to write the temporary AOF manifest file %s: %s", tmp.c_str(),
                strerror(err));
    close(fd);
    return Status::FromErrno("write " + tmp, err);
  }
  if (fsync(fd) != 0) {
    int err = errno;
    LOG_WARNING("Fail to fsync the temp AOF file %s: %s.", tmp.c_str(), strerror(err));
    close(fd);
    return Status::FromErrno("fsync " + tmp, err);
  }
  close(fd);
  if (rename(DirPath(tmp).c_str(), DirPath(name).c_str()) != 0) {
    int err = errno;
    LOG_WARNING("Error trying to rename the temporary AOF manifest file %s into %s: %s",
                tmp.c_str(), name.c_str(), strerror(err));
    return Status::FromErrno("rename " + tmp, err);
  }
  Status st = FsyncDir(dir_);
  if (!st.ok())
    LOG_WARNING("Fail to fsync AOF directory %s: %s.", dir_.c_str(), st.message().c_str());
  return st;
}

std::string Aof::NewBaseName(persist::AofManifest* m) const {
  if (m->base) {
    persist::AofFileInfo old = *m->base;
    old.type = persist::AofFileInfo::Type::kHistory;
    m->history.insert(m->history.begin(), old);
  }
  bool rdb = server_.config().GetBool("aof-use-rdb-preamble");
  persist::AofFileInfo b;
  b.seq = ++m->curr_base_seq;
  b.name = persist::AofBaseName(filename_, b.seq, rdb);
  b.type = persist::AofFileInfo::Type::kBase;
  m->base = b;
  return b.name;
}

std::string Aof::NewIncrName(persist::AofManifest* m) const {
  persist::AofFileInfo i;
  i.seq = ++m->curr_incr_seq;
  i.name = persist::AofIncrName(filename_, i.seq);
  i.type = persist::AofFileInfo::Type::kIncr;
  m->incrs.push_back(i);
  return i.name;
}

Status Aof::OpenOnStart() {
  if (state_ != State::kOn) return Status::Ok();
  if (int err = CreateDirIfMissing(dir_); err != 0) {
    LOG_WARNING("Can't open or create append-only dir %s: %s", dir_.c_str(), strerror(err));
    return Status::Corruption("");  // logged: the refused start ends with this line
  }
  size_t incrs = manifest_.incrs.size();
  if (!manifest_.base && incrs == 0) {
    // An empty dataset still gets a base, so the directory is complete from the start.
    std::string base = NewBaseName(&manifest_);
    KV_TRY(WriteBaseFile(DirPath(base)));
    LOG_NOTICE("Creating AOF base file %s on server start", base.c_str());
  }
  std::string name =
      manifest_.incrs.empty() ? NewIncrName(&manifest_) : manifest_.incrs.back().name;
  fd_ = open(DirPath(name).c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    LOG_WARNING("Can't open the append-only file %s: %s", name.c_str(), strerror(errno));
    return Status::Corruption("");  // logged
  }
  if (!PersistManifest(manifest_).ok()) return Status::Corruption("");  // logged
  last_incr_size_ = FileSize(name, nullptr);
  LOG_NOTICE("%s AOF incr file %s on server start", incrs ? "Opening" : "Creating", name.c_str());
  SetFeedSink();
  return Status::Ok();
}

}  // namespace kv::server

namespace kv::server {

Status Aof::Start() {
  state_ = State::kWaitRewrite;
  if (server_.AnyChild() && !child_running()) {
    rewrite_scheduled_ = true;
    LOG_WARNING(
        "AOF was enabled but there is already another background operation. An AOF "
        "background was scheduled to start when possible.");
  } else if (server_.in_exec()) {
    rewrite_scheduled_ = true;
    LOG_WARNING(
        "AOF was enabled during a transaction. An AOF background was scheduled to "
        "start when possible.");
  } else {
    if (child_running()) {
      LOG_WARNING(
          "AOF was enabled but there is already an AOF rewriting in background. "
          "Stopping background AOF and starting a rewrite now.");
      KillChild();
    }
    if (!StartRewrite().ok()) {
      state_ = State::kOff;
      LOG_WARNING(
          "kvstore needs to enable the AOF but can't trigger a background AOF rewrite "
          "operation. Check the above logs for more info about the error.");
      return Status::IoError("Unable to turn on AOF. Check server logs.");
    }
  }
  last_fsync_s_ = WallMs() / 1000;
  if (bio_->fsync_failed()) {
    LOG_WARNING("AOF reopen, just ignore the AOF fsync error in bio job");
    bio_->clear_fsync_failed();
  }
  if (!write_ok_) {
    LOG_WARNING("AOF reopen, just ignore the last error.");
    write_ok_ = true;
  }
  return Status::Ok();
}

void Aof::Stop() {
  {
    std::lock_guard lock(io_mu_);
    WriteLocked(false);
    if (fd_ >= 0) {
      if (fdatasync(fd_) != 0) {
        LOG_WARNING("Fail to fsync the AOF file: %s", strerror(errno));
      } else {
        fsync_size_.store(current_size_.load());
        durable_.store(written_.load());
        last_fsync_s_ = WallMs() / 1000;
      }
      close(fd_);
      fd_ = -1;
    }
    last_incr_size_ = 0;
  }
  state_ = State::kOff;
  rewrite_scheduled_ = false;
  KillChild();
  {
    std::lock_guard lock(buf_mu_);
    std::string().swap(buf_);
  }
  // What was appended and never written is dropped: nothing waits for it any more.
  written_.store(appended_.load());
  durable_.store(appended_.load());
  SetFeedSink();
}

void Aof::ReapChild() {
  if (!child_running()) return;
  int status = 0;
  if (waitpid(child_pid_, &status, WNOHANG) == child_pid_) RewriteDone(status);
}

void Aof::RestartAfterSync() {
  if (!enabled()) return;
  Stop();
  if (!Start().ok()) {
    // Retried by the cron: the new dataset must get its base.
    state_ = State::kWaitRewrite;
    rewrite_scheduled_ = true;
  }
}

bool Aof::RewriteLimited(int64_t now_s) {
  if (consecutive_failures_ < kRewriteLimitThreshold) {
    next_delay_minutes_ = 0;
    next_rewrite_s_ = 0;
    return false;
  }
  if (next_rewrite_s_ != 0) {
    if (now_s < next_rewrite_s_) return true;
    next_rewrite_s_ = 0;
    return false;
  }
  next_delay_minutes_ = next_delay_minutes_ == 0 ? 1 : next_delay_minutes_ * 2;
  next_delay_minutes_ = std::min(next_delay_minutes_, kRewriteLimitMaxMinutes);
  next_rewrite_s_ = now_s + next_delay_minutes_ * 60;
  LOG_WARNING(
      "Background AOF rewrite has repeatedly failed and triggered the limit, will "
      "retry in %d minutes",
      next_delay_minutes_);
  return true;
}

void Aof::Cron(int64_t now_ms) {
  int64_t now_s = now_ms / 1000;
  child_active_ = server_.AnyChild();
  ReapChild();
  if (!server_.AnyChild() && rewrite_scheduled_ && !RewriteLimited(now_s)) {
    (void)StartRewrite();
  }
  Config& c = server_.config();
  int64_t perc = c.GetInt("auto-aof-rewrite-percentage");
  if (state_ == State::kOn && !server_.AnyChild() && perc > 0 &&
      current_size_.load() > c.GetInt("auto-aof-rewrite-min-size")) {
    int64_t base = rewrite_base_size_ ? rewrite_base_size_ : 1;
    int64_t growth = current_size_.load() * 100 / base - 100;
    if (growth >= perc && !RewriteLimited(now_s)) {
      LOG_NOTICE("Starting automatic rewriting of AOF on %lld%% growth",
                 static_cast<long long>(growth));
      (void)StartRewrite();
    }
  }
  // Writes made outside commands (expiries, evictions), a retry after a write error, and the
  // once-a-second fsync when no command came to trigger it.
  if (enabled()) {
    std::lock_guard lock(io_mu_);
    WriteLocked(always());
  }
}

Status Aof::PrepareShutdown(bool force) {
  if (child_running()) {
    // The AOF a running rewrite replaces is complete: only the first one of a runtime
    // `appendonly yes` is not there yet.
    if (state_ == State::kWaitRewrite) {
      if (!force) {
        LOG_WARNING("Writing initial AOF, can't exit.");
        return Status::Invalid("Writing initial AOF, can't exit.");
      }
      LOG_WARNING("Writing initial AOF. Exit anyway.");
    }
    LOG_WARNING("There is a child rewriting the AOF. Killing it!");
    KillChild();
  }
  if (state_ == State::kOff) return Status::Ok();
  LOG_NOTICE("Calling fsync() on the AOF file.");
  std::lock_guard lock(io_mu_);
  WriteLocked(false);
  if (fd_ >= 0 && fdatasync(fd_) == 0) durable_.store(written_.load());
  return Status::Ok();
}

bool Aof::WritesDenied(std::string* error) const {
  if (state_ == State::kOff) return false;
  if (write_ok_ && !bio_->fsync_failed()) return false;
  int err = write_ok_ ? EIO : write_errno_.load();
  *error = std::string("-MISCONF Errors writing to the AOF file: ") + strerror(err);
  return true;
}

void Aof::AppendInfo(std::string* out, int64_t now_ms) const {
  char buf[1024];
  int64_t now_s = now_ms / 1000;
  snprintf(buf, sizeof(buf),
           "aof_enabled:%d\r\naof_rewrite_in_progress:%d\r\naof_rewrite_scheduled:%d\r\n"
           "aof_last_rewrite_time_sec:%lld\r\naof_current_rewrite_time_sec:%lld\r\n"
           "aof_last_bgrewrite_status:%s\r\naof_rewrites:%llu\r\n"
           "aof_rewrites_consecutive_failures:%d\r\naof_last_write_status:%s\r\n"
           "aof_last_cow_size:%llu\r\nmodule_fork_in_progress:0\r\n"
           "module_fork_last_cow_size:0\r\n",
           enabled() ? 1 : 0, child_running() ? 1 : 0, rewrite_scheduled_ ? 1 : 0,
           static_cast<long long>(last_rewrite_duration_s_),
           static_cast<long long>(child_running() ? now_s - rewrite_start_s_ : -1),
           last_rewrite_ok_ ? "ok" : "err", static_cast<unsigned long long>(rewrites_),
           consecutive_failures_, write_ok_ && !bio_->fsync_failed() ? "ok" : "err",
           static_cast<unsigned long long>(server_.child_info().last_aof_cow()));
  out->append(buf);
  if (!server_.config().GetBool("appendonly")) return;
  snprintf(buf, sizeof(buf),
           "aof_current_size:%lld\r\naof_base_size:%lld\r\naof_pending_rewrite:%d\r\n"
           "aof_buffer_length:%zu\r\naof_pending_bio_fsync:%llu\r\naof_delayed_fsync:%llu\r\n",
           static_cast<long long>(current_size_.load()), static_cast<long long>(rewrite_base_size_),
           rewrite_scheduled_ ? 1 : 0, buffer_length(),
           static_cast<unsigned long long>(bio_->pending_fsyncs()),
           static_cast<unsigned long long>(delayed_fsync_));
  out->append(buf);
}

}  // namespace kv::server
