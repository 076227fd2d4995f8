// The set value type, with Redis 7.0's two encodings:
//  - intset: a sorted array of distinct integers (IntSet below), used while every member is a
//    canonical integer (Redis' string2ll rules) and there are at most set-max-intset-entries;
//  - hashtable: an IntrusiveTable of SetNode (member bytes inline in the node).
// A set converts from intset to hashtable exactly when Redis 7.0's setTypeAdd does (a
// non-integer member, or one member too many) and never back, except that SPOP's "build the
// remainder anew" strategy starts a fresh set, as Redis' does (see PopRandom).
// Not thread-safe: called under the keyspace lock like the rest of store/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/intrusive_table.h"
#include "store/value.h"

namespace kv::store {

// Redis' intset: distinct integers in ascending order, each stored at the narrowest width (2, 4
// or 8 bytes) that holds every member. Adding a wider value widens the whole array; removing
// never narrows it, as in Redis.
class IntSet {
 public:
  size_t size() const { return len_; }
  // The i-th smallest member; i < size().
  int64_t At(size_t i) const;
  bool Contains(int64_t v) const;
  // Returns false (and changes nothing) when v is already a member.
  bool Add(int64_t v);
  // Returns false when v is not a member.
  bool Remove(int64_t v);
  // Bytes per member: 2, 4 or 8.
  size_t width() const { return width_; }
  // Redis' intsetBlobLen: an 8-byte header (encoding, length) plus the members.
  size_t BlobBytes() const { return 8 + width_ * len_; }
  size_t MemoryUsage() const { return 8 + bytes_.capacity(); }

 private:
  static uint8_t WidthFor(int64_t v);
  // Binary search: true with *pos at v, or false with *pos where v would be inserted.
  bool Search(int64_t v, size_t* pos) const;
  void Put(size_t i, int64_t v);
  void Widen(uint8_t width);

  uint8_t width_ = 2;
  size_t len_ = 0;
  std::vector<uint8_t> bytes_;  // len_ members of width_ bytes, native byte order
};

// A member of a hashtable-encoded set: one allocation, the member bytes follow the struct.
struct SetNode {
  SetNode* next = nullptr;
  uint32_t len = 0;

  std::string_view key() const {
    return std::string_view(reinterpret_cast<const char*>(this) + sizeof(SetNode), len);
  }
  static SetNode* Create(std::string_view member);
  static void Destroy(SetNode* n);
};

class SetValue : public Collection {
 public:
  using MemberFn = std::function<void(std::string_view member)>;

  // Redis' setTypeCreate: an intset when `first_member` is an integer, else a hashtable. The
  // member itself is not added.
  static std::unique_ptr<SetValue> CreateFor(std::string_view first_member);
  // An empty intset-encoded set, as Redis starts the results of SINTERSTORE/SUNION/SDIFF.
  static std::unique_ptr<SetValue> CreateIntSet();

  std::unique_ptr<Collection> Clone() const override;
  size_t Size() const override;
  // Intsets in ascending order, hashtables in table order.
  void ForEach(const Visitor& fn) const override;
  size_t MemoryUsage() const override;
  const char* EncodingName() const override;
  std::vector<TableStats> HashTableStats() const override {
    return table_ ? table_->Stats() : std::vector<TableStats>{};
  }

  bool is_intset() const { return intset_ != nullptr; }

  // Redis' setTypeAdd. `max_intset_entries` is set-max-intset-entries (capped at 2^30 as in
  // Redis); the set converts to a hashtable when it stops fitting. False if already a member.
  bool Add(std::string_view member, size_t max_intset_entries);
  // Redis' setTypeRemove; a sparse hashtable starts shrinking, as Redis' dictResize does.
  bool Remove(std::string_view member);
  bool Contains(std::string_view member);
  void ForEachMember(const MemberFn& fn) const;

  // One random member, every member equally likely (IntrusiveTable::Random for hashtables); the
  // set must not be empty.
  std::string RandomMember();
  // SRANDMEMBER key count with Redis 7.0's strategies (count > 0): the whole set when count >=
  // size, else `count` distinct members, by removing random members from a copy when count is
  // close to the size (count * 3 > size) or by sampling until enough distinct ones are found.
  std::vector<std::string> RandomDistinct(uint64_t count);
  // SPOP key count for 0 < count < size, with Redis 7.0's strategies: pop random members one
  // by one while the remainder is large (remainder * 5 > count), else move `size - count`
  // random members into a new set that replaces this one (which may change the encoding back
  // to intset, as in Redis) and return the members left behind.
  std::vector<std::string> PopRandom(uint64_t count, size_t max_intset_entries);

  // SSCAN: visits members from `cursor` and returns the next cursor (0 when done). A
  // hashtable uses the table's reverse-binary cursor; an intset visits everything and returns 0.
  uint64_t Scan(uint64_t cursor, const MemberFn& fn);

 private:
  using Table = IntrusiveTable<SetNode>;

  SetValue() = default;  // exactly one of intset_ / table_ is set by the factories
  void ConvertToTable();
  void InsertNode(std::string_view member);

  std::unique_ptr<IntSet> intset_;  // set while intset-encoded
  std::unique_ptr<Table> table_;    // set while hashtable-encoded
  size_t node_bytes_ = 0;           // allocated bytes of the table's nodes
};

}  // namespace kv::store
