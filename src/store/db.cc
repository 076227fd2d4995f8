#include "store/db.h"

#include "common/clock.h"
#include "common/hash.h"
#include "common/key_slot.h"
#include "store/lazy_free.h"

namespace kv::store {

Entry* Db::Add(std::string_view key, Value value) {
  Entry* e = Entry::Create(key, std::move(value));
  keys_.Insert(e);
  if (slots_) IndexSlot(e);
  return e;
}

Entry* Db::AddIfAbsent(std::string_view key, Value value) {
  Entry* e = Entry::Create(key, std::move(value));
  if (keys_.InsertIfAbsent(e)) {
    Entry::Destroy(e);
    return nullptr;
  }
  if (slots_) IndexSlot(e);
  return e;
}

void Db::Reserve(size_t keys, size_t expires) {
  keys_.Reserve(keys);
  ttl_.reserve(expires);
}

void Db::Adopt(Entry* e) {
  e->expire_slot = Entry::kNoExpire;
  keys_.Insert(e);
  if (slots_) IndexSlot(e);
}

Entry* Db::Unlink(std::string_view key) {
  Entry* e = keys_.Unlink(key);
  if (e && e->has_expire()) DropTtlSlot(e);
  if (e && slots_) UnindexSlot(e);
  return e;
}

bool Db::Delete(std::string_view key) {
  Entry* e = Unlink(key);
  if (!e) return false;
  Entry::Destroy(e);
  return true;
}

void Db::Clear() {
  keys_.Clear();
  ttl_.clear();
  ttl_.shrink_to_fit();
  if (slots_) slots_ = std::make_unique<std::vector<std::vector<Entry*>>>(kClusterSlots);
}

void Db::EnableSlotIndex() {
  if (slots_) return;
  slots_ = std::make_unique<std::vector<std::vector<Entry*>>>(kClusterSlots);
  keys_.ForEach([this](Entry* e) { IndexSlot(e); });
}

void Db::IndexSlot(Entry* e) {
  std::vector<Entry*>& list = (*slots_)[KeyHashSlot(e->key())];
  e->slot_pos = static_cast<uint32_t>(list.size());
  list.push_back(e);
}

void Db::UnindexSlot(Entry* e) {
  std::vector<Entry*>& list = (*slots_)[KeyHashSlot(e->key())];
  Entry* last = list.back();
  list[e->slot_pos] = last;
  last->slot_pos = e->slot_pos;
  list.pop_back();
}

void Db::SetExpire(Entry* e, int64_t when_ms) {
  if (e->has_expire()) {
    ttl_[e->expire_slot].when_ms = when_ms;
    return;
  }
  e->expire_slot = static_cast<uint32_t>(ttl_.size());
  ttl_.push_back({e, when_ms});
}

bool Db::RemoveExpire(Entry* e) {
  if (!e->has_expire()) return false;
  DropTtlSlot(e);
  return true;
}

void Db::DropTtlSlot(Entry* e) {
  uint32_t slot = e->expire_slot;
  TtlSlot& last = ttl_.back();
  if (slot != ttl_.size() - 1) {
    ttl_[slot] = last;
    ttl_[slot].entry->expire_slot = slot;
  }
  ttl_.pop_back();
  e->expire_slot = Entry::kNoExpire;
}

size_t Db::ExpireSample(size_t samples, int64_t now_ms,
                        const std::function<void(std::string_view)>& on_expire, LazyFreer* freer,
                        const std::function<void(int64_t)>& on_removed) {
  size_t removed = 0;
  for (size_t i = 0; i < samples && !ttl_.empty(); i++) {
    TtlSlot s = ttl_[RandomBelow(ttl_.size())];
    if (s.when_ms > now_ms) continue;
    on_expire(s.entry->key());
    int64_t start = on_removed ? MonoUs() : 0;
    // Copy the key: Unlink destroys nothing, but the view points into the entry.
    Entry* e = Unlink(s.entry->key());
    if (e) {
      if (freer != nullptr) {
        freer->Free(e);
      } else {
        Entry::Destroy(e);
      }
      removed++;
      if (on_removed) on_removed(MonoUs() - start);
    }
  }
  return removed;
}

int64_t Db::AvgTtlSample(int64_t now_ms) const {
  if (ttl_.empty()) return 0;
  size_t n = std::min<size_t>(ttl_.size(), 64);
  int64_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t left = ttl_[RandomBelow(ttl_.size())].when_ms - now_ms;
    sum += left > 0 ? left : 0;
  }
  return sum / static_cast<int64_t>(n);
}

}  // namespace kv::store
