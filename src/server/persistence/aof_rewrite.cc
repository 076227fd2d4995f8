// The AOF rewrite: BGREWRITEAOF, the forked child that writes a new base, and the parent's
// switch to it once the child is done (Redis' rewriteAppendOnlyFileBackground and
// backgroundRewriteDoneHandler).
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
#include "server/persistence/aof.h"
#include "server/persistence/aof_bio.h"
#include "server/persistence/persistence.h"
#include "server/process_params.h"
#include "server/server.h"

namespace kv::server {
namespace {

std::string TempIncrName(const std::string& filename) { return "temp-" + filename + ".incr"; }
std::string ChildTempName(pid_t pid) {
  return "temp-rewriteaof-bg-" + std::to_string(pid) + ".aof";
}

}  // namespace

Status Aof::WriteBaseFile(const std::string& path) {
  store::Keyspace& ks = server_.keyspace();
  Config& c = server_.config();
  int64_t start = MonoMs(), last_log = start;
  uint64_t total = ks.TotalKeys();
  persist::ChildInfo& info = server_.child_info();  // reports nothing outside a child
  auto progress = [&](uint64_t keys) {
    info.Progress(keys);
    int64_t now = MonoMs();
    if (now - last_log < 1000) return;
    last_log = now;
    LOG_NOTICE("AOF rewrite: %llu/%llu keys (%.0f%%)", static_cast<unsigned long long>(keys),
               static_cast<unsigned long long>(total), total ? 100.0 * keys / total : 100.0);
  };
  std::string temp = "temp-rewriteaof-" + std::to_string(getpid()) + ".aof";
  uint64_t autosync = c.GetBool("aof-rewrite-incremental-fsync") ? persist::kAutoSyncBytes : 0;
  if (c.GetBool("aof-use-rdb-preamble")) {
    persist::RdbWriteOptions opts = server_.persistence().WriteOptions();
    opts.progress = [&](uint64_t, uint64_t keys) { progress(keys); };
    persist::AuxFields aux = server_.persistence().AofBaseAux();
    return persist::SaveFileAtomic(
        path, [&](persist::Sink& sink) { return persist::WriteRdb(ks, sink, opts, aux, nullptr); },
        temp, autosync);
  }
  persist::AofCommandsOptions opts;
  opts.timestamp = c.GetBool("aof-timestamp-enabled");
  opts.now_s = WallMs() / 1000;
  opts.key_save_delay_us = static_cast<int>(c.GetInt("rdb-key-save-delay"));
  opts.progress = progress;
  opts.functions = server_.FunctionCodes();
  return persist::SaveFileAtomic(
      path, [&](persist::Sink& sink) { return persist::WriteAofCommands(ks, sink, opts, nullptr); },
      temp, autosync);
}

std::string Aof::BgRewriteCommand(bool in_exec) {
  if (child_running()) return "-ERR Background append only file rewriting already in progress";
  if (server_.AnyChild() || in_exec) {
    rewrite_scheduled_ = true;
    consecutive_failures_ = 0;  // a manual rewrite is not held back by the failure limit
    return "Background append only file rewriting scheduled";
  }
  if (StartRewrite().ok()) return "Background append only file rewriting started";
  return "-ERR Can't execute an AOF background rewriting. Please check the server logs for "
         "more information.";
}

Status Aof::OpenNewIncr() {
  if (state_ == State::kOff) return Status::Ok();
  persist::AofManifest next = manifest_;
  std::string name = state_ == State::kWaitRewrite ? TempIncrName(filename_) : NewIncrName(&next);
  int fd = open(DirPath(name).c_str(), O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    LOG_WARNING("Can't open the append-only file %s: %s", name.c_str(), strerror(errno));
    return Status::FromErrno("open " + name, errno);
  }
  if (state_ == State::kOn) {
    if (Status st = PersistManifest(next); !st.ok()) {
      close(fd);
      return st;
    }
  }
  LOG_NOTICE("Creating AOF incr file %s on background rewrite", name.c_str());
  std::lock_guard lock(io_mu_);
  WriteLocked(false);
  if (fd_ >= 0) {
    // Under everysec the old file's last second is fsynced in the background; under always it
    // is on disk already.
    bio_->FsyncAndClose(fd_);
    fsync_size_.store(current_size_.load());
    last_fsync_s_ = WallMs() / 1000;
  }
  fd_ = fd;
  last_incr_size_ = 0;
  if (state_ == State::kOn) manifest_ = std::move(next);
  return Status::Ok();
}

Status Aof::StartRewrite() {
  if (server_.AnyChild()) return Status::Invalid("another child process is active");
  if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    LOG_WARNING("Can't open or create append-only dir %s: %s", dir_.c_str(), strerror(errno));
    last_rewrite_ok_ = false;
    return Status::FromErrno("mkdir " + dir_, errno);
  }
  {
    std::lock_guard lock(io_mu_);
    WriteLocked(false);
  }
  // The new increment starts with a SELECT.
  server_.primary().feed().ForgetAofSelectedDb();
  if (Status st = OpenNewIncr(); !st.ok()) {
    last_rewrite_ok_ = false;
    return st;
  }
  rewrites_++;
  persist::ChildInfo& info = server_.child_info();
  // Without its pipe the child runs unreported.
  (void)info.Prepare(persist::ChildInfo::Kind::kAof, server_.keyspace().TotalKeys());
  int64_t fork_start = MonoUs();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    info.EndChild();
    last_rewrite_ok_ = false;
    LOG_WARNING("Can't rewrite append only file in background: fork: %s", strerror(err));
    return Status::FromErrno("fork", err);
  }
  if (pid == 0) {
    info.EnterChild();
    RunChild();  // never returns
  }
  info.EnterParent();
  server_.persistence().CountFork(MonoUs() - fork_start);
  LOG_NOTICE("Background append only file rewriting started by pid %d", static_cast<int>(pid));
  child_pid_ = pid;
  child_active_ = true;
  server_.WatchSnapshotChild(pid);  // its exit is handled at once, not at the next cron tick
  rewrite_scheduled_ = false;
  rewrite_start_s_ = WallMs() / 1000;
  // Growing tables now would copy pages the child shares with us.
  server_.keyspace().SetResizeAllowed(false);
  SetFeedSink();  // a runtime `appendonly yes` buffers from the fork on
  return Status::Ok();
}

void Aof::RunChild() {
  SetLogRole('C');
  server_.CloseListenersInChild();
  EnterChildProcess(server_.config(), /*aof_rewrite=*/true);
  server_.ShowChildProcTitle(Server::ChildKind::kAofRewrite);
  std::string temp = ChildTempName(getpid());
  Status st = WriteBaseFile(temp);
  if (!st.ok()) {
    LOG_WARNING("Write error writing append only file on disk: %s", st.message().c_str());
    _exit(1);
  }
  LOG_NOTICE("Successfully created the temporary AOF base file %s", temp.c_str());
  server_.child_info().Finish(server_.keyspace().TotalKeys());
  _exit(0);
}

void Aof::RewriteDone(int status) {
  server_.child_info().EndChild();
  int64_t now_s = WallMs() / 1000;
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  auto failed = [&] {
    last_rewrite_ok_ = false;
    consecutive_failures_++;
  };
  if (ok) {
    LOG_NOTICE("Background AOF rewrite terminated with success");
    std::string temp = ChildTempName(child_pid_);
    persist::AofManifest next = manifest_;
    std::string base = NewBaseName(&next);
    std::string incr;
    if (rename(temp.c_str(), DirPath(base).c_str()) != 0) {
      LOG_WARNING("Error trying to rename the temporary AOF base file %s into %s: %s", temp.c_str(),
                  base.c_str(), strerror(errno));
      failed();
      goto cleanup;
    }
    LOG_NOTICE("Successfully renamed the temporary AOF base file %s into %s", temp.c_str(),
               base.c_str());
    if (state_ == State::kWaitRewrite) {
      std::string temp_incr = TempIncrName(filename_);
      incr = NewIncrName(&next);
      if (rename(DirPath(temp_incr).c_str(), DirPath(incr).c_str()) != 0) {
        LOG_WARNING("Error trying to rename the temporary AOF incr file %s into %s: %s",
                    temp_incr.c_str(), incr.c_str(), strerror(errno));
        bio_->Unlink(DirPath(base));
        failed();
        goto cleanup;
      }
      LOG_NOTICE("Successfully renamed the temporary AOF incr file %s into %s", temp_incr.c_str(),
                 incr.c_str());
    }
    // The increments the new base covers become history: all but the one being written.
    {
      size_t keep = fd_ >= 0 && !next.incrs.empty() ? 1 : 0;
      size_t moved = next.incrs.size() - keep;
      for (size_t i = moved; i-- > 0;) {
        persist::AofFileInfo h = next.incrs[i];
        h.type = persist::AofFileInfo::Type::kHistory;
        next.history.insert(next.history.begin(), h);
      }
      next.incrs.erase(next.incrs.begin(), next.incrs.begin() + static_cast<long>(moved));
    }
    if (!PersistManifest(next).ok()) {
      bio_->Unlink(DirPath(base));
      if (!incr.empty()) bio_->Unlink(DirPath(incr));
      failed();
      goto cleanup;
    }
    manifest_ = std::move(next);
    if (fd_ >= 0) {
      server_.primary().feed().ForgetAofSelectedDb();
      std::lock_guard lock(io_mu_);  // the round-end writes add to the sizes
      current_size_ = FileSize(base, nullptr) + last_incr_size_.load();
      rewrite_base_size_ = current_size_.load();
      fsync_size_.store(current_size_.load());
      last_fsync_s_ = now_s;
    }
    DeleteHistory();
    last_rewrite_ok_ = true;
    consecutive_failures_ = 0;
    LOG_NOTICE("Background AOF rewrite finished successfully");
    if (state_ == State::kWaitRewrite) state_ = State::kOn;
  } else if (WIFEXITED(status)) {
    failed();
    LOG_WARNING("Background AOF rewrite terminated with error");
  } else {
    // SIGUSR1 is how the server stops its own child: not a failure.
    if (WTERMSIG(status) != SIGUSR1) failed();
    LOG_WARNING("Background AOF rewrite terminated by signal %d", WTERMSIG(status));
  }
cleanup:
  unlink(ChildTempName(child_pid_).c_str());
  unlink(("temp-rewriteaof-" + std::to_string(child_pid_) + ".aof").c_str());
  if (state_ == State::kWaitRewrite) {
    // The writes since the fork are in no base: the next rewrite starts over.
    {
      std::lock_guard lock(buf_mu_);
      buf_.clear();
    }
    written_.store(appended_.load());
    durable_.store(appended_.load());
    LOG_NOTICE("Removing the temp incr aof file %s in the background",
               TempIncrName(filename_).c_str());
    bio_->Unlink(DirPath(TempIncrName(filename_)));
    rewrite_scheduled_ = true;
  }
  last_rewrite_duration_s_ = now_s - rewrite_start_s_;
  rewrite_start_s_ = -1;
  child_pid_ = -1;
  child_active_ = server_.AnyChild();
  if (!server_.AnyChild()) server_.keyspace().SetResizeAllowed(true);
  SetFeedSink();
}

void Aof::KillChild() {
  if (!child_running()) return;
  LOG_NOTICE("Killing running AOF rewrite child: %d", static_cast<int>(child_pid_));
  if (kill(child_pid_, SIGUSR1) == 0) {
    int status;
    while (waitpid(child_pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  server_.child_info().EndChild();
  unlink(ChildTempName(child_pid_).c_str());
  unlink(("temp-rewriteaof-" + std::to_string(child_pid_) + ".aof").c_str());
  child_pid_ = -1;
  rewrite_start_s_ = -1;
  if (!server_.AnyChild()) server_.keyspace().SetResizeAllowed(true);
  SetFeedSink();
}

void Aof::DeleteHistory() {
  if (server_.config().GetBool("aof-disable-auto-gc") || manifest_.history.empty()) return;
  for (const auto& h : manifest_.history) {
    LOG_NOTICE("Removing the history file %s in the background", h.name.c_str());
    bio_->Unlink(DirPath(h.name));
  }
  manifest_.history.clear();
  (void)PersistManifest(manifest_);
}

}  // namespace kv::server
