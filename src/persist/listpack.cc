#include "persist/listpack.h"

#include <cstring>

#include "common/strutil.h"

namespace kv::persist {
namespace {

constexpr size_t kHeaderSize = 6;
constexpr uint8_t kEof = 0xFF;

size_t BacklenSize(size_t l) {
  if (l <= 127) return 1;
  if (l < 16383) return 2;
  if (l < 2097151) return 3;
  if (l < 268435455) return 4;
  return 5;
}

void PutLE(std::string& b, uint64_t v, int n) {
  for (int i = 0; i < n; i++) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLE(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

int64_t SignExtend(uint64_t v, int bits) {
  uint64_t m = 1ULL << (bits - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

}  // namespace

void ListpackBuilder::Clear() {
  buf_.assign(kHeaderSize, '\0');
  count_ = 0;
}

void ListpackBuilder::AppendBacklen(size_t l) {
  // Most significant group first; every byte but the first has the high bit set, so a reader
  // walking backwards knows where the varint starts.
  size_t n = BacklenSize(l);
  for (size_t i = n; i-- > 0;) {
    uint8_t b = (l >> (7 * i)) & 127;
    if (i != n - 1) b |= 128;
    buf_.push_back(static_cast<char>(b));
  }
}

void ListpackBuilder::AddInt(int64_t v) {
  size_t start = buf_.size();
  if (v >= 0 && v <= 127) {
    buf_.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    uint64_t u = static_cast<uint64_t>(v) & 0x1FFF;
    buf_.push_back(static_cast<char>(0xC0 | (u >> 8)));
    buf_.push_back(static_cast<char>(u & 0xff));
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    buf_.push_back(static_cast<char>(0xF1));
    PutLE(buf_, static_cast<uint64_t>(v), 2);
  } else if (v >= -(1 << 23) && v <= (1 << 23) - 1) {
    buf_.push_back(static_cast<char>(0xF2));
    PutLE(buf_, static_cast<uint64_t>(v), 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    buf_.push_back(static_cast<char>(0xF3));
    PutLE(buf_, static_cast<uint64_t>(v), 4);
  } else {
    buf_.push_back(static_cast<char>(0xF4));
    PutLE(buf_, static_cast<uint64_t>(v), 8);
  }
  AppendBacklen(buf_.size() - start);
  count_++;
}

void ListpackBuilder::Add(std::string_view s) {
  if (s.size() <= 20) {
    if (auto v = ParseInt64(s)) return AddInt(*v);
  }
  size_t start = buf_.size();
  size_t len = s.size();
  if (len < 64) {
    buf_.push_back(static_cast<char>(0x80 | len));
  } else if (len < 4096) {
    buf_.push_back(static_cast<char>(0xE0 | (len >> 8)));
    buf_.push_back(static_cast<char>(len & 0xff));
  } else {
    buf_.push_back(static_cast<char>(0xF0));
    PutLE(buf_, len, 4);
  }
  buf_.append(s);
  AppendBacklen(buf_.size() - start);
  count_++;
}

std::string_view ListpackBuilder::Finish() {
  buf_.push_back(static_cast<char>(kEof));
  uint32_t total = static_cast<uint32_t>(buf_.size());
  uint16_t n = count_ < 65535 ? static_cast<uint16_t>(count_) : 65535;
  memcpy(buf_.data(), &total, 4);
  memcpy(buf_.data() + 4, &n, 2);
  return buf_;
}

Status ForEachListpackEntry(std::string_view blob,
                            const std::function<Status(std::string_view)>& fn) {
  const uint8_t* base = reinterpret_cast<const uint8_t*>(blob.data());
  size_t size = blob.size();
  if (size < kHeaderSize + 1) return Status::Corruption("listpack shorter than its header");
  if (GetLE(base, 4) != size) return Status::Corruption("listpack size field mismatch");
  if (base[size - 1] != kEof) return Status::Corruption("listpack without terminator");
  size_t declared = GetLE(base + 4, 2);
  size_t pos = kHeaderSize, count = 0, end = size - 1;
  char num[24];
  while (pos < end) {
    const uint8_t* p = base + pos;
    size_t avail = end - pos;
    uint8_t b = p[0];
    size_t hdr = 1, len = 0;
    bool is_int = true;
    int64_t iv = 0;
    if ((b & 0x80) == 0) {
      iv = b;
    } else if ((b & 0xC0) == 0x80) {
      is_int = false;
      len = b & 0x3F;
    } else if ((b & 0xE0) == 0xC0) {
      if (avail < 2) return Status::Corruption("listpack entry past the end");
      iv = SignExtend(((b & 0x1FULL) << 8) | p[1], 13);
      hdr = 2;
    } else if ((b & 0xF0) == 0xE0) {
      if (avail < 2) return Status::Corruption("listpack entry past the end");
      is_int = false;
      len = ((b & 0x0F) << 8) | p[1];
      hdr = 2;
    } else if (b == 0xF0) {
      if (avail < 5) return Status::Corruption("listpack entry past the end");
      is_int = false;
      len = GetLE(p + 1, 4);
      hdr = 5;
    } else if (b >= 0xF1 && b <= 0xF4) {
      static constexpr int kBytes[] = {2, 3, 4, 8};
      int n = kBytes[b - 0xF1];
      if (avail < static_cast<size_t>(1 + n)) return Status::Corruption("listpack entry past the end");
      iv = SignExtend(GetLE(p + 1, n), 8 * n);
      hdr = 1 + n;
    } else {
      return Status::Corruption("invalid listpack entry encoding");
    }
    size_t entry = hdr + len;
    if (len > avail || entry > avail) return Status::Corruption("listpack entry past the end");
    size_t bl = BacklenSize(entry);
    if (entry + bl > avail) return Status::Corruption("listpack entry past the end");
    // The backlen must decode to the entry size (read backwards from its last byte).
    uint64_t back = 0;
    const uint8_t* q = p + entry + bl - 1;
    for (size_t i = 0; i < bl; i++, q--) back |= static_cast<uint64_t>(*q & 127) << (7 * i);
    if (back != entry) return Status::Corruption("listpack backlen mismatch");
    std::string_view s;
    if (is_int) {
      size_t n = static_cast<size_t>(snprintf(num, sizeof(num), "%lld", static_cast<long long>(iv)));
      s = std::string_view(num, n);
    } else {
      s = std::string_view(reinterpret_cast<const char*>(p + hdr), len);
    }
    Status st = fn(s);
    if (!st.ok()) return st;
    pos += entry + bl;
    count++;
  }
  if (declared != 65535 && declared != count) {
    return Status::Corruption("listpack element count mismatch");
  }
  return Status::Ok();
}

}  // namespace kv::persist
