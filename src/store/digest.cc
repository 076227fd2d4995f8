#include "store/digest.h"

#include <array>
#include <cstdio>
#include <cstdint>
#include <string_view>

#include "common/sha1.h"
#include "store/stream_type.h"

namespace kv::store {
namespace {

using Digest = std::array<uint8_t, Sha1::kDigestSize>;

// Redis xorDigest: digest ^= SHA1(data).
void XorDigest(Digest& digest, const void* data, size_t len) {
  Sha1 sha;
  sha.Update(data, len);
  uint8_t hash[Sha1::kDigestSize];
  sha.Final(hash);
  for (size_t i = 0; i < digest.size(); i++) digest[i] ^= hash[i];
}

// Redis mixDigest: digest = SHA1(digest ^ SHA1(data)).
void MixDigest(Digest& digest, const void* data, size_t len) {
  XorDigest(digest, data, len);
  Sha1 sha;
  sha.Update(digest.data(), digest.size());
  sha.Final(digest.data());
}

void MixDigest(Digest& digest, std::string_view s) { MixDigest(digest, s.data(), s.size()); }

// Redis mixes small integers (the db index, the type number) as big-endian 32-bit words
// (htonl), so the digest does not depend on the host's byte order.
void MixBe32(Digest& digest, uint32_t v) {
  const uint8_t be[4] = {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                         static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
  MixDigest(digest, be, sizeof(be));
}

// Redis xorObjectDigest: mixes the value at `e` into `digest` (which it does not reset).
void XorValueDigest(const Db& db, const Entry* e, Digest& digest) {
  const Value& v = e->value;
  MixBe32(digest, static_cast<uint32_t>(v.type()));
  switch (v.type()) {
    case ObjType::kString: {
      // Redis' getDecodedObject: an integer-encoded string digests as its decimal text.
      char scratch[24];
      MixDigest(digest, v.Str(scratch));
      break;
    }
    // Redis 7.0's xorObjectDigest for the collections:
    //  list: mix each element, head to tail (order matters);
    //  set:  xor each member (order does not matter);
    //  zset and hash: per member/field a fresh zeroed digest, mix the member then the score
    //        ("%.17g") or the field then the value, and xor that 20-byte digest in.
    case ObjType::kList:
      v.object()->ForEach([&](std::string_view elem, std::string_view) {
        MixDigest(digest, elem);
      });
      break;
    case ObjType::kSet:
      v.object()->ForEach([&](std::string_view member, std::string_view) {
        XorDigest(digest, member.data(), member.size());
      });
      break;
    case ObjType::kZSet:
    case ObjType::kHash:
      v.object()->ForEach([&](std::string_view first, std::string_view second) {
        Digest ele{};
        MixDigest(ele, first);
        MixDigest(ele, second);
        XorDigest(digest, ele.data(), ele.size());
      });
      break;
    // stream: mix each entry's "<ms>.<seq>", then its fields and values, oldest first (consumer
    // groups are not digested).
    case ObjType::kStream:
      v.As<StreamValue>()->Range(StreamID::Min(), StreamID::Max(), false,
                                 [&](StreamID id, std::span<const StreamValue::FieldValue> fields) {
                                   char buf[48];
                                   int n = snprintf(buf, sizeof(buf), "%llu.%llu",
                                                    static_cast<unsigned long long>(id.ms),
                                                    static_cast<unsigned long long>(id.seq));
                                   MixDigest(digest, std::string_view(buf, static_cast<size_t>(n)));
                                   for (const auto& [f, val] : fields) {
                                     MixDigest(digest, f);
                                     MixDigest(digest, val);
                                   }
                                   return true;
                                 });
      break;
  }
  // Only the presence of a TTL is digested, never its value.
  if (db.GetExpire(e) != -1) XorDigest(digest, "!!expire!!", 10);
}

std::string Hex(const Digest& d) { return HexEncode(d.data(), d.size()); }

}  // namespace

std::string DatasetDigest(Keyspace& ks) {
  Digest final_digest{};
  for (int i = 0; i < ks.num_dbs(); i++) {
    Db& db = ks.db(i);
    if (db.size() == 0) continue;
    // The db index, so the same keys in another db give another digest.
    MixBe32(final_digest, static_cast<uint32_t>(i));
    // Keys are xored together, so the table's iteration order does not matter.
    db.table().ForEach([&](Entry* e) {
      Digest key_digest{};
      MixDigest(key_digest, e->key());
      XorValueDigest(db, e, key_digest);
      XorDigest(final_digest, key_digest.data(), key_digest.size());
    });
  }
  return Hex(final_digest);
}

std::string ValueDigest(Db& db, const Entry* e) {
  Digest digest{};
  if (e != nullptr) XorValueDigest(db, e, digest);
  return Hex(digest);
}

}  // namespace kv::store
