// The databases and the keyspace-wide rules: TTL semantics on lookup (lazy expiry), active
// expiry, access tracking for OBJECT IDLETIME/FREQ, and the observer that learns of keys the
// keyspace removes on its own (so the server can propagate DEL and fire notifications).
// Not thread-safe: the server calls it under its keyspace lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/db.h"
#include "store/lazy_free.h"

namespace kv::store {

class KeyspaceObserver {
 public:
  virtual ~KeyspaceObserver() = default;
  // A key is about to be removed because its TTL passed (lazily or actively).
  virtual void OnKeyExpired(int db, std::string_view key) = 0;
  // An expired key's removal (unlinking it and freeing its value here, or handing a big one to
  // the background freer) took `us` microseconds: Redis' "expire-del" latency event.
  virtual void OnExpiredKeyRemoved(int64_t us) {}
};

// When the collection types switch from their compact encoding to the general one: Redis 7.0's
// parameters of the same names (the server keeps them in step with CONFIG SET). Conversions go
// one way, as in Redis: a collection that outgrew its compact form keeps the general form.
struct EncodingLimits {
  size_t hash_max_listpack_entries = 512;
  size_t hash_max_listpack_value = 64;
  size_t set_max_intset_entries = 512;
  size_t zset_max_listpack_entries = 128;
  size_t zset_max_listpack_value = 64;
  int64_t list_max_listpack_size = -2;  // quicklist node size: <0 bytes class, >0 entries
  int64_t list_compress_depth = 0;      // plain nodes at each end of a list (0: no compression)
  size_t stream_node_max_bytes = 4096;  // a stream node's listpack bytes (0: no limit)
  int64_t stream_node_max_entries = 100;  // a stream node's entries, live and deleted (0: none)
};

// The lazyfree-* settings the keyspace's users read (the server keeps them in step).
struct LazyFreeSettings {
  bool user_del = false;    // lazyfree-lazy-user-del: DEL as UNLINK
  bool user_flush = false;  // lazyfree-lazy-user-flush: FLUSHALL / FLUSHDB as ASYNC
  bool eviction = false;    // lazyfree-lazy-eviction
  bool expire = false;      // lazyfree-lazy-expire: expired keys (lazily and actively)
  bool server_del = false;  // lazyfree-lazy-server-del: overwritten and replaced values
};

struct ExpireCycleStats {
  size_t sampled = 0;
  size_t expired = 0;
  bool timed_out = false;
  int64_t elapsed_us = 0;  // the cycle's own time, deletions and notifications included
};

// Who looks a key up, which decides what a passed TTL means on a replica (expire_deletes()
// false), as Redis' expireIfNeeded: the primary's own commands see the key as it is (its DEL
// will remove it), a write command of the replica's own client removes it (a writable
// replica), anything else only hides it. A primary removes an expired key whoever looks.
enum class Looker { kClient, kClientWrite, kPrimary };

class Keyspace {
 public:
  explicit Keyspace(int num_dbs);

  int num_dbs() const { return static_cast<int>(dbs_.size()); }
  Db& db(int i) { return dbs_[i]; }

  // Looks a key up, honouring its TTL. An expired key is removed (and reported to the observer)
  // unless expiry is owned elsewhere (a replica: see Looker) or paused (CLIENT PAUSE).
  Entry* Lookup(int db, std::string_view key, int64_t now_ms, Looker who = Looker::kClient);
  // Adds or replaces a key's value. The TTL is dropped unless keep_ttl.
  Entry* Set(int db, std::string_view key, Value value, bool keep_ttl = false);
  // Removes a key. `lazy` (UNLINK, the lazyfree-* settings) hands a big value to the
  // background freer instead of freeing it here.
  bool Delete(int db, std::string_view key, bool lazy = false);
  // A deletion the server does on its own behalf (Redis' dbDelete: RENAME's or COPY's
  // overwritten target, RESTORE REPLACE, a whole set SPOP took): lazy under
  // lazyfree-lazy-server-del.
  bool ServerDelete(int db, std::string_view key) {
    return Delete(db, key, lazy_settings_.server_del);
  }
  // Replaces the value of a present key in place, TTL kept (Redis' dbOverwrite): the old value
  // is freed on the background freer under lazyfree-lazy-server-del.
  void Overwrite(Entry* e, Value value);
  // Frees a value the server built and is done with (SUNION's reply set): on the background
  // freer under lazyfree-lazy-server-del, as Redis frees its temporary set.
  void FreeServerValue(Value value);
  // Frees an unlinked database set (a replica's old dataset after a sync) on the background
  // freer, as Redis' emptyDbAsync.
  void FreeDbsAsync(Keyspace& other);

  void SwapDb(int a, int b) {
    std::swap(dbs_[a], dbs_[b]);
    KeepSlotIndex();
  }
  // Exchanges every database with `other`'s (same number of dbs); settings stay.
  void SwapData(Keyspace& other) {
    std::swap(dbs_, other.dbs_);
    KeepSlotIndex();
    other.KeepSlotIndex();
  }
  // Cluster mode: db 0 (the only one a cluster node serves) keeps its keys indexed by hash
  // slot (Db::EnableSlotIndex), through flushes and swaps.
  void EnableSlotIndex();
  bool slot_indexed() const { return slot_index_; }
  // Empties every database, or one; `async` (FLUSHALL ASYNC) frees their contents on the
  // background freer.
  void FlushAll(bool async = false);
  void FlushDb(int db, bool async);
  LazyFreer& lazy_freer();  // started on first use
  // INFO's lazyfree_pending_objects and lazyfreed_objects (0 before any lazy free).
  size_t lazy_pending() const { return lazy_ ? lazy_->pending() : 0; }
  uint64_t lazy_freed() const { return lazy_ ? lazy_->freed() : 0; }
  size_t TotalKeys() const;

  // Redis' active expiry: sample volatile keys of each db, up to `budget_us`, repeating a db
  // while more of its sample than the acceptable share was expired. `effort` is
  // active-expire-effort (1..10): ExpireSamplesPerLoop keys a sample, and an acceptable stale
  // share of 10 - (effort - 1) percent.
  ExpireCycleStats ActiveExpireCycle(int64_t budget_us, int64_t now_ms, int effort = 1);
  static size_t ExpireSamplesPerLoop(int effort);
  // The share of each cron period the cycle may take, in percent: 25 + 2 * (effort - 1).
  static int ExpireCyclePercent(int effort);
  // Incremental rehash upkeep for every table.
  void Cron(int64_t budget_us);
  void SetResizeAllowed(bool allowed);
  bool resize_allowed() const { return resize_allowed_; }

  // Access tracking (LRU seconds, or Redis' LFU log counter when lfu is on). Like Redis' LRU
  // clock, the time it uses is cached: the server ticks it from its cron (resolution 1 s), so
  // reads need no clock call.
  void TickClock(int64_t now_ms);
  void Touch(Entry* e);
  void set_lfu(bool on, int log_factor, int decay_minutes);
  bool lfu() const { return lfu_; }
  // Seconds since last access (LRU mode).
  int64_t IdleSeconds(const Entry* e) const;
  // The LFU counter after decay (LFU mode).
  int LfuFrequency(const Entry* e) const;
  // Records creation time for a new entry (LFU starts at 5, like Redis' LFU_INIT_VAL).
  void InitAccess(Entry* e);
  // Access metadata from a snapshot or RESTORE: idle seconds (applied in LRU mode only) and an
  // LFU counter (applied in LFU mode only), as Redis' objectSetLRUOrLFU.
  void SetIdleSeconds(Entry* e, int64_t idle_s);
  void SetLfuFrequency(Entry* e, int freq);

  LazyFreeSettings& lazy_free_settings() { return lazy_settings_; }
  EncodingLimits& limits() { return limits_; }
  const EncodingLimits& limits() const { return limits_; }

  void set_observer(KeyspaceObserver* o) { observer_ = o; }
  // When false (a replica) expired keys are hidden by Lookup but not removed.
  void set_expire_deletes(bool on) {
    expire_deletes_ = on;
    if (on) local_expires_.clear();
  }
  bool expire_deletes() const { return expire_deletes_; }
  // Whether a command that sets a TTL already past removes the key at once (Redis'
  // checkAlreadyExpired): not while loading, and not on a replica, which stores the key and
  // leaves it to the primary's DEL.
  bool PastTtlDeletes() const { return !loading_ && expire_deletes_; }
  // While paused (CLIENT PAUSE) expired keys are hidden but neither lazily nor actively removed.
  void set_expire_paused(bool on) { expire_paused_ = on; }
  bool expire_paused() const { return expire_paused_; }

  // A writable replica's own keys with a TTL (Redis' slaveKeysWithExpire): the replica's
  // clients wrote them, so no DEL from the primary will come, and the replica expires them
  // itself. TrackLocalExpire remembers a key a client of the replica changed (kept only while
  // it has a TTL); ExpireLocalKeys removes those whose time passed, visiting at most
  // `max_visits` of them per call (a rotating cursor), and returns the number removed.
  void TrackLocalExpire(int db, std::string_view key);
  size_t ExpireLocalKeys(int64_t now_ms, size_t max_visits);
  size_t local_expires() const { return local_expires_.size(); }
  // While an AOF is replayed nothing expires, as in Redis: a key whose TTL passed since it was
  // written is still there for the commands that follow it in the file (and an expire time in
  // the past is set, not applied), and expires once the server runs.
  void set_loading(bool on) { loading_ = on; }
  bool loading() const { return loading_; }
  uint64_t expired_keys() const { return expired_keys_; }
  void ResetStats() {
    expired_keys_ = 0;
    if (lazy_) lazy_->ResetStats();
  }

 private:
  // Indexes db 0 where the slot index is on (a db swapped or created since), and no other.
  void KeepSlotIndex();
  std::vector<Db> dbs_;
  EncodingLimits limits_;
  LazyFreeSettings lazy_settings_;
  KeyspaceObserver* observer_ = nullptr;
  bool expire_deletes_ = true;
  bool expire_paused_ = false;
  std::map<std::string, uint64_t, std::less<>> local_expires_;  // key -> bitmap of dbs
  std::string local_expires_cursor_;
  // Removes an expired key as expiry does: the observer first, the count, then the key.
  void RemoveExpired(int dbi, std::string_view key);
  bool loading_ = false;
  uint64_t expired_keys_ = 0;
  size_t expire_db_cursor_ = 0;
  uint32_t NowMinutes16() const;

  bool resize_allowed_ = true;
  bool slot_index_ = false;
  std::unique_ptr<LazyFreer> lazy_;
  uint32_t clock_s_ = 0;  // cached wall clock, seconds
  bool lfu_ = false;
  int lfu_log_factor_ = 10;
  int lfu_decay_minutes_ = 1;
};

}  // namespace kv::store
