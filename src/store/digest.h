// Redis-compatible dataset digests: DEBUG DIGEST and DEBUG DIGEST-VALUE, byte for byte the values
// Redis 7.0 computes (src/debug.c), so a kvstore dataset can be compared with a real
// redis-server's by digest alone.
//
// The scheme, over SHA-1: "xor" a datum into a 20-byte digest (order-independent, for unordered
// things: keys, set members, hash fields) or "mix" it (digest = SHA1(digest xor SHA1(datum)),
// order-dependent, for sequences). Each key's digest mixes the key name, the type number
// (big-endian u32), the value's contents, and xors in "!!expire!!" when the key has a TTL (its
// value does not matter). The dataset digest mixes in each non-empty db's index (big-endian u32)
// and then xors in every key's digest. Integer-encoded strings digest as their decimal text.
//
// Collections are digested through Collection::ForEach, following Redis 7.0's rules per type
// (see digest.cc); each type's own tests compare with a real redis-server.
//
// Keys are digested whether or not their TTL has passed (as Redis does: a digest reads the
// tables without lazy expiry). Not thread-safe; call under the keyspace lock.
#pragma once

#include <string>

#include "store/keyspace.h"

namespace kv::store {

// DEBUG DIGEST: 40 lowercase hex characters; all zeros when every db is empty.
std::string DatasetDigest(Keyspace& ks);

// One key's reply to DEBUG DIGEST-VALUE: the digest of `e`'s value (the key name is not part
// of it, but its TTL's presence is), as 40 hex characters; all zeros when `e` is null (a key
// that does not exist). `db` is the database holding `e`.
std::string ValueDigest(Db& db, const Entry* e);

}  // namespace kv::store
