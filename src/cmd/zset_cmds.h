// Internal to the sorted-set command files (zsets.cc, zset_ranges.cc, zset_pops.cc,
// zset_setops.cc): the helpers they share and the handlers zsets.cc registers. Nothing outside
// cmd/ includes it; the blocking pops use zset_ops.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/context.h"
#include "store/zset_type.h"

namespace kv::cmd::zset {

// ZADD's handler (GEOADD runs its arguments through it, as Redis does).
void ZaddCommand(Context& c);

using store::Entry;
using store::LexBound;
using store::LexRange;
using store::ObjType;
using store::ScoreRange;
using store::Value;
using store::ZEntry;
using store::ZSetValue;

constexpr size_t kNone = ZSetValue::kNone;

// (member, score) pairs copied out of sets: set-operation results and popped members.
using Scored = std::vector<std::pair<std::string, double>>;

// ---- Shared helpers (zsets.cc) ------------------------------------------------------------------

inline ZSetValue* Zset(Entry* e) { return e->value.As<ZSetValue>(); }

// A write lookup that insists on a sorted set; answers WRONGTYPE and sets *wrongtype otherwise.
Entry* LookupWriteZset(Context& c, std::string_view key, bool* wrongtype);
// A read lookup of a sorted set (*z null when missing). Returns false after answering WRONGTYPE.
bool LookupReadZset(Context& c, std::string_view key, ZSetValue** z);
// Stores a new value at `key` (dropping any TTL, as Redis' setKey) and fires "new" when the key
// did not exist (Redis 7.0's dbAdd).
void StoreKey(Context& c, std::string_view key, std::unique_ptr<ZSetValue> z);
// Deletes the key of a set that became empty, firing "del". True when it did.
bool DeleteIfEmpty(Context& c, std::string_view key, Entry* e);
// Members, with scores when asked: RESP2 flat, RESP3 [member, score] pairs (Redis never uses a
// map here, since the order matters).
void ReplyEntries(Context& c, const std::vector<ZEntry>& items, bool withscores);
// Redis' getRangeLongFromObjectOrReply: `msg` replaces both error texts when given.
bool ParseRangeLong(Context& c, std::string_view s, int64_t min, int64_t max, int64_t* v,
                    std::string_view msg = {});

// ---- Handlers registered by zsets.cc ------------------------------------------------------------

// zset_ranges.cc: range queries and removals.
void Zcount(Context& c);
void Zlexcount(Context& c);
void Zrange(Context& c);
void Zrangestore(Context& c);
void Zrevrange(Context& c);
void ZrangeByScore(Context& c);
void ZrevrangeByScore(Context& c);
void ZrangeByLex(Context& c);
void ZrevrangeByLex(Context& c);
void ZremRangeByRank(Context& c);
void ZremRangeByScore(Context& c);
void ZremRangeByLex(Context& c);

// zset_pops.cc: ZPOPMIN ZPOPMAX ZMPOP (the blocking forms are in blocking.cc).
void Zpopmin(Context& c);
void Zpopmax(Context& c);
void Zmpop(Context& c);

// zset_setops.cc: ZUNION ZINTER ZDIFF, their STORE forms, ZINTERCARD.
void Zunion(Context& c);
void Zinter(Context& c);
void Zdiff(Context& c);
void Zunionstore(Context& c);
void Zinterstore(Context& c);
void Zdiffstore(Context& c);
void Zintercard(Context& c);

}  // namespace kv::cmd::zset
