#include "store/zset_type.h"

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "common/hash.h"

namespace kv::store {
namespace {

// ---- Listpack entry codec -----------------------------------------------------------------------

constexpr uint64_t kDoubleTag = 1;                     // score tag: 8 raw double bytes follow
constexpr double kIntLimit = 4503599627370496.0;       // 2^52: integers below are exact
constexpr size_t kMaxListpackBytes = size_t{1} << 30;  // Redis' LISTPACK_MAX_SAFETY_SIZE

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

const uint8_t* GetVarint(const uint8_t* p, uint64_t* v) {
  uint64_t r = 0;
  int shift = 0;
  while (*p & 0x80) {
    r |= static_cast<uint64_t>(*p++ & 0x7F) << shift;
    shift += 7;
  }
  *v = r | (static_cast<uint64_t>(*p++) << shift);
  return p;
}

// An integral score within 2^52 is stored as a varint (zigzag, shifted left so the low bit is
// clear); anything else as kDoubleTag and the raw double. -0 is integral: it reads back as 0,
// as it does from Redis' listpack.
uint64_t ScoreTag(double s) {
  if (s > -kIntLimit && s < kIntLimit && s == static_cast<double>(static_cast<int64_t>(s))) {
    int64_t i = static_cast<int64_t>(s);
    uint64_t zz = (static_cast<uint64_t>(i) << 1) ^ static_cast<uint64_t>(i >> 63);
    return zz << 1;
  }
  return kDoubleTag;
}

size_t EntrySize(std::string_view member, double score) {
  uint64_t tag = ScoreTag(score);
  return VarintSize(member.size()) + member.size() + VarintSize(tag) +
         (tag == kDoubleTag ? sizeof(double) : 0);
}

uint8_t* Encode(uint8_t* p, std::string_view member, double score) {
  p = PutVarint(p, member.size());
  if (!member.empty()) memcpy(p, member.data(), member.size());
  p += member.size();
  uint64_t tag = ScoreTag(score);
  p = PutVarint(p, tag);
  if (tag == kDoubleTag) {
    memcpy(p, &score, sizeof(score));
    p += sizeof(score);
  }
  return p;
}

struct LpEntry {
  std::string_view member;
  double score;
  size_t size;  // encoded bytes
};

LpEntry Decode(const uint8_t* p) {
  const uint8_t* start = p;
  uint64_t len, tag;
  p = GetVarint(p, &len);
  std::string_view member(reinterpret_cast<const char*>(p), len);
  p = GetVarint(p + len, &tag);
  double score;
  if (tag == kDoubleTag) {
    memcpy(&score, p, sizeof(score));
    p += sizeof(score);
  } else {
    uint64_t zz = tag >> 1;
    score = static_cast<double>(static_cast<int64_t>(zz >> 1) ^ -static_cast<int64_t>(zz & 1));
  }
  return {member, score, static_cast<size_t>(p - start)};
}

void* CheckedRealloc(void* p, size_t n) {
  void* r = realloc(p, n);
  if (!r) throw std::bad_alloc();
  return r;
}

}  // namespace

// ---- Lexicographic bounds ---------------------------------------------------------------------

int CompareLex(const LexBound& a, const LexBound& b) {
  using K = LexBound::Kind;
  if (a.kind != K::kValue && a.kind == b.kind) return 0;
  if (a.kind == K::kMinusInf || b.kind == K::kPlusInf) return -1;
  if (a.kind == K::kPlusInf || b.kind == K::kMinusInf) return 1;
  return std::string_view(a.value).compare(b.value);
}

int CompareLex(std::string_view member, const LexBound& b) {
  if (b.kind == LexBound::Kind::kPlusInf) return -1;
  if (b.kind == LexBound::Kind::kMinusInf) return 1;
  return member.compare(b.value);
}

// ---- The skiplist encoding --------------------------------------------------------------------

struct ZSetValue::Index {
  // Destroyed table first (it owns the nodes), then the list (its header).
  ZSkipList list;
  IntrusiveTable<ZNode> table;
  size_t node_bytes = 0;  // usable bytes of the member nodes, for MemoryUsage

  void Add(std::string_view member, double score) {
    ZNode* n = list.Insert(member, score);
    table.Insert(n);
    node_bytes += malloc_usable_size(n);
  }
  void Destroy(ZNode* n) {
    node_bytes -= malloc_usable_size(n);
    ZNode::Destroy(n);
  }
  // Redis resizes a member dict after deletions; our table shrinks from its upkeep step.
  void AfterRemovals() { table.Cron(0); }
};

ZSetValue::~ZSetValue() {
  if (skiplist_)
    delete index_;
  else
    free(lp_);
}

std::unique_ptr<ZSetValue> ZSetValue::ForFirstMember(size_t member_len, const EncodingLimits& l) {
  auto z = std::make_unique<ZSetValue>();
  if (l.zset_max_listpack_entries == 0 || l.zset_max_listpack_value < member_len) z->ToSkiplist();
  return z;
}

std::unique_ptr<ZSetValue> ZSetValue::FromSorted(const std::vector<ZEntry>& entries,
                                                 const EncodingLimits& l) {
  auto z = std::make_unique<ZSetValue>();
  size_t max_len = 0, bytes = 0;
  for (const ZEntry& e : entries) {
    max_len = std::max(max_len, e.member.size());
    bytes += EntrySize(e.member, e.score);
  }
  if (entries.size() > l.zset_max_listpack_entries || max_len > l.zset_max_listpack_value ||
      bytes > kMaxListpackBytes) {
    z->ToSkiplist();
    // Highest first: each insert then stops at the head.
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      z->index_->Add(it->member, it->score);
    }
    return z;
  }
  if (bytes == 0) return z;
  z->lp_ = static_cast<uint8_t*>(CheckedRealloc(nullptr, bytes));
  uint8_t* p = z->lp_;
  for (const ZEntry& e : entries) p = Encode(p, e.member, e.score);
  z->lp_bytes_ = static_cast<uint32_t>(bytes);
  z->lp_count_ = static_cast<uint32_t>(entries.size());
  return z;
}

std::unique_ptr<Collection> ZSetValue::Clone() const {
  auto z = std::make_unique<ZSetValue>();
  if (skiplist_) {
    z->ToSkiplist();
    for (ZNode* n = index_->list.last(); n; n = n->backward) z->index_->Add(n->key(), n->score);
  } else if (lp_bytes_) {
    z->lp_ = static_cast<uint8_t*>(CheckedRealloc(nullptr, lp_bytes_));
    memcpy(z->lp_, lp_, lp_bytes_);
    z->lp_bytes_ = lp_bytes_;
    z->lp_count_ = lp_count_;
  }
  return z;
}

size_t ZSetValue::Size() const { return skiplist_ ? index_->list.size() : lp_count_; }

void ZSetValue::ForEach(const Collection::Visitor& fn) const {
  Visit(0, false, [&](std::string_view member, double score) {
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%.17g", score);
    fn(member, std::string_view(buf, n));
    return true;
  });
}

size_t ZSetValue::MemoryUsage() const {
  size_t total = sizeof(ZSetValue);
  if (!skiplist_) return total + (lp_ ? malloc_usable_size(lp_) : 0);
  return total + sizeof(Index) + index_->node_bytes +
         index_->table.bucket_count() * sizeof(ZNode*) + sizeof(ZNode) +
         ZSkipList::kMaxLevel * sizeof(ZNode::Level);
}

const char* ZSetValue::EncodingName() const { return skiplist_ ? "skiplist" : "listpack"; }

std::vector<TableStats> ZSetValue::HashTableStats() const {
  return skiplist_ ? index_->table.Stats() : std::vector<TableStats>{};
}

void ZSetValue::ToSkiplist() {
  auto idx = std::make_unique<Index>();
  for (size_t off = 0; off < lp_bytes_;) {
    LpEntry e = Decode(lp_ + off);
    idx->Add(e.member, e.score);
    off += e.size;
  }
  free(lp_);
  index_ = idx.release();
  lp_bytes_ = 0;
  lp_count_ = 0;
  skiplist_ = 1;
}

// ---- Listpack primitives ----------------------------------------------------------------------

size_t ZSetValue::LpFind(std::string_view member, size_t* entry_size, double* score) const {
  for (size_t off = 0; off < lp_bytes_;) {
    LpEntry e = Decode(lp_ + off);
    if (e.member == member) {
      if (entry_size) *entry_size = e.size;
      if (score) *score = e.score;
      return off;
    }
    off += e.size;
  }
  return kNone;
}

size_t ZSetValue::LpOffsetOfRank(size_t rank) const {
  size_t off = 0;
  for (size_t i = 0; i < rank && off < lp_bytes_; i++) off += Decode(lp_ + off).size;
  return off;
}

// Inserts before the first entry that sorts after (score, member), as Redis' zzlInsert.
void ZSetValue::LpInsert(std::string_view member, double score) {
  size_t off = 0;
  while (off < lp_bytes_) {
    LpEntry e = Decode(lp_ + off);
    if (ZLess(score, member, e.score, e.member)) break;
    off += e.size;
  }
  size_t need = EntrySize(member, score);
  lp_ = static_cast<uint8_t*>(CheckedRealloc(lp_, lp_bytes_ + need));
  memmove(lp_ + off + need, lp_ + off, lp_bytes_ - off);
  Encode(lp_ + off, member, score);
  lp_bytes_ += static_cast<uint32_t>(need);
  lp_count_++;
}

void ZSetValue::LpErase(size_t offset, size_t bytes) {
  memmove(lp_ + offset, lp_ + offset + bytes, lp_bytes_ - offset - bytes);
  lp_bytes_ -= static_cast<uint32_t>(bytes);
  if (lp_bytes_ == 0) {
    free(lp_);
    lp_ = nullptr;
  } else {
    lp_ = static_cast<uint8_t*>(CheckedRealloc(lp_, lp_bytes_));
  }
}

// ---- Point operations ---------------------------------------------------------------------------

std::optional<double> ZSetValue::Score(std::string_view member) const {
  if (skiplist_) {
    ZNode* n = index_->table.Find(member);
    if (!n) return std::nullopt;
    return n->score;
  }
  double score;
  if (LpFind(member, nullptr, &score) == kNone) return std::nullopt;
  return score;
}

void ZSetValue::Insert(std::string_view member, double score, const EncodingLimits& l) {
  if (!skiplist_) {
    size_t count = lp_count_;
    if (count + 1 > l.zset_max_listpack_entries || member.size() > l.zset_max_listpack_value ||
        lp_bytes_ + EntrySize(member, score) > kMaxListpackBytes) {
      ToSkiplist();
    } else {
      LpInsert(member, score);
      return;
    }
  }
  index_->Add(member, score);
}

void ZSetValue::UpdateScore(std::string_view member, double score) {
  if (skiplist_) {
    ZNode* n = index_->table.Find(member);
    if (n) index_->list.UpdateScore(n, score);
    return;
  }
  size_t size;
  size_t off = LpFind(member, &size, nullptr);
  if (off == kNone) return;
  std::string copy(member);  // `member` may point into the buffer being changed
  LpErase(off, size);
  lp_count_--;
  LpInsert(copy, score);
}

bool ZSetValue::Remove(std::string_view member) {
  if (skiplist_) {
    ZNode* n = index_->table.Unlink(member);
    if (!n) return false;
    index_->list.Unlink(n);
    index_->Destroy(n);
    index_->AfterRemovals();
    return true;
  }
  size_t size;
  size_t off = LpFind(member, &size, nullptr);
  if (off == kNone) return false;
  LpErase(off, size);
  lp_count_--;
  return true;
}

std::optional<size_t> ZSetValue::Rank(std::string_view member) const {
  if (skiplist_) {
    ZNode* n = index_->table.Find(member);
    if (!n) return std::nullopt;
    return index_->list.Rank(n->score, member) - 1;
  }
  size_t rank = 0;
  for (size_t off = 0; off < lp_bytes_; rank++) {
    LpEntry e = Decode(lp_ + off);
    if (e.member == member) return rank;
    off += e.size;
  }
  return std::nullopt;
}

ZEntry ZSetValue::At(size_t rank) const {
  if (skiplist_) {
    ZNode* n = index_->list.ByRank(rank + 1);
    return {n->key(), n->score};
  }
  LpEntry e = Decode(lp_ + LpOffsetOfRank(rank));
  return {e.member, e.score};
}

// ---- Ranges -------------------------------------------------------------------------------------

void ZSetValue::Visit(size_t start, bool reverse, const Visitor& fn) const {
  if (start >= Size()) return;
  if (skiplist_) {
    for (ZNode* n = index_->list.ByRank(start + 1); n; n = reverse ? n->backward : n->forward()) {
      if (!fn(n->key(), n->score)) return;
    }
    return;
  }
  if (!reverse) {
    for (size_t off = LpOffsetOfRank(start); off < lp_bytes_;) {
      LpEntry e = Decode(lp_ + off);
      if (!fn(e.member, e.score)) return;
      off += e.size;
    }
    return;
  }
  // Entries only decode forwards: note where ranks 0..start begin, then walk back.
  std::vector<uint32_t> offsets;
  offsets.reserve(start + 1);
  for (size_t off = 0, i = 0; i <= start; i++) {
    offsets.push_back(static_cast<uint32_t>(off));
    off += Decode(lp_ + off).size;
  }
  for (auto it = offsets.rbegin(); it != offsets.rend(); ++it) {
    LpEntry e = Decode(lp_ + *it);
    if (!fn(e.member, e.score)) return;
  }
}

size_t ZSetValue::FirstNotBefore(const Pred& before) const {
  if (skiplist_) {
    size_t rank;
    index_->list.Descend([&](const ZNode* n) { return before(n->key(), n->score); }, &rank);
    return rank;
  }
  size_t rank = 0;
  for (size_t off = 0; off < lp_bytes_; rank++) {
    LpEntry e = Decode(lp_ + off);
    if (!before(e.member, e.score)) return rank;
    off += e.size;
  }
  return rank;
}

void ZSetValue::VisitFrom(const Pred& before, const Visitor& fn) const {
  if (skiplist_) {
    size_t rank;
    ZNode* last =
        index_->list.Descend([&](const ZNode* n) { return before(n->key(), n->score); }, &rank);
    for (ZNode* n = last ? last->forward() : index_->list.first(); n; n = n->forward()) {
      if (!fn(n->key(), n->score)) return;
    }
    return;
  }
  bool started = false;
  for (size_t off = 0; off < lp_bytes_;) {
    LpEntry e = Decode(lp_ + off);
    started = started || !before(e.member, e.score);
    if (started && !fn(e.member, e.score)) return;
    off += e.size;
  }
}

size_t ZSetValue::LastWithin(const Pred& within) const {
  if (skiplist_) {
    size_t rank;
    ZNode* n =
        index_->list.Descend([&](const ZNode* x) { return within(x->key(), x->score); }, &rank);
    return n ? rank - 1 : kNone;
  }
  size_t size = Size(), rank = size, found = kNone;
  if (size == 0) return kNone;
  Visit(size - 1, true, [&](std::string_view m, double s) {
    rank--;
    if (!within(m, s)) return true;
    found = rank;
    return false;
  });
  return found;
}

void ZSetValue::RemoveRange(size_t start, size_t end) {
  end = std::min(end, Size());
  if (start >= end) return;
  if (skiplist_) {
    Index* idx = index_;
    idx->list.DeleteRangeByRank(start + 1, end, [idx](ZNode* n) {
      idx->table.Unlink(n->key());
      idx->Destroy(n);
    });
    idx->AfterRemovals();
    return;
  }
  size_t from = LpOffsetOfRank(start);
  size_t to = from;
  for (size_t i = start; i < end; i++) to += Decode(lp_ + to).size;
  LpErase(from, to - from);
  lp_count_ -= static_cast<uint32_t>(end - start);
}

ZEntry ZSetValue::Random() const {
  if (skiplist_) {
    ZNode* n = index_->table.Random();
    return {n->key(), n->score};
  }
  return At(RandomBelow(lp_count_));
}

uint64_t ZSetValue::Scan(uint64_t cursor, const std::function<void(std::string_view, double)>& fn) {
  if (!skiplist_) {
    Visit(0, false, [&](std::string_view m, double s) {
      fn(m, s);
      return true;
    });
    return 0;
  }
  return index_->table.Scan(cursor, [&](ZNode* n) { fn(n->key(), n->score); });
}

}  // namespace kv::store
