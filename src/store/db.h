// One numbered database: the key table plus the index of keys that carry a TTL, and in cluster
// mode the index of keys by hash slot.
//
// The TTL index is a dense array of (entry, expire time); each volatile entry stores its slot.
// That makes TTL lookups O(1), removal O(1) (swap with the last slot) and lets active expiry
// sample volatile keys uniformly at random, which converges faster than bucket sampling.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/hash.h"
#include "store/key_table.h"

namespace kv::store {

class LazyFreer;

class Db {
 public:
  Db() = default;
  Db(Db&&) = default;
  Db& operator=(Db&&) = default;

  // Raw lookup: ignores TTLs. Most callers want Keyspace::Lookup.
  Entry* Find(std::string_view key) { return keys_.Find(key); }
  // Adds a new key (must be absent) without a TTL.
  Entry* Add(std::string_view key, Value value);
  // Adds a key unless it is present (then nullptr, and `value` is dropped). For bulk loads.
  Entry* AddIfAbsent(std::string_view key, Value value);
  // Removes the key with its TTL and returns the entry (owned by the caller), or nullptr.
  Entry* Unlink(std::string_view key);
  bool Delete(std::string_view key);
  // Re-adds an entry that was unlinked (MOVE, RENAME); its TTL is not kept.
  void Adopt(Entry* e);
  void Clear();
  // Sizes the key table and the TTL index ahead of a bulk load.
  void Reserve(size_t keys, size_t expires);

  size_t size() const { return keys_.size(); }
  size_t expires_size() const { return ttl_.size(); }
  KeyTable& table() { return keys_; }

  // Milliseconds since the epoch, or -1 when the key has no TTL.
  int64_t GetExpire(const Entry* e) const {
    return e->has_expire() ? ttl_[e->expire_slot].when_ms : -1;
  }
  void SetExpire(Entry* e, int64_t when_ms);
  bool RemoveExpire(Entry* e);
  bool IsExpired(const Entry* e, int64_t now_ms) const {
    return e->has_expire() && ttl_[e->expire_slot].when_ms <= now_ms;
  }

  // Picks up to `samples` random volatile keys and removes the expired ones, calling
  // on_expire(key) before each removal and on_removed(microseconds the removal took) after it.
  // Returns the number removed. The removed values are freed here, or handed to `freer` when
  // one is given (lazyfree-lazy-expire).
  size_t ExpireSample(size_t samples, int64_t now_ms,
                      const std::function<void(std::string_view)>& on_expire,
                      LazyFreer* freer = nullptr,
                      const std::function<void(int64_t)>& on_removed = nullptr);
  // A volatile key chosen uniformly at random, or nullptr when none has a TTL (eviction).
  Entry* RandomVolatile() const {
    return ttl_.empty() ? nullptr : ttl_[RandomBelow(ttl_.size())].entry;
  }
  // Average remaining TTL of a sample of volatile keys, in ms (INFO keyspace avg_ttl).
  int64_t AvgTtlSample(int64_t now_ms) const;

  // Cluster mode: every key listed under its hash slot (common/key_slot.h), so that a slot's
  // keys are counted and found without a scan (CLUSTER COUNTKEYSINSLOT, GETKEYSINSLOT, slot
  // migration). Enabling indexes the keys already there; off, nothing is kept.
  void EnableSlotIndex();
  void DisableSlotIndex() { slots_.reset(); }
  bool slot_indexed() const { return slots_ != nullptr; }
  // Both need the index.
  size_t KeysInSlot(int slot) const { return (*slots_)[slot].size(); }
  // The slot's keys, in no order; valid until the next change of the db.
  std::span<Entry* const> SlotKeys(int slot) const { return (*slots_)[slot]; }

 private:
  struct TtlSlot {
    Entry* entry;
    int64_t when_ms;
  };
  void DropTtlSlot(Entry* e);
  void IndexSlot(Entry* e);
  void UnindexSlot(Entry* e);

  KeyTable keys_;
  std::vector<TtlSlot> ttl_;
  std::unique_ptr<std::vector<std::vector<Entry*>>> slots_;  // kClusterSlots lists, or null
};

}  // namespace kv::store
