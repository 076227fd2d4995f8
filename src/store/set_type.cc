#include "store/set_type.h"

#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_set>

#include "common/hash.h"
#include "common/strutil.h"

namespace kv::store {
namespace {

// Redis caps set-max-intset-entries at 2^30 because of intset internals.
constexpr size_t kIntSetHardMax = size_t{1} << 30;

std::string_view IntText(int64_t v, char (&buf)[24]) {
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string_view(buf, r.ptr - buf);
}

std::string IntString(int64_t v) {
  char buf[24];
  return std::string(IntText(v, buf));
}

}  // namespace

// ---- IntSet ----------------------------------------------------------------------------------

uint8_t IntSet::WidthFor(int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX) return 8;
  if (v < INT16_MIN || v > INT16_MAX) return 4;
  return 2;
}

int64_t IntSet::At(size_t i) const {
  const uint8_t* p = bytes_.data() + i * width_;
  switch (width_) {
    case 2: {
      int16_t v;
      memcpy(&v, p, sizeof(v));
      return v;
    }
    case 4: {
      int32_t v;
      memcpy(&v, p, sizeof(v));
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, p, sizeof(v));
      return v;
    }
  }
}

void IntSet::Put(size_t i, int64_t v) {
  uint8_t* p = bytes_.data() + i * width_;
  if (width_ == 2) {
    int16_t x = static_cast<int16_t>(v);
    memcpy(p, &x, sizeof(x));
  } else if (width_ == 4) {
    int32_t x = static_cast<int32_t>(v);
    memcpy(p, &x, sizeof(x));
  } else {
    memcpy(p, &v, sizeof(v));
  }
}

bool IntSet::Search(int64_t v, size_t* pos) const {
  size_t lo = 0, hi = len_;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t cur = At(mid);
    if (cur == v) {
      *pos = mid;
      return true;
    }
    if (cur < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  *pos = lo;
  return false;
}

bool IntSet::Contains(int64_t v) const {
  size_t pos;
  return WidthFor(v) <= width_ && Search(v, &pos);
}

void IntSet::Widen(uint8_t width) {
  std::vector<uint8_t> old = std::move(bytes_);
  uint8_t old_width = width_;
  bytes_.assign(len_ * width, 0);
  width_ = width;
  for (size_t i = 0; i < len_; i++) {
    // Read with the old width, write with the new one.
    int64_t v;
    const uint8_t* p = old.data() + i * old_width;
    if (old_width == 2) {
      int16_t x;
      memcpy(&x, p, sizeof(x));
      v = x;
    } else {
      int32_t x;  // old_width is 4: a width-8 set never widens
      memcpy(&x, p, sizeof(x));
      v = x;
    }
    Put(i, v);
  }
}

bool IntSet::Add(int64_t v) {
  size_t pos;
  uint8_t w = WidthFor(v);
  if (w > width_) {
    Widen(w);  // v is out of the old range, so it is a new member
    pos = v < 0 ? 0 : len_;
  } else if (Search(v, &pos)) {
    return false;
  }
  bytes_.resize((len_ + 1) * width_);
  uint8_t* base = bytes_.data();
  memmove(base + (pos + 1) * width_, base + pos * width_, (len_ - pos) * width_);
  len_++;
  Put(pos, v);
  return true;
}

bool IntSet::Remove(int64_t v) {
  size_t pos;
  if (WidthFor(v) > width_ || !Search(v, &pos)) return false;
  uint8_t* base = bytes_.data();
  memmove(base + pos * width_, base + (pos + 1) * width_, (len_ - pos - 1) * width_);
  len_--;
  bytes_.resize(len_ * width_);
  return true;
}

// ---- SetNode ---------------------------------------------------------------------------------

SetNode* SetNode::Create(std::string_view member) {
  void* mem = malloc(sizeof(SetNode) + member.size());
  if (!mem) throw std::bad_alloc();
  SetNode* n = new (mem) SetNode();
  n->len = static_cast<uint32_t>(member.size());
  if (!member.empty()) {
    memcpy(reinterpret_cast<char*>(n) + sizeof(SetNode), member.data(), member.size());
  }
  return n;
}

void SetNode::Destroy(SetNode* n) {
  n->~SetNode();
  free(n);
}

// ---- SetValue: encodings ---------------------------------------------------------------------

std::unique_ptr<SetValue> SetValue::CreateFor(std::string_view first_member) {
  if (ParseInt64(first_member)) return CreateIntSet();
  auto s = std::unique_ptr<SetValue>(new SetValue());
  s->table_ = std::make_unique<Table>();
  return s;
}

std::unique_ptr<SetValue> SetValue::CreateIntSet() {
  auto s = std::unique_ptr<SetValue>(new SetValue());
  s->intset_ = std::make_unique<IntSet>();
  return s;
}

void SetValue::InsertNode(std::string_view member) {
  SetNode* n = SetNode::Create(member);
  node_bytes_ += malloc_usable_size(n);
  table_->Insert(n);
}

void SetValue::ConvertToTable() {
  table_ = std::make_unique<Table>();
  for (size_t i = 0; i < intset_->size(); i++) InsertNode(IntString(intset_->At(i)));
  intset_.reset();
}

std::unique_ptr<Collection> SetValue::Clone() const {
  auto s = std::unique_ptr<SetValue>(new SetValue());
  if (intset_) {
    s->intset_ = std::make_unique<IntSet>(*intset_);
  } else {
    s->table_ = std::make_unique<Table>();
    ForEachMember([&](std::string_view m) { s->InsertNode(m); });
  }
  return s;
}

size_t SetValue::Size() const { return intset_ ? intset_->size() : table_->size(); }

void SetValue::ForEach(const Visitor& fn) const {
  ForEachMember([&](std::string_view m) { fn(m, std::string_view()); });
}

void SetValue::ForEachMember(const MemberFn& fn) const {
  if (intset_) {
    char buf[24];
    for (size_t i = 0; i < intset_->size(); i++) fn(IntText(intset_->At(i), buf));
    return;
  }
  table_->ForEach([&](SetNode* n) { fn(n->key()); });
}

size_t SetValue::MemoryUsage() const {
  if (intset_) return sizeof(*this) + sizeof(IntSet) + intset_->MemoryUsage();
  return sizeof(*this) + sizeof(Table) + table_->bucket_count() * sizeof(SetNode*) + node_bytes_;
}

const char* SetValue::EncodingName() const { return intset_ ? "intset" : "hashtable"; }

// ---- SetValue: members -----------------------------------------------------------------------

bool SetValue::Add(std::string_view member, size_t max_intset_entries) {
  if (intset_) {
    if (auto v = ParseInt64(member)) {
      if (!intset_->Add(*v)) return false;
      if (intset_->size() > std::min(max_intset_entries, kIntSetHardMax)) ConvertToTable();
      return true;
    }
    ConvertToTable();  // a non-integer member: it cannot already be present
    InsertNode(member);
    return true;
  }
  if (table_->Find(member)) return false;
  InsertNode(member);
  return true;
}

bool SetValue::Remove(std::string_view member) {
  if (intset_) {
    auto v = ParseInt64(member);
    return v && intset_->Remove(*v);
  }
  SetNode* n = table_->Unlink(member);
  if (!n) return false;
  node_bytes_ -= malloc_usable_size(n);
  SetNode::Destroy(n);
  // Redis shrinks a set's dict below 10% fill right away (htNeedsResize + dictResize); the
  // table's Cron starts that shrink, and later operations finish it incrementally.
  size_t buckets = table_->bucket_count();
  if (!table_->rehashing() && buckets > table_detail::kInitialSize &&
      table_->size() * 100 / buckets < 10) {
    table_->Cron(0);
  }
  return true;
}

bool SetValue::Contains(std::string_view member) {
  if (intset_) {
    auto v = ParseInt64(member);
    return v && intset_->Contains(*v);
  }
  return table_->Find(member) != nullptr;
}

uint64_t SetValue::Scan(uint64_t cursor, const MemberFn& fn) {
  if (intset_) {
    ForEachMember(fn);
    return 0;
  }
  return table_->Scan(cursor, [&](SetNode* n) { fn(n->key()); });
}

// ---- SetValue: random members ----------------------------------------------------------------

std::string SetValue::RandomMember() {
  if (intset_) return IntString(intset_->At(RandomBelow(intset_->size())));
  return std::string(table_->Random()->key());
}

std::vector<std::string> SetValue::RandomDistinct(uint64_t count) {
  std::vector<std::string> out;
  size_t size = Size();
  if (count >= size || count * 3 > size) {
    // The whole set, then (when count < size) drop random members until count remain.
    out.reserve(size);
    ForEachMember([&](std::string_view m) { out.emplace_back(m); });
    while (out.size() > count) {
      size_t victim = RandomBelow(out.size());
      std::swap(out[victim], out.back());
      out.pop_back();
    }
    return out;
  }
  // A set much larger than count: sample until count distinct members are found.
  std::unordered_set<std::string> seen;
  out.reserve(count);
  while (out.size() < count) {
    std::string m = RandomMember();
    if (seen.insert(m).second) out.push_back(std::move(m));
  }
  return out;
}

std::vector<std::string> SetValue::PopRandom(uint64_t count, size_t max_intset_entries) {
  std::vector<std::string> popped;
  uint64_t remaining = Size() - count;
  popped.reserve(count);
  if (remaining * 5 > count) {
    while (popped.size() < count) {
      popped.push_back(RandomMember());
      Remove(popped.back());
    }
    return popped;
  }
  // Few members stay: move them to a new set and hand out what is left of this one.
  std::unique_ptr<SetValue> keep;
  while (remaining--) {
    std::string m = RandomMember();
    if (!keep) keep = CreateFor(m);
    keep->Add(m, max_intset_entries);
    Remove(m);
  }
  ForEachMember([&](std::string_view m) { popped.emplace_back(m); });
  std::swap(intset_, keep->intset_);
  std::swap(table_, keep->table_);
  std::swap(node_bytes_, keep->node_bytes_);
  return popped;
}

}  // namespace kv::store
