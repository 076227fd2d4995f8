#include "store/key_table.h"

#include <bit>

#include "common/clock.h"
#include "common/hash.h"

namespace kv::store {

namespace {
constexpr size_t kInitialSize = 4;
constexpr size_t kForceResizeRatio = 5;  // grow even while paused past this load factor

uint64_t Rev(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}
}  // namespace

KeyTable::KeyTable(KeyTable&& o) noexcept { *this = std::move(o); }

KeyTable& KeyTable::operator=(KeyTable&& o) noexcept {
  if (this == &o) return *this;
  Clear();
  t_[0] = std::move(o.t_[0]);
  t_[1] = std::move(o.t_[1]);
  rehash_idx_ = o.rehash_idx_;
  o.t_[0] = Table();
  o.t_[1] = Table();
  o.rehash_idx_ = -1;
  return *this;
}

uint64_t KeyTable::HashOf(std::string_view key) { return HashKey(key); }

void KeyTable::StartResize(size_t min_size) {
  size_t size = std::bit_ceil(std::max(min_size, kInitialSize));
  if (t_[0].b && size == t_[0].size()) return;
  Table t;
  t.b = std::make_unique<Entry*[]>(size);  // zero-initialized
  t.mask = size - 1;
  if (!t_[0].b) {
    t_[0] = std::move(t);
    return;
  }
  t_[1] = std::move(t);
  rehash_idx_ = 0;
}

void KeyTable::ExpandIfNeeded() {
  if (rehashing()) return;
  if (!t_[0].b) {
    StartResize(kInitialSize);
    return;
  }
  if (t_[0].used >= t_[0].size() &&
      (resize_allowed_ || t_[0].used / t_[0].size() > kForceResizeRatio)) {
    StartResize(t_[0].used + 1);
  }
}

bool KeyTable::RehashSteps(int n) {
  if (!rehashing()) return false;
  int empty_visits = n * 10;
  while (n-- && t_[0].used != 0) {
    while (t_[0].b[rehash_idx_] == nullptr) {
      rehash_idx_++;
      if (--empty_visits == 0) return true;
    }
    Entry* e = t_[0].b[rehash_idx_];
    while (e) {
      Entry* next = e->next;
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
    return false;
  }
  return true;
}

Entry* KeyTable::Find(std::string_view key) {
  if (size() == 0) return nullptr;
  if (rehashing()) RehashSteps(1);
  uint64_t h = HashOf(key);
  for (int i = 0; i < 2; i++) {
    if (!t_[i].b) break;
    for (Entry* e = t_[i].b[h & t_[i].mask]; e; e = e->next) {
      if (e->key() == key) return e;
    }
    if (!rehashing()) break;
  }
  return nullptr;
}

void KeyTable::Insert(Entry* e) {
  if (rehashing()) RehashSteps(1);
  ExpandIfNeeded();
  Table& t = rehashing() ? t_[1] : t_[0];
  size_t idx = HashOf(e->key()) & t.mask;
  e->next = t.b[idx];
  t.b[idx] = e;
  t.used++;
}

Entry* KeyTable::Unlink(std::string_view key) {
  if (size() == 0) return nullptr;
  if (rehashing()) RehashSteps(1);
  uint64_t h = HashOf(key);
  for (int i = 0; i < 2; i++) {
    if (!t_[i].b) break;
    Entry** link = &t_[i].b[h & t_[i].mask];
    for (Entry* e = *link; e; link = &e->next, e = e->next) {
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

void KeyTable::Prefetch(std::span<const std::string_view> keys) const {
  if (size() == 0 || keys.size() > 64) return;
  // The table being rehashed keeps moved buckets in t_[1]; prefetch where lookups look first.
  const Table& t = t_[0];
  Entry* const* slots[64];
  size_t n = 0;
  for (std::string_view k : keys) {
    slots[n] = &t.b[HashOf(k) & t.mask];
    __builtin_prefetch(slots[n]);
    n++;
  }
  for (size_t i = 0; i < n; i++) {
    if (Entry* e = *slots[i]) __builtin_prefetch(e);
  }
}

void KeyTable::Clear() {
  for (auto& t : t_) {
    for (size_t i = 0; i < t.size(); i++) {
      Entry* e = t.b[i];
      while (e) {
        Entry* next = e->next;
        Entry::Destroy(e);
        e = next;
      }
    }
    t = Table();
  }
  rehash_idx_ = -1;
}

Entry* KeyTable::Random() {
  if (size() == 0) return nullptr;
  if (rehashing()) RehashSteps(1);
  Entry* head = nullptr;
  if (rehashing()) {
    // Buckets of t_[0] below rehash_idx_ are empty; skip them.
    size_t s0 = t_[0].size(), s1 = t_[1].size();
    do {
      size_t h = rehash_idx_ + RandomBelow(s0 + s1 - rehash_idx_);
      head = h >= s0 ? t_[1].b[h - s0] : t_[0].b[h];
    } while (!head);
  } else {
    do {
      head = t_[0].b[RandomBelow(t_[0].size())];
    } while (!head);
  }
  size_t len = 0;
  for (Entry* e = head; e; e = e->next) len++;
  size_t pick = RandomBelow(len);
  while (pick--) head = head->next;
  return head;
}

uint64_t KeyTable::Scan(uint64_t v, const std::function<void(Entry*)>& fn) {
  if (size() == 0) return 0;
  auto emit = [&](const Table& t, size_t idx) {
    for (Entry* e = t.b[idx]; e; e = e->next) fn(e);
  };
  if (!rehashing()) {
    const Table& t0 = t_[0];
    emit(t0, v & t0.mask);
    v |= ~t0.mask;
    v = Rev(v);
    v++;
    v = Rev(v);
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
    v = Rev(v);
    v++;
    v = Rev(v);
  } while (v & (m0 ^ m1));
  return v;
}

void KeyTable::ForEach(const std::function<void(Entry*)>& fn) const {
  for (const auto& t : t_) {
    for (size_t i = 0; i < t.size(); i++) {
      for (Entry* e = t.b[i]; e; e = e->next) fn(e);
    }
  }
}

void KeyTable::Cron(int64_t budget_us) {
  if (!rehashing() && resize_allowed_ && t_[0].size() > kInitialSize &&
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
