// The sorted set value (OBJ_ZSET) with Redis 7.0's two encodings:
//  - "listpack": one malloc'd buffer of (member, score) entries sorted by score then member,
//    used while the set has at most zset_max_listpack_entries members of at most
//    zset_max_listpack_value bytes. Each entry is a varint member length, the member bytes, and
//    the score: a varint holding an integer score (zigzag, shifted left) or the tag 1 followed by
//    the 8 bytes of a double. Small sets of short members cost ~2 bytes per member beyond the
//    member text.
//  - "skiplist": a ZSkipList (ranks in O(log n)) plus an IntrusiveTable member -> node, sharing
//    one node allocation per member.
// A set converts from listpack to skiplist when an insert would exceed the limits, and never back
// except through FromSorted (the results of the *STORE commands), exactly when Redis 7.0 does.
// Like Redis' listpack, the compact encoding stores -0 as 0.
//
// Ranks are 0-based in ascending (score, member) order. Views handed out are valid until the
// next change to the set. Not thread-safe (the keyspace lock covers it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/intrusive_table.h"
#include "store/keyspace.h"
#include "store/value.h"
#include "store/zset_skiplist.h"

namespace kv::store {

// A score interval (Redis' zrangespec); minex/maxex make a bound exclusive.
struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;

  bool GteMin(double v) const { return minex ? v > min : v >= min; }
  bool LteMax(double v) const { return maxex ? v < max : v <= max; }
  // True for ranges that can hold nothing (min > max, or equal with an exclusive bound).
  bool AlwaysEmpty() const { return min > max || (min == max && (minex || maxex)); }
};

// One end of a lexicographic interval: "-", "+", or a member ("[m" inclusive, "(m" exclusive).
struct LexBound {
  enum class Kind : uint8_t { kMinusInf, kPlusInf, kValue };
  Kind kind = Kind::kValue;
  std::string value;
  bool ex = false;
};

// Redis' sdscmplex between a member or bound and a bound: "-" sorts before everything, "+"
// after everything.
int CompareLex(const LexBound& a, const LexBound& b);
int CompareLex(std::string_view member, const LexBound& b);

struct LexRange {
  LexBound min, max;

  bool GteMin(std::string_view m) const {
    int c = CompareLex(m, min);
    return min.ex ? c > 0 : c >= 0;
  }
  bool LteMax(std::string_view m) const {
    int c = CompareLex(m, max);
    return max.ex ? c < 0 : c <= 0;
  }
  bool AlwaysEmpty() const {
    int c = CompareLex(min, max);
    return c > 0 || (c == 0 && (min.ex || max.ex));
  }
};

struct ZEntry {
  std::string_view member;
  double score = 0;
};

class ZSetValue : public Collection {
 public:
  static constexpr size_t kNone = SIZE_MAX;
  using Visitor = std::function<bool(std::string_view member, double score)>;  // false: stop
  using Pred = std::function<bool(std::string_view member, double score)>;

  ZSetValue() = default;  // empty, listpack
  ~ZSetValue() override;
  ZSetValue(const ZSetValue&) = delete;
  ZSetValue& operator=(const ZSetValue&) = delete;

  // An empty set in the encoding Redis 7.0's ZADD gives a new key: skiplist when the listpack
  // may hold nothing or the first member to be added is longer than allowed.
  static std::unique_ptr<ZSetValue> ForFirstMember(size_t member_len, const EncodingLimits& l);
  // A set holding `entries` (sorted by ZLess, members distinct), listpack when it fits:
  // Redis' zsetConvertToListpackIfNeeded applied to a freshly built result.
  static std::unique_ptr<ZSetValue> FromSorted(const std::vector<ZEntry>& entries,
                                               const EncodingLimits& l);

  std::unique_ptr<Collection> Clone() const override;
  size_t Size() const override;
  void ForEach(const Collection::Visitor& fn) const override;
  size_t MemoryUsage() const override;
  const char* EncodingName() const override;
  std::vector<TableStats> HashTableStats() const override;
  bool is_listpack() const { return !skiplist_; }
  // Switches to the skiplist encoding (no-op if already there), as Redis' SORT does to a sorted
  // set it reads (sort.c's zsetConvert).
  void ConvertToSkiplist() {
    if (!skiplist_) ToSkiplist();
  }

  std::optional<double> Score(std::string_view member) const;
  // Adds an absent member. Converts to skiplist first when the listpack would pass the limits.
  void Insert(std::string_view member, double score, const EncodingLimits& l);
  // Sets the score of a present member.
  void UpdateScore(std::string_view member, double score);
  bool Remove(std::string_view member);
  std::optional<size_t> Rank(std::string_view member) const;
  ZEntry At(size_t rank) const;  // rank < Size()

  // Visits from `start` towards the tail (towards the head when reverse) until fn is false.
  void Visit(size_t start, bool reverse, const Visitor& fn) const;
  // Rank of the first element for which `before` is false, searching as Redis does: a scan from
  // the head (listpack) or a skiplist descent (which assumes `before` holds on a prefix).
  // Size() when there is none.
  size_t FirstNotBefore(const Pred& before) const;
  // Visits towards the tail from the first element for which `before` is false (found as
  // FirstNotBefore finds it), in one pass, until fn is false.
  void VisitFrom(const Pred& before, const Visitor& fn) const;
  // Rank of the last element for which `within` holds: a scan from the tail (listpack) or a
  // descent (which assumes `within` holds on a prefix). kNone when there is none.
  size_t LastWithin(const Pred& within) const;
  // Removes ranks [start, end).
  void RemoveRange(size_t start, size_t end);

  // A random element, every member equally likely (IntrusiveTable::Random for the skiplist's
  // index); the zset must not be empty.
  ZEntry Random() const;
  // Visits a share of the members: everything at once for listpack (returns 0), else the table
  // buckets at `cursor` (Redis' reverse-binary cursor); returns the next cursor.
  uint64_t Scan(uint64_t cursor, const std::function<void(std::string_view, double)>& fn);

 private:
  struct Index;  // the skiplist encoding

  void ToSkiplist();
  void LpInsert(std::string_view member, double score);
  void LpErase(size_t offset, size_t bytes);
  // Byte offset of the entry for `member` (and its size and score), or kNone.
  size_t LpFind(std::string_view member, size_t* entry_size, double* score) const;
  size_t LpOffsetOfRank(size_t rank) const;

  union {
    uint8_t* lp_ = nullptr;  // listpack entries (null when empty)
    Index* index_;           // skiplist encoding
  };
  uint32_t lp_bytes_ = 0;
  uint32_t lp_count_ : 31 = 0;
  uint32_t skiplist_ : 1 = 0;
};

}  // namespace kv::store
