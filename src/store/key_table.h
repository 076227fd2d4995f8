// An intrusive chained hash table of Entry, keyed by Entry::key().
//
// It grows (at load factor 1) and shrinks (below 10% fill, from Cron()) by incremental rehash:
// two bucket arrays exist while rehashing and every lookup, insert and delete moves one bucket
// along (plus a time-bounded step from Cron()), so no operation ever stops to resize the whole
// table. Scan() implements Redis' reverse-binary cursor, which returns every key present for the
// whole scan at least once, even across resizes.
//
// The table owns its entries: Clear() and the destructor destroy them, Unlink() hands one back.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "store/entry.h"

namespace kv::store {

class KeyTable {
 public:
  KeyTable() = default;
  ~KeyTable() { Clear(); }
  KeyTable(const KeyTable&) = delete;
  KeyTable& operator=(const KeyTable&) = delete;
  KeyTable(KeyTable&& o) noexcept;
  KeyTable& operator=(KeyTable&& o) noexcept;

  Entry* Find(std::string_view key);
  // Adds e, whose key must not be present.
  void Insert(Entry* e);
  // Removes the key and returns its entry (now owned by the caller), or nullptr.
  Entry* Unlink(std::string_view key);
  // Destroys every entry; the table returns to its initial size.
  void Clear();

  size_t size() const { return t_[0].used + t_[1].used; }
  size_t bucket_count() const { return t_[0].size() + t_[1].size(); }
  bool rehashing() const { return rehash_idx_ >= 0; }

  // Brings the buckets of these keys, then their first entries, into the cache, so lookups that
  // follow (a pipeline's) overlap their memory latency instead of paying it one by one.
  void Prefetch(std::span<const std::string_view> keys) const;

  // A uniformly chosen bucket's random entry, or nullptr if empty.
  Entry* Random();
  // Visits the buckets at `cursor` and returns the next cursor (0 when done).
  uint64_t Scan(uint64_t cursor, const std::function<void(Entry*)>& fn);
  // Visits every entry; fn must not modify the table.
  void ForEach(const std::function<void(Entry*)>& fn) const;

  // Moves up to n buckets to the new array. Returns true while rehashing remains.
  bool RehashSteps(int n);
  // Periodic upkeep: starts a shrink when the table is sparse and rehashes for up to budget_us.
  void Cron(int64_t budget_us);
  // While paused (a snapshot child is running) the table grows only when badly overloaded,
  // to spare copy-on-write pages, as Redis does.
  void set_resize_allowed(bool allowed) { resize_allowed_ = allowed; }

 private:
  struct Table {
    std::unique_ptr<Entry*[]> b;
    size_t mask = 0;  // size - 1; meaningless when b is null
    size_t used = 0;
    size_t size() const { return b ? mask + 1 : 0; }
  };

  static uint64_t HashOf(std::string_view key);
  void StartResize(size_t min_size);
  void ExpandIfNeeded();

  Table t_[2];
  int64_t rehash_idx_ = -1;  // next bucket of t_[0] to move; -1 when not rehashing
  bool resize_allowed_ = true;
};

}  // namespace kv::store
