// The stream type (Redis 7.0 t_stream.c): entries with IDs <ms>-<seq>, kept as Redis keeps them,
// in nodes that are listpacks of Redis' own stream layout, keyed by the ID of their master entry
// (Redis uses a radix tree of 128-bit big-endian IDs; an ordered map gives the same order), plus
// the consumer groups with their pending entries lists (PELs) and consumers.
//
// A node's listpack: the master entry
//     count | deleted | num-fields | field_1 ... field_N | 0
// then each entry
//     flags | ms-diff | seq-diff | [num-fields | field_1 value_1 ...] or [value_1 ...] | lp-count
// where the IDs are deltas from the master ID, SAMEFIELDS (flags 2) drops the field names when
// they are the master entry's, DELETED (flags 1) marks a tombstone, and lp-count (the entry's
// element count) lets a reader walk back from the end.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/stream_lp.h"
#include "store/value.h"

namespace kv::store {

struct StreamID {
  uint64_t ms = 0, seq = 0;
  auto operator<=>(const StreamID&) const = default;
  static constexpr StreamID Min() { return {0, 0}; }
  static constexpr StreamID Max() { return {UINT64_MAX, UINT64_MAX}; }
  // The next / previous ID; false (and wrapped) past the ends (streamIncrID / streamDecrID).
  bool Incr();
  bool Decr();
  std::string ToString() const;
};

struct StreamConsumer;

// A pending entry: delivered to `consumer`, not yet acknowledged.
struct StreamNack {
  int64_t delivery_time = 0;  // ms
  uint64_t delivery_count = 1;
  StreamConsumer* consumer = nullptr;
};

struct StreamConsumer {
  std::string name;
  int64_t seen_time = 0;                // ms: last interaction
  std::map<StreamID, StreamNack*> pel;  // its share of the group's PEL
};

struct StreamGroup {
  StreamID last_id;
  int64_t entries_read = -1;  // -1: unknown (SCG_INVALID_ENTRIES_READ)
  std::map<StreamID, std::unique_ptr<StreamNack>> pel;
  std::map<std::string, std::unique_ptr<StreamConsumer>, std::less<>> consumers;
};

class StreamValue final : public Collection {
 public:
  static constexpr int kFlagDeleted = 1, kFlagSameFields = 2;

  // A field and its value, as views into the node (or a number formatted for the call).
  using FieldValue = std::pair<std::string_view, std::string_view>;
  // false: stop.
  using EntryVisitor = std::function<bool(StreamID id, std::span<const FieldValue> fields)>;

  StreamValue() = default;
  ~StreamValue() override = default;

  std::unique_ptr<Collection> Clone() const override;
  size_t Size() const override { return length_; }
  // Collection's visitor: each field with its value, entry after entry (no IDs).
  void ForEach(const Collection::Visitor& fn) const override;
  size_t MemoryUsage() const override;
  const char* EncodingName() const override { return "stream"; }

  // Redis' streamAppendItem after its ID checks: `fields` alternates field, value. A new node
  // starts when the tail one holds `node_max_entries` entries (live and deleted; 0: no limit)
  // or would pass `node_max_bytes` (0: 1 GB).
  void Append(StreamID id, std::span<const std::string_view> fields, size_t node_max_bytes,
              int64_t node_max_entries);
  // Visits the live entries with start <= ID <= end, from start (or from end when `rev`).
  void Range(StreamID start, StreamID end, bool rev, const EntryVisitor& fn) const;
  // Marks the entry deleted (streamDeleteItem); false when there is no such live entry.
  // Updates length but not first_id / max_deleted_id, which XDEL sets.
  bool Delete(StreamID id);

  enum class TrimStrategy { kNone, kMaxLen, kMinId };
  struct TrimArgs {
    TrimStrategy strategy = TrimStrategy::kNone;
    bool approx = false;
    int64_t limit = 0;  // most entries to remove; 0: no limit
    int64_t maxlen = 0;
    StreamID minid;
  };
  // Redis' streamTrim: whole nodes from the head, then (unless approx) entries of the first node
  // left. Returns the entries removed and updates first_id.
  int64_t Trim(const TrimArgs& a);

  // The first or last live entry's ID; false when there is none.
  bool EdgeId(bool first, StreamID* id) const;
  // The first or last entry's ID, tombstones included (streamGetEdgeID without skipping);
  // Redis' stand-ins when the stream has no nodes: the greatest ID first, 0-0 last.
  StreamID RawEdgeId(bool first) const;
  // The number of entries ever added up to `id`, when the counters can tell it, else -1
  // (streamEstimateDistanceFromFirstEverEntry): exact at the last ID, at the first entry and
  // before it while no tombstone lies ahead; 0 for a stream that never had an entry.
  int64_t EstimateDistance(StreamID id) const;

  uint64_t length() const { return length_; }
  StreamID last_id() const { return last_id_; }
  StreamID first_id() const { return first_id_; }
  StreamID max_deleted_id() const { return max_deleted_; }
  uint64_t entries_added() const { return entries_added_; }
  void set_last_id(StreamID id) { last_id_ = id; }
  void set_first_id(StreamID id) { first_id_ = id; }
  void set_max_deleted_id(StreamID id) { max_deleted_ = id; }
  void set_entries_added(uint64_t n) { entries_added_ = n; }
  void set_length(uint64_t n) { length_ = n; }

  // The nodes, by master ID (RDB writing, MEMORY USAGE); AddNode is the loader's (the listpack
  // checked by the caller).
  const std::map<StreamID, StreamListpack>& nodes() const { return nodes_; }
  void AddNode(StreamID master, StreamListpack lp) { nodes_.emplace(master, std::move(lp)); }

  // Consumer groups, by name in byte order (Redis' radix tree order).
  std::map<std::string, std::unique_ptr<StreamGroup>, std::less<>>& groups() { return groups_; }
  const std::map<std::string, std::unique_ptr<StreamGroup>, std::less<>>& groups() const {
    return groups_;
  }

  // Checks one node's listpack the way Redis' streamValidateListpackIntegrity does (deep): the
  // master entry, every entry's counts and lp-count, IDs after the master's, the master counts.
  static bool ValidateNode(StreamID master, std::string_view lp);

 private:
  std::map<StreamID, StreamListpack> nodes_;
  uint64_t length_ = 0;
  StreamID last_id_, first_id_, max_deleted_;
  uint64_t entries_added_ = 0;
  std::map<std::string, std::unique_ptr<StreamGroup>, std::less<>> groups_;
};

}  // namespace kv::store
