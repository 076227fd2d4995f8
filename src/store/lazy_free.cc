#include "store/lazy_free.h"

#include <malloc.h>

#include <cstring>

#include "common/cpu_affinity.h"

namespace kv::store {

LazyFreer::LazyFreer() : thread_([this] { Run(); }) {}

LazyFreer::~LazyFreer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

size_t LazyFreer::FreeEffort(const Entry& e) {
  const Collection* c = e.value.object();
  if (c == nullptr) return 1;
  const char* enc = c->EncodingName();
  if (strcmp(enc, "listpack") == 0 || strcmp(enc, "intset") == 0) return 1;
  // A list's nodes hold up to 8 KB each (list-max-listpack-size -2).
  if (e.value.type() == ObjType::kList) return c->MemoryUsage() / 8192 + 1;
  return c->Size();
}

void LazyFreer::Free(Entry* e) {
  if (FreeEffort(*e) <= kThreshold) {
    Entry::Destroy(e);
    return;
  }
  pending_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{e, {}});
  }
  cv_.notify_one();
}

void LazyFreer::FreeDbs(std::vector<Db> dbs) {
  size_t keys = 0;
  for (const Db& d : dbs) keys += d.size();
  if (keys == 0) return;
  pending_.fetch_add(keys, std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{nullptr, std::move(dbs)});
  }
  cv_.notify_one();
}

void LazyFreer::Drain() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return jobs_.empty() && !busy_; });
}

void LazyFreer::Run() {
  PinThreadForRole(ThreadRole::kBackground);  // bio_cpulist
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    size_t n = 0;
    if (job.entry != nullptr) {
      Entry::Destroy(job.entry);
      n = 1;
    } else {
      for (Db& d : job.dbs) {
        n += d.size();
        d.Clear();
      }
      malloc_trim(0);  // a flush gives its memory back, as a sync one does
    }
    pending_.fetch_sub(n, std::memory_order_relaxed);
    freed_.fetch_add(n, std::memory_order_relaxed);
    lock.lock();
    busy_ = false;
    if (jobs_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace kv::store
