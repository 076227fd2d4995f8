// The SORTED SET command family with Redis 7.0 semantics (t_zset.c). This file has the shared
// helpers (zset_cmds.h), ZADD/ZINCRBY, ZREM, the point reads, ZRANDMEMBER, ZSCAN and the
// registration of the whole family; range queries and removals are in zset_ranges.cc, the pops
// in zset_pops.cc and ZUNION/ZINTER/ZDIFF in zset_setops.cc. Replies (RESP2 and RESP3), error
// texts, keyspace events and replication rewrites follow Redis 7.0.
#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/context.h"
#include "cmd/key_finders.h"
#include "cmd/registry.h"
#include "cmd/zset_cmds.h"
#include "common/hash.h"
#include "common/strutil.h"
#include "store/zset_type.h"

namespace kv::cmd::zset {

Entry* LookupWriteZset(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupWrite(key);
  *wrongtype = e && e->value.type() != ObjType::kZSet;
  if (*wrongtype) {
    c.Error(OpStatus::kWrongType);
    return nullptr;
  }
  return e;
}

void StoreKey(Context& c, std::string_view key, std::unique_ptr<ZSetValue> z) {
  bool existed = c.LookupWrite(key) != nullptr;
  c.ks.Set(c.session.db, key, Value::Object(ObjType::kZSet, std::move(z)));
  if (!existed) c.Notify(kNotifyNew, "new", key);
}

bool DeleteIfEmpty(Context& c, std::string_view key, Entry* e) {
  if (Zset(e)->Size() != 0) return false;
  c.ks.Delete(c.session.db, key);
  c.Notify(kNotifyGeneric, "del", key);
  return true;
}

void ReplyEntries(Context& c, const std::vector<ZEntry>& items, bool withscores) {
  bool nested = withscores && c.out.proto() >= 3;
  c.out.Array(withscores && !nested ? items.size() * 2 : items.size());
  for (const ZEntry& e : items) {
    if (nested) c.out.Array(2);
    c.out.Bulk(e.member);
    if (withscores) c.out.Double(e.score);
  }
}

bool ParseRangeLong(Context& c, std::string_view s, int64_t min, int64_t max, int64_t* v,
                    std::string_view msg) {
  auto r = ParseInt64(s);
  if (r && *r >= min && *r <= max) {
    *v = *r;
    return true;
  }
  if (!msg.empty())
    c.Error(msg);
  else if (!r)
    c.Error(OpStatus::kNotInteger);
  else
    c.Error(CountOutOfRange(min, max));
  return false;
}

bool LookupReadZset(Context& c, std::string_view key, ZSetValue** z) {
  bool wrongtype;
  Entry* e = c.LookupReadOfType(key, ObjType::kZSet, &wrongtype);
  *z = e ? Zset(e) : nullptr;
  return !wrongtype;
}

}  // namespace kv::cmd::zset

namespace kv::cmd {

using namespace zset;  // the family's shared helpers (zset_cmds.h)

namespace {

// ---- ZADD ZINCRBY -----------------------------------------------------------------------------

enum ZaddFlag : uint32_t { kNx = 1, kXx = 2, kGt = 4, kLt = 8, kIncr = 16 };
enum ZaddOut : int { kAdded = 1, kUpdated = 2, kNop = 4 };

// Redis' zsetAdd: adds or updates one member under the flags; false when the result is NaN.
// *newscore gets the member's score afterwards (unless nothing was done).
bool ZsetAdd(ZSetValue* z, double score, std::string_view member, uint32_t flags, int* out,
             double* newscore, const store::EncodingLimits& limits) {
  *out = 0;
  if (std::isnan(score)) return false;
  if (std::optional<double> cur = z->Score(member)) {
    if (flags & kNx) {
      *out = kNop;
      return true;
    }
    if (flags & kIncr) {
      score += *cur;
      if (std::isnan(score)) return false;
    }
    if (((flags & kLt) && score >= *cur) || ((flags & kGt) && score <= *cur)) {
      *out = kNop;
      return true;
    }
    *newscore = score;
    if (score != *cur) {
      z->UpdateScore(member, score);
      *out = kUpdated;
    }
    return true;
  }
  if (flags & kXx) {
    *out = kNop;
    return true;
  }
  z->Insert(member, score, limits);
  *newscore = score;
  *out = kAdded;
  return true;
}

// Parses ZADD's options; returns the index of the first score, or 0 after answering an error.
size_t ParseZaddOptions(Context& c, uint32_t* flags, bool* ch) {
  size_t idx = 2;
  for (; idx < c.argc(); idx++) {
    std::string_view o = c.arg(idx);
    if (EqualsIgnoreCase(o, "nx"))
      *flags |= kNx;
    else if (EqualsIgnoreCase(o, "xx"))
      *flags |= kXx;
    else if (EqualsIgnoreCase(o, "ch"))
      *ch = true;
    else if (EqualsIgnoreCase(o, "incr"))
      *flags |= kIncr;
    else if (EqualsIgnoreCase(o, "gt"))
      *flags |= kGt;
    else if (EqualsIgnoreCase(o, "lt"))
      *flags |= kLt;
    else
      break;
  }
  size_t pairs = c.argc() - idx;
  std::string_view err;
  if (pairs % 2 || pairs == 0)
    err = ErrorText(OpStatus::kSyntax);
  else if ((*flags & kNx) && (*flags & kXx))
    err = "XX and NX options at the same time are not compatible";
  else if (((*flags & kNx) && (*flags & (kGt | kLt))) || ((*flags & kGt) && (*flags & kLt)))
    err = "GT, LT, and/or NX options at the same time are not compatible";
  else if ((*flags & kIncr) && pairs > 2)
    err = "INCR option supports a single increment-element pair";
  if (err.empty()) return idx;
  c.Error(err);
  return 0;
}

// Redis' zaddGenericCommand (ZADD, and ZINCRBY which is ZADD INCR with the same parsing). All
// scores are parsed before anything changes; a new key's encoding depends on its first member.
void ZaddGeneric(Context& c, uint32_t flags) {
  bool ch = false;
  size_t idx = ParseZaddOptions(c, &flags, &ch);
  if (idx == 0) return;
  std::vector<double> scores;
  for (size_t j = idx; j < c.argc(); j += 2) {
    scores.push_back(0);
    if (!c.ParseDouble(c.arg(j), &scores.back())) return;
  }
  std::string_view key = c.arg(1);
  bool wrongtype;
  Entry* e = LookupWriteZset(c, key, &wrongtype);
  if (wrongtype) return;
  int added = 0, updated = 0, processed = 0;
  double score = 0;
  bool nan = false;
  if (!e && !(flags & kXx)) {
    auto z = ZSetValue::ForFirstMember(c.arg(idx + 1).size(), c.ks.limits());
    e = c.ks.Set(c.session.db, key, Value::Object(ObjType::kZSet, std::move(z)));
    c.Notify(kNotifyNew, "new", key);
  }
  for (size_t j = 0; e && j < scores.size() && !nan; j++) {
    int out;
    double newscore = 0;
    nan =
        !ZsetAdd(Zset(e), scores[j], c.arg(idx + 1 + 2 * j), flags, &out, &newscore, c.ks.limits());
    added += (out & kAdded) != 0;
    updated += (out & kUpdated) != 0;
    if (!(out & kNop)) processed++;
    score = newscore;
  }
  if (nan)
    c.Error("resulting score is not a number (NaN)");
  else if (!(flags & kIncr))
    c.out.Int(ch ? added + updated : added);
  else if (processed)
    c.out.Double(score);
  else
    c.out.Null();
  if (added || updated) c.Changed(key, kNotifyZset, (flags & kIncr) ? "zincr" : "zadd");
}

void Zadd(Context& c) { ZaddGeneric(c, 0); }
void Zincrby(Context& c) { ZaddGeneric(c, kIncr); }

// ---- ZREM and range removals ------------------------------------------------------------------

void Zrem(Context& c) {
  std::string_view key = c.arg(1);
  bool wrongtype;
  Entry* e = LookupWriteZset(c, key, &wrongtype);
  if (wrongtype) return;
  if (!e) {
    c.out.Int(0);
    return;
  }
  int64_t deleted = 0;
  bool removed_key = false;
  for (size_t j = 2; j < c.argc() && !removed_key; j++) {
    if (Zset(e)->Remove(c.arg(j))) deleted++;
    removed_key = Zset(e)->Size() == 0;
  }
  if (deleted) {
    c.Changed(key, kNotifyZset, "zrem");
    if (removed_key) {
      c.ks.Delete(c.session.db, key);
      c.Notify(kNotifyGeneric, "del", key);
    }
  }
  c.out.Int(deleted);
}

// ---- Point reads --------------------------------------------------------------------------------


void Zcard(Context& c) {
  ZSetValue* z;
  if (LookupReadZset(c, c.arg(1), &z)) c.out.Int(z ? static_cast<int64_t>(z->Size()) : 0);
}

void Zscore(Context& c) {
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(1), &z)) return;
  std::optional<double> s = z ? z->Score(c.arg(2)) : std::nullopt;
  if (s)
    c.out.Double(*s);
  else
    c.out.Null();
}

void Zmscore(Context& c) {
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(1), &z)) return;
  c.out.Array(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++) {
    std::optional<double> s = z ? z->Score(c.arg(j)) : std::nullopt;
    if (s)
      c.out.Double(*s);
    else
      c.out.Null();
  }
}

void ZrankGeneric(Context& c, bool reverse) {
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(1), &z)) return;
  std::optional<size_t> rank = z ? z->Rank(c.arg(2)) : std::nullopt;
  if (!rank) {
    c.out.Null();
    return;
  }
  c.out.Int(static_cast<int64_t>(reverse ? z->Size() - 1 - *rank : *rank));
}

void Zrank(Context& c) { ZrankGeneric(c, false); }
void Zrevrank(Context& c) { ZrankGeneric(c, true); }

// ---- ZRANDMEMBER ZSCAN --------------------------------------------------------------------------

// ZRANDMEMBER key count [WITHSCORES] (Redis' zrandmemberWithCountCommand): a negative count
// samples with repetition (at most kMaxRandomRepeats members); a count covering the set answers
// all of it (from the top rank down, as Redis' iterator walks); otherwise `count` distinct
// members in random order.
void ZrandmemberWithCount(Context& c, int64_t l, bool withscores) {
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(1), &z)) return;
  if (!z || l == 0) {
    c.out.EmptyArray();
    return;
  }
  if (l < -kMaxRandomRepeats) {
    c.Error(CountOutOfRange(-kMaxRandomRepeats, withscores ? INT64_MAX / 2 : INT64_MAX));
    return;
  }
  size_t size = z->Size();
  uint64_t count = l < 0 ? static_cast<uint64_t>(-l) : static_cast<uint64_t>(l);
  bool nested = withscores && c.out.proto() >= 3;
  auto emit = [&](const ZEntry& e) {
    if (nested) c.out.Array(2);
    c.out.Bulk(e.member);
    if (withscores) c.out.Double(e.score);
  };
  if (l < 0 || count == 1) {
    c.out.Array(withscores && !nested ? count * 2 : count);
    for (uint64_t i = 0; i < count; i++) emit(z->Random());
    return;
  }
  std::vector<ZEntry> all;
  all.reserve(size);
  z->Visit(size - 1, true, [&](std::string_view m, double s) {
    all.push_back({m, s});
    return true;
  });
  if (count < size) {  // a partial Fisher-Yates shuffle picks `count` distinct members
    for (size_t i = 0; i < count; i++) std::swap(all[i], all[i + RandomBelow(size - i)]);
    all.resize(count);
  }
  c.out.Array(withscores && !nested ? all.size() * 2 : all.size());
  for (const ZEntry& e : all) emit(e);
}

void Zrandmember(Context& c) {
  if (c.argc() >= 3) {
    int64_t l;
    if (!ParseRangeLong(c, c.arg(2), -INT64_MAX, INT64_MAX, &l)) return;
    bool withscores = c.argc() == 4 && EqualsIgnoreCase(c.arg(3), "withscores");
    if (c.argc() > 4 || (c.argc() == 4 && !withscores)) {
      c.Error(OpStatus::kSyntax);
      return;
    }
    if (withscores && (l < -INT64_MAX / 2 || l > INT64_MAX / 2)) {
      c.Error("value is out of range");
      return;
    }
    ZrandmemberWithCount(c, l, withscores);
    return;
  }
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(1), &z)) return;
  if (z)
    c.out.Bulk(z->Random().member);
  else
    c.out.Null();
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]. A missing key answers an empty scan before
// the options are even parsed, as Redis does. A listpack answers in one go; a skiplist walks its
// table at most 10*COUNT buckets per call.
void Zscan(Context& c) {
  uint64_t cursor;
  if (!ParseScanCursor(c.arg(2), &cursor)) {
    c.Error(OpStatus::kInvalidCursor);
    return;
  }
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(1), &z)) return;
  Context::CollectionScanOptions opt;
  if (z && !c.ParseCollectionScanOptions(&opt)) return;
  Scored found;
  if (z) {
    int64_t max_steps = opt.count > INT64_MAX / 10 ? INT64_MAX : opt.count * 10;
    int64_t visited = 0;
    do {
      cursor = z->Scan(cursor, [&](std::string_view m, double s) {
        visited++;
        if (!opt.use_pattern || GlobMatch(opt.pattern, m)) found.emplace_back(m, s);
      });
    } while (cursor && max_steps-- && visited < opt.count);
  } else {
    cursor = 0;
  }
  c.out.Array(2);
  c.out.Bulk(std::to_string(cursor));
  c.out.Array(found.size() * 2);
  for (const auto& [m, s] : found) {
    c.out.Bulk(m);
    c.out.Bulk(DoubleToString(s));
  }
}

}  // namespace

namespace zset {
void ZaddCommand(Context& c) { Zadd(c); }
}  // namespace zset

// Arity, flags and key positions are those Redis 7.0's COMMAND INFO reports (numkeys commands:
// ZUNION/ZINTER/ZDIFF/ZINTERCARD/ZMPOP 0 0 0, the STORE forms 1 1 1, as their first key spec).
void RegisterZsetCommands(CommandTable& t) {
  const uint32_t kW = kWrite | kDenyOom;
  const uint32_t kR = kReadOnly;
  static const CommandRow kRows[] = {
      {"zadd", -4, kW | kFast, 1, 1, 1, Zadd,
       "Add one or more members to a sorted set, or update its score if it already exists",
       "1.2.0"},
      {"zincrby", 4, kW | kFast, 1, 1, 1, Zincrby,
       "Increment the score of a member in a sorted set", "1.2.0"},
      {"zrem", -3, kWrite | kFast, 1, 1, 1, Zrem, "Remove one or more members from a sorted set",
       "1.2.0"},
      {"zscore", 3, kR | kFast, 1, 1, 1, Zscore,
       "Get the score associated with the given member in a sorted set", "1.2.0"},
      {"zmscore", -3, kR | kFast, 1, 1, 1, Zmscore,
       "Get the score associated with the given members in a sorted set", "6.2.0"},
      {"zcard", 2, kR | kFast, 1, 1, 1, Zcard, "Get the number of members in a sorted set",
       "1.2.0"},
      {"zcount", 4, kR | kFast, 1, 1, 1, Zcount,
       "Count the members in a sorted set with scores within the given values", "2.0.0"},
      {"zlexcount", 4, kR | kFast, 1, 1, 1, Zlexcount,
       "Count the number of members in a sorted set between a given lexicographical range",
       "2.8.9"},
      {"zrange", -4, kR, 1, 1, 1, Zrange, "Return a range of members in a sorted set", "1.2.0"},
      {"zrangestore", -5, kW, 1, 2, 1, Zrangestore,
       "Store a range of members from sorted set into another key", "6.2.0"},
      {"zrangebyscore", -4, kR, 1, 1, 1, ZrangeByScore,
       "Return a range of members in a sorted set, by score", "1.0.5"},
      {"zrevrangebyscore", -4, kR, 1, 1, 1, ZrevrangeByScore,
       "Return a range of members in a sorted set, by score, with scores ordered from high to low",
       "2.2.0"},
      {"zrangebylex", -4, kR, 1, 1, 1, ZrangeByLex,
       "Return a range of members in a sorted set, by lexicographical range", "2.8.9"},
      {"zrevrangebylex", -4, kR, 1, 1, 1, ZrevrangeByLex,
       "Return a range of members in a sorted set, by lexicographical range, ordered from higher "
       "to lower strings.",
       "2.8.9"},
      {"zrevrange", -4, kR, 1, 1, 1, Zrevrange,
       "Return a range of members in a sorted set, by index, with scores ordered from high to low",
       "1.2.0"},
      {"zrank", 3, kR | kFast, 1, 1, 1, Zrank, "Determine the index of a member in a sorted set",
       "2.0.0"},
      {"zrevrank", 3, kR | kFast, 1, 1, 1, Zrevrank,
       "Determine the index of a member in a sorted set, with scores ordered from high to low",
       "2.0.0"},
      {"zpopmin", -2, kWrite | kFast, 1, 1, 1, Zpopmin,
       "Remove and return members with the lowest scores in a sorted set", "5.0.0"},
      {"zpopmax", -2, kWrite | kFast, 1, 1, 1, Zpopmax,
       "Remove and return members with the highest scores in a sorted set", "5.0.0"},
      {"zmpop", -4, kWrite, 0, 0, 0, Zmpop, "Remove and return members with scores in a sorted set",
       "7.0.0", NumkeysAt1Keys},
      {"zremrangebyrank", 4, kWrite, 1, 1, 1, ZremRangeByRank,
       "Remove all members in a sorted set within the given indexes", "2.0.0"},
      {"zremrangebyscore", 4, kWrite, 1, 1, 1, ZremRangeByScore,
       "Remove all members in a sorted set within the given scores", "1.2.0"},
      {"zremrangebylex", 4, kWrite, 1, 1, 1, ZremRangeByLex,
       "Remove all members in a sorted set between the given lexicographical range", "2.8.9"},
      {"zunion", -3, kR, 0, 0, 0, Zunion, "Add multiple sorted sets", "6.2.0", NumkeysAt1Keys},
      {"zinter", -3, kR, 0, 0, 0, Zinter, "Intersect multiple sorted sets", "6.2.0",
       NumkeysAt1Keys},
      {"zdiff", -3, kR, 0, 0, 0, Zdiff, "Subtract multiple sorted sets", "6.2.0", NumkeysAt1Keys},
      {"zunionstore", -4, kW, 1, 1, 1, Zunionstore,
       "Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
       StoreNumkeysKeys},
      {"zinterstore", -4, kW, 1, 1, 1, Zinterstore,
       "Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
       StoreNumkeysKeys},
      {"zdiffstore", -4, kW, 1, 1, 1, Zdiffstore,
       "Subtract multiple sorted sets and store the resulting sorted set in a new key", "6.2.0",
       StoreNumkeysKeys},
      {"zintercard", -3, kR, 0, 0, 0, Zintercard,
       "Intersect multiple sorted sets and return the cardinality of the result", "7.0.0",
       NumkeysAt1Keys},
      {"zrandmember", -2, kR, 1, 1, 1, Zrandmember,
       "Get one or multiple random elements from a sorted set", "6.2.0"},
      {"zscan", -3, kR, 1, 1, 1, Zscan,
       "Incrementally iterate sorted sets elements and associated scores", "2.8.0"},
  };
  AddRows(t, kRows, "sorted-set");
}

}  // namespace kv::cmd
