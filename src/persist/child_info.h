// What a snapshot child (BGSAVE, a replication snapshot, an AOF rewrite) tells its parent, as
// Redis' child info pipe does: while it runs, about once a second, the keys it has written and
// its copy-on-write size (the memory it no longer shares with the parent, its Private_Dirty);
// at a successful end, its final copy-on-write size. The parent shows them in INFO persistence
// (current_cow_size, current_fork_perc, current_save_keys_processed, rdb_last_cow_size, ...).
//
// One child runs at a time, so the server keeps one ChildInfo. Threading: the parent's calls
// come from the thread that forks and reaps children (keyspace lock held); the child's from its
// only thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace kv::persist {

// This process' Private_Dirty memory in bytes (what a fork child has copied on write), from
// /proc/self/smaps_rollup (or smaps); 0 where neither can be read.
size_t PrivateDirtyBytes();

class ChildInfo {
 public:
  enum class Kind { kRdb, kAof };

  ChildInfo() = default;
  ChildInfo(const ChildInfo&) = delete;
  ChildInfo& operator=(const ChildInfo&) = delete;
  ~ChildInfo();

  // Parent, before fork(): a new pipe. `keys_total` is the dataset's size
  // (current_save_keys_total).
  Status Prepare(Kind kind, uint64_t keys_total);
  // After fork(), in the child: keeps the write end.
  void EnterChild();
  // After fork(), in the parent: keeps the read end. A failed fork calls EndChild instead.
  void EnterParent();

  // Child: the keys written so far, called often (every 1024 keys or so). Reports at most once
  // a second; the copy-on-write size is measured at most 1% of the time (a measurement walks
  // the process' mappings), as Redis throttles it.
  void Progress(uint64_t keys);
  // Child, before it exits with success: the final copy-on-write size, logged as Redis logs it
  // ("Fork CoW for RDB: current N MB, peak N MB, average N MB").
  void Finish(uint64_t keys);

  // Parent: takes what the child has sent (the cron, and before the child is reaped).
  void Drain();
  // Parent: the child was reaped (or never started): its last reports are taken, its final size
  // becomes rdb_last_cow_size or aof_last_cow_size, and the current figures go back to zero.
  void EndChild();

  // INFO persistence's figures.
  uint64_t keys_done() const { return keys_done_; }
  uint64_t keys_total() const { return keys_total_; }
  uint64_t cow() const { return cow_; }
  uint64_t cow_peak() const { return cow_peak_; }
  // Seconds since the child last measured its copy-on-write size (0: not yet).
  int64_t cow_age_s() const;
  uint64_t last_rdb_cow() const { return last_rdb_cow_; }
  uint64_t last_aof_cow() const { return last_aof_cow_; }

 private:
  struct Message {
    uint32_t final = 0;
    uint64_t keys = 0;
    uint64_t cow = 0;
    int64_t cow_updated_us = 0;  // monotonic
  };
  void Send(bool final, uint64_t keys);
  void CloseFds();

  Kind kind_ = Kind::kRdb;
  int read_fd_ = -1, write_fd_ = -1;
  // Parent: the running child's figures.
  uint64_t keys_done_ = 0, keys_total_ = 0, cow_ = 0, cow_peak_ = 0;
  int64_t cow_updated_us_ = 0;
  uint64_t final_cow_ = 0;
  bool got_final_ = false;
  uint64_t last_rdb_cow_ = 0, last_aof_cow_ = 0;
  // Child: when it last reported and measured, what a measurement costs, and the figures its
  // log line gives.
  int64_t last_report_us_ = 0, measured_us_ = 0, measure_cost_us_ = 0;
  uint64_t child_cow_ = 0, child_peak_ = 0, child_sum_ = 0, child_measures_ = 0;
};

}  // namespace kv::persist
