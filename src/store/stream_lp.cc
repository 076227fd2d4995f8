#include "store/stream_lp.h"

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "common/strutil.h"

namespace kv::store {
namespace {

constexpr uint8_t kEof = 0xFF;
constexpr uint16_t kCountUnknown = 65535;

size_t BacklenSize(size_t l) {
  if (l <= 127) return 1;
  if (l < 16383) return 2;
  if (l < 2097151) return 3;
  if (l < 268435455) return 4;
  return 5;
}

size_t PutBacklen(uint8_t* p, size_t l) {
  size_t n = BacklenSize(l);
  for (size_t i = n; i-- > 0;) {
    uint8_t b = (l >> (7 * i)) & 127;
    if (i != n - 1) b |= 128;
    *p++ = b;
  }
  return n;
}

uint64_t GetLE(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

void PutLE(uint8_t* p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

int64_t SignExtend(uint64_t v, int bits) {
  uint64_t m = 1ULL << (bits - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

// The encoding and data size of the entry at p, without its backlen; 0 for an invalid byte.
size_t EncodedSize(const uint8_t* p) {
  uint8_t b = p[0];
  if ((b & 0x80) == 0) return 1;
  if ((b & 0xC0) == 0x80) return 1 + (b & 0x3F);
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 2 + (((b & 0x0F) << 8) | p[1]);
  switch (b) {
    case 0xF0:
      return 5 + GetLE(p + 1, 4);
    case 0xF1:
      return 3;
    case 0xF2:
      return 4;
    case 0xF3:
      return 5;
    case 0xF4:
      return 9;
    default:
      return 0;
  }
}

void* CheckedRealloc(void* p, size_t n) {
  void* r = realloc(p, n);
  if (!r) throw std::bad_alloc();
  return r;
}

}  // namespace

std::string_view StreamListpack::Elem::Text(char* buf) const {
  if (!is_int) return sval;
  int n = snprintf(buf, 21, "%lld", static_cast<long long>(ival));
  return {buf, static_cast<size_t>(n)};
}

StreamListpack::~StreamListpack() { free(lp_); }

StreamListpack::StreamListpack(StreamListpack&& o) noexcept : lp_(o.lp_), cap_(o.cap_) {
  o.lp_ = nullptr;
  o.cap_ = 0;
}

StreamListpack& StreamListpack::operator=(StreamListpack&& o) noexcept {
  if (this != &o) {
    free(lp_);
    lp_ = o.lp_;
    cap_ = o.cap_;
    o.lp_ = nullptr;
    o.cap_ = 0;
  }
  return *this;
}

StreamListpack StreamListpack::New(size_t capacity) {
  StreamListpack l;
  size_t n = capacity < kHeaderSize + 1 ? kHeaderSize + 1 : capacity;
  l.lp_ = static_cast<uint8_t*>(CheckedRealloc(nullptr, n));
  l.cap_ = malloc_usable_size(l.lp_);
  l.SetBytes(kHeaderSize + 1);
  PutLE(l.lp_ + 4, 0, 2);
  l.lp_[kHeaderSize] = kEof;
  return l;
}

StreamListpack StreamListpack::FromBytes(std::string_view bytes) {
  StreamListpack l;
  l.lp_ = static_cast<uint8_t*>(CheckedRealloc(nullptr, bytes.size()));
  l.cap_ = malloc_usable_size(l.lp_);
  memcpy(l.lp_, bytes.data(), bytes.size());
  return l;
}

uint32_t StreamListpack::Bytes() const { return static_cast<uint32_t>(GetLE(lp_, 4)); }
void StreamListpack::SetBytes(uint32_t n) { PutLE(lp_, n, 4); }

void StreamListpack::Reserve(size_t need) {
  if (need <= cap_) return;
  lp_ = static_cast<uint8_t*>(CheckedRealloc(lp_, need));
  cap_ = malloc_usable_size(lp_);
}

void StreamListpack::ShrinkToFit() {
  if (!lp_ || cap_ <= bytes()) return;
  lp_ = static_cast<uint8_t*>(CheckedRealloc(lp_, bytes()));
  cap_ = malloc_usable_size(lp_);
}

size_t StreamListpack::EncodeInt(int64_t v, uint8_t* out) {
  size_t n;
  if (v >= 0 && v <= 127) {
    out[0] = static_cast<uint8_t>(v);
    n = 1;
  } else if (v >= -4096 && v <= 4095) {
    uint64_t u = static_cast<uint64_t>(v) & 0x1FFF;
    out[0] = static_cast<uint8_t>(0xC0 | (u >> 8));
    out[1] = static_cast<uint8_t>(u & 0xff);
    n = 2;
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    out[0] = 0xF1;
    PutLE(out + 1, static_cast<uint64_t>(v), 2);
    n = 3;
  } else if (v >= -(1 << 23) && v <= (1 << 23) - 1) {
    out[0] = 0xF2;
    PutLE(out + 1, static_cast<uint64_t>(v), 3);
    n = 4;
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    out[0] = 0xF3;
    PutLE(out + 1, static_cast<uint64_t>(v), 4);
    n = 5;
  } else {
    out[0] = 0xF4;
    PutLE(out + 1, static_cast<uint64_t>(v), 8);
    n = 9;
  }
  return n + PutBacklen(out + n, n);
}

size_t StreamListpack::EncodeString(std::string_view s, uint8_t* out) {
  size_t len = s.size(), n;
  if (len < 64) {
    out[0] = static_cast<uint8_t>(0x80 | len);
    n = 1;
  } else if (len < 4096) {
    out[0] = static_cast<uint8_t>(0xE0 | (len >> 8));
    out[1] = static_cast<uint8_t>(len & 0xff);
    n = 2;
  } else {
    out[0] = 0xF0;
    PutLE(out + 1, len, 4);
    n = 5;
  }
  if (len) memcpy(out + n, s.data(), len);
  n += len;
  return n + PutBacklen(out + n, n);
}

void StreamListpack::AppendEncoded(const uint8_t* e, size_t n) {
  if (!lp_) *this = New(kHeaderSize + 1 + n);
  size_t total = bytes();
  Reserve(total + n);
  memcpy(lp_ + total - 1, e, n);
  lp_[total - 1 + n] = kEof;
  SetBytes(static_cast<uint32_t>(total + n));
  uint16_t count = static_cast<uint16_t>(GetLE(lp_ + 4, 2));
  if (count != kCountUnknown) PutLE(lp_ + 4, count + 1, 2);
}

void StreamListpack::AppendInt(int64_t v) {
  uint8_t buf[16];
  AppendEncoded(buf, EncodeInt(v, buf));
}

void StreamListpack::Append(std::string_view s) {
  if (s.size() <= 20) {
    if (auto v = ParseInt64(s)) return AppendInt(*v);
  }
  if (s.size() <= 64) {
    uint8_t buf[80];
    AppendEncoded(buf, EncodeString(s, buf));
    return;
  }
  std::string buf(s.size() + 16, '\0');
  auto* p = reinterpret_cast<uint8_t*>(buf.data());
  AppendEncoded(p, EncodeString(s, p));
}

size_t StreamListpack::EntrySize(const uint8_t* p) {
  size_t n = EncodedSize(p);
  return n + BacklenSize(n);
}

void StreamListpack::ReplaceInt(size_t off, int64_t v) {
  uint8_t buf[16];
  size_t n = EncodeInt(v, buf);
  size_t old = EntrySize(lp_ + off);
  size_t total = bytes();
  if (n != old) {
    Reserve(total - old + n);
    memmove(lp_ + off + n, lp_ + off + old, total - off - old);
    SetBytes(static_cast<uint32_t>(total - old + n));
  }
  memcpy(lp_ + off, buf, n);
}

size_t StreamListpack::First() const {
  return lp_ && lp_[kHeaderSize] != kEof ? kHeaderSize : kNone;
}

size_t StreamListpack::Next(size_t off) const {
  size_t next = off + EntrySize(lp_ + off);
  return lp_[next] == kEof ? kNone : next;
}

size_t StreamListpack::Prev(size_t off) const {
  if (off <= kHeaderSize) return kNone;
  const uint8_t* p = lp_ + off - 1;
  uint64_t val = 0;
  int shift = 0;
  size_t n = 0;
  for (;;) {
    val |= static_cast<uint64_t>(p[0] & 127) << shift;
    n++;
    if (!(p[0] & 128)) break;
    shift += 7;
    p--;
  }
  return off - n - val;
}

size_t StreamListpack::Last() const {
  if (!lp_) return kNone;
  size_t end = bytes() - 1;
  return end == kHeaderSize ? kNone : Prev(end);
}

StreamListpack::Elem StreamListpack::Get(size_t off) const {
  const uint8_t* p = lp_ + off;
  uint8_t b = p[0];
  Elem e;
  e.is_int = true;
  if ((b & 0x80) == 0) {
    e.ival = b;
  } else if ((b & 0xC0) == 0x80) {
    e.is_int = false;
    e.sval = {reinterpret_cast<const char*>(p + 1), static_cast<size_t>(b & 0x3F)};
  } else if ((b & 0xE0) == 0xC0) {
    e.ival = SignExtend(((b & 0x1FULL) << 8) | p[1], 13);
  } else if ((b & 0xF0) == 0xE0) {
    e.is_int = false;
    e.sval = {reinterpret_cast<const char*>(p + 2), static_cast<size_t>(((b & 0x0F) << 8) | p[1])};
  } else if (b == 0xF0) {
    e.is_int = false;
    e.sval = {reinterpret_cast<const char*>(p + 5), static_cast<size_t>(GetLE(p + 1, 4))};
  } else {
    static constexpr int kBytes[] = {2, 3, 4, 8};
    int n = kBytes[b - 0xF1];
    e.ival = SignExtend(GetLE(p + 1, n), 8 * n);
  }
  return e;
}

int64_t StreamListpack::GetInt(size_t off) const {
  Elem e = Get(off);
  if (e.is_int) return e.ival;
  return ParseInt64(e.sval).value_or(0);
}

bool StreamListpack::Validate(std::string_view bytes, size_t* count) {
  const auto* base = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t size = bytes.size();
  if (size < kHeaderSize + 1 || GetLE(base, 4) != size || base[size - 1] != kEof) return false;
  size_t pos = kHeaderSize, n = 0, end = size - 1;
  while (pos < end) {
    const uint8_t* p = base + pos;
    size_t avail = end - pos;
    uint8_t b = p[0];
    // The bytes an encoding needs to say its length.
    size_t hdr = (b & 0xC0) == 0x80 || (b & 0x80) == 0 ? 1 : (b == 0xF0 ? 5 : 2);
    if (avail < hdr) return false;
    size_t enc = EncodedSize(p);
    if (enc == 0 || enc > avail) return false;
    size_t bl = BacklenSize(enc);
    if (enc + bl > avail) return false;
    // The backlen must say the entry's size.
    uint8_t tmp[8];
    PutBacklen(tmp, enc);
    if (memcmp(tmp, p + enc, bl) != 0) return false;
    pos += enc + bl;
    n++;
  }
  size_t declared = GetLE(base + 4, 2);
  if (declared != kCountUnknown && declared != n) return false;
  *count = n;
  return true;
}

}  // namespace kv::store
