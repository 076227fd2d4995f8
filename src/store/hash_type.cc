#include "store/hash_type.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "common/hash.h"

namespace kv::store {

// One 32-byte malloc chunk per hash object; small hashes are many.
static_assert(sizeof(HashValue) == 24);

namespace {

// Redis' LISTPACK_MAX_SAFETY_SIZE: a listpack never grows past 1 GiB (lpSafeToAdd).
constexpr size_t kListpackSafetySize = 1u << 30;
// A listpack whose allocation has at least this many spare bytes is shrunk after a removal.
constexpr size_t kShrinkSlack = 32;
// A hashtable node is reallocated rather than updated in place when that would leave at least
// this many bytes unused.
constexpr size_t kNodeSlack = 64;

// Listpack strings are a LEB128 varint length (one byte below 128) and the bytes.
size_t VarintSize(size_t n) {
  size_t s = 1;
  while (n >= 128) {
    n >>= 7;
    s++;
  }
  return s;
}

uint8_t* PutString(uint8_t* p, std::string_view s) {
  size_t n = s.size();
  while (n >= 128) {
    *p++ = static_cast<uint8_t>(n | 128);
    n >>= 7;
  }
  *p++ = static_cast<uint8_t>(n);
  if (!s.empty()) memcpy(p, s.data(), s.size());
  return p + s.size();
}

size_t EncodedSize(std::string_view s) { return VarintSize(s.size()) + s.size(); }

// Reads the string at *p and advances *p past it.
std::string_view GetString(const uint8_t** p) {
  size_t n = 0;
  int shift = 0;
  const uint8_t* q = *p;
  while (*q & 128) {
    n |= static_cast<size_t>(*q++ & 127) << shift;
    shift += 7;
  }
  n |= static_cast<size_t>(*q++) << shift;
  *p = q + n;
  return {reinterpret_cast<const char*>(q), n};
}

uint8_t* Realloc(uint8_t* p, size_t n) {
  auto* r = static_cast<uint8_t*>(realloc(p, n));
  if (!r) throw std::bad_alloc();
  return r;
}

}  // namespace

// ---- HashNode ----------------------------------------------------------------------------------

HashNode* HashNode::Create(std::string_view field, std::string_view value) {
  void* mem = malloc(sizeof(HashNode) + field.size() + value.size());
  if (!mem) throw std::bad_alloc();
  auto* n = new (mem) HashNode();
  n->field_len = static_cast<uint32_t>(field.size());
  n->value_len = static_cast<uint32_t>(value.size());
  if (!field.empty()) memcpy(n->data(), field.data(), field.size());
  if (!value.empty()) memcpy(n->data() + field.size(), value.data(), value.size());
  return n;
}

void HashNode::Destroy(HashNode* n) {
  n->~HashNode();
  free(n);
}

size_t HashNode::AllocSize() const { return malloc_usable_size(const_cast<HashNode*>(this)); }

bool HashNode::TryReplaceValue(std::string_view v) {
  size_t need = sizeof(HashNode) + field_len + v.size();
  size_t have = AllocSize();
  if (need > have || have - need >= kNodeSlack) return false;
  if (!v.empty()) memmove(data() + field_len, v.data(), v.size());
  value_len = static_cast<uint32_t>(v.size());
  return true;
}

// ---- HashValue: Collection ---------------------------------------------------------------------

HashValue::~HashValue() {
  if (is_listpack()) free(lp_);
  else delete ht_;
}

std::unique_ptr<Collection> HashValue::Clone() const {
  auto copy = std::make_unique<HashValue>();
  if (is_listpack()) {
    if (lp_bytes_ > 0) {
      copy->lp_ = Realloc(nullptr, lp_bytes_);
      memcpy(copy->lp_, lp_, lp_bytes_);
    }
    copy->lp_bytes_ = lp_bytes_;
    copy->lp_count_ = lp_count_;
    return copy;
  }
  auto t = std::make_unique<Table>();
  ht_->table.ForEach([&](HashNode* n) { HtInsert(*t, n->key(), n->value()); });
  copy->ht_ = t.release();
  copy->lp_bytes_ = kHashtable;
  return copy;
}

size_t HashValue::Size() const { return is_listpack() ? lp_count_ : ht_->table.size(); }

void HashValue::ForEach(const Visitor& fn) const {
  if (is_listpack()) {
    LpForEach(fn);
  } else {
    ht_->table.ForEach([&](HashNode* n) { fn(n->key(), n->value()); });
  }
}

size_t HashValue::MemoryUsage() const {
  if (is_listpack()) return sizeof(*this) + (lp_ ? malloc_usable_size(lp_) : 0);
  return sizeof(*this) + sizeof(Table) + ht_->table.bucket_count() * sizeof(HashNode*) +
         ht_->node_bytes;
}

const char* HashValue::EncodingName() const { return is_listpack() ? "listpack" : "hashtable"; }

// ---- Listpack ----------------------------------------------------------------------------------

void HashValue::LpForEach(const Visitor& fn) const {
  const uint8_t* p = lp_;
  const uint8_t* end = lp_ + lp_bytes_;
  while (p < end) {
    std::string_view f = GetString(&p);
    std::string_view v = GetString(&p);
    fn(f, v);
  }
}

std::optional<HashValue::LpPos> HashValue::LpFind(std::string_view field) const {
  const uint8_t* p = lp_;
  const uint8_t* end = lp_ + lp_bytes_;
  while (p < end) {
    const uint8_t* field_at = p;
    std::string_view f = GetString(&p);
    const uint8_t* value_at = p;
    std::string_view v = GetString(&p);
    if (f == field) {
      return LpPos{static_cast<size_t>(field_at - lp_), static_cast<size_t>(value_at - lp_),
                   static_cast<size_t>(p - lp_), v};
    }
  }
  return std::nullopt;
}

uint8_t* HashValue::LpSplice(size_t at, size_t remove, size_t insert) {
  size_t tail = lp_bytes_ - at - remove;
  size_t new_bytes = lp_bytes_ - remove + insert;
  if (insert > remove) {
    // Grow to the exact size (malloc rounds up; the slack is used before reallocating).
    if (new_bytes > (lp_ ? malloc_usable_size(lp_) : 0)) lp_ = Realloc(lp_, new_bytes);
    memmove(lp_ + at + insert, lp_ + at + remove, tail);
  } else if (insert < remove) {
    memmove(lp_ + at + insert, lp_ + at + remove, tail);
    if (new_bytes == 0) {
      free(lp_);
      lp_ = nullptr;
    } else if (malloc_usable_size(lp_) - new_bytes >= kShrinkSlack) {
      lp_ = Realloc(lp_, new_bytes);
    }
  }
  lp_bytes_ = static_cast<uint32_t>(new_bytes);
  return lp_ ? lp_ + at : nullptr;
}

bool HashValue::LpSet(std::string_view field, std::string_view value,
                      const EncodingLimits& limits) {
  if (auto pos = LpFind(field)) {
    PutString(LpSplice(pos->value_at, pos->end - pos->value_at, EncodedSize(value)), value);
    return false;
  }
  uint8_t* p = LpSplice(lp_bytes_, 0, EncodedSize(field) + EncodedSize(value));
  PutString(PutString(p, field), value);
  lp_count_++;
  if (lp_count_ > limits.hash_max_listpack_entries) ConvertToHashtable();
  return true;
}

// ---- Hashtable ---------------------------------------------------------------------------------

void HashValue::HtInsert(Table& t, std::string_view field, std::string_view value) {
  HashNode* n = HashNode::Create(field, value);
  t.node_bytes += n->AllocSize();
  t.table.Insert(n);
}

bool HashValue::HtSet(std::string_view field, std::string_view value) {
  HashNode* n = ht_->table.Find(field);
  if (!n) {
    HtInsert(*ht_, field, value);
    return true;
  }
  if (!n->TryReplaceValue(value)) {
    n = ht_->table.Unlink(field);
    ht_->node_bytes -= n->AllocSize();
    HtInsert(*ht_, field, value);  // before Destroy: `field` may be the node's own key
    HashNode::Destroy(n);
  }
  return false;
}

void HashValue::ConvertToHashtable() {
  if (!is_listpack()) return;
  auto t = std::make_unique<Table>();
  LpForEach([&](std::string_view f, std::string_view v) { HtInsert(*t, f, v); });
  free(lp_);
  ht_ = t.release();
  lp_bytes_ = kHashtable;
  lp_count_ = 0;
}

// ---- HashValue: operations ---------------------------------------------------------------------

std::optional<std::string_view> HashValue::Get(std::string_view field) {
  if (is_listpack()) {
    auto pos = LpFind(field);
    if (!pos) return std::nullopt;
    return pos->value;
  }
  HashNode* n = ht_->table.Find(field);
  if (!n) return std::nullopt;
  return n->value();
}

void HashValue::PrepareForInsert(std::span<const std::string_view> strings,
                                 const EncodingLimits& limits) {
  if (!is_listpack()) return;
  size_t sum = 0;
  for (std::string_view s : strings) {
    if (s.size() > limits.hash_max_listpack_value) {
      ConvertToHashtable();
      return;
    }
    sum += s.size();
  }
  if (lp_bytes_ + sum > kListpackSafetySize) ConvertToHashtable();
}

bool HashValue::Set(std::string_view field, std::string_view value, const EncodingLimits& limits) {
  if (is_listpack()) {
    size_t max = limits.hash_max_listpack_value;
    if (field.size() > max || value.size() > max ||
        lp_bytes_ + EncodedSize(field) + EncodedSize(value) > kListpackSafetySize) {
      ConvertToHashtable();
    }
  }
  return is_listpack() ? LpSet(field, value, limits) : HtSet(field, value);
}

bool HashValue::Delete(std::string_view field) {
  if (is_listpack()) {
    auto pos = LpFind(field);
    if (!pos) return false;
    LpSplice(pos->field_at, pos->end - pos->field_at, 0);
    lp_count_--;
    return true;
  }
  IntrusiveTable<HashNode>& t = ht_->table;
  HashNode* n = t.Unlink(field);
  if (!n) return false;
  ht_->node_bytes -= n->AllocSize();
  HashNode::Destroy(n);
  // Redis' htNeedsResize + dictResize after every delete: start shrinking a sparse table (the
  // rehash then proceeds step by step with later operations).
  if (!t.rehashing() && t.bucket_count() > table_detail::kInitialSize &&
      t.size() * 100 / t.bucket_count() < 10) {
    t.Cron(0);
  }
  return true;
}

HashValue::Pair HashValue::RandomEntry() {
  if (!is_listpack()) {
    HashNode* n = ht_->table.Random();
    return {n->key(), n->value()};
  }
  size_t skip = RandomBelow(lp_count_);
  const uint8_t* p = lp_;
  for (;;) {
    std::string_view f = GetString(&p);
    std::string_view v = GetString(&p);
    if (skip-- == 0) return {f, v};
  }
}

std::vector<HashValue::Pair> HashValue::Entries() const {
  std::vector<Pair> out;
  out.reserve(Size());
  ForEach([&](std::string_view f, std::string_view v) { out.emplace_back(f, v); });
  return out;
}

uint64_t HashValue::Scan(uint64_t cursor, const Visitor& fn) {
  if (is_listpack()) {
    LpForEach(fn);
    return 0;
  }
  return ht_->table.Scan(cursor, [&](HashNode* n) { fn(n->key(), n->value()); });
}

}  // namespace kv::store
