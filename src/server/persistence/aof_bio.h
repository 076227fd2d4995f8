// The AOF's background jobs, in order, on one thread (Redis' bio): fsync a file, fsync and close
// an old one, unlink one.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "common/cpu_affinity.h"
#include "common/logging.h"

namespace kv::server {

// One thread running jobs in order: fsync a descriptor, fsync and close one, unlink a file.
class AofBio {
 public:
  AofBio() : thread_([this] { Run(); }) {}
  ~AofBio() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void Fsync(int fd) { Push({Job::kFsync, fd, {}}); }
  void FsyncAndClose(int fd) { Push({Job::kFsyncAndClose, fd, {}}); }
  void Unlink(std::string path) { Push({Job::kUnlink, -1, std::move(path)}); }
  // Fsyncs queued or running (INFO's aof_pending_bio_fsync; everysec skips a second meanwhile).
  uint64_t pending_fsyncs() const { return pending_fsyncs_.load(std::memory_order_acquire); }
  bool fsync_failed() const { return fsync_failed_.load(); }
  void clear_fsync_failed() { fsync_failed_ = false; }

 private:
  struct Job {
    enum Kind { kFsync, kFsyncAndClose, kUnlink } kind;
    int fd;
    std::string path;
  };
  void Push(Job j) {
    if (j.kind == Job::kFsync) pending_fsyncs_++;
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(j));
    }
    cv_.notify_one();
  }
  void Run() {
    PinThreadForRole(ThreadRole::kBackground);  // bio_cpulist
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      Job j = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      if (j.kind == Job::kUnlink) {
        unlink(j.path.c_str());
      } else {
        if (fdatasync(j.fd) != 0 && errno != EBADF && errno != EINVAL) {
          LOG_WARNING("Fail to fsync the AOF file: %s", strerror(errno));
          fsync_failed_ = true;
        }
        if (j.kind == Job::kFsyncAndClose) close(j.fd);
        if (j.kind == Job::kFsync) pending_fsyncs_--;
      }
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  std::atomic<uint64_t> pending_fsyncs_{0};
  std::atomic<bool> fsync_failed_{false};
  std::thread thread_;
};

}  // namespace kv::server
