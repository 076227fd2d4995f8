#include "common/lzf.h"

#include <cstring>
#include <memory>

namespace kv {
namespace {

constexpr int kHashLog = 14;
constexpr size_t kMaxLiteral = 32;
constexpr size_t kMaxOffset = 8192;
constexpr size_t kMaxRef = 7 + 255 + 2;  // longest back reference

inline uint32_t Hash3(const uint8_t* p, int bits) {
  uint32_t v = p[0] << 16 | p[1] << 8 | p[2];
  return (v * 2654435761u) >> (32 - bits);
}

}  // namespace

size_t LzfCompress(const void* in_v, size_t in_len, void* out_v, size_t out_cap) {
  const uint8_t* in = static_cast<const uint8_t*>(in_v);
  uint8_t* out = static_cast<uint8_t*>(out_v);
  const uint8_t* in_end = in + in_len;
  uint8_t* op = out;
  uint8_t* out_end = out + out_cap;
  // Positions + 1 of the last occurrence of each 3-byte hash (0: none). Per call, so the
  // function is reentrant; 64 KiB is cheap next to the strings worth compressing.
  thread_local std::unique_ptr<uint32_t[]> table(new uint32_t[1 << kHashLog]);
  uint32_t* htab = table.get();
  // A table sized to the input: clearing it must not cost more than compressing small strings.
  int bits = 8;
  while (bits < kHashLog && (size_t{1} << bits) < in_len) bits++;
  memset(htab, 0, sizeof(uint32_t) << bits);

  const uint8_t* ip = in;
  const uint8_t* lit_start = ip;  // pending literal bytes [lit_start, ip)

  // Emits the pending literals; false when out of room.
  auto flush = [&](const uint8_t* upto) -> bool {
    while (lit_start < upto) {
      size_t n = upto - lit_start;
      if (n > kMaxLiteral) n = kMaxLiteral;
      if (op + 1 + n > out_end) return false;
      *op++ = static_cast<uint8_t>(n - 1);
      memcpy(op, lit_start, n);
      op += n;
      lit_start += n;
    }
    return true;
  };

  while (in_end - ip >= 3) {
    uint32_t h = Hash3(ip, bits);
    size_t cand = htab[h];
    htab[h] = static_cast<uint32_t>(ip - in) + 1;
    if (cand != 0) {
      const uint8_t* ref = in + cand - 1;
      size_t off = ip - ref;  // >= 1
      if (off <= kMaxOffset && ref[0] == ip[0] && ref[1] == ip[1] && ref[2] == ip[2]) {
        size_t max = in_end - ip;
        if (max > kMaxRef) max = kMaxRef;
        size_t len = 3;
        while (len < max && ref[len] == ip[len]) len++;
        if (!flush(ip)) return 0;
        size_t l = len - 2;  // encoded length field
        size_t o = off - 1;
        if (op + 3 > out_end) return 0;
        if (l < 7) {
          *op++ = static_cast<uint8_t>((l << 5) | (o >> 8));
        } else {
          *op++ = static_cast<uint8_t>((7 << 5) | (o >> 8));
          *op++ = static_cast<uint8_t>(l - 7);
        }
        *op++ = static_cast<uint8_t>(o & 0xff);
        // Index the positions inside the match sparsely (the last two), as liblzf's fast mode.
        const uint8_t* end = ip + len;
        if (end - in >= 3 && in_end - end >= 3) {
          htab[Hash3(end - 1, bits)] = static_cast<uint32_t>(end - 1 - in) + 1;
        }
        ip = end;
        lit_start = ip;
        continue;
      }
    }
    ip++;
  }
  if (!flush(in_end)) return 0;
  return op - out;
}

bool LzfDecompress(const void* in_v, size_t in_len, void* out_v, size_t out_len) {
  const uint8_t* ip = static_cast<const uint8_t*>(in_v);
  const uint8_t* in_end = ip + in_len;
  uint8_t* out = static_cast<uint8_t*>(out_v);
  uint8_t* op = out;
  uint8_t* out_end = out + out_len;
  while (ip < in_end) {
    size_t ctrl = *ip++;
    if (ctrl < 32) {
      size_t n = ctrl + 1;
      if (static_cast<size_t>(in_end - ip) < n || static_cast<size_t>(out_end - op) < n) {
        return false;
      }
      memcpy(op, ip, n);
      op += n;
      ip += n;
      continue;
    }
    size_t len = ctrl >> 5;
    if (len == 7) {
      if (ip >= in_end) return false;
      len += *ip++;
    }
    len += 2;
    if (ip >= in_end) return false;
    size_t off = ((ctrl & 0x1f) << 8) + *ip++ + 1;
    if (off > static_cast<size_t>(op - out) || static_cast<size_t>(out_end - op) < len) {
      return false;
    }
    const uint8_t* ref = op - off;
    // Overlapping copies repeat the pattern, so copy forwards byte by byte when they overlap.
    if (off >= len) {
      memcpy(op, ref, len);
      op += len;
    } else {
      for (size_t i = 0; i < len; i++) *op++ = *ref++;
    }
  }
  return op == out_end;
}

}  // namespace kv
