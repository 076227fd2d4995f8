#include "persist/blob_encodings.h"

#include <cstdio>

namespace kv::persist {
namespace {

uint64_t GetLE(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

uint64_t GetBE(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v = (v << 8) | p[i];
  return v;
}

int64_t SignExtend(uint64_t v, int bits) {
  if (bits == 64) return static_cast<int64_t>(v);
  uint64_t m = 1ULL << (bits - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

std::string_view IntText(int64_t v, char (&buf)[24]) {
  int n = snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  return std::string_view(buf, static_cast<size_t>(n));
}

}  // namespace

Status ForEachIntsetMember(std::string_view blob, const std::function<Status(int64_t)>& fn) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(blob.data());
  if (blob.size() < 8) return Status::Corruption("intset shorter than its header");
  uint64_t width = GetLE(p, 4), len = GetLE(p + 4, 4);
  if (width != 2 && width != 4 && width != 8) return Status::Corruption("invalid intset encoding");
  if (blob.size() != 8 + width * len) return Status::Corruption("intset size mismatch");
  if (len == 0) return Status::Corruption("empty intset");
  int64_t prev = 0;
  for (uint64_t i = 0; i < len; i++) {
    int64_t v = SignExtend(GetLE(p + 8 + i * width, static_cast<int>(width)), 8 * width);
    if (i > 0 && v <= prev) return Status::Corruption("intset members not in ascending order");
    prev = v;
    Status st = fn(v);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

std::string BuildIntset(size_t n, const std::function<int64_t(size_t)>& at) {
  int width = 2;
  for (size_t i = 0; i < n; i++) {
    int64_t v = at(i);
    if (v < INT32_MIN || v > INT32_MAX) {
      width = 8;
      break;
    }
    if (v < INT16_MIN || v > INT16_MAX) width = 4;
  }
  std::string out;
  out.reserve(8 + width * n);
  auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(static_cast<uint64_t>(width), 4);
  put(n, 4);
  for (size_t i = 0; i < n; i++) put(static_cast<uint64_t>(at(i)), width);
  return out;
}

namespace {

// One decoded ziplist entry: its value, its prevlen field, and its whole size.
struct ZiplistEntry {
  size_t prevlen = 0;  // the previous entry's size, as this entry states it
  size_t size = 0;     // prevlen field + encoding header + payload
  bool is_int = false;
  int64_t int_value = 0;
  std::string_view str;
};

// Decodes the entry at `pos`, which with its payload must end before `end` (the terminator).
Status DecodeZiplistEntry(const uint8_t* base, size_t pos, size_t end, ZiplistEntry* out) {
  const uint8_t* p = base + pos;
  size_t avail = end - pos;
  size_t prevlen_size = p[0] < 254 ? 1 : 5;
  if (p[0] == 255 || avail < prevlen_size + 1) return Status::Corruption("bad ziplist entry");
  out->prevlen = prevlen_size == 1 ? p[0] : GetLE(p + 1, 4);
  const uint8_t* e = p + prevlen_size;
  avail -= prevlen_size;
  uint8_t enc = e[0];
  size_t hdr = 1, len = 0;
  out->is_int = true;
  switch (enc >> 6) {
    case 0:
      out->is_int = false;
      len = enc & 0x3F;
      break;
    case 1:
      if (avail < 2) return Status::Corruption("ziplist entry past the end");
      out->is_int = false;
      len = ((enc & 0x3F) << 8) | e[1];
      hdr = 2;
      break;
    case 2:
      if (avail < 5) return Status::Corruption("ziplist entry past the end");
      out->is_int = false;
      len = GetBE(e + 1, 4);
      hdr = 5;
      break;
    default: {
      int n = 0;
      switch (enc) {
        case 0xC0:
          n = 2;
          break;
        case 0xD0:
          n = 4;
          break;
        case 0xE0:
          n = 8;
          break;
        case 0xF0:
          n = 3;
          break;
        case 0xFE:
          n = 1;
          break;
        default:
          if (enc < 0xF1 || enc > 0xFD) return Status::Corruption("invalid ziplist entry encoding");
          out->int_value = (enc & 0x0F) - 1;  // an immediate 0..12
      }
      if (n > 0) {
        if (avail < 1 + static_cast<size_t>(n)) {
          return Status::Corruption("ziplist entry past the end");
        }
        out->int_value = SignExtend(GetLE(e + 1, n), 8 * n);
        hdr = 1 + n;
      }
    }
  }
  if (len > avail || hdr + len > avail) return Status::Corruption("ziplist entry past the end");
  out->str = std::string_view(reinterpret_cast<const char*>(e + hdr), len);
  out->size = prevlen_size + hdr + len;
  return Status::Ok();
}

}  // namespace

Status ForEachZiplistEntry(std::string_view blob,
                           const std::function<Status(std::string_view)>& fn) {
  const uint8_t* base = reinterpret_cast<const uint8_t*>(blob.data());
  size_t size = blob.size();
  constexpr size_t kHeader = 10;
  if (size < kHeader + 1) return Status::Corruption("ziplist shorter than its header");
  if (GetLE(base, 4) != size) return Status::Corruption("ziplist size field mismatch");
  if (base[size - 1] != 0xFF) return Status::Corruption("ziplist without terminator");
  size_t tail = GetLE(base + 4, 4);
  if (tail > size - 1) return Status::Corruption("ziplist tail offset past the end");
  size_t declared = GetLE(base + 8, 2);
  size_t pos = kHeader, end = size - 1, count = 0, prev_size = 0, last = 0;
  char num[24];
  while (pos < end) {
    ZiplistEntry e;
    KV_TRY(DecodeZiplistEntry(base, pos, end, &e));
    // Every entry states its predecessor's size (0 for the first): code that walks a ziplist
    // backwards trusts it, so a wrong one would send it outside the blob or between entries.
    if (e.prevlen != prev_size) return Status::Corruption("ziplist entry prevlen mismatch");
    Status st = fn(e.is_int ? IntText(e.int_value, num) : e.str);
    if (!st.ok()) return st;
    last = pos;
    prev_size = e.size;
    pos += e.size;
    count++;
  }
  if (count > 0 && tail != last) {
    return Status::Corruption("ziplist tail offset does not point at the last entry");
  }
  if (declared != 65535 && declared != count) {
    return Status::Corruption("ziplist element count mismatch");
  }
  return Status::Ok();
}

Status ForEachZipmapPair(std::string_view blob,
                         const std::function<Status(std::string_view, std::string_view)>& fn) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(blob.data());
  size_t size = blob.size(), pos = 1;
  if (size < 2) return Status::Corruption("zipmap too short");
  // Reads a length at pos; false at the terminator or on a bad field.
  auto read_len = [&](size_t* len, bool* end) -> bool {
    if (pos >= size) return false;
    uint8_t b = p[pos];
    *end = b == 255;
    if (*end) return true;
    if (b < 254) {
      *len = b;
      pos += 1;
      return true;
    }
    if (size - pos < 5) return false;
    *len = GetLE(p + pos + 1, 4);
    pos += 5;
    return true;
  };
  size_t pairs = 0;
  while (true) {
    size_t klen = 0, vlen = 0;
    bool end = false;
    if (!read_len(&klen, &end)) return Status::Corruption("zipmap entry past the end");
    if (end) break;
    if (size - pos < klen) return Status::Corruption("zipmap entry past the end");
    std::string_view key(reinterpret_cast<const char*>(p + pos), klen);
    pos += klen;
    if (!read_len(&vlen, &end) || end) return Status::Corruption("zipmap key without value");
    if (pos >= size) return Status::Corruption("zipmap entry past the end");
    size_t free = p[pos++];
    if (size - pos < vlen || size - pos - vlen < free) {
      return Status::Corruption("zipmap entry past the end");
    }
    std::string_view val(reinterpret_cast<const char*>(p + pos), vlen);
    pos += vlen + free;
    Status st = fn(key, val);
    if (!st.ok()) return st;
    pairs++;
  }
  if (pos != size - 1) return Status::Corruption("zipmap trailing bytes");
  if (pairs == 0) return Status::Corruption("empty zipmap");  // as Redis' check refuses it
  return Status::Ok();
}

}  // namespace kv::persist
