// The list value type: Redis' quicklist idea. A deque of nodes, each one contiguous buffer of
// length-prefixed elements (a listpack-like "chunk"), so short elements cost two bytes of framing
// instead of a heap allocation each. Pushes and pops at either end are O(1) amortized; access by
// index walks nodes from the nearer end (O(nodes) plus one node), as in Redis.
//
// Node size follows list-max-listpack-size (EncodingLimits::list_max_listpack_size): negative
// values -1..-5 cap a node at 4, 8, 16, 32 or 64 KiB, positive values cap its element count
// (with an 8 KiB safety cap). An element larger than the cap gets a node of its own.
//
// Elements of at least ListPackedThreshold() bytes (Redis' quicklist packed_threshold; 1 GiB
// unless DEBUG QUICKLIST-PACKED-THRESHOLD lowers it) get a "plain" node of their own, placed as
// Redis places them: a plain node never takes another element and never merges, and putting a
// large element inside a packed node (LSET, LINSERT) splits that node around it. A node keeps
// its form when the threshold changes later; the RDB writer saves plain nodes as PLAIN.
//
// Compression follows list-compress-depth (EncodingLimits::list_compress_depth), fixed when the
// list is made, as Redis fixes it per quicklist: 0 compresses nothing; N keeps the N nodes at
// each end plain and stores the nodes between them LZF-compressed (list_compress.cc). A node is
// compressed when it becomes an inner node or an operation touches it while inner, and only when
// that pays (Redis' thresholds: at least 48 bytes, at least 8 bytes saved); reads inflate one
// node at a time into scratch memory and leave the node compressed.
// Not thread-safe: called under the keyspace lock like the rest of store/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "store/value.h"

namespace kv::store {

// Redis' default packed_threshold, and the largest value it accepts (4 GiB - 1 MiB).
constexpr uint64_t kDefaultListPackedThreshold = uint64_t{1} << 30;
constexpr uint64_t kMaxListPackedThreshold = (uint64_t{1} << 32) - (1 << 20);
// The process-wide threshold (an atomic: any thread may read or set it).
uint64_t ListPackedThreshold();
// Sets it as Redis' quicklistisSetPackedThreshold does: 0 restores the default; a value above
// kMaxListPackedThreshold is refused (false) and changes nothing. Lists made before keep the
// form of their existing nodes.
bool SetListPackedThreshold(uint64_t bytes);

class ListValue final : public Collection {
 public:
  // `fill` is list-max-listpack-size, `compress_depth` list-compress-depth (clamped as Redis
  // clamps them: fill to [-5, 32767], the depth to [0, 65535]).
  explicit ListValue(int64_t fill = -2, int64_t compress_depth = 0);
  ~ListValue() override;
  ListValue(const ListValue&) = delete;
  ListValue& operator=(const ListValue&) = delete;

  // Collection.
  std::unique_ptr<Collection> Clone() const override;
  size_t Size() const override { return count_; }
  void ForEach(const Visitor& fn) const override;
  size_t MemoryUsage() const override;
  const char* EncodingName() const override { return "quicklist"; }

  void PushFront(std::string_view v);
  void PushBack(std::string_view v);
  // Appends `v` in a node of the form a saved quicklist gave it (`plain`: a node of its own),
  // whatever the threshold now says: the RDB loader keeps each node's container, as Redis does.
  void AppendLoaded(std::string_view v, bool plain);
  // Remove and return the first/last element. The list must not be empty.
  std::string PopFront();
  std::string PopBack();
  // Remove the first/last n elements (n may exceed the size).
  void EraseFront(size_t n);
  void EraseBack(size_t n);

  // The element at `index` (0-based from the head; must be < Size()). The view is valid until
  // the list is next modified or At is next called on any list by this thread (an element of a
  // compressed node is read from a per-thread scratch buffer).
  std::string_view At(size_t index) const;
  // Replaces the element at `index` (< Size()).
  void Set(size_t index, std::string_view v);
  // Inserts `v` before (or after) the first element equal to `pivot`, scanning from the head.
  // Returns false when no element equals `pivot`.
  bool InsertAtPivot(std::string_view pivot, std::string_view v, bool after);
  // Removes elements equal to `v`: at most `limit` of them (0: all), the first ones met scanning
  // from the head, or from the tail when `from_tail`. Returns how many were removed.
  size_t Remove(std::string_view v, size_t limit, bool from_tail);

  // Visits `n` elements starting at `start` towards the tail, or, when `reverse`, the same
  // elements from index start+n-1 towards the head. Requires start + n <= Size().
  void VisitRange(size_t start, size_t n, bool reverse,
                  const std::function<void(std::string_view)>& fn) const;
  // Visits elements from the head (or from the tail when `from_tail`) until fn returns false.
  void Scan(bool from_tail, const std::function<bool(std::string_view)>& fn) const;
  // Visits every element from the head with whether it sits in a plain node (the RDB writer
  // saves those as quicklist PLAIN nodes).
  void ForEachWithForm(const std::function<void(std::string_view, bool plain)>& fn) const;

  // Number of nodes, for tests and MEMORY/DEBUG-style introspection.
  size_t node_count() const { return nodes_.size(); }
  // The settings the list was made with (DEBUG OBJECT's ql_listpack_max and ql_compressed).
  int64_t fill() const { return fill_; }
  size_t compress_depth() const { return depth_; }
  // Whether node i (< node_count()) is stored compressed; how many nodes are.
  bool node_compressed(size_t i) const { return nodes_[i].lzf_raw != 0; }
  // Whether node i (< node_count()) is a plain node (one large element of its own).
  bool node_plain(size_t i) const { return nodes_[i].plain != 0; }
  size_t compressed_node_count() const;
  // The nodes' bytes as they would be uncompressed (DEBUG OBJECT's ql_uncompressed_size); a
  // plain node counts its element's bytes alone, as Redis counts it.
  size_t uncompressed_bytes() const;

 private:
  // One chunk of elements. Each element is framed as [varint len][bytes][reverse varint of the
  // framed size so far], so the chunk can be walked in both directions. The used bytes are
  // buf[begin, end), with free space kept at both sides so pushes at either end are cheap.
  struct Node {
    std::unique_ptr<char[]> buf;
    size_t cap = 0, begin = 0, end = 0;
    uint32_t count : 31 = 0;
    // A plain node: exactly one element, which no other element may join (Redis' PLAIN
    // container). It is framed as in any node, so every read path serves both forms.
    uint32_t plain : 1 = 0;
    // Nonzero while compressed: buf[begin, end) then holds the LZF form of that many bytes of
    // framed elements, and nothing may read or change the elements before Decompress.
    uint32_t lzf_raw = 0;

    size_t used() const { return end - begin; }
    const char* data() const { return buf.get() + begin; }
    char* data() { return buf.get() + begin; }
    // Opens a gap of n bytes at offset `at` of the used region; returns where it starts.
    char* Open(size_t at, size_t n);
    // Removes the n bytes at offset `at` of the used region.
    void Close(size_t at, size_t n);
    // Reallocates so that `at` is followed by a gap of n bytes (slack split by position).
    void Regrow(size_t at, size_t n);
    // Frees the slack of a node that will not grow (the list moved on to a new end node).
    void ShrinkToFit();
    Node Copy() const;
  };
  // The nodes in list order: a ring buffer (power-of-two capacity), so adding or dropping a node
  // at either end is O(1) amortized and a short list costs one small allocation (std::deque
  // allocates over 500 bytes even for one element).
  class NodeRing {
   public:
    size_t size() const { return size_; }
    size_t capacity() const { return cap_; }
    bool empty() const { return size_ == 0; }
    Node& operator[](size_t i) { return slots_[(head_ + i) & (cap_ - 1)]; }
    const Node& operator[](size_t i) const { return slots_[(head_ + i) & (cap_ - 1)]; }
    Node& front() { return (*this)[0]; }
    Node& back() { return (*this)[size_ - 1]; }
    Node& emplace_front();
    Node& emplace_back();
    void pop_front();
    void pop_back();
    void insert(size_t i, Node n);  // before position i
    void erase(size_t i);

   private:
    void Resize(size_t cap);
    void MaybeShrink();

    std::unique_ptr<Node[]> slots_;
    size_t cap_ = 0, head_ = 0, size_ = 0;
  };
  struct Pos {
    size_t node;  // index into nodes_
    size_t idx;   // index of the element inside that node
  };

  // Whether a packed node may take one more element of `entry_bytes` framed bytes.
  bool Fits(const Node& n, size_t entry_bytes) const;
  // Pushes at the head or tail; `plain`: in a plain node of its own.
  void Push(bool front, std::string_view v, bool plain);
  // Adds a node holding only `v` before position `at` (a plain one sized exactly); counts it
  // and leaves the compression to the caller's Settle.
  void InsertSoleNode(size_t at, std::string_view v, bool plain);
  // Moves the elements [idx, count) of packed node i (decompressed; 0 < idx < count) to a new
  // node at i + 1.
  void SplitAt(size_t i, size_t idx);
  // Rewrites node i, which holds one element, to hold `v` in the given form.
  void ResetSole(size_t i, std::string_view v, bool plain);
  // Set's and InsertAtPivot's paths for plain nodes and large elements.
  void SetLarge(Pos p, std::string_view v);
  void SetInPlain(size_t i, std::string_view v);
  void InsertBesidePlain(size_t i, std::string_view v, bool after);
  void InsertLarge(size_t i, size_t idx, std::string_view v, bool after);
  // Node and in-node index of the element at `index` (< Size()).
  Pos Locate(size_t index) const;
  // Byte offset of element `idx` among the `count` elements framed in data[0, used).
  static size_t OffsetOf(const char* data, size_t used, size_t count, size_t idx);
  // The payload size of an element whose framed size is `framed`.
  static size_t PayloadOf(size_t framed);

  // ---- Compression (list_compress.cc) ----
  // The node's uncompressed bytes: used() or, when compressed, its original size.
  static size_t RawUsed(const Node& n) { return n.lzf_raw != 0 ? n.lzf_raw : n.used(); }
  // Node i's framed elements: its own buffer, or inflated into *tmp when compressed.
  const char* NodeBytes(size_t i, std::string* tmp) const;
  // Makes node i plain (no-op when it is).
  void Decompress(size_t i);
  // Compresses plain node i when that pays (Redis' __quicklistCompressNode thresholds).
  void TryCompress(size_t i);
  // Restores the depth rule after a change (Redis' __quicklistCompress): the depth_ nodes at
  // each end plain, the first inner node from each end compressed, and so is each inner node in
  // [lo, hi] (the nodes the change touched or added; lo > hi: none) and each node those added
  // nodes may have pushed inwards past either boundary.
  void Settle(size_t lo = 1, size_t hi = 0);
  // Splits nodes_[i] in two halves when it exceeds the size limits.
  void SplitIfOversized(size_t i);
  // Drops the empty nodes in [first, last] and merges neighbours there that fit in one node.
  void Compact(size_t first, size_t last);

  NodeRing nodes_;
  size_t count_ = 0;
  size_t max_bytes_;    // per node
  size_t max_entries_;  // per node
  int32_t fill_;        // list-max-listpack-size as given (clamped)
  uint32_t depth_;      // list-compress-depth: plain nodes kept at each end (0: no compression)
};

}  // namespace kv::store
