#include "common/lzf.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>

namespace kv {
namespace {

constexpr size_t kMaxLiteral = 32;   // a literal run's length: 1..32
constexpr size_t kMaxOffset = 8192;  // a back reference's distance less one: 0..8191
constexpr size_t kMaxRef = 264;      // the longest reference, in octets past the first two
constexpr int kHashLog = 16;

// liblzf's hash of the three bytes at p (its VERY_FAST IDX of a rolling value), so that the
// same candidates, and so the same stream, come out as Redis writes.
inline uint32_t Hash3(const uint8_t* p) {
  uint32_t hi = (uint32_t{p[0]} << 8) | p[1];
  uint32_t lo = (uint32_t{p[1]} << 8) | p[2];
  return (hi - lo * 5) & ((1u << kHashLog) - 1);
}

// The last position of each hash, tagged with the call that stored it: a call sees only its
// own entries without clearing 64 Ki slots first.
struct HashTable {
  std::unique_ptr<uint64_t[]> slots{new uint64_t[size_t{1} << kHashLog]()};
  uint32_t call = 0;

  void Begin() {
    if (++call == 0) {  // wrapped: old tags could look current
      std::fill_n(slots.get(), size_t{1} << kHashLog, 0);
      call = 1;
    }
  }
  // The position stored for `h` in this call, or -1; then stores `pos`.
  int64_t Swap(uint32_t h, size_t pos) {
    uint64_t old = slots[h];
    slots[h] = (uint64_t{call} << 32) | pos;
    return (old >> 32) == call ? static_cast<int64_t>(old & 0xffffffffu) : -1;
  }
  void Put(uint32_t h, size_t pos) { slots[h] = (uint64_t{call} << 32) | pos; }
};

}  // namespace

// The stream liblzf's lzf_compress writes with Redis' settings (VERY_FAST, a 16-bit hash,
// no match starting at the input's first byte), and the same decisions on running out of
// room, so that kvstore's RDB files and DUMP payloads are Redis' byte for byte.
size_t LzfCompress(const void* in_v, size_t in_len, void* out_v, size_t out_cap) {
  const uint8_t* in = static_cast<const uint8_t*>(in_v);
  uint8_t* out = static_cast<uint8_t*>(out_v);
  if (in_len == 0 || out_cap == 0 || in_len > 0xffffffffu) return 0;
  thread_local HashTable table;
  table.Begin();
  uint8_t* op = out;
  uint8_t* const out_end = out + out_cap;
  size_t lit = 0;  // the open literal run's length; its control byte is at op[-lit - 1]
  op++;
  size_t pos = 0;
  while (pos + 2 < in_len) {
    const uint8_t* ip = in + pos;
    int64_t cand = table.Swap(Hash3(ip), pos);
    const uint8_t* ref = cand > 0 ? in + cand : nullptr;
    size_t off = ref ? pos - static_cast<size_t>(cand) - 1 : kMaxOffset;
    if (ref && off < kMaxOffset && ref[0] == ip[0] && ref[1] == ip[1] && ref[2] == ip[2]) {
      size_t maxlen = std::min(in_len - pos - 2, kMaxRef);
      // The octets matched, counted as liblzf counts them (16 compares at a time while far
      // from the limit; the count may then pass maxlen by a verified octet or two).
      size_t len = 2;
      bool done = false;
      if (maxlen > 16) {
        for (int i = 0; i < 16 && !done; i++) {
          len++;
          done = ref[len] != ip[len];
        }
      }
      if (!done) {
        do {
          len++;
        } while (len < maxlen && ref[len] == ip[len]);
      }
      if (op + 4 >= out_end && op - (lit == 0) + 4 >= out_end) return 0;
      op[-static_cast<ptrdiff_t>(lit) - 1] = static_cast<uint8_t>(lit - 1);  // close the run
      op -= lit == 0;
      size_t l = len - 2;
      if (l < 7) {
        *op++ = static_cast<uint8_t>((off >> 8) + (l << 5));
      } else {
        *op++ = static_cast<uint8_t>((off >> 8) + (7 << 5));
        *op++ = static_cast<uint8_t>(l - 7);
      }
      *op++ = static_cast<uint8_t>(off);
      lit = 0;
      op++;
      pos += len;
      if (pos + 2 >= in_len) break;
      // The match's last two positions go into the table (VERY_FAST), not the ones inside it.
      table.Put(Hash3(in + pos - 2), pos - 2);
      table.Put(Hash3(in + pos - 1), pos - 1);
      continue;
    }
    if (op >= out_end) return 0;
    lit++;
    *op++ = in[pos++];
    if (lit == kMaxLiteral) {
      op[-static_cast<ptrdiff_t>(lit) - 1] = static_cast<uint8_t>(lit - 1);
      lit = 0;
      op++;
    }
  }
  if (op + 3 > out_end) return 0;  // at most the last two bytes and a control byte are left
  while (pos < in_len) {
    lit++;
    *op++ = in[pos++];
    if (lit == kMaxLiteral) {
      op[-static_cast<ptrdiff_t>(lit) - 1] = static_cast<uint8_t>(lit - 1);
      lit = 0;
      op++;
    }
  }
  op[-static_cast<ptrdiff_t>(lit) - 1] = static_cast<uint8_t>(lit - 1);
  op -= lit == 0;
  return static_cast<size_t>(op - out);
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
