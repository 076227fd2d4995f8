#include "server/evict.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "common/alloc_count.h"
#include "common/clock.h"
#include "common/logging.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "server/client_eviction.h"
#include "server/persistence/aof.h"
#include "server/server.h"
#include "store/key_table.h"

namespace kv::server {

EvictPolicy ParseEvictPolicy(const std::string& name) {
  static const std::pair<const char*, EvictPolicy> kNames[] = {
      {"allkeys-lru", EvictPolicy::kAllkeysLru},
      {"allkeys-lfu", EvictPolicy::kAllkeysLfu},
      {"allkeys-random", EvictPolicy::kAllkeysRandom},
      {"volatile-lru", EvictPolicy::kVolatileLru},
      {"volatile-lfu", EvictPolicy::kVolatileLfu},
      {"volatile-random", EvictPolicy::kVolatileRandom},
      {"volatile-ttl", EvictPolicy::kVolatileTtl},
  };
  for (const auto& [n, p] : kNames) {
    if (name == n) return p;
  }
  return EvictPolicy::kNoEviction;
}

namespace {
// The Evictor the keyspace's tables ask before they grow (store::KeyTable::expand_guard).
Evictor* g_table_guard = nullptr;
bool KeyTableMayGrow(size_t more_bytes, double load) {
  return g_table_guard == nullptr || g_table_guard->AllowsTableGrowth(more_bytes, load);
}
// Redis' HASHTABLE_MAX_LOAD_FACTOR: past it a table grows whatever memory says.
constexpr double kMaxLoadKeptForMemory = 1.618;

bool AllKeys(EvictPolicy p) {
  return p == EvictPolicy::kAllkeysLru || p == EvictPolicy::kAllkeysLfu ||
         p == EvictPolicy::kAllkeysRandom;
}
bool Random(EvictPolicy p) {
  return p == EvictPolicy::kAllkeysRandom || p == EvictPolicy::kVolatileRandom;
}
}  // namespace

Evictor::Evictor(Server& server) : server_(server) {
  g_table_guard = this;
  store::KeyTable::expand_guard = &KeyTableMayGrow;
}

Evictor::~Evictor() {
  if (g_table_guard == this) g_table_guard = nullptr;
}

bool Evictor::AllowsTableGrowth(size_t more_bytes, double load) const {
  if (maxmemory_ == 0 || load > kMaxLoadKeptForMemory) return true;
  if (AllocatedBytes() + more_bytes <= maxmemory_) return true;  // the cheap check first
  return UsedForEviction() + more_bytes <= maxmemory_;
}

void Evictor::set_policy(EvictPolicy p) {
  if (p == policy_) return;
  policy_ = p;
  for (auto& c : slots_) c.db = -1;  // scores of another policy do not compare
}

// As Redis' freeMemoryGetNotCountedMemory: the replicas' output and the AOF's buffer. And the
// clients evicted for maxmemory-clients that their loops are closing: Redis frees them at once.
size_t Evictor::NotCounted() const {
  return server_.primary().OutputBytes() + server_.aof().buffer_length() +
         server_.client_eviction().freeing();
}

size_t Evictor::UsedForEviction() const {
  size_t used = AllocatedBytes();
  size_t not_counted = NotCounted();
  return used > not_counted ? used - not_counted : 0;
}

// Redis' evictionTimeLimitUs: 50 us a step of tenacity up to 10 (500 us, the default), then
// 15% more a step; 100 is no limit.
uint64_t Evictor::TimeLimitUs() const {
  if (tenacity_ <= 10) return 50ull * static_cast<uint64_t>(tenacity_);
  if (tenacity_ < 100) return static_cast<uint64_t>(500.0 * std::pow(1.15, tenacity_ - 10));
  return std::numeric_limits<uint64_t>::max();
}

void Evictor::Insert(uint64_t score, int db, std::string_view key) {
  // As evictionPoolPopulate: the pool is sorted by score, ascending, empty places on the right.
  // The places hold slot numbers, so making room moves bytes, not keys.
  auto at = [&](size_t k) -> Candidate& { return slots_[order_[k]]; };
  size_t k = 0;
  while (k < kPoolSize && at(k).db >= 0 && at(k).score < score) k++;
  if (k == 0 && at(kPoolSize - 1).db >= 0) return;  // worse than everything in a full pool
  if (k < kPoolSize && at(k).db < 0) {
    // An empty place.
  } else if (at(kPoolSize - 1).db < 0) {
    std::rotate(order_.begin() + k, order_.end() - 1, order_.end());  // room on the right
  } else {
    k--;  // full: drop the lowest score, to the left
    std::rotate(order_.begin(), order_.begin() + 1, order_.begin() + k + 1);
  }
  Candidate& c = at(k);
  c.score = score;
  c.db = db;
  c.key.assign(key);
}

void Evictor::Populate(int dbi) {
  store::Keyspace& ks = server_.keyspace();
  store::Db& db = ks.db(dbi);
  // As Redis: the samples come from consecutive buckets of the key table (of the TTL index for
  // the volatile policies: uniformly).
  store::Entry* sample[64];
  size_t n = std::min<size_t>(static_cast<size_t>(samples_), std::size(sample));
  if (AllKeys(policy_)) {
    n = db.table().SomeEntries(n, sample);
  } else {
    for (size_t i = 0; i < n; i++) {
      if ((sample[i] = db.RandomVolatile()) == nullptr) return;
    }
  }
  for (size_t i = 0; i < n; i++) {
    store::Entry* e = sample[i];
    uint64_t score = 0;
    switch (policy_) {
      case EvictPolicy::kAllkeysLru:
      case EvictPolicy::kVolatileLru:
        score = static_cast<uint64_t>(ks.IdleSeconds(e));
        break;
      case EvictPolicy::kAllkeysLfu:
      case EvictPolicy::kVolatileLfu:
        score = 255 - static_cast<uint64_t>(ks.LfuFrequency(e));
        break;
      case EvictPolicy::kVolatileTtl:
        score = std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(db.GetExpire(e));
        break;
      default:
        return;
    }
    Insert(score, dbi, e->key());
  }
}

bool Evictor::Pick(int* db, std::string* key) {
  store::Keyspace& ks = server_.keyspace();
  int dbs = ks.num_dbs();
  bool all = AllKeys(policy_);
  if (Random(policy_)) {
    for (int i = 0; i < dbs; i++) {
      int j = next_db_ = (next_db_ + 1) % dbs;
      store::Db& d = ks.db(j);
      store::Entry* e = all ? d.table().Random() : d.RandomVolatile();
      if (e != nullptr) {
        *db = j;
        key->assign(e->key());
        return true;
      }
    }
    return false;
  }
  for (;;) {
    size_t candidates = 0;
    for (int i = 0; i < dbs; i++) {
      store::Db& d = ks.db(i);
      size_t n = all ? d.size() : d.expires_size();
      if (n == 0) continue;
      candidates += n;
      Populate(i);
    }
    if (candidates == 0) return false;
    // Best first; a key deleted since it was sampled (a ghost) is skipped.
    for (size_t k = kPoolSize; k-- > 0;) {
      Candidate& c = slots_[order_[k]];
      if (c.db < 0) continue;
      int d = c.db;
      c.db = -1;  // out of the pool; its key's buffer stays for the next candidate
      store::Entry* e = ks.db(d).Find(c.key);
      if (e != nullptr && (all || e->has_expire())) {
        *db = d;
        key->assign(c.key);
        return true;
      }
    }
  }
}

Evictor::Outcome Evictor::Perform() {
  if (maxmemory_ == 0) return Outcome::kOk;
  // CLIENT PAUSE keeps the data set still: nothing is evicted, and nothing refused for memory.
  if (server_.clients_paused()) return Outcome::kOk;
  // Nor while a dataset loads (Redis' isSafeToPerformEvictions): a replica's load into its live
  // dataset lets the lock go now and then, and must not lose what it has loaded.
  if (server_.replica().loading() || server_.loading_at_startup()) return Outcome::kOk;
  // A replica leaves eviction to its primary (whose DELs it applies): replica-ignore-maxmemory.
  if (ignore_on_replica_ && server_.replica().is_replica()) {
    return Outcome::kOk;
  }
  size_t used = UsedForEviction();
  MarkOver(used > maxmemory_);
  if (used <= maxmemory_) return Outcome::kOk;
  if (policy_ == EvictPolicy::kNoEviction) return Outcome::kFail;
  size_t to_free = used - maxmemory_;
  size_t freed = 0;
  uint64_t keys = 0;
  int64_t start = 0;  // read after the first key: most commands evict one, and need no clock
  Outcome outcome = Outcome::kOk;
  std::string key;
  int db = 0;
  const bool lazy = server_.keyspace().lazy_free_settings().eviction;
  while (freed < to_free) {
    if (keys == 1) start = MonoUs();
    if (!Pick(&db, &key)) {
      outcome = Outcome::kFail;
      break;
    }
    freed += server_.EvictKey(db, key);
    evicted_keys_++;
    keys++;
    if (keys % 16 == 0) {
      // Freed in the background, the memory is not seen going down here: look at it anew.
      if (lazy && UsedForEviction() <= maxmemory_) {
        freed = to_free;
        break;
      }
      if (static_cast<uint64_t>(MonoUs() - start) > TimeLimitUs()) {
        StartTimer();  // the rest is the timer's: commands meanwhile are not refused
        break;
      }
    }
  }
  // Nothing left to evict, but the background freer has work: as Redis, wait for it a little
  // (within the pass's time limit) before refusing the command.
  if (outcome == Outcome::kFail && lazy) {
    if (start == 0) start = MonoUs();
    store::LazyFreer& freer = server_.keyspace().lazy_freer();
    while (freer.pending() > 0 && static_cast<uint64_t>(MonoUs() - start) < TimeLimitUs()) {
      if (UsedForEviction() <= maxmemory_) {
        outcome = Outcome::kOk;
        freed = to_free;
        break;
      }
      std::this_thread::sleep_for(
          std::chrono::microseconds(std::min<uint64_t>(TimeLimitUs(), 1000)));
    }
  }
  if (freed >= to_free) MarkOver(false);
  if (outcome == Outcome::kOk && timer_running_) outcome = Outcome::kRunning;
  return outcome;
}

void Evictor::MarkOver(bool over) {
  if (over == (over_since_us_ != 0)) return;  // no change: no clock reading, every command
  int64_t now = MonoUs();
  if (over) {
    over_since_us_ = now;
  } else {
    over_total_us_ += static_cast<uint64_t>(now - over_since_us_);
    over_since_us_ = 0;
  }
}

uint64_t Evictor::ExceededMs(int64_t now_us, bool total) const {
  uint64_t current = over_since_us_ ? static_cast<uint64_t>(now_us - over_since_us_) : 0;
  return ((total ? over_total_us_ : 0) + current) / 1000;
}

void Evictor::StartTimer() {
  if (timer_running_) return;
  timer_running_ = true;
  // On the cron's loop (whichever poll group's thread evicted): it runs between that loop's
  // rounds of events, so clients are served meanwhile.
  // A busy script holds the lock: evicting waits for its end, as it does in Redis.
  net::EventLoop& loop = server_.group(0).loop();
  loop.Post([this, &loop] {
    server_.WhenLocked(loop, [this] {
      timer_running_ = false;  // Perform posts again while there is more to do
      Perform();
    });
  });
}

bool Server::SharesIntegers() const {
  EvictPolicy p = evictor_->policy();
  bool clocked = p == EvictPolicy::kAllkeysLru || p == EvictPolicy::kAllkeysLfu ||
                 p == EvictPolicy::kVolatileLru || p == EvictPolicy::kVolatileLfu;
  return !(evictor_->maxmemory() != 0 && clocked);
}

}  // namespace kv::server
