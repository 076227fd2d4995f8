// One key of a database: the key bytes, its value and per-key metadata, in a single allocation.
// Entries are linked into a KeyTable bucket chain through `next`.
#pragma once

#include <cstdint>
#include <string_view>

#include "store/value.h"

namespace kv::store {

struct Entry {
  static constexpr uint32_t kNoExpire = UINT32_MAX;

  Entry* next = nullptr;
  Value value;
  uint32_t access = 0;          // LRU clock (seconds) or LFU state, see Keyspace::Touch
  uint32_t expire_slot = kNoExpire;  // index in the Db's TTL index, or kNoExpire
  uint32_t key_len = 0;
  uint32_t slot_pos = 0;  // cluster mode: index in the Db's list of its hash slot's keys
  // The key bytes follow the struct.

  std::string_view key() const {
    return std::string_view(reinterpret_cast<const char*>(this) + sizeof(Entry), key_len);
  }
  bool has_expire() const { return expire_slot != kNoExpire; }
  // See IntrusiveTable::ForEach.
  void PrefetchPayload() const { value.Prefetch(); }

  static Entry* Create(std::string_view key, Value value);
  static void Destroy(Entry* e);
  size_t MemoryUsage() const;
};

// One key costs this much besides its bytes and its value: the slot index's position lives in
// what was padding.
static_assert(sizeof(Entry) == 40);

}  // namespace kv::store
