#include "store/list_type.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <string>

namespace kv::store {
namespace {

// ---- Element framing ----------------------------------------------------------------------------
// [len as LEB128][bytes][back-length]: the back-length is the size of the first two parts as
// 7-bit groups stored right to left (the rightmost byte holds the low bits; a set high bit means
// more bytes follow to the left), like listpack's backlen.

size_t VarintLen(size_t v) {
  size_t n = 1;
  while (v >= 128) {
    v >>= 7;
    n++;
  }
  return n;
}

// Bytes a framed element of `len` payload bytes takes.
size_t EntryBytes(size_t len) {
  size_t front = VarintLen(len) + len;
  return front + VarintLen(front);
}

void EncodeEntry(char* p, std::string_view v) {
  size_t len = v.size(), h = 0;
  while (len >= 128) {
    p[h++] = static_cast<char>((len & 127) | 128);
    len >>= 7;
  }
  p[h++] = static_cast<char>(len);
  if (!v.empty()) memcpy(p + h, v.data(), v.size());
  size_t back = h + v.size();
  size_t t = VarintLen(back);
  char* q = p + back;
  for (size_t i = 0; i < t; i++) {
    uint8_t b = back & 127;
    back >>= 7;
    if (i + 1 < t) b |= 128;
    q[t - 1 - i] = static_cast<char>(b);
  }
}

struct Entry {
  std::string_view value;
  size_t size;  // framed bytes
};

// The element starting at p.
Entry DecodeAt(const char* p) {
  size_t len = 0, h = 0;
  int shift = 0;
  uint8_t b;
  do {
    b = static_cast<uint8_t>(p[h++]);
    len |= static_cast<size_t>(b & 127) << shift;
    shift += 7;
  } while (b & 128);
  return {std::string_view(p + h, len), h + len + VarintLen(h + len)};
}

// Start offset of the element that ends at offset `end` of `base`.
size_t StartBefore(const char* base, size_t end) {
  size_t i = 1, back = 0;
  int shift = 0;
  uint8_t b;
  do {
    b = static_cast<uint8_t>(base[end - i]);
    back |= static_cast<size_t>(b & 127) << shift;
    shift += 7;
  } while ((b & 128) && ++i);
  return end - i - back;
}

constexpr size_t kMinCap = 64;
constexpr size_t kSafetyBytes = 8192;  // Redis' SIZE_SAFETY_LIMIT for count-limited nodes
constexpr size_t kMaxNodeEntries = 65535;

std::atomic<uint64_t> g_packed_threshold{kDefaultListPackedThreshold};

// Redis' isLargeElement: the element goes to a plain node of its own.
bool IsLarge(size_t size) { return size >= g_packed_threshold.load(std::memory_order_relaxed); }

}  // namespace

uint64_t ListPackedThreshold() { return g_packed_threshold.load(std::memory_order_relaxed); }

bool SetListPackedThreshold(uint64_t bytes) {
  if (bytes > kMaxListPackedThreshold) return false;
  g_packed_threshold.store(bytes == 0 ? kDefaultListPackedThreshold : bytes,
                           std::memory_order_relaxed);
  return true;
}

// ---- Node ---------------------------------------------------------------------------------------

void ListValue::Node::Regrow(size_t at, size_t n) {
  size_t u = used();
  size_t new_cap = std::max(kMinCap, (u + n) + (u + n) / 2);
  size_t slack = new_cap - u - n;
  // Slack goes where the next growth is likely: before a head insert, after a tail insert.
  size_t front = at == 0 && u > 0 ? slack : (at == u ? 0 : slack / 2);
  std::unique_ptr<char[]> nb(new char[new_cap]);
  if (at > 0) memcpy(nb.get() + front, data(), at);
  if (u > at) memcpy(nb.get() + front + at + n, data() + at, u - at);
  buf = std::move(nb);
  cap = new_cap;
  begin = front;
  end = front + u + n;
}

char* ListValue::Node::Open(size_t at, size_t n) {
  size_t u = used(), slack = cap - u;
  if (at == 0 && begin >= n) {
    begin -= n;
  } else if (at == u && cap - end >= n) {
    end += n;
  } else if (slack < n + u / 8) {
    // Too little room for sliding to pay off (a rotating list would slide on every push).
    Regrow(at, n);
  } else if (at == 0) {  // slide to the buffer's end: the free space is before the data
    memmove(buf.get() + slack, data(), u);
    begin = slack - n;
    end = cap;
  } else if (at == u) {  // slide to the buffer's start: the free space is after the data
    memmove(buf.get(), data(), u);
    begin = 0;
    end = u + n;
  } else if (cap - end >= n && (begin < n || u - at <= at)) {
    memmove(data() + at + n, data() + at, u - at);
    end += n;
  } else if (begin >= n) {
    memmove(data() - n, data(), at);
    begin -= n;
  } else {
    Regrow(at, n);
  }
  return data() + at;
}

void ListValue::Node::Close(size_t at, size_t n) {
  size_t u = used();
  if (at + n == u) {
    end -= n;
  } else if (at < u - at - n) {
    memmove(data() + n, data(), at);
    begin += n;
  } else {
    memmove(data() + at, data() + at + n, u - at - n);
    end -= n;
  }
  // Give memory back when a node shrank a lot (a big element replaced or removed).
  if (cap > 4 * kMinCap && used() * 4 < cap) Regrow(used(), 0);
}

void ListValue::Node::ShrinkToFit() {
  size_t u = used();
  if (cap <= u + u / 16) return;  // already tight
  std::unique_ptr<char[]> nb(new char[std::max<size_t>(u, 1)]);
  if (u > 0) memcpy(nb.get(), data(), u);
  buf = std::move(nb);
  cap = std::max<size_t>(u, 1);
  begin = 0;
  end = u;
}

ListValue::Node ListValue::Node::Copy() const {
  Node c;
  c.cap = std::max<size_t>(used(), 1);
  c.buf.reset(new char[c.cap]);
  if (used() > 0) memcpy(c.buf.get(), data(), used());
  c.end = used();
  c.count = count;
  c.plain = plain;
  c.lzf_raw = lzf_raw;
  return c;
}

// ---- NodeRing ----------------------------------------------------------------------------------

void ListValue::NodeRing::Resize(size_t cap) {
  std::unique_ptr<Node[]> slots(new Node[cap]);
  for (size_t i = 0; i < size_; i++) slots[i] = std::move((*this)[i]);
  slots_ = std::move(slots);
  cap_ = cap;
  head_ = 0;
}

void ListValue::NodeRing::MaybeShrink() {
  if (cap_ > 4 && size_ * 4 < cap_) Resize(cap_ / 2);
}

ListValue::Node& ListValue::NodeRing::emplace_front() {
  if (size_ == cap_) Resize(cap_ == 0 ? 1 : 2 * cap_);
  head_ = (head_ + cap_ - 1) & (cap_ - 1);
  size_++;
  return front();
}

ListValue::Node& ListValue::NodeRing::emplace_back() {
  if (size_ == cap_) Resize(cap_ == 0 ? 1 : 2 * cap_);
  size_++;
  return back();
}

void ListValue::NodeRing::pop_front() {
  front() = Node();
  head_ = (head_ + 1) & (cap_ - 1);
  size_--;
  MaybeShrink();
}

void ListValue::NodeRing::pop_back() {
  back() = Node();
  size_--;
  MaybeShrink();
}

void ListValue::NodeRing::insert(size_t i, Node n) {
  emplace_back();
  for (size_t j = size_ - 1; j > i; j--) (*this)[j] = std::move((*this)[j - 1]);
  (*this)[i] = std::move(n);
}

void ListValue::NodeRing::erase(size_t i) {
  for (size_t j = i; j + 1 < size_; j++) (*this)[j] = std::move((*this)[j + 1]);
  pop_back();
}

// ---- ListValue: structure -----------------------------------------------------------------------

ListValue::ListValue(int64_t fill, int64_t compress_depth)
    : fill_(static_cast<int32_t>(std::clamp<int64_t>(fill, -5, 32767))),
      depth_(static_cast<uint32_t>(std::clamp<int64_t>(compress_depth, 0, 65535))) {
  if (fill < 0) {
    int level = static_cast<int>(std::min<int64_t>(-fill, 5));
    max_bytes_ = size_t{4096} << (level - 1);
    max_entries_ = kMaxNodeEntries;
  } else {
    max_bytes_ = kSafetyBytes;
    max_entries_ = static_cast<size_t>(std::clamp<int64_t>(fill, 1, kMaxNodeEntries));
  }
}

ListValue::~ListValue() = default;

std::unique_ptr<Collection> ListValue::Clone() const {
  auto c = std::make_unique<ListValue>(fill_, depth_);
  c->max_bytes_ = max_bytes_;
  c->max_entries_ = max_entries_;
  c->count_ = count_;
  for (size_t i = 0; i < nodes_.size(); i++) c->nodes_.emplace_back() = nodes_[i].Copy();
  return c;
}

size_t ListValue::MemoryUsage() const {
  size_t bytes = sizeof(*this) + nodes_.capacity() * sizeof(Node);
  for (size_t i = 0; i < nodes_.size(); i++) bytes += nodes_[i].cap;
  return bytes;
}

bool ListValue::Fits(const Node& n, size_t entry_bytes) const {
  return n.count == 0 ||
         (n.used() + entry_bytes <= max_bytes_ && n.count < max_entries_ && !n.plain);
}

ListValue::Pos ListValue::Locate(size_t index) const {
  assert(index < count_);
  size_t i = 0;
  if (index < count_ / 2) {
    while (index >= nodes_[i].count) index -= nodes_[i++].count;
  } else {
    size_t from_tail = count_ - 1 - index;  // walk back from the last node
    i = nodes_.size() - 1;
    while (from_tail >= nodes_[i].count) from_tail -= nodes_[i--].count;
    index = nodes_[i].count - 1 - from_tail;
  }
  return {i, index};
}

size_t ListValue::OffsetOf(const char* data, size_t used, size_t count, size_t idx) {
  size_t off = 0;
  if (idx < count / 2) {
    for (size_t k = 0; k < idx; k++) off += DecodeAt(data + off).size;
  } else {
    off = used;
    for (size_t k = count; k > idx; k--) off = StartBefore(data, off);
  }
  return off;
}

size_t ListValue::PayloadOf(size_t framed) {
  // EntryBytes grows strictly with the length, so exactly one length frames to `framed`.
  for (size_t k = 2; k <= 20 && k <= framed; k++) {
    if (EntryBytes(framed - k) == framed) return framed - k;
  }
  assert(false);
  return framed;
}

void ListValue::SplitAt(size_t i, size_t idx) {
  Node& n = nodes_[i];
  assert(n.lzf_raw == 0 && !n.plain && idx > 0 && idx < n.count);
  size_t off = OffsetOf(n.data(), n.used(), n.count, idx);
  Node tail;
  tail.cap = std::max(kMinCap, n.used() - off);
  tail.buf.reset(new char[tail.cap]);
  memcpy(tail.buf.get(), n.data() + off, n.used() - off);
  tail.end = n.used() - off;
  tail.count = n.count - static_cast<uint32_t>(idx);
  n.end = n.begin + off;
  n.count = static_cast<uint32_t>(idx);
  n.ShrinkToFit();
  nodes_.insert(i + 1, std::move(tail));
}

void ListValue::SplitIfOversized(size_t i) {
  Node& n = nodes_[i];
  if (n.count < 2 || (n.used() <= max_bytes_ && n.count <= max_entries_)) return;
  SplitAt(i, n.count / 2);
  SplitIfOversized(i + 1);
  SplitIfOversized(i);
}

void ListValue::InsertSoleNode(size_t at, std::string_view v, bool plain) {
  size_t eb = EntryBytes(v.size());
  Node n;
  n.cap = plain ? eb : std::max(kMinCap, eb);
  n.buf.reset(new char[n.cap]);
  EncodeEntry(n.buf.get(), v);
  n.end = eb;
  n.count = 1;
  n.plain = plain;
  nodes_.insert(at, std::move(n));
  count_++;
}

void ListValue::ResetSole(size_t i, std::string_view v, bool plain) {
  Node& n = nodes_[i];
  assert(n.count == 1);
  size_t eb = EntryBytes(v.size());
  size_t cap = plain ? eb : std::max(kMinCap, eb);
  std::unique_ptr<char[]> buf(new char[cap]);  // written before the old bytes go: v may be them
  EncodeEntry(buf.get(), v);
  n.buf = std::move(buf);
  n.cap = cap;
  n.begin = 0;
  n.end = eb;
  n.lzf_raw = 0;
  n.plain = plain;
}

void ListValue::Compact(size_t first, size_t last) {
  size_t hi = std::min(last + 1, nodes_.size());  // touched nodes: [first, hi)
  for (size_t j = first; j < hi;) {
    if (nodes_[j].count == 0) {
      nodes_.erase(j);
      hi--;
    } else {
      j++;
    }
  }
  // Merge each touched node with its neighbours while the pair fits in one node.
  for (size_t i = first > 0 ? first - 1 : 0; i < hi && i + 1 < nodes_.size();) {
    if (nodes_[i].plain || nodes_[i + 1].plain ||  // a plain node never merges
        RawUsed(nodes_[i]) + RawUsed(nodes_[i + 1]) > max_bytes_ ||
        size_t{nodes_[i].count} + nodes_[i + 1].count > max_entries_) {
      i++;
      continue;
    }
    Decompress(i);
    Decompress(i + 1);
    Node& a = nodes_[i];
    Node& b = nodes_[i + 1];
    memcpy(a.Open(a.used(), b.used()), b.data(), b.used());
    a.count += b.count;
    nodes_.erase(i + 1);
    if (i + 1 < hi) hi--;
  }
}

// ---- ListValue: ends ----------------------------------------------------------------------------

void ListValue::PushFront(std::string_view v) { Push(true, v, IsLarge(v.size())); }

void ListValue::PushBack(std::string_view v) { Push(false, v, IsLarge(v.size())); }

void ListValue::AppendLoaded(std::string_view v, bool plain) { Push(false, v, plain); }

void ListValue::Push(bool front, std::string_view v, bool plain) {
  size_t eb = EntryBytes(v.size());
  if (nodes_.empty() || plain || !Fits(front ? nodes_.front() : nodes_.back(), eb)) {
    // The old end node is full (or plain): drop its growth slack.
    if (!nodes_.empty()) (front ? nodes_.front() : nodes_.back()).ShrinkToFit();
    Node& fresh = front ? nodes_.emplace_front() : nodes_.emplace_back();
    if (plain) {  // sized exactly: it will never grow
      fresh.buf.reset(new char[eb]);
      fresh.cap = eb;
      fresh.plain = 1;
    }
    Settle();  // the old end node may now be an inner node
  }
  Node& n = front ? nodes_.front() : nodes_.back();
  assert(n.lzf_raw == 0);
  EncodeEntry(n.Open(front ? 0 : n.used(), eb), v);
  n.count++;
  count_++;
}

std::string ListValue::PopFront() {
  assert(count_ > 0);
  Node& n = nodes_.front();
  Entry e = DecodeAt(n.data());
  std::string out(e.value);
  n.Close(0, e.size);
  count_--;
  if (--n.count == 0) {
    nodes_.pop_front();
    Settle();  // the new head may have been an inner node
  }
  return out;
}

std::string ListValue::PopBack() {
  assert(count_ > 0);
  Node& n = nodes_.back();
  size_t start = StartBefore(n.data(), n.used());
  std::string out(DecodeAt(n.data() + start).value);
  n.Close(start, n.used() - start);
  count_--;
  if (--n.count == 0) {
    nodes_.pop_back();
    Settle();  // the new tail may have been an inner node
  }
  return out;
}

void ListValue::EraseFront(size_t k) {
  k = std::min(k, count_);
  size_t nodes_before = nodes_.size();
  while (k > 0) {
    if (nodes_.front().count <= k) {
      k -= nodes_.front().count;
      count_ -= nodes_.front().count;
      nodes_.pop_front();
      continue;
    }
    Decompress(0);
    Node& n = nodes_.front();
    size_t off = 0;
    for (size_t j = 0; j < k; j++) off += DecodeAt(n.data() + off).size;
    n.Close(0, off);
    n.count -= static_cast<uint32_t>(k);
    count_ -= k;
    k = 0;
  }
  if (nodes_.size() != nodes_before) Settle();
}

void ListValue::EraseBack(size_t k) {
  k = std::min(k, count_);
  size_t nodes_before = nodes_.size();
  while (k > 0) {
    if (nodes_.back().count <= k) {
      k -= nodes_.back().count;
      count_ -= nodes_.back().count;
      nodes_.pop_back();
      continue;
    }
    Decompress(nodes_.size() - 1);
    Node& n = nodes_.back();
    size_t off = n.used();
    for (size_t j = 0; j < k; j++) off = StartBefore(n.data(), off);
    n.Close(off, n.used() - off);
    n.count -= static_cast<uint32_t>(k);
    count_ -= k;
    k = 0;
  }
  if (nodes_.size() != nodes_before) Settle();
}

// ---- ListValue: by index and by value -----------------------------------------------------------

std::string_view ListValue::At(size_t index) const {
  thread_local std::string scratch;  // holds an inflated node; see the header's contract
  // The previous view is dead now: drop a large node's copy instead of keeping it for good.
  if (scratch.capacity() > (size_t{1} << 20)) std::string().swap(scratch);
  Pos p = Locate(index);
  const Node& n = nodes_[p.node];
  const char* d = NodeBytes(p.node, &scratch);
  return DecodeAt(d + OffsetOf(d, RawUsed(n), n.count, p.idx)).value;
}

void ListValue::Set(size_t index, std::string_view v) {
  Pos p = Locate(index);
  if (nodes_[p.node].plain) return SetInPlain(p.node, v);
  if (IsLarge(v.size())) return SetLarge(p, v);
  Decompress(p.node);
  Node& n = nodes_[p.node];
  size_t off = OffsetOf(n.data(), n.used(), n.count, p.idx);
  size_t old_size = DecodeAt(n.data() + off).size;
  size_t eb = EntryBytes(v.size());
  if (eb > old_size)
    n.Open(off + old_size, eb - old_size);
  else if (eb < old_size)
    n.Close(off + eb, old_size - eb);
  EncodeEntry(n.data() + off, v);
  size_t nodes_before = nodes_.size();
  SplitIfOversized(p.node);
  Settle(p.node, p.node + (nodes_.size() - nodes_before));
}

bool ListValue::InsertAtPivot(std::string_view pivot, std::string_view v, bool after) {
  std::string tmp;
  for (size_t i = 0; i < nodes_.size(); i++) {
    const char* d = NodeBytes(i, &tmp);  // compressed nodes are searched inflated
    size_t used = RawUsed(nodes_[i]);
    for (size_t off = 0, k = 0; off < used; k++) {
      Entry e = DecodeAt(d + off);
      if (e.value != pivot) {
        off += e.size;
        continue;
      }
      if (nodes_[i].plain) {
        InsertBesidePlain(i, v, after);
        return true;
      }
      if (IsLarge(v.size())) {
        InsertLarge(i, k, v, after);
        return true;
      }
      Decompress(i);  // the same bytes, so `off` still holds
      Node& n = nodes_[i];
      size_t eb = EntryBytes(v.size());
      EncodeEntry(n.Open(after ? off + e.size : off, eb), v);
      n.count++;
      count_++;
      size_t nodes_before = nodes_.size();
      SplitIfOversized(i);
      Settle(i, i + (nodes_.size() - nodes_before));
      return true;
    }
  }
  return false;
}

// The plain-node cases follow Redis' quicklistReplaceEntry and _quicklistInsert, so the nodes
// come out as Redis' do (DEBUG OBJECT's ql_nodes, the nodes an RDB file saves).

void ListValue::SetLarge(Pos p, std::string_view v) {
  // The packed node is split around the element, which becomes a plain node.
  size_t i = p.node, before = nodes_.size();
  Decompress(i);
  if (p.idx + 1 < nodes_[i].count) SplitAt(i, p.idx + 1);
  if (p.idx > 0) SplitAt(i++, p.idx);
  ResetSole(i, v, true);
  Settle(p.node, p.node + (nodes_.size() - before));
}

void ListValue::SetInPlain(size_t i, std::string_view v) {
  if (IsLarge(v.size())) {
    ResetSole(i, v, true);
    Settle(i, i);
    return;
  }
  // A small element leaves the plain node for the head of the next node when that one is
  // packed and has room, else for a packed node of its own in the plain node's place.
  size_t eb = EntryBytes(v.size());
  if (i + 1 < nodes_.size() && !nodes_[i + 1].plain) {
    Decompress(i + 1);
    Node& next = nodes_[i + 1];
    if (Fits(next, eb)) {
      EncodeEntry(next.Open(0, eb), v);
      next.count++;
      nodes_.erase(i);
      Settle(i, i);
      return;
    }
  }
  ResetSole(i, v, false);
  Settle(i, std::min(i + 1, nodes_.size() - 1));
}

void ListValue::InsertBesidePlain(size_t i, std::string_view v, bool after) {
  if (IsLarge(v.size())) {
    InsertSoleNode(after ? i + 1 : i, v, true);
    Settle(i, i + 1);
    return;
  }
  // A small element joins the neighbour on its side when that is packed and has room (the
  // tail of the previous node, the head of the next), else gets a packed node of its own.
  size_t eb = EntryBytes(v.size());
  bool has = after ? i + 1 < nodes_.size() : i > 0;
  size_t j = after ? i + 1 : i - 1;
  if (has && !nodes_[j].plain) {
    Decompress(j);
    Node& nb = nodes_[j];
    if (Fits(nb, eb)) {
      EncodeEntry(nb.Open(after ? 0 : nb.used(), eb), v);
      nb.count++;
      count_++;
      Settle(j, j);
      return;
    }
  }
  InsertSoleNode(after ? i + 1 : i, v, false);
  // The new node, and the neighbour decompressed above (now one further on when after).
  size_t lo = after ? i + 1 : (i > 0 ? i - 1 : i);
  Settle(lo, std::min(lo + 1, nodes_.size() - 1));
}

void ListValue::InsertLarge(size_t i, size_t idx, std::string_view v, bool after) {
  size_t count = nodes_[i].count, at;
  if (after && idx + 1 == count) {
    at = i + 1;
  } else if (!after && idx == 0) {
    at = i;
  } else {  // inside the packed node: split it at the insertion point
    Decompress(i);
    SplitAt(i, after ? idx + 1 : idx);
    at = i + 1;
  }
  InsertSoleNode(at, v, true);
  Settle(i, std::min(at + 1, nodes_.size() - 1));
}

size_t ListValue::Remove(std::string_view v, size_t limit, bool from_tail) {
  size_t removed = 0, first = SIZE_MAX, last = 0;
  auto take = [&](std::string_view e) {
    if (e != v || (limit != 0 && removed >= limit)) return false;
    removed++;
    return true;
  };
  std::string tmp;
  for (size_t step = 0; step < nodes_.size() && (limit == 0 || removed < limit); step++) {
    size_t i = from_tail ? nodes_.size() - 1 - step : step;
    if (nodes_[i].lzf_raw != 0) {  // inflate only a node that holds a match
      const char* d = NodeBytes(i, &tmp);
      bool hit = false;
      for (size_t off = 0; off < tmp.size() && !hit;) {
        Entry e = DecodeAt(d + off);
        hit = e.value == v;
        off += e.size;
      }
      if (!hit) continue;
      Decompress(i);
    }
    Node& n = nodes_[i];
    char* base = n.data();
    size_t before = removed, u = n.used();
    if (!from_tail) {  // kept elements slide towards the node's start
      size_t w = 0;
      for (size_t r = 0; r < u;) {
        Entry e = DecodeAt(base + r);
        if (!take(e.value)) {
          if (w != r) memmove(base + w, base + r, e.size);
          w += e.size;
        }
        r += e.size;
      }
      n.end = n.begin + w;
    } else {  // kept elements slide towards the node's end
      size_t w = u;
      for (size_t end = u; end > 0;) {
        size_t s = StartBefore(base, end);
        Entry e = DecodeAt(base + s);
        if (!take(e.value)) {
          w -= e.size;
          if (w != s) memmove(base + w, base + s, e.size);
        }
        end = s;
      }
      n.begin += w;
    }
    n.count -= static_cast<uint32_t>(removed - before);
    if (removed > before) {
      first = std::min(first, i);
      last = std::max(last, i);
    }
  }
  count_ -= removed;
  if (removed > 0) {
    Compact(first, last);
    // The survivors of [first, last] and a merged left neighbour lie in [first - 1, last].
    size_t lo = first > 0 ? first - 1 : 0;
    Settle(lo, std::min(last, nodes_.empty() ? 0 : nodes_.size() - 1));
  }
  return removed;
}

// ---- ListValue: visiting ------------------------------------------------------------------------

void ListValue::VisitRange(size_t start, size_t n, bool reverse,
                           const std::function<void(std::string_view)>& fn) const {
  if (n == 0) return;
  assert(start + n <= count_);
  Pos p = Locate(reverse ? start + n - 1 : start);
  std::string tmp;  // the current node inflated, when compressed
  size_t i = p.node;
  const char* d = NodeBytes(i, &tmp);
  size_t used = RawUsed(nodes_[i]);
  size_t off = OffsetOf(d, used, nodes_[i].count, p.idx);
  while (true) {
    Entry e = DecodeAt(d + off);
    fn(e.value);
    if (--n == 0) return;
    if (!reverse) {
      off += e.size;
      if (off == used) {
        d = NodeBytes(++i, &tmp);
        used = RawUsed(nodes_[i]);
        off = 0;
      }
    } else if (off > 0) {
      off = StartBefore(d, off);
    } else {
      d = NodeBytes(--i, &tmp);
      used = RawUsed(nodes_[i]);
      off = StartBefore(d, used);
    }
  }
}

void ListValue::Scan(bool from_tail, const std::function<bool(std::string_view)>& fn) const {
  std::string tmp;  // the current node inflated, when compressed
  for (size_t step = 0; step < nodes_.size(); step++) {
    size_t i = from_tail ? nodes_.size() - 1 - step : step;
    const char* d = NodeBytes(i, &tmp);
    size_t used = RawUsed(nodes_[i]);
    if (!from_tail) {
      for (size_t off = 0; off < used;) {
        Entry e = DecodeAt(d + off);
        if (!fn(e.value)) return;
        off += e.size;
      }
    } else {
      for (size_t end = used; end > 0;) {
        end = StartBefore(d, end);
        if (!fn(DecodeAt(d + end).value)) return;
      }
    }
  }
}

void ListValue::ForEachWithForm(const std::function<void(std::string_view, bool plain)>& fn) const {
  std::string tmp;  // the current node inflated, when compressed
  for (size_t i = 0; i < nodes_.size(); i++) {
    const char* d = NodeBytes(i, &tmp);
    size_t used = RawUsed(nodes_[i]);
    bool plain = nodes_[i].plain;
    for (size_t off = 0; off < used;) {
      Entry e = DecodeAt(d + off);
      fn(e.value, plain);
      off += e.size;
    }
  }
}

void ListValue::ForEach(const Visitor& fn) const {
  Scan(false, [&](std::string_view e) {
    fn(e, {});
    return true;
  });
}

}  // namespace kv::store
