// Sorted set operations shared between the zset commands (zsets.cc, which defines them) and the
// blocking pops built on the server's blocking mechanism (BZPOPMIN, BZPOPMAX, BZMPOP).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "cmd/context.h"

namespace kv::cmd {

// The reply shapes of Redis' genericZpopCommand.
struct ZPopShape {
  bool emit_key = false;        // the key leads the reply (BZPOPMIN/BZPOPMAX, ZMPOP/BZMPOP)
  bool nested = false;          // (member, score) pairs as 2-arrays: RESP3 ZPOP* COUNT, *ZMPOP
  bool nil_when_empty = false;  // a null array rather than an empty one when nothing popped
};

struct ZPopResult {
  int key_index = -1;    // index in `keys` of the key popped from; -1 if none or on WRONGTYPE
  int64_t popped = 0;    // elements removed (what ZPOPMIN/ZPOPMAX COUNT should propagate)
  bool deleted = false;  // the set became empty and its key was deleted
};

// Redis 7.0's genericZpopCommand: finds the first of `keys` that exists (answering WRONGTYPE and
// stopping if it is not a sorted set), then pops up to `count` members from its low end (`min`)
// or high end and answers them in `shape`; count -1 is the plain single pop, count 0 answers an
// empty array. Fires "zpopmin"/"zpopmax" (and "del" when the set empties); it sets no
// replication rewrite, which is the caller's (ZMPOP and the blocking pops propagate as
// ZPOPMIN/ZPOPMAX <key> <popped>).
ZPopResult ZsetPop(Context& c, std::span<const std::string_view> keys, bool min, int64_t count,
                   const ZPopShape& shape);

}  // namespace kv::cmd
