// maxmemory and its eviction policies, as Redis 7.0's evict.c: before a command runs, keys are
// evicted until the memory in use (common/alloc_count.h, less what Redis does not count: the
// replicas' output buffers) is within maxmemory. The LRU, LFU and TTL policies sample
// maxmemory-samples keys of every database into a pool of the 16 best candidates kept between
// calls; the random policies pick a random key, one database after the other. Each eviction
// removes the key as DEL does: WATCH sees it, the "evicted" keyspace event fires, and a DEL goes
// to the replicas. A pass that runs longer than maxmemory-eviction-tenacity allows stops and is
// resumed from the cron's event loop, so one command does not stall everyone. Nothing is
// evicted while CLIENT PAUSE is in force (the data set stands still).
// Under the keyspace lock, like the keyspace itself.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kv::server {

class Server;

enum class EvictPolicy {
  kNoEviction,
  kAllkeysLru,
  kAllkeysLfu,
  kAllkeysRandom,
  kVolatileLru,
  kVolatileLfu,
  kVolatileRandom,
  kVolatileTtl,
};

// maxmemory-policy's value as a policy (noeviction for anything else).
EvictPolicy ParseEvictPolicy(const std::string& name);

class Evictor {
 public:
  enum class Outcome {
    kOk,       // within the limit (or no limit, or not this server's job)
    kRunning,  // over it still, and a timer goes on evicting: commands are not refused
    kFail,     // over it and nothing more can be evicted: denyoom commands are refused
  };

  // The keyspace's tables ask the last Evictor made (the server's) before they grow.
  explicit Evictor(Server& server);
  ~Evictor();
  Evictor(const Evictor&) = delete;
  Evictor& operator=(const Evictor&) = delete;

  void set_maxmemory(uint64_t bytes) { maxmemory_ = bytes; }
  uint64_t maxmemory() const { return maxmemory_; }
  void set_policy(EvictPolicy p);
  EvictPolicy policy() const { return policy_; }
  void set_samples(int n) { samples_ = n; }
  void set_tenacity(int t) { tenacity_ = t; }
  void set_ignore_on_replica(bool on) { ignore_on_replica_ = on; }  // replica-ignore-maxmemory

  // Evicts until the memory in use is within maxmemory, or until the pass's time is up.
  Outcome Perform();
  // The memory maxmemory is checked against (in use less what is not counted), and that part.
  size_t UsedForEviction() const;
  size_t NotCounted() const;
  // Whether a key table may grow by `more_bytes` at load factor `load`: as Redis'
  // dictExpandAllowed, not when that would put memory over maxmemory (the growth would evict
  // keys), unless the table is loaded past 1.618.
  bool AllowsTableGrowth(size_t more_bytes, double load) const;

  uint64_t evicted_keys() const { return evicted_keys_; }
  void ResetStats() {
    evicted_keys_ = 0;
    over_total_us_ = 0;
  }
  // Whether a timer is continuing a pass.
  bool running() const { return timer_running_; }
  // Evicts from the cron's event loop, after the present command (CONFIG SET maxmemory, which
  // as in Redis 7.0 returns before evicting: inside EXEC the transaction's commands all run
  // before any key goes).
  void StartTimer();
  // INFO's total_eviction_exceeded_time (all the time memory was over maxmemory; total) or
  // current_eviction_exceeded_time (the present stretch, 0 when within), in ms.
  uint64_t ExceededMs(int64_t now_us, bool total) const;

 private:
  struct Candidate {
    uint64_t score = 0;  // higher evicts first: idle time, 255 - LFU counter, or time to expiry
    int db = -1;
    std::string key;
  };
  static constexpr size_t kPoolSize = 16;

  // The next key to evict, per the policy; false when no database has a candidate.
  bool Pick(int* db, std::string* key);
  void Populate(int db);
  void Insert(uint64_t score, int db, std::string_view key);
  uint64_t TimeLimitUs() const;

  Server& server_;
  uint64_t maxmemory_ = 0;
  EvictPolicy policy_ = EvictPolicy::kNoEviction;
  int samples_ = 5;
  int tenacity_ = 10;
  bool ignore_on_replica_ = true;
  // The pool: order_[k] is the slot of the k-th candidate, by score ascending; db < 0: empty.
  std::array<Candidate, kPoolSize> slots_;
  std::array<uint8_t, kPoolSize> order_ = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  int next_db_ = 0;  // the random policies' round robin
  uint64_t evicted_keys_ = 0;
  bool timer_running_ = false;
  int64_t over_since_us_ = 0;  // when memory went over maxmemory; 0 while within
  uint64_t over_total_us_ = 0;
  // Records whether memory is over the limit now (for ExceededMs).
  void MarkOver(bool over);
};

}  // namespace kv::server
