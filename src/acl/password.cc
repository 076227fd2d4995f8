#include "acl/password.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cassert>
#include <memory>

namespace kv::acl {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string ToHex(const unsigned char* data, size_t len) {
  std::string out(len * 2, '\0');
  for (size_t i = 0; i < len; i++) {
    out[2 * i] = kHex[data[i] >> 4];
    out[2 * i + 1] = kHex[data[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string HashPassword(std::string_view cleartext) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  // EVP_Digest only fails on allocation failure inside libcrypto; a password that cannot be
  // hashed must never compare equal to anything, so the empty string is returned then.
  if (EVP_Digest(cleartext.data(), cleartext.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    return std::string();
  }
  return ToHex(digest, len);
}

bool IsValidPasswordHash(std::string_view hash) {
  if (hash.size() != 64) return false;
  for (char c : hash) {
    if ((c < 'a' || c > 'f') && (c < '0' || c > '9')) return false;
  }
  return true;
}

bool HashesEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); i++) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string GenPass(int bits) {
  assert(bits > 0 && bits <= kGenPassMaxBits);
  size_t chars = (static_cast<size_t>(bits) + 3) / 4;
  std::string bytes((chars + 1) / 2, '\0');
  auto* raw = reinterpret_cast<unsigned char*>(bytes.data());
  if (RAND_bytes(raw, static_cast<int>(bytes.size())) != 1) return std::string();
  std::string hex = ToHex(raw, bytes.size());
  hex.resize(chars);
  return hex;
}

}  // namespace kv::acl
