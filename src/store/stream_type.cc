#include "store/stream_type.h"

#include <array>
#include <cstdio>

namespace kv::store {
namespace {

using Lp = StreamListpack;
constexpr size_t kNone = Lp::kNone;
constexpr size_t kListpackMaxSize = size_t{1} << 30;  // STREAM_LISTPACK_MAX_SIZE
constexpr size_t kMaxPreallocate = 4096;              // STREAM_LISTPACK_MAX_PRE_ALLOCATE

using NumBuf = std::array<char, 24>;

// A node opened for reading: its master fields and where its entries start.
struct Node {
  const Lp& lp;
  StreamID master;
  int64_t count = 0, deleted = 0, master_fields = 0;
  size_t count_off = 0, master_field_off = kNone, first_entry = kNone;

  Node(const Lp& l, StreamID m) : lp(l), master(m) {
    count_off = lp.First();
    count = lp.GetInt(count_off);
    size_t off = lp.Next(count_off);
    deleted = lp.GetInt(off);
    off = lp.Next(off);
    master_fields = lp.GetInt(off);
    off = lp.Next(off);
    master_field_off = off;
    for (int64_t i = 0; i < master_fields; i++) off = lp.Next(off);
    first_entry = lp.Next(off);  // past the master's 0 terminator
  }
};

// One entry, read from its flags element.
struct Entry {
  int64_t flags = 0;
  StreamID id;
  int64_t numfields = 0;
  size_t flags_off = 0, fields_off = 0, lpcount_off = 0;
  bool same() const { return flags & StreamValue::kFlagSameFields; }
  bool deleted() const { return flags & StreamValue::kFlagDeleted; }
};

Entry ReadEntry(const Node& n, size_t off) {
  const Lp& lp = n.lp;
  Entry e;
  e.flags_off = off;
  e.flags = lp.GetInt(off);
  off = lp.Next(off);
  e.id.ms = n.master.ms + static_cast<uint64_t>(lp.GetInt(off));
  off = lp.Next(off);
  e.id.seq = n.master.seq + static_cast<uint64_t>(lp.GetInt(off));
  off = lp.Next(off);
  size_t skip;
  if (e.same()) {
    e.numfields = n.master_fields;
    skip = static_cast<size_t>(e.numfields);
  } else {
    e.numfields = lp.GetInt(off);
    off = lp.Next(off);
    skip = static_cast<size_t>(e.numfields) * 2;
  }
  e.fields_off = off;
  for (size_t i = 0; i < skip; i++) off = lp.Next(off);
  e.lpcount_off = off;
  return e;
}

// The flags offset of the entry after / before `e` in its node, kNone at the ends.
size_t NextEntry(const Node& n, const Entry& e) { return n.lp.Next(e.lpcount_off); }
size_t PrevEntry(const Node& n, size_t flags_off) {
  size_t lpc = n.lp.Prev(flags_off);
  int64_t count = n.lp.GetInt(lpc);
  if (count == 0) return kNone;  // the master entry's terminator
  size_t off = lpc;
  while (count--) off = n.lp.Prev(off);
  return off;
}
size_t LastEntry(const Node& n) {
  size_t lpc = n.lp.Last();
  int64_t count = n.lp.GetInt(lpc);
  if (count == 0) return kNone;
  size_t off = lpc;
  while (count--) off = n.lp.Prev(off);
  return off;
}

// Fills `out` with an entry's fields and values; numbers are formatted into `nums`.
void Materialize(const Node& n, const Entry& e, std::vector<StreamValue::FieldValue>* out,
                 std::vector<NumBuf>* nums) {
  const Lp& lp = n.lp;
  out->clear();
  nums->resize(static_cast<size_t>(e.numfields) * 2);
  size_t mf = n.master_field_off, off = e.fields_off;
  for (int64_t i = 0; i < e.numfields; i++) {
    std::string_view f, v;
    if (e.same()) {
      f = lp.Get(mf).Text((*nums)[i * 2].data());
      mf = lp.Next(mf);
    } else {
      f = lp.Get(off).Text((*nums)[i * 2].data());
      off = lp.Next(off);
    }
    v = lp.Get(off).Text((*nums)[i * 2 + 1].data());
    off = lp.Next(off);
    out->emplace_back(f, v);
  }
}

}  // namespace

bool StreamID::Incr() {
  if (seq == UINT64_MAX) {
    if (ms == UINT64_MAX) {
      ms = seq = 0;
      return false;
    }
    ms++;
    seq = 0;
    return true;
  }
  seq++;
  return true;
}

bool StreamID::Decr() {
  if (seq == 0) {
    if (ms == 0) {
      ms = seq = UINT64_MAX;
      return false;
    }
    ms--;
    seq = UINT64_MAX;
    return true;
  }
  seq--;
  return true;
}

std::string StreamID::ToString() const {
  char buf[48];
  int n = snprintf(buf, sizeof(buf), "%llu-%llu", static_cast<unsigned long long>(ms),
                   static_cast<unsigned long long>(seq));
  return {buf, static_cast<size_t>(n)};
}

std::unique_ptr<Collection> StreamValue::Clone() const {
  auto s = std::make_unique<StreamValue>();
  for (const auto& [id, lp] : nodes_) s->nodes_.emplace(id, lp.Clone());
  s->length_ = length_;
  s->last_id_ = last_id_;
  s->first_id_ = first_id_;
  s->max_deleted_ = max_deleted_;
  s->entries_added_ = entries_added_;
  for (const auto& [name, g] : groups_) {
    auto ng = std::make_unique<StreamGroup>();
    ng->last_id = g->last_id;
    ng->entries_read = g->entries_read;
    for (const auto& [id, nack] : g->pel) {
      ng->pel.emplace(id, std::make_unique<StreamNack>(*nack));
    }
    for (const auto& [cname, c] : g->consumers) {
      auto nc = std::make_unique<StreamConsumer>();
      nc->name = c->name;
      nc->seen_time = c->seen_time;
      for (const auto& [id, nack] : c->pel) {
        StreamNack* copy = ng->pel.at(id).get();
        copy->consumer = nc.get();
        nc->pel.emplace(id, copy);
      }
      ng->consumers.emplace(cname, std::move(nc));
    }
    s->groups_.emplace(name, std::move(ng));
  }
  return s;
}

void StreamValue::ForEach(const Collection::Visitor& fn) const {
  Range(StreamID::Min(), StreamID::Max(), false, [&](StreamID, std::span<const FieldValue> f) {
    for (const auto& [field, value] : f) fn(field, value);
    return true;
  });
}

size_t StreamValue::MemoryUsage() const {
  // The nodes' allocations and the tree's nodes (about what a radix tree node of a 16-byte key
  // costs), then the groups.
  size_t total = sizeof(*this);
  for (const auto& [id, lp] : nodes_) total += lp.capacity() + 64;
  for (const auto& [name, g] : groups_) {
    total += sizeof(StreamGroup) + name.size() + 64;
    total += g->pel.size() * (sizeof(StreamNack) + 64);
    for (const auto& [cname, c] : g->consumers) {
      total += sizeof(StreamConsumer) + cname.size() + 64 + c->pel.size() * 48;
    }
  }
  return total;
}

void StreamValue::Append(StreamID id, std::span<const std::string_view> fv, size_t node_max_bytes,
                         int64_t node_max_entries) {
  size_t totelelen = 0;
  for (std::string_view s : fv) totelelen += s.size();
  const int64_t numfields = static_cast<int64_t>(fv.size() / 2);

  Lp* lp = nullptr;
  StreamID master;
  if (!nodes_.empty()) {
    auto it = std::prev(nodes_.end());
    size_t max_bytes = node_max_bytes == 0 || node_max_bytes > kListpackMaxSize ? kListpackMaxSize
                                                                                : node_max_bytes;
    Lp& tail = it->second;
    bool new_node = tail.bytes() + totelelen >= max_bytes;
    if (!new_node && node_max_entries) {
      size_t first = tail.First();
      int64_t count = tail.GetInt(first) + tail.GetInt(tail.Next(first));
      new_node = count >= node_max_entries;
    }
    if (new_node) {
      tail.ShrinkToFit();  // the full node gives back its preallocation
    } else {
      lp = &tail;
      master = it->first;
    }
  }

  int flags = 0;
  if (lp == nullptr) {
    size_t prealloc = kMaxPreallocate;
    if (node_max_bytes > 0 && node_max_bytes < prealloc) prealloc = node_max_bytes;
    master = id;
    lp = &nodes_.emplace(id, Lp::New(prealloc)).first->second;
    lp->AppendInt(1);  // one entry: this one
    lp->AppendInt(0);  // none deleted
    lp->AppendInt(numfields);
    for (int64_t i = 0; i < numfields; i++) lp->Append(fv[i * 2]);
    lp->AppendInt(0);  // the master entry's terminator
    flags |= kFlagSameFields;
  } else {
    size_t off = lp->First();
    lp->ReplaceInt(off, lp->GetInt(off) + 1);
    off = lp->Next(lp->Next(off));  // past deleted, at the master field count
    int64_t master_fields = lp->GetInt(off);
    off = lp->Next(off);
    if (numfields == master_fields) {
      int64_t i = 0;
      char buf[24];
      for (; i < master_fields; i++) {
        if (lp->Get(off).Text(buf) != fv[i * 2]) break;
        off = lp->Next(off);
      }
      if (i == master_fields) flags |= kFlagSameFields;
    }
  }

  lp->AppendInt(flags);
  lp->AppendInt(static_cast<int64_t>(id.ms - master.ms));
  lp->AppendInt(static_cast<int64_t>(id.seq - master.seq));
  if (!(flags & kFlagSameFields)) lp->AppendInt(numfields);
  for (int64_t i = 0; i < numfields; i++) {
    if (!(flags & kFlagSameFields)) lp->Append(fv[i * 2]);
    lp->Append(fv[i * 2 + 1]);
  }
  int64_t lp_count = numfields + 3;
  if (!(flags & kFlagSameFields)) lp_count += numfields + 1;
  lp->AppendInt(lp_count);

  length_++;
  entries_added_++;
  last_id_ = id;
  if (length_ == 1) first_id_ = id;
}

void StreamValue::Range(StreamID start, StreamID end, bool rev, const EntryVisitor& fn) const {
  if (nodes_.empty() || start > end) return;
  std::vector<FieldValue> fields;
  std::vector<NumBuf> nums;
  if (!rev) {
    // The node whose master ID is the greatest <= start (or the first).
    auto it = nodes_.upper_bound(start);
    if (it != nodes_.begin()) --it;
    for (; it != nodes_.end(); ++it) {
      Node n(it->second, it->first);
      if (n.master > end) return;
      for (size_t off = n.first_entry; off != kNone;) {
        Entry e = ReadEntry(n, off);
        off = NextEntry(n, e);
        if (e.deleted() || e.id < start) continue;
        if (e.id > end) return;
        Materialize(n, e, &fields, &nums);
        if (!fn(e.id, fields)) return;
      }
    }
    return;
  }
  auto it = nodes_.upper_bound(end);
  if (it == nodes_.begin()) return;
  do {
    --it;
    Node n(it->second, it->first);
    for (size_t off = LastEntry(n); off != kNone;) {
      Entry e = ReadEntry(n, off);
      off = PrevEntry(n, off);
      if (e.deleted() || e.id > end) continue;
      if (e.id < start) return;
      Materialize(n, e, &fields, &nums);
      if (!fn(e.id, fields)) return;
    }
  } while (it != nodes_.begin());
}

bool StreamValue::EdgeId(bool first, StreamID* id) const {
  bool found = false;
  Range(StreamID::Min(), StreamID::Max(), !first, [&](StreamID e, std::span<const FieldValue>) {
    *id = e;
    found = true;
    return false;
  });
  return found;
}

StreamID StreamValue::RawEdgeId(bool first) const {
  if (nodes_.empty()) return first ? StreamID::Max() : StreamID::Min();
  const auto& [master, lp] = first ? *nodes_.begin() : *nodes_.rbegin();
  Node n(lp, master);
  size_t off = first ? n.first_entry : LastEntry(n);
  return off == kNone ? (first ? StreamID::Max() : StreamID::Min()) : ReadEntry(n, off).id;
}

int64_t StreamValue::EstimateDistance(StreamID id) const {
  const auto added = static_cast<int64_t>(entries_added_);
  const auto len = static_cast<int64_t>(length_);
  if (!entries_added_) return 0;
  if (!length_ && id <= last_id_) return added;
  if (id != StreamID::Min() && id < max_deleted_) return -1;  // a tombstone lies after it
  if (id == last_id_) return added;
  if (id > last_id_) return -1;
  if (max_deleted_ == StreamID::Min() || max_deleted_ < first_id_) {
    if (id < first_id_) return added - len;
    if (id == first_id_) return added - len + 1;
  }
  return -1;
}

bool StreamValue::Delete(StreamID id) {
  auto it = nodes_.upper_bound(id);
  if (it == nodes_.begin()) return false;
  --it;
  Lp& lp = it->second;
  Node n(lp, it->first);
  for (size_t off = n.first_entry; off != kNone;) {
    Entry e = ReadEntry(n, off);
    if (e.id > id) return false;
    if (e.id == id) {
      if (e.deleted()) return false;
      lp.ReplaceInt(e.flags_off, e.flags | kFlagDeleted);  // one byte either way
      if (n.count == 1) {
        nodes_.erase(it);  // its last live entry: the node goes
      } else {
        lp.ReplaceInt(n.count_off, n.count - 1);
        size_t del = lp.Next(lp.First());
        lp.ReplaceInt(del, lp.GetInt(del) + 1);
      }
      length_--;
      return true;
    }
    off = NextEntry(n, e);
  }
  return false;
}

int64_t StreamValue::Trim(const TrimArgs& a) {
  if (a.strategy == TrimStrategy::kNone) return 0;
  int64_t deleted = 0;
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (a.strategy == TrimStrategy::kMaxLen && length_ <= static_cast<uint64_t>(a.maxlen)) break;
    Lp& lp = it->second;
    Node n(lp, it->first);
    int64_t entries = n.count;
    if (a.limit && deleted + entries > a.limit) break;

    bool remove_node;
    if (a.strategy == TrimStrategy::kMaxLen) {
      remove_node = length_ - static_cast<uint64_t>(entries) >= static_cast<uint64_t>(a.maxlen);
    } else {
      // The node's last entry, live or not (lpGetEdgeStreamID).
      size_t last = LastEntry(n);
      StreamID last_id = last == kNone ? StreamID{} : ReadEntry(n, last).id;
      remove_node = last_id < a.minid;
    }
    if (remove_node) {
      length_ -= static_cast<uint64_t>(entries);
      deleted += entries;
      it = nodes_.erase(it);
      continue;
    }
    if (a.approx) break;

    // Tombstones from the head of this node until the condition holds.
    int64_t from_node = 0;
    for (size_t off = n.first_entry; off != kNone;) {
      Entry e = ReadEntry(n, off);
      bool stop = a.strategy == TrimStrategy::kMaxLen ? length_ <= static_cast<uint64_t>(a.maxlen)
                                                      : e.id >= a.minid;
      if (stop) break;
      off = NextEntry(n, e);
      if (!e.deleted()) {
        lp.ReplaceInt(e.flags_off, e.flags | kFlagDeleted);
        from_node++;
        length_--;
      }
    }
    deleted += from_node;
    size_t off = lp.First();
    lp.ReplaceInt(off, entries - from_node);
    off = lp.Next(off);
    lp.ReplaceInt(off, lp.GetInt(off) + from_node);
    break;  // this node still has live entries: nothing more to trim
  }
  if (length_ == 0) {
    first_id_ = StreamID{};
  } else if (deleted) {
    EdgeId(true, &first_id_);
  }
  return deleted;
}

bool StreamValue::ValidateNode(StreamID master, std::string_view bytes) {
  size_t elements;
  if (!Lp::Validate(bytes, &elements)) return false;
  Lp lp = Lp::FromBytes(bytes);
  // Every read below stays within the element count.
  size_t seen = 0;
  auto next = [&](size_t off) -> size_t {
    if (off == kNone) return kNone;
    seen++;
    return lp.Next(off);
  };
  auto int_at = [&](size_t off, int64_t* v) {
    if (off == kNone) return false;
    Lp::Elem e = lp.Get(off);
    if (!e.is_int) return false;
    *v = e.ival;
    return true;
  };
  size_t off = lp.First();
  int64_t count, deleted, master_fields, zero;
  if (!int_at(off, &count)) return false;
  off = next(off);
  if (!int_at(off, &deleted)) return false;
  off = next(off);
  if (!int_at(off, &master_fields) || master_fields < 0 ||
      static_cast<size_t>(master_fields) > elements) {
    return false;
  }
  off = next(off);
  for (int64_t i = 0; i < master_fields; i++) {
    if (off == kNone) return false;
    off = next(off);
  }
  if (!int_at(off, &zero) || zero != 0) return false;
  off = next(off);
  int64_t valid = 0, dead = 0;
  while (off != kNone) {
    int64_t flags, ms, seq, numfields, lp_count;
    size_t start_seen = seen;
    if (!int_at(off, &flags)) return false;
    off = next(off);
    if (!int_at(off, &ms)) return false;
    off = next(off);
    if (!int_at(off, &seq)) return false;
    off = next(off);
    StreamID id{master.ms + static_cast<uint64_t>(ms), master.seq + static_cast<uint64_t>(seq)};
    if (id < master) return false;
    int64_t values;
    if (flags & kFlagSameFields) {
      values = master_fields;
    } else {
      if (!int_at(off, &numfields) || numfields < 0) return false;
      off = next(off);
      values = numfields * 2;
    }
    if (values < 0 || static_cast<size_t>(values) > elements) return false;
    for (int64_t i = 0; i < values; i++) {
      if (off == kNone) return false;
      off = next(off);
    }
    if (!int_at(off, &lp_count) || static_cast<size_t>(lp_count) != seen - start_seen) {
      return false;
    }
    off = next(off);
    (flags & kFlagDeleted ? dead : valid)++;
  }
  return valid == count && dead == deleted;
}

}  // namespace kv::store
