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

Status ForEachZiplistEntry(std::string_view blob,
                           const std::function<Status(std::string_view)>& fn) {
  const uint8_t* base = reinterpret_cast<const uint8_t*>(blob.data());
  size_t size = blob.size();
  constexpr size_t kHeader = 10;
  if (size < kHeader + 1) return Status::Corruption("ziplist shorter than its header");
  if (GetLE(base, 4) != size) return Status::Corruption("ziplist size field mismatch");
  if (base[size - 1] != 0xFF) return Status::Corruption("ziplist without terminator");
  size_t declared = GetLE(base + 8, 2);
  size_t pos = kHeader, end = size - 1, count = 0;
  char num[24];
  while (pos < end) {
    const uint8_t* p = base + pos;
    size_t avail = end - pos;
    size_t prevlen_size = p[0] < 254 ? 1 : 5;
    if (p[0] == 255 || avail < prevlen_size + 1) return Status::Corruption("bad ziplist entry");
    const uint8_t* e = p + prevlen_size;
    avail -= prevlen_size;
    uint8_t enc = e[0];
    size_t hdr = 1, len = 0;
    bool is_int = true;
    int64_t iv = 0;
    auto need = [&](size_t n) { return avail >= n; };
    switch (enc >> 6) {
      case 0:
        is_int = false;
        len = enc & 0x3F;
        break;
      case 1:
        if (!need(2)) return Status::Corruption("ziplist entry past the end");
        is_int = false;
        len = ((enc & 0x3F) << 8) | e[1];
        hdr = 2;
        break;
      case 2:
        if (!need(5)) return Status::Corruption("ziplist entry past the end");
        is_int = false;
        len = GetBE(e + 1, 4);
        hdr = 5;
        break;
      default: {
        int n = 0;
        if (enc == 0xC0) n = 2;
        else if (enc == 0xD0) n = 4;
        else if (enc == 0xE0) n = 8;
        else if (enc == 0xF0) n = 3;
        else if (enc == 0xFE) n = 1;
        else if (enc >= 0xF1 && enc <= 0xFD) iv = (enc & 0x0F) - 1;
        else return Status::Corruption("invalid ziplist entry encoding");
        if (n > 0) {
          if (!need(1 + n)) return Status::Corruption("ziplist entry past the end");
          iv = SignExtend(GetLE(e + 1, n), 8 * n);
          hdr = 1 + n;
        }
      }
    }
    if (len > avail || hdr + len > avail) return Status::Corruption("ziplist entry past the end");
    std::string_view s = is_int ? IntText(iv, num)
                                : std::string_view(reinterpret_cast<const char*>(e + hdr), len);
    Status st = fn(s);
    if (!st.ok()) return st;
    pos += prevlen_size + hdr + len;
    count++;
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
  }
  if (pos != size - 1) return Status::Corruption("zipmap trailing bytes");
  return Status::Ok();
}

}  // namespace kv::persist
