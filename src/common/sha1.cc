#include "common/sha1.h"

#include <algorithm>
#include <cstring>

namespace kv {
namespace {

inline uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

inline uint32_t LoadBe32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

inline void StoreBe32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

}  // namespace

void Sha1::Reset() {
  h_[0] = 0x67452301;
  h_[1] = 0xEFCDAB89;
  h_[2] = 0x98BADCFE;
  h_[3] = 0x10325476;
  h_[4] = 0xC3D2E1F0;
  total_len_ = 0;
  buf_len_ = 0;
}

void Sha1::Block(const uint8_t* p) {
  uint32_t w[80];
  for (int i = 0; i < 16; i++) w[i] = LoadBe32(p + 4 * i);
  for (int i = 16; i < 80; i++) w[i] = Rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);

  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4];
  for (int i = 0; i < 80; i++) {
    uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    uint32_t t = Rotl(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = Rotl(b, 30);
    b = a;
    a = t;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
}

void Sha1::Update(const void* data, size_t len) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  total_len_ += len;
  if (buf_len_ > 0) {
    size_t take = std::min(len, sizeof(buf_) - buf_len_);
    memcpy(buf_ + buf_len_, p, take);
    buf_len_ += take;
    p += take;
    len -= take;
    if (buf_len_ < sizeof(buf_)) return;
    Block(buf_);
    buf_len_ = 0;
  }
  for (; len >= sizeof(buf_); p += sizeof(buf_), len -= sizeof(buf_)) Block(p);
  if (len > 0) {
    memcpy(buf_, p, len);
    buf_len_ = len;
  }
}

void Sha1::Final(uint8_t out[kDigestSize]) {
  const uint64_t bit_len = total_len_ * 8;
  // Padding: 0x80, zeros up to 56 mod 64, then the message length in bits, big-endian.
  uint8_t pad[72] = {0x80};
  size_t pad_len = (buf_len_ < 56 ? 56 : 120) - buf_len_;
  for (int i = 0; i < 8; i++) pad[pad_len + i] = static_cast<uint8_t>(bit_len >> (56 - 8 * i));
  Update(pad, pad_len + 8);
  for (int i = 0; i < 5; i++) StoreBe32(out + 4 * i, h_[i]);
  Reset();
}

std::string Sha1::HexDigest(std::string_view data) {
  Sha1 s;
  s.Update(data);
  uint8_t out[kDigestSize];
  s.Final(out);
  return HexEncode(out, sizeof(out));
}

}  // namespace kv
