// Freeing on a background thread, as Redis' lazyfree: a key unlinked from its database is handed
// over and freed there, so deleting a big collection does not stall the server. Only values worth
// it go (a free effort above 64, Redis' LAZYFREE_THRESHOLD: the elements of a hash table or
// skiplist encoding, the nodes of a list); others are freed at once. Whole databases (FLUSHALL
// ASYNC) go as they are, and the memory is handed back to the OS after them, as a sync flush does.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "store/db.h"

namespace kv::store {

class LazyFreer {
 public:
  LazyFreer();
  ~LazyFreer();  // frees what is queued, then stops the thread
  LazyFreer(const LazyFreer&) = delete;
  LazyFreer& operator=(const LazyFreer&) = delete;

  // Takes ownership of an unlinked entry: freed now if cheap, else on the thread.
  void Free(Entry* e);
  // Takes databases whose contents are freed on the thread.
  void FreeDbs(std::vector<Db> dbs);

  // Redis' free effort: 1 for strings and compact encodings, else the elements (list nodes).
  static size_t FreeEffort(const Entry& e);
  static constexpr size_t kThreshold = 64;

  // INFO: objects waiting to be freed, and freed on the thread so far.
  size_t pending() const { return pending_.load(std::memory_order_relaxed); }
  uint64_t freed() const { return freed_.load(std::memory_order_relaxed); }
  void ResetStats() { freed_.store(0, std::memory_order_relaxed); }
  // Returns once everything handed over so far is freed.
  void Drain();

 private:
  struct Job {
    Entry* entry = nullptr;
    std::vector<Db> dbs;
  };
  void Run();

  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  bool busy_ = false;
  std::atomic<size_t> pending_{0};
  std::atomic<uint64_t> freed_{0};
  std::thread thread_;
};

}  // namespace kv::store
