// SHA-1 (FIPS 180-4), for Redis-compatible digests (DEBUG DIGEST) and script ids, where the
// exact bytes of SHA-1 are part of the protocol. Not for security.
// A Sha1 object is used by one thread at a time; distinct objects are independent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/strutil.h"  // HexEncode, for the digests

namespace kv {

class Sha1 {
 public:
  static constexpr size_t kDigestSize = 20;

  Sha1() { Reset(); }

  // Starts a new message, discarding any data already fed.
  void Reset();
  // Feeds `len` more bytes of the message; may be called any number of times.
  void Update(const void* data, size_t len);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // Writes the digest of everything fed since the last Reset and resets the object.
  void Final(uint8_t out[kDigestSize]);

  // One-shot digest of `data`, as 40 lowercase hex characters.
  static std::string HexDigest(std::string_view data);

 private:
  void Block(const uint8_t* p);

  uint32_t h_[5];
  uint64_t total_len_;  // bytes fed so far
  uint8_t buf_[64];     // a partial block
  size_t buf_len_;
};

}  // namespace kv
