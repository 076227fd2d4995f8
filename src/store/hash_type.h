// The hash value type, with Redis 7.0's two encodings:
//
//  * listpack: one contiguous malloc'd buffer of (field, value) pairs in insertion order, each
//    string a varint length followed by its bytes. No per-field allocation; lookups are linear,
//    which is what the small sizes it is used for want.
//  * hashtable: an IntrusiveTable of HashNode, one allocation per field holding the field and
//    value bytes inline.
//
// A hash starts as a listpack and converts to a hashtable, one way only, exactly when Redis'
// t_hash.c does: when it gets more than hash_max_listpack_entries fields, or when a field or value
// longer than hash_max_listpack_value is about to be added (Set, and PrepareForInsert for the
// arguments of a whole command, as hashTypeTryConversion).
//
// Views returned by Get, RandomEntry, Entries and passed to visitors stay valid only until the
// hash is next modified. Not thread-safe (the keyspace lock covers it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "store/intrusive_table.h"
#include "store/keyspace.h"
#include "store/value.h"

namespace kv::store {

// One field of the hashtable encoding: the header, then the field bytes, then the value bytes,
// in a single allocation.
struct HashNode {
  HashNode* next = nullptr;
  uint32_t field_len = 0;
  uint32_t value_len = 0;

  std::string_view key() const { return {data(), field_len}; }
  std::string_view value() const { return {data() + field_len, value_len}; }
  // Replaces the value in place when the allocation has room; false otherwise.
  bool TryReplaceValue(std::string_view v);

  static HashNode* Create(std::string_view field, std::string_view value);
  static void Destroy(HashNode* n);
  size_t AllocSize() const;

 private:
  const char* data() const { return reinterpret_cast<const char*>(this + 1); }
  char* data() { return reinterpret_cast<char*>(this + 1); }
};

class HashValue final : public Collection {
 public:
  using Pair = std::pair<std::string_view, std::string_view>;

  HashValue() = default;
  ~HashValue() override;
  HashValue(const HashValue&) = delete;
  HashValue& operator=(const HashValue&) = delete;

  // Collection. Clone keeps the encoding (Redis' hashTypeDup). ForEach visits (field, value),
  // in insertion order for the listpack.
  std::unique_ptr<Collection> Clone() const override;
  size_t Size() const override;
  void ForEach(const Visitor& fn) const override;
  size_t MemoryUsage() const override;
  const char* EncodingName() const override;
  std::vector<TableStats> HashTableStats() const override {
    return is_listpack() ? std::vector<TableStats>{} : ht_->table.Stats();
  }

  bool is_listpack() const { return lp_bytes_ != kHashtable; }

  // The value of `field`, or nullopt. (Not const: a hashtable lookup advances its rehash.)
  std::optional<std::string_view> Get(std::string_view field);
  bool Exists(std::string_view field) { return Get(field).has_value(); }

  // Redis' hashTypeTryConversion: called with the strings a command is about to add; converts to
  // the hashtable when one is longer than hash_max_listpack_value or the listpack would pass its
  // 1 GiB safety limit.
  void PrepareForInsert(std::span<const std::string_view> strings, const EncodingLimits& limits);
  // Redis' hashTypeSet: sets `field` to `value`, returns true when the field is new. Converts
  // first when either string is too long for the listpack, and after adding when the hash has
  // more than hash_max_listpack_entries fields. An existing listpack field keeps its position.
  // `field` and `value` must not point into this hash.
  bool Set(std::string_view field, std::string_view value, const EncodingLimits& limits);
  // Removes `field`; returns whether it was there. A sparse hashtable starts shrinking.
  bool Delete(std::string_view field);
  void ConvertToHashtable();

  // A random field and its value, every field equally likely (IntrusiveTable::Random for the
  // hashtable); the hash must not be empty.
  Pair RandomEntry();
  // Every (field, value), in ForEach order.
  std::vector<Pair> Entries() const;

  // One step of a Redis SCAN over the hashtable encoding (see IntrusiveTable::Scan): visits the
  // buckets at `cursor` and returns the next cursor, 0 when done. Every field present for the
  // whole scan is visited at least once, across resizes. The listpack has no cursor: it visits
  // everything and returns 0, as Redis' HSCAN does.
  uint64_t Scan(uint64_t cursor, const Visitor& fn);

 private:
  // The hashtable encoding, with the bytes its nodes use (kept for MemoryUsage).
  struct Table {
    IntrusiveTable<HashNode> table;
    size_t node_bytes = 0;
  };
  // A listpack entry found by LpFind: offsets of the field's length prefix, of the value's
  // length prefix, and just past the value.
  struct LpPos {
    size_t field_at, value_at, end;
    std::string_view value;
  };

  std::optional<LpPos> LpFind(std::string_view field) const;
  // Replaces bytes [at, at + remove) with room for `insert` bytes; returns where to write them.
  uint8_t* LpSplice(size_t at, size_t remove, size_t insert);
  void LpForEach(const Visitor& fn) const;
  bool LpSet(std::string_view field, std::string_view value, const EncodingLimits& limits);
  bool HtSet(std::string_view field, std::string_view value);
  static void HtInsert(Table& t, std::string_view field, std::string_view value);

  static constexpr uint32_t kHashtable = UINT32_MAX;  // lp_bytes_ in the hashtable encoding

  // A union keeps the object at 24 bytes (one 32-byte malloc chunk): small hashes are many.
  union {
    uint8_t* lp_ = nullptr;  // listpack: malloc'd bytes, null while empty (owned)
    Table* ht_;              // hashtable encoding (owned)
  };
  uint32_t lp_bytes_ = 0;  // listpack: bytes used in lp_; kHashtable once converted
  uint32_t lp_count_ = 0;  // listpack: number of fields
};

}  // namespace kv::store
