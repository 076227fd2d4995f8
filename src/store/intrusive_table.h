// An intrusive chained hash table with incremental rehash, keyed by Node::key().
//
// It grows (at load factor 1) and shrinks (below 10% fill, from Cron()) by incremental rehash:
// two bucket arrays exist while rehashing and every lookup, insert and delete moves one bucket
// along (plus a time-bounded step from Cron()), so no operation ever stops to resize the whole
// table. Scan() implements Redis' reverse-binary cursor, which returns every key present for the
// whole scan at least once, even across resizes.
//
// Node must have `Node* next`, `std::string_view key() const` and `static void Destroy(Node*)`.
// The table owns its nodes: Clear() and the destructor destroy them, Unlink() hands one back.
// Used for the keyspace (Node = Entry) and by the collection types for their large encodings.
// Not thread-safe.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "common/clock.h"
#include "common/hash.h"
#include "store/table_stats.h"

namespace kv::store {

namespace table_detail {
inline constexpr size_t kInitialSize = 4;
inline constexpr size_t kForceResizeRatio = 5;  // grow even while paused past this load factor
// Random()'s least bound on chain lengths: longer chains are rare at a load factor of at most 1
// (about one bucket in 270), and Random() raises its bound when it meets one.
inline constexpr uint32_t kMinChainBound = 4;

// Uniform in [0, n) as RandomBelow, by a multiplication instead of a division (Random() draws
// twice an attempt, and divisions would be most of its cost on a table in the cache).
inline uint64_t FastBelow(uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(RandomU64()) * n) >> 64);
}

inline uint64_t Rev(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}
}  // namespace table_detail

template <typename Node>
class IntrusiveTable {
 public:
  IntrusiveTable() = default;
  ~IntrusiveTable() { Clear(); }
  IntrusiveTable(const IntrusiveTable&) = delete;
  IntrusiveTable& operator=(const IntrusiveTable&) = delete;
  IntrusiveTable(IntrusiveTable&& o) noexcept;
  IntrusiveTable& operator=(IntrusiveTable&& o) noexcept;

  Node* Find(std::string_view key);
  // Adds e, whose key must not be present.
  void Insert(Node* e);
  // Adds e unless its key is present; returns the node already there (e is then not added), or
  // nullptr. One hash and one walk of the bucket, for bulk loads that must reject duplicates.
  Node* InsertIfAbsent(Node* e);
  // Removes the key and returns its entry (now owned by the caller), or nullptr.
  Node* Unlink(std::string_view key);
  // Destroys every entry; the table returns to its initial size.
  void Clear();
  // Sizes the table for `n` entries ahead of bulk inserts (a snapshot load): an empty table is
  // allocated at once, a filled one starts an incremental resize. Never shrinks.
  void Reserve(size_t n);

  size_t size() const { return t_[0].used + t_[1].used; }
  size_t bucket_count() const { return t_[0].size() + t_[1].size(); }
  bool rehashing() const { return rehash_idx_ >= 0; }
  // DEBUG HTSTATS: the main bucket array's figures, and the rehash target's while rehashing.
  std::vector<TableStats> Stats() const;

  // Brings the buckets of these keys, then their first entries, into the cache, so lookups that
  // follow (a pipeline's) overlap their memory latency instead of paying it one by one.
  void Prefetch(std::span<const std::string_view> keys) const;
  // Brings the bucket where this key would go into the cache (for writing): a bulk insert
  // (a snapshot load) calls it when it has the key and inserts once the value is built.
  void PrefetchBucket(std::string_view key) const {
    const Table& t = rehashing() ? t_[1] : t_[0];
    if (t.b) __builtin_prefetch(&t.b[HashOf(key) & t.mask]);
  }
  // The step after PrefetchBucket, once the bucket has arrived: brings its first entry, which
  // the insert compares keys with.
  void PrefetchChain(std::string_view key) const {
    const Table& t = rehashing() ? t_[1] : t_[0];
    if (!t.b) return;
    if (const Node* n = t.b[HashOf(key) & t.mask]) __builtin_prefetch(n);
  }

  // A random entry, every entry equally likely, or nullptr if empty. Expected cost: about
  // bucket_count() * max(longest chain, 4) / size() bucket probes, some 4 to 20 at a load factor
  // between 1/2 and 1 (see the body for how it stays fair).
  Node* Random();
  // Up to n entries from consecutive buckets from a random start, as Redis' dictGetSomeKeys
  // (eviction's sampling): far cheaper than n Random() calls on a sparse table, which pay a
  // cache miss a probe, at the price of samples that are neighbours. Returns how many: at least
  // one when the table is not empty.
  size_t SomeEntries(size_t n, Node** out);
  // Visits the buckets at `cursor` and returns the next cursor (0 when done).
  uint64_t Scan(uint64_t cursor, const std::function<void(Node*)>& fn);
  // Visits every entry; fn must not modify the table. Entries are brought into the cache a few
  // buckets ahead (and what they point to, where Node has PrefetchPayload()), so a full walk
  // (a snapshot) overlaps its cache misses instead of paying them one by one.
  void ForEach(const std::function<void(Node*)>& fn) const;

  // Moves up to n buckets to the new array. Returns true while rehashing remains.
  bool RehashSteps(int n);
  // Periodic upkeep: starts a shrink when the table is sparse and rehashes for up to budget_us.
  void Cron(int64_t budget_us);
  // While paused (a snapshot child is running) the table grows only when badly overloaded,
  // to spare copy-on-write pages, as Redis does.
  void set_resize_allowed(bool allowed) { resize_allowed_ = allowed; }
  // Asked before a table of this Node type grows (not before its first allocation): the bytes
  // the new bucket array takes and the load factor now; false keeps the table as it is, chains
  // getting longer, until the next insert asks again. For the keyspace's tables the server
  // refuses a growth that would put memory over maxmemory (Redis' dictExpandAllowed), so that
  // a rehash does not make keys be evicted. Set once at startup; nullptr: always grow.
  static inline bool (*expand_guard)(size_t more_bytes, double load) = nullptr;

 private:
  struct Table {
    std::unique_ptr<Node*[]> b;
    size_t mask = 0;  // size - 1; meaningless when b is null
    size_t used = 0;
    size_t size() const { return b ? mask + 1 : 0; }
  };

  static uint64_t HashOf(std::string_view key);
  void StartResize(size_t min_size);
  void ExpandIfNeeded();
  // The head of a bucket drawn uniformly among those that can hold entries (nullptr for an
  // empty one).
  Node* RandomBucket() const;

  Table t_[2];
  int64_t rehash_idx_ = -1;  // next bucket of t_[0] to move; -1 when not rehashing
  bool resize_allowed_ = true;
  // Random()'s bound on chain lengths: the longest chain it has met since the last resize
  // finished, and at least kMinChainBound (see Random()).
  uint32_t chain_bound_ = table_detail::kMinChainBound;
};

template <typename Node>
IntrusiveTable<Node>::IntrusiveTable(IntrusiveTable&& o) noexcept {
  *this = std::move(o);
}

template <typename Node>
IntrusiveTable<Node>& IntrusiveTable<Node>::operator=(IntrusiveTable&& o) noexcept {
  if (this == &o) return *this;
  Clear();
  t_[0] = std::move(o.t_[0]);
  t_[1] = std::move(o.t_[1]);
  rehash_idx_ = o.rehash_idx_;
  chain_bound_ = o.chain_bound_;
  o.t_[0] = Table();
  o.t_[1] = Table();
  o.rehash_idx_ = -1;
  o.chain_bound_ = table_detail::kMinChainBound;
  return *this;
}

template <typename Node>
uint64_t IntrusiveTable<Node>::HashOf(std::string_view key) { return HashKey(key); }

template <typename Node>
void IntrusiveTable<Node>::StartResize(size_t min_size) {
  size_t size = std::bit_ceil(std::max(min_size, table_detail::kInitialSize));
  if (t_[0].b && size == t_[0].size()) return;
  Table t;
  t.b = std::make_unique<Node*[]>(size);  // zero-initialized
  t.mask = size - 1;
  if (!t_[0].b) {
    t_[0] = std::move(t);
    return;
  }
  t_[1] = std::move(t);
  rehash_idx_ = 0;
}

template <typename Node>
void IntrusiveTable<Node>::Reserve(size_t n) {
  if (rehashing() || n <= t_[0].size()) return;
  if (size() == 0) t_[0] = Table();
  StartResize(n);
}

template <typename Node>
void IntrusiveTable<Node>::ExpandIfNeeded() {
  if (rehashing()) return;
  if (!t_[0].b) {
    StartResize(table_detail::kInitialSize);
    return;
  }
  if (t_[0].used >= t_[0].size() &&
      (resize_allowed_ || t_[0].used / t_[0].size() > table_detail::kForceResizeRatio)) {
    if (expand_guard != nullptr &&
        !expand_guard(std::bit_ceil(t_[0].used + 1) * sizeof(Node*),
                      static_cast<double>(t_[0].used) / static_cast<double>(t_[0].size()))) {
      return;
    }
    StartResize(t_[0].used + 1);
  }
}

template <typename Node>
bool IntrusiveTable<Node>::RehashSteps(int n) {
  if (!rehashing()) return false;
  int empty_visits = n * 10;
  while (n-- && t_[0].used != 0) {
    while (t_[0].b[rehash_idx_] == nullptr) {
      rehash_idx_++;
      if (--empty_visits == 0) return true;
    }
    Node* e = t_[0].b[rehash_idx_];
    while (e) {
      Node* next = e->next;
      size_t idx = HashOf(e->key()) & t_[1].mask;
      e->next = t_[1].b[idx];
      t_[1].b[idx] = e;
      t_[0].used--;
      t_[1].used++;
      e = next;
    }
    t_[0].b[rehash_idx_] = nullptr;
    rehash_idx_++;
  }
  if (t_[0].used == 0) {
    t_[0] = std::move(t_[1]);
    t_[1] = Table();
    rehash_idx_ = -1;
    chain_bound_ = table_detail::kMinChainBound;  // the chains are new: learn them anew
    return false;
  }
  return true;
}

template <typename Node>
Node* IntrusiveTable<Node>::Find(std::string_view key) {
  if (size() == 0) return nullptr;
  if (rehashing()) RehashSteps(1);
  uint64_t h = HashOf(key);
  for (int i = 0; i < 2; i++) {
    if (!t_[i].b) break;
    for (Node* e = t_[i].b[h & t_[i].mask]; e; e = e->next) {
      if (e->key() == key) return e;
    }
    if (!rehashing()) break;
  }
  return nullptr;
}

template <typename Node>
void IntrusiveTable<Node>::Insert(Node* e) {
  if (rehashing()) RehashSteps(1);
  ExpandIfNeeded();
  Table& t = rehashing() ? t_[1] : t_[0];
  size_t idx = HashOf(e->key()) & t.mask;
  e->next = t.b[idx];
  t.b[idx] = e;
  t.used++;
}

template <typename Node>
Node* IntrusiveTable<Node>::InsertIfAbsent(Node* e) {
  if (rehashing()) RehashSteps(1);
  ExpandIfNeeded();
  std::string_view key = e->key();
  uint64_t h = HashOf(key);
  for (int i = 0; i < 2; i++) {
    if (!t_[i].b) break;
    for (Node* n = t_[i].b[h & t_[i].mask]; n; n = n->next) {
      if (n->key() == key) return n;
    }
    if (!rehashing()) break;
  }
  Table& t = rehashing() ? t_[1] : t_[0];
  size_t idx = h & t.mask;
  e->next = t.b[idx];
  t.b[idx] = e;
  t.used++;
  return nullptr;
}

template <typename Node>
Node* IntrusiveTable<Node>::Unlink(std::string_view key) {
  if (size() == 0) return nullptr;
  if (rehashing()) RehashSteps(1);
  uint64_t h = HashOf(key);
  for (int i = 0; i < 2; i++) {
    if (!t_[i].b) break;
    Node** link = &t_[i].b[h & t_[i].mask];
    for (Node* e = *link; e; link = &e->next, e = e->next) {
      if (e->key() == key) {
        *link = e->next;
        e->next = nullptr;
        t_[i].used--;
        return e;
      }
    }
    if (!rehashing()) break;
  }
  return nullptr;
}

template <typename Node>
void IntrusiveTable<Node>::Prefetch(std::span<const std::string_view> keys) const {
  if (size() == 0 || keys.size() > 64) return;
  // The table being rehashed keeps moved buckets in t_[1]; prefetch where lookups look first.
  const Table& t = t_[0];
  Node* const* slots[64];
  size_t n = 0;
  for (std::string_view k : keys) {
    slots[n] = &t.b[HashOf(k) & t.mask];
    __builtin_prefetch(slots[n]);
    n++;
  }
  for (size_t i = 0; i < n; i++) {
    if (Node* e = *slots[i]) __builtin_prefetch(e);
  }
}

template <typename Node>
void IntrusiveTable<Node>::Clear() {
  for (auto& t : t_) {
    for (size_t i = 0; i < t.size(); i++) {
      Node* e = t.b[i];
      while (e) {
        Node* next = e->next;
        Node::Destroy(e);
        e = next;
      }
    }
    t = Table();
  }
  rehash_idx_ = -1;
  chain_bound_ = table_detail::kMinChainBound;
}

template <typename Node>
Node* IntrusiveTable<Node>::RandomBucket() const {
  if (!rehashing()) return t_[0].b[RandomU64() & t_[0].mask];
  // Buckets of t_[0] below rehash_idx_ are empty (moved); draw among the others of both.
  size_t s0 = t_[0].size(), s1 = t_[1].size();
  size_t h = rehash_idx_ + table_detail::FastBelow(s0 + s1 - rehash_idx_);
  return h >= s0 ? t_[1].b[h - s0] : t_[0].b[h];
}

// Rejection sampling: an attempt draws a bucket uniformly and a slot uniformly in
// [0, chain_bound_), and returns the entry at that position of the bucket's chain if the chain
// is that long, else tries again. While chain_bound_ is at least every chain's length, each
// entry has the same chance per attempt, 1 / (buckets * chain_bound_), so the pick is uniform.
// (A random entry of a random non-empty bucket, Redis' dictGetRandomKey, is not: an entry alone
// in its bucket comes up twice as often as one that shares it.) The bound is learnt: an attempt
// that meets a chain longer than the bound raises it first, so an entry of a long chain is
// under-represented only until its bucket is first drawn, and after a resize the bound starts
// again from kMinChainBound (the chains are new).
template <typename Node>
Node* IntrusiveTable<Node>::Random() {
  if (size() == 0) return nullptr;
  if (rehashing()) RehashSteps(1);
  for (;;) {
    Node* head = RandomBucket();
    if (head == nullptr) continue;
    uint32_t len = 0;
    for (Node* e = head; e; e = e->next) len++;
    chain_bound_ = std::max(chain_bound_, len);
    uint32_t slot = static_cast<uint32_t>(table_detail::FastBelow(chain_bound_));
    if (slot >= len) continue;
    while (slot--) head = head->next;
    return head;
  }
}

template <typename Node>
size_t IntrusiveTable<Node>::SomeEntries(size_t n, Node** out) {
  n = std::min(n, size());
  if (n == 0) return 0;
  if (rehashing()) RehashSteps(static_cast<int>(n));
  const bool two = rehashing();
  size_t maxmask = two ? std::max(t_[0].mask, t_[1].mask) : t_[0].mask;
  size_t i = RandomU64() & maxmask;
  size_t got = 0, empty_run = 0, steps = n * 10;
  // The walk goes in rounds: first the heads of as many non-empty buckets as entries are still
  // wanted (the bucket arrays are read in order: cheap), each head prefetched as it is found,
  // then their chains. The heads' cache misses, one per sample, overlap instead of following
  // one another.
  constexpr size_t kRound = 16;
  Node* heads[2 * kRound];  // a step can find a head in each table
  while (got < n && steps > 0) {
    size_t found = 0, want = std::min(n - got, kRound);
    for (; found < want && steps > 0; steps--) {
      for (int t = 0; t < (two ? 2 : 1); t++) {
        const Table& tab = t_[t];
        // Buckets of t_[0] below rehash_idx_ are empty (moved): skip to where moving stopped,
        // or to t_[1] when it is the bigger one.
        if (two && t == 0 && static_cast<int64_t>(i) < rehash_idx_) {
          if (i >= t_[1].size()) i = static_cast<size_t>(rehash_idx_);
          continue;
        }
        if (i >= tab.size()) continue;
        Node* e = tab.b[i];
        if (e == nullptr) {
          // A long run of empty buckets: jump elsewhere.
          if (++empty_run >= 5 && empty_run > n) {
            i = RandomU64() & maxmask;
            empty_run = 0;
          }
          continue;
        }
        empty_run = 0;
        __builtin_prefetch(e);
        heads[found++] = e;
      }
      i = (i + 1) & maxmask;
    }
    for (size_t k = 0; k < found && got < n; k++) {
      for (Node* e = heads[k]; e != nullptr && got < n; e = e->next) {
        // The walk can come round to a bucket again (a small table, a jump): no duplicates.
        if (std::find(out, out + got, e) == out + got) out[got++] = e;
      }
    }
  }
  // A sparse table (not shrunk yet) can hide every entry from the walk: one random entry then.
  if (got == 0) out[got++] = Random();
  return got;
}

template <typename Node>
uint64_t IntrusiveTable<Node>::Scan(uint64_t v, const std::function<void(Node*)>& fn) {
  if (size() == 0) return 0;
  auto emit = [&](const Table& t, size_t idx) {
    for (Node* e = t.b[idx]; e; e = e->next) fn(e);
  };
  if (!rehashing()) {
    const Table& t0 = t_[0];
    emit(t0, v & t0.mask);
    v |= ~t0.mask;
    v = table_detail::Rev(v);
    v++;
    v = table_detail::Rev(v);
    return v;
  }
  const Table* small = &t_[0];
  const Table* big = &t_[1];
  if (small->size() > big->size()) std::swap(small, big);
  uint64_t m0 = small->mask, m1 = big->mask;
  emit(*small, v & m0);
  // Visit the buckets of the bigger table that expand the small table's bucket.
  do {
    emit(*big, v & m1);
    v |= ~m1;
    v = table_detail::Rev(v);
    v++;
    v = table_detail::Rev(v);
  } while (v & (m0 ^ m1));
  return v;
}

template <typename Node>
std::vector<TableStats> IntrusiveTable<Node>::Stats() const {
  std::vector<TableStats> out(rehashing() ? 2 : 1);
  for (size_t i = 0; i < out.size(); i++) {
    TableStats& st = out[i];
    const Table& t = t_[i];
    st.size = t.size();
    st.used = t.used;
    st.chains.assign(TableStats::kChainsTracked, 0);
    for (size_t b = 0; b < st.size; b++) {
      size_t len = 0;
      for (const Node* n = t.b[b]; n; n = n->next) len++;
      st.chains[std::min(len, TableStats::kChainsTracked - 1)]++;
      if (len == 0) continue;
      st.slots++;
      st.total_chain += len;
      st.max_chain = std::max(st.max_chain, len);
    }
  }
  return out;
}

template <typename Node>
void IntrusiveTable<Node>::ForEach(const std::function<void(Node*)>& fn) const {
  // The entry of the bucket kAhead ahead is fetched now; kAhead / 2 buckets later it has
  // arrived, and what it points to is fetched in turn.
  constexpr size_t kAhead = 16;
  for (const auto& t : t_) {
    size_t n = t.size();
    for (size_t i = 0; i < n; i++) {
      if (i + kAhead < n && t.b[i + kAhead]) __builtin_prefetch(t.b[i + kAhead]);
      if constexpr (requires(const Node* p) { p->PrefetchPayload(); }) {
        if (i + kAhead / 2 < n && t.b[i + kAhead / 2]) t.b[i + kAhead / 2]->PrefetchPayload();
      }
      for (Node* e = t.b[i]; e; e = e->next) fn(e);
    }
  }
}

template <typename Node>
void IntrusiveTable<Node>::Cron(int64_t budget_us) {
  if (!rehashing() && resize_allowed_ && t_[0].size() > table_detail::kInitialSize &&
      t_[0].used * 100 / t_[0].size() < 10) {
    StartResize(t_[0].used);
  }
  if (!rehashing()) return;
  int64_t start = MonoUs();
  while (RehashSteps(100)) {
    if (MonoUs() - start > budget_us) break;
  }
}

}  // namespace kv::store
