// The SORTED SET command family with Redis 7.0 semantics (t_zset.c): ZADD/ZINCRBY, point reads,
// the ZRANGE family and ZRANGESTORE, range removals, pops, the ZUNION/ZINTER/ZDIFF family,
// ZRANDMEMBER and ZSCAN. Replies (RESP2 and RESP3), error texts, keyspace events and replication
// rewrites follow Redis 7.0; range searches follow Redis' own algorithms so that even ranges
// Redis leaves loosely defined (lex ranges over mixed scores in a listpack) answer the same.
// The blocking pops are registered by the server on top of ZsetPop (zset_ops.h).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cmd/context.h"
#include "cmd/key_finders.h"
#include "cmd/registry.h"
#include "cmd/zset_ops.h"
#include "common/hash.h"
#include "common/strutil.h"
#include "store/zset_type.h"

namespace kv::cmd {
namespace {

using store::Entry;
using store::LexBound;
using store::LexRange;
using store::ObjType;
using store::ScoreRange;
using store::Value;
using store::ZEntry;
using store::ZSetValue;

constexpr size_t kNone = ZSetValue::kNone;

// ---- Shared helpers -----------------------------------------------------------------------------

ZSetValue* Zset(Entry* e) { return e->value.As<ZSetValue>(); }

// A write lookup that insists on a sorted set; answers WRONGTYPE and sets *wrongtype otherwise.
Entry* LookupWriteZset(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupWrite(key);
  *wrongtype = e && e->value.type() != ObjType::kZSet;
  if (*wrongtype) {
    c.Error(OpStatus::kWrongType);
    return nullptr;
  }
  return e;
}

// Stores a new value at `key` (dropping any TTL, as Redis' setKey) and fires "new" when the key
// did not exist (Redis 7.0's dbAdd).
void StoreKey(Context& c, std::string_view key, std::unique_ptr<ZSetValue> z) {
  bool existed = c.LookupWrite(key) != nullptr;
  c.ks.Set(c.session.db, key, Value::Object(ObjType::kZSet, std::move(z)));
  if (!existed) c.Notify(kNotifyNew, "new", key);
}

// Deletes the key of a set that became empty, firing "del". True when it did.
bool DeleteIfEmpty(Context& c, std::string_view key, Entry* e) {
  if (Zset(e)->Size() != 0) return false;
  c.ks.Delete(c.session.db, key);
  c.Notify(kNotifyGeneric, "del", key);
  return true;
}

// Members, with scores when asked: RESP2 flat, RESP3 [member, score] pairs (Redis never uses a
// map here, since the order matters).
void ReplyEntries(Context& c, const std::vector<ZEntry>& items, bool withscores) {
  bool nested = withscores && c.out.proto() >= 3;
  c.out.Array(withscores && !nested ? items.size() * 2 : items.size());
  for (const ZEntry& e : items) {
    if (nested) c.out.Array(2);
    c.out.Bulk(e.member);
    if (withscores) c.out.Double(e.score);
  }
}

// Redis' getRangeLongFromObjectOrReply: `msg` replaces both error texts when given.
bool ParseRangeLong(Context& c, std::string_view s, int64_t min, int64_t max, int64_t* v,
                    std::string_view msg = {}) {
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
    c.Error("value is out of range, value must between " + Int64ToString(min) + " and " +
            Int64ToString(max));
  return false;
}

// ---- Range parsing ------------------------------------------------------------------------------

// One bound of Redis' zslParseRange: "(" makes it exclusive; strtod must consume everything up
// to the first NUL (so "" is 0, leading spaces pass and "1e400" is inf); NaN is refused.
bool ParseScoreBound(std::string_view arg, double* v, bool* ex) {
  *ex = !arg.empty() && arg[0] == '(';
  if (*ex) arg.remove_prefix(1);
  std::string buf(arg);
  char* end = nullptr;
  *v = strtod(buf.c_str(), &end);
  return *end == '\0' && !std::isnan(*v);
}

bool ParseScoreRange(Context& c, std::string_view min, std::string_view max, ScoreRange* r) {
  if (ParseScoreBound(min, &r->min, &r->minex) && ParseScoreBound(max, &r->max, &r->maxex)) {
    return true;
  }
  c.Error("min or max is not a float");
  return false;
}

// Redis' zslParseLexRangeItem: "+" and "-" alone (up to a NUL), or "[member" / "(member".
bool ParseLexBound(std::string_view arg, LexBound* b) {
  if (arg.empty()) return false;
  bool alone = arg.size() == 1 || arg[1] == '\0';
  switch (arg[0]) {
    case '+':
    case '-':
      if (!alone) return false;
      b->kind = arg[0] == '+' ? LexBound::Kind::kPlusInf : LexBound::Kind::kMinusInf;
      b->ex = true;
      return true;
    case '(':
    case '[':
      b->kind = LexBound::Kind::kValue;
      b->ex = arg[0] == '(';
      b->value = std::string(arg.substr(1));
      return true;
    default:
      return false;
  }
}

bool ParseLexRange(Context& c, std::string_view min, std::string_view max, LexRange* r) {
  if (ParseLexBound(min, &r->min) && ParseLexBound(max, &r->max)) return true;
  c.Error("min or max not valid string range item");
  return false;
}

// A score or lex range as the two predicates Redis' range walks use.
struct Range {
  ZSetValue::Pred gte_min, lte_max;
  bool always_empty = false;
};

Range ScoreRangePreds(const ScoreRange& r) {
  return {[r](std::string_view, double s) { return r.GteMin(s); },
          [r](std::string_view, double s) { return r.LteMax(s); }, r.AlwaysEmpty()};
}

Range LexRangePreds(const LexRange* r) {
  return {[r](std::string_view m, double) { return r->GteMin(m); },
          [r](std::string_view m, double) { return r->LteMax(m); }, r->AlwaysEmpty()};
}

// Redis' zslIsInRange / zslIsInLexRange: the range is not empty, the last element is not below
// it and the first is not above it.
bool IsInRange(const ZSetValue& z, const Range& r) {
  if (r.always_empty || z.Size() == 0) return false;
  ZEntry last = z.At(z.Size() - 1);
  if (!r.gte_min(last.member, last.score)) return false;
  ZEntry first = z.At(0);
  return r.lte_max(first.member, first.score);
}

// Redis' z*FirstInRange / z*FirstInLexRange: rank of the first element in range, or kNone.
size_t FirstInRange(const ZSetValue& z, const Range& r) {
  if (!IsInRange(z, r)) return kNone;
  size_t rank = z.FirstNotBefore([&](std::string_view m, double s) { return !r.gte_min(m, s); });
  if (rank >= z.Size()) return kNone;
  ZEntry e = z.At(rank);
  return r.lte_max(e.member, e.score) ? rank : kNone;
}

// Redis' z*LastInRange / z*LastInLexRange.
size_t LastInRange(const ZSetValue& z, const Range& r) {
  if (!IsInRange(z, r)) return kNone;
  size_t rank = z.LastWithin(r.lte_max);
  if (rank == kNone) return kNone;
  ZEntry e = z.At(rank);
  return r.gte_min(e.member, e.score) ? rank : kNone;
}

// How many elements from `first` on stay within the max (Redis' count/delete walks).
size_t CountFrom(const ZSetValue& z, size_t first, const Range& r) {
  size_t n = 0;
  z.Visit(first, false, [&](std::string_view m, double s) {
    if (!r.lte_max(m, s)) return false;
    n++;
    return true;
  });
  return n;
}

enum class RangeType { kAuto, kRank, kScore, kLex };

// A parsed <min> <max>: ranks, or score or lex bounds with their predicates (which point into
// this object, hence no copies).
struct ParsedRange {
  explicit ParsedRange(RangeType t) : type(t) {}
  ParsedRange(const ParsedRange&) = delete;
  ParsedRange& operator=(const ParsedRange&) = delete;

  RangeType type;
  int64_t start = 0, end = 0;
  ScoreRange score;
  LexRange lex;
  Range preds;
};

// Parses a range of r->type, answering Redis' error for that type on failure.
bool ParseRange(Context& c, std::string_view min, std::string_view max, ParsedRange* r) {
  if (r->type == RangeType::kRank) return c.ParseInt(min, &r->start) && c.ParseInt(max, &r->end);
  if (r->type == RangeType::kScore) {
    if (!ParseScoreRange(c, min, max, &r->score)) return false;
    r->preds = ScoreRangePreds(r->score);
    return true;
  }
  if (!ParseLexRange(c, min, max, &r->lex)) return false;
  r->preds = LexRangePreds(&r->lex);
  return true;
}

// Redis' rank sanitising: negative ranks count from the end, then clamp to the set; the window
// is [first, first + count), empty when start > end or start is past the end.
struct RankWindow {
  size_t first = 0, count = 0;
};

RankWindow ClampRanks(size_t size, int64_t start, int64_t end) {
  int64_t llen = static_cast<int64_t>(size);
  if (start < 0) start += llen;
  if (end < 0) end += llen;
  if (start < 0) start = 0;
  if (start > end || start >= llen) return {};
  if (end >= llen) end = llen - 1;
  return {static_cast<size_t>(start), static_cast<size_t>(end - start + 1)};
}

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

// Redis' zremrangeGenericCommand: the range is parsed before the key is looked up.
void ZremRangeGeneric(Context& c, RangeType type, const char* event) {
  ParsedRange range(type);
  if (!ParseRange(c, c.arg(2), c.arg(3), &range)) return;
  std::string_view key = c.arg(1);
  bool wrongtype;
  Entry* e = LookupWriteZset(c, key, &wrongtype);
  if (wrongtype) return;
  if (!e) {
    c.out.Int(0);
    return;
  }
  ZSetValue* z = Zset(e);
  RankWindow w;
  if (type == RangeType::kRank) {
    w = ClampRanks(z->Size(), range.start, range.end);
  } else if ((w.first = FirstInRange(*z, range.preds)) != kNone) {
    w.count = CountFrom(*z, w.first, range.preds);
  }
  if (w.count) {
    z->RemoveRange(w.first, w.first + w.count);
    c.Changed(key, kNotifyZset, event);
    DeleteIfEmpty(c, key, e);
  }
  c.out.Int(static_cast<int64_t>(w.count));
}

void ZremRangeByRank(Context& c) { ZremRangeGeneric(c, RangeType::kRank, "zremrangebyrank"); }
void ZremRangeByScore(Context& c) { ZremRangeGeneric(c, RangeType::kScore, "zremrangebyscore"); }
void ZremRangeByLex(Context& c) { ZremRangeGeneric(c, RangeType::kLex, "zremrangebylex"); }

// ---- Point reads --------------------------------------------------------------------------------

// A read lookup of a sorted set. Returns false after answering WRONGTYPE.
bool LookupReadZset(Context& c, std::string_view key, ZSetValue** z) {
  bool wrongtype;
  Entry* e = c.LookupReadOfType(key, ObjType::kZSet, &wrongtype);
  *z = e ? Zset(e) : nullptr;
  return !wrongtype;
}

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

void Zcount(Context& c) {
  ScoreRange r;
  if (!ParseScoreRange(c, c.arg(2), c.arg(3), &r)) return;
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(1), &z)) return;
  Range range = ScoreRangePreds(r);
  size_t first = z ? FirstInRange(*z, range) : kNone;
  if (first == kNone) {
    c.out.Int(0);
    return;
  }
  // Scores are ordered, so the ranks of the first and last in range bound the count.
  size_t last = LastInRange(*z, range);
  c.out.Int(last == kNone ? 0 : static_cast<int64_t>(last - first + 1));
}

// Counts as Redis does per encoding: a listpack walks from the first member in range while
// members stay under the max; a skiplist subtracts the ranks of the first and last in range.
// (They differ only for lex ranges over members of different scores.)
void Zlexcount(Context& c) {
  LexRange r;
  if (!ParseLexRange(c, c.arg(2), c.arg(3), &r)) return;
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(1), &z)) return;
  Range range = LexRangePreds(&r);
  size_t first = z ? FirstInRange(*z, range) : kNone;
  int64_t count = 0;
  if (first != kNone && z->is_listpack()) {
    count = static_cast<int64_t>(CountFrom(*z, first, range));
  } else if (first != kNone) {
    count = static_cast<int64_t>(z->Size() - first);
    size_t last = LastInRange(*z, range);
    if (last != kNone) count -= static_cast<int64_t>(z->Size() - last - 1);
  }
  c.out.Int(count);
}

// ---- ZRANGE family ------------------------------------------------------------------------------

enum class Direction { kAuto, kForward, kReverse };

struct RangeOptions {
  RangeType type;
  Direction dir;
  bool withscores = false;
  int64_t offset = 0;
  int64_t limit = -1;  // negative: no limit
};

// Parses the options after <src> <min> <max> (Redis' zrangeGenericCommand step 1).
bool ParseRangeOptions(Context& c, size_t argc_start, bool store, RangeOptions* o) {
  for (size_t j = argc_start + 3; j < c.argc(); j++) {
    size_t left = c.argc() - j - 1;
    std::string_view a = c.arg(j);
    if (!store && EqualsIgnoreCase(a, "withscores")) {
      o->withscores = true;
    } else if (EqualsIgnoreCase(a, "limit") && left >= 2) {
      if (!c.ParseInt(c.arg(j + 1), &o->offset) || !c.ParseInt(c.arg(j + 2), &o->limit)) {
        return false;
      }
      j += 2;
    } else if (o->dir == Direction::kAuto && EqualsIgnoreCase(a, "rev")) {
      o->dir = Direction::kReverse;
    } else if (o->type == RangeType::kAuto && EqualsIgnoreCase(a, "bylex")) {
      o->type = RangeType::kLex;
    } else if (o->type == RangeType::kAuto && EqualsIgnoreCase(a, "byscore")) {
      o->type = RangeType::kScore;
    } else {
      c.Error(OpStatus::kSyntax);
      return false;
    }
  }
  if (o->dir == Direction::kAuto) o->dir = Direction::kForward;
  if (o->type == RangeType::kAuto) o->type = RangeType::kRank;
  if (o->limit != -1 && o->type == RangeType::kRank) {
    c.Error("syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return false;
  }
  if (o->withscores && o->type == RangeType::kLex) {
    c.Error("syntax error, WITHSCORES not supported in combination with BYLEX");
    return false;
  }
  return true;
}

// Redis' genericZrangebyrankCommand: the elements of ranks [start, end] (negative from the end),
// counted from the top when reverse.
std::vector<ZEntry> RangeByRank(const ZSetValue& z, int64_t start, int64_t end, bool reverse) {
  std::vector<ZEntry> items;
  RankWindow w = ClampRanks(z.Size(), start, end);
  if (w.count == 0) return items;
  z.Visit(reverse ? z.Size() - 1 - w.first : w.first, reverse, [&](std::string_view m, double s) {
    items.push_back({m, s});
    return items.size() < w.count;
  });
  return items;
}

// Redis' genericZrangebyscoreCommand / genericZrangebylexCommand: from the first (last, when
// reverse) element in range, skips `offset` elements unchecked, then takes up to `limit` while
// they stay in range. A negative offset skips everything, as Redis' countdown does.
std::vector<ZEntry> RangeByBounds(const ZSetValue& z, const Range& r, const RangeOptions& o) {
  std::vector<ZEntry> items;
  bool reverse = o.dir == Direction::kReverse;
  size_t start = reverse ? LastInRange(z, r) : FirstInRange(z, r);
  if (start == kNone || o.offset < 0) return items;
  int64_t skip = o.offset, limit = o.limit;
  z.Visit(start, reverse, [&](std::string_view m, double s) {
    if (skip > 0) {
      skip--;
      return true;
    }
    if (limit == 0) return false;
    limit--;
    if (reverse ? !r.gte_min(m, s) : !r.lte_max(m, s)) return false;
    items.push_back({m, s});
    return true;
  });
  return items;
}

// ZRANGESTORE's result handler: a listpack grown by inserts (converting as ZADD would), stored
// over dst; an empty result deletes dst.
void StoreRange(Context& c, std::string_view dst, const std::vector<ZEntry>& items) {
  if (items.empty()) {
    c.out.Int(0);
    if (c.ks.Delete(c.session.db, dst)) c.Changed(dst, kNotifyGeneric, "del");
    return;
  }
  auto z = std::make_unique<ZSetValue>();
  for (const ZEntry& e : items) z->Insert(e.member, e.score, c.ks.limits());
  StoreKey(c, dst, std::move(z));
  c.out.Int(static_cast<int64_t>(items.size()));
  c.Changed(dst, kNotifyZset, "zrangestore");
}

// Redis' zrangeGenericCommand, behind ZRANGE, ZRANGESTORE and the older Z[REV]RANGE[BYSCORE|
// BYLEX] commands (which fix the type and direction and so refuse those options).
void ZrangeGeneric(Context& c, size_t argc_start, bool store, RangeType type, Direction dir) {
  RangeOptions o{type, dir};
  if (!ParseRangeOptions(c, argc_start, store, &o)) return;
  bool reverse = o.dir == Direction::kReverse;
  size_t min_idx = argc_start + 1, max_idx = argc_start + 2;
  if (reverse && o.type != RangeType::kRank) std::swap(min_idx, max_idx);  // <max> <min>
  ParsedRange range(o.type);
  if (!ParseRange(c, c.arg(min_idx), c.arg(max_idx), &range)) return;
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(argc_start), &z)) return;
  std::vector<ZEntry> items;
  if (z && o.type == RangeType::kRank)
    items = RangeByRank(*z, range.start, range.end, reverse);
  else if (z)
    items = RangeByBounds(*z, range.preds, o);
  if (store)
    StoreRange(c, c.arg(1), items);
  else
    ReplyEntries(c, items, o.withscores);
}

void Zrange(Context& c) { ZrangeGeneric(c, 1, false, RangeType::kAuto, Direction::kAuto); }
void Zrangestore(Context& c) { ZrangeGeneric(c, 2, true, RangeType::kAuto, Direction::kAuto); }
void Zrevrange(Context& c) { ZrangeGeneric(c, 1, false, RangeType::kRank, Direction::kReverse); }
void ZrangeByScore(Context& c) {
  ZrangeGeneric(c, 1, false, RangeType::kScore, Direction::kForward);
}
void ZrevrangeByScore(Context& c) {
  ZrangeGeneric(c, 1, false, RangeType::kScore, Direction::kReverse);
}
void ZrangeByLex(Context& c) { ZrangeGeneric(c, 1, false, RangeType::kLex, Direction::kForward); }
void ZrevrangeByLex(Context& c) {
  ZrangeGeneric(c, 1, false, RangeType::kLex, Direction::kReverse);
}

// ---- Pops ---------------------------------------------------------------------------------------

// ZPOPMIN/ZPOPMAX key [count]: RESP3 nests the pairs only when a count was given.
void ZpopMinMax(Context& c, bool min) {
  if (c.argc() > 3) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  int64_t count = -1;
  if (c.argc() == 3 &&
      !ParseRangeLong(c, c.arg(2), 0, INT64_MAX, &count, ErrorText(OpStatus::kPositive))) {
    return;
  }
  ZPopShape shape;
  shape.nested = c.out.proto() >= 3 && count != -1;
  ZsetPop(c, c.args.subspan(1, 1), min, count, shape);
}

void Zpopmin(Context& c) { ZpopMinMax(c, true); }
void Zpopmax(Context& c) { ZpopMinMax(c, false); }

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]; propagated as ZPOPMIN/ZPOPMAX key count.
void Zmpop(Context& c) {
  int64_t numkeys;
  if (!ParseRangeLong(c, c.arg(1), 1, INT64_MAX, &numkeys, "numkeys should be greater than 0")) {
    return;
  }
  if (numkeys >= static_cast<int64_t>(c.argc()) - 2) {  // no room for MIN|MAX
    c.Error(OpStatus::kSyntax);
    return;
  }
  size_t where = 2 + static_cast<size_t>(numkeys);
  bool min = EqualsIgnoreCase(c.arg(where), "min");
  if (!min && !EqualsIgnoreCase(c.arg(where), "max")) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  int64_t count = -1;
  for (size_t j = where + 1; j < c.argc(); j++) {
    if (count == -1 && EqualsIgnoreCase(c.arg(j), "count") && j + 1 < c.argc()) {
      if (!ParseRangeLong(c, c.arg(++j), 1, INT64_MAX, &count, "count should be greater than 0")) {
        return;
      }
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  if (count == -1) count = 1;
  ZPopShape shape{.emit_key = true, .nested = true, .nil_when_empty = true};
  ZPopResult r = ZsetPop(c, c.args.subspan(2, static_cast<size_t>(numkeys)), min, count, shape);
  if (r.key_index >= 0) {
    c.rewrite = std::vector<std::string>{
        min ? "ZPOPMIN" : "ZPOPMAX", std::string(c.arg(2 + r.key_index)), Int64ToString(r.popped)};
  }
}

// ---- ZUNION ZINTER ZDIFF and their STORE forms, ZINTERCARD ------------------------------------

enum class SetOp { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

// One input of the set operations: a sorted set, or a plain set whose members score 1.
struct Source {
  const store::Collection* object = nullptr;  // null for a missing key
  const ZSetValue* zset = nullptr;
  std::vector<std::string> members;  // a plain set's members
  std::unordered_set<std::string_view> index;
  double weight = 1;

  size_t size() const { return zset ? zset->Size() : members.size(); }
  bool Find(std::string_view m, double* score) const {
    if (zset) {
      std::optional<double> s = zset->Score(m);
      if (s) *score = *s;
      return s.has_value();
    }
    *score = 1;
    return index.count(m) > 0;
  }
  // Sorted sets are walked from the highest rank down, as Redis' zuiNext does.
  void ForEach(const std::function<void(std::string_view, double)>& fn) const {
    if (zset && zset->Size()) {
      zset->Visit(zset->Size() - 1, true, [&](std::string_view m, double s) {
        fn(m, s);
        return true;
      });
    } else {
      for (const std::string& m : members) fn(m, 1.0);
    }
  }
};

// Looks up the numkeys inputs; false after answering WRONGTYPE.
bool LoadSources(Context& c, size_t first, int64_t n, std::vector<Source>* out) {
  out->resize(static_cast<size_t>(n));
  for (size_t i = 0; i < out->size(); i++) {
    Entry* e = c.LookupRead(c.arg(first + i));
    if (!e) continue;
    ObjType t = e->value.type();
    if (t != ObjType::kZSet && t != ObjType::kSet) {
      c.Error(OpStatus::kWrongType);
      return false;
    }
    Source& s = (*out)[i];
    s.object = e->value.object();
    if (t == ObjType::kZSet) {
      s.zset = Zset(e);
      continue;
    }
    s.object->ForEach([&](std::string_view m, std::string_view) { s.members.emplace_back(m); });
    for (const std::string& m : s.members) s.index.insert(m);
  }
  return true;
}

struct SetOpArgs {
  Aggregate aggregate = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;  // ZINTERCARD: 0 is unlimited
};

// Parses what follows the keys: WEIGHTS and AGGREGATE (not for ZDIFF or ZINTERCARD),
// WITHSCORES (not for the STORE forms), LIMIT (ZINTERCARD only).
bool ParseSetOpArgs(Context& c, size_t j, SetOp op, bool store, bool card, std::vector<Source>* src,
                    SetOpArgs* a) {
  bool scored = op != SetOp::kDiff && !card;
  while (j < c.argc()) {
    size_t remaining = c.argc() - j;
    std::string_view opt = c.arg(j);
    if (scored && remaining >= src->size() + 1 && EqualsIgnoreCase(opt, "weights")) {
      j++;
      for (Source& s : *src) {
        auto w = ParseDouble(c.arg(j++));
        if (!w) {
          c.Error("weight value is not a float");
          return false;
        }
        s.weight = *w;
      }
    } else if (scored && remaining >= 2 && EqualsIgnoreCase(opt, "aggregate")) {
      std::string_view v = c.arg(j + 1);
      if (EqualsIgnoreCase(v, "sum"))
        a->aggregate = Aggregate::kSum;
      else if (EqualsIgnoreCase(v, "min"))
        a->aggregate = Aggregate::kMin;
      else if (EqualsIgnoreCase(v, "max"))
        a->aggregate = Aggregate::kMax;
      else
        break;  // answered below
      j += 2;
    } else if (!store && !card && EqualsIgnoreCase(opt, "withscores")) {
      a->withscores = true;
      j++;
    } else if (card && remaining >= 2 && EqualsIgnoreCase(opt, "limit")) {
      if (!ParseRangeLong(c, c.arg(j + 1), 0, INT64_MAX, &a->limit, "LIMIT can't be negative")) {
        return false;
      }
      j += 2;
    } else {
      break;
    }
  }
  if (j == c.argc()) return true;
  c.Error(OpStatus::kSyntax);
  return false;
}

// Redis' zunionInterAggregate: a SUM of inf and -inf is 0, not NaN.
void AggregateInto(double* target, double v, Aggregate agg) {
  if (agg == Aggregate::kSum) {
    *target += v;
    if (std::isnan(*target)) *target = 0;
  } else if (agg == Aggregate::kMin) {
    *target = std::min(*target, v);
  } else {
    *target = std::max(*target, v);
  }
}

double Weighted(const Source& s, double score) {
  double v = s.weight * score;
  return std::isnan(v) ? 0 : v;
}

using Scored = std::vector<std::pair<std::string, double>>;

// Intersection over sources sorted by size: members of the smallest found in every other.
// With card_limit >= 0 only counts (stopping at a non-zero limit) into *card.
Scored Intersect(const std::vector<Source>& src, Aggregate agg, int64_t card_limit,
                 uint64_t* card) {
  Scored out;
  if (src[0].size() == 0) return out;
  bool stop = false;
  src[0].ForEach([&](std::string_view m, double s0) {
    if (stop) return;
    double score = Weighted(src[0], s0), v;
    for (size_t j = 1; j < src.size(); j++) {
      if (src[j].object == src[0].object)
        v = s0;
      else if (!src[j].Find(m, &v))
        return;
      AggregateInto(&score, src[j].weight * v, agg);
    }
    if (card_limit < 0) {
      out.emplace_back(m, score);
    } else if (++*card == static_cast<uint64_t>(card_limit)) {
      stop = true;
    }
  });
  return out;
}

Scored Unite(const std::vector<Source>& src, Aggregate agg) {
  std::unordered_map<std::string, double> acc;
  for (const Source& s : src) {
    s.ForEach([&](std::string_view m, double score) {
      double v = Weighted(s, score);
      auto [it, inserted] = acc.try_emplace(std::string(m), v);
      if (!inserted) AggregateInto(&it->second, v, agg);
    });
  }
  return Scored(acc.begin(), acc.end());
}

// Members of the first input found in none of the others, with their own scores.
Scored Subtract(const std::vector<Source>& src) {
  Scored out;
  for (size_t j = 1; j < src.size(); j++) {
    if (src[j].object && src[j].object == src[0].object) return out;
  }
  src[0].ForEach([&](std::string_view m, double s) {
    double unused;
    for (size_t j = 1; j < src.size(); j++) {
      if (src[j].Find(m, &unused)) return;
    }
    out.emplace_back(m, s);
  });
  return out;
}

// Answers or stores a set operation's result.
void FinishSetOp(Context& c, std::string_view dst, SetOp op, Scored result, bool withscores) {
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) {
    return store::ZLess(a.second, a.first, b.second, b.first);
  });
  std::vector<ZEntry> items;
  items.reserve(result.size());
  for (const auto& [m, s] : result) items.push_back({m, s});
  if (dst.data() == nullptr) {
    ReplyEntries(c, items, withscores);
    return;
  }
  if (items.empty()) {
    c.out.Int(0);
    if (c.ks.Delete(c.session.db, dst)) c.Changed(dst, kNotifyGeneric, "del");
    return;
  }
  StoreKey(c, dst, ZSetValue::FromSorted(items, c.ks.limits()));
  c.out.Int(static_cast<int64_t>(items.size()));
  const char* event = op == SetOp::kUnion   ? "zunionstore"
                      : op == SetOp::kInter ? "zinterstore"
                                            : "zdiffstore";
  c.Changed(dst, kNotifyZset, event);
}

// Redis' zunionInterDiffGenericCommand. `numkeys_idx` is 1, or 2 for the STORE forms (dst at 1).
void SetOpGeneric(Context& c, size_t numkeys_idx, SetOp op, bool card) {
  int64_t n;
  if (!c.ParseInt(c.arg(numkeys_idx), &n)) return;
  if (n < 1) {
    c.Error("at least 1 input key is needed for '" + std::string(c.spec ? c.spec->name : "") +
            "' command");
    return;
  }
  if (n > static_cast<int64_t>(c.argc() - numkeys_idx - 1)) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  std::vector<Source> src;
  if (!LoadSources(c, numkeys_idx + 1, n, &src)) return;
  bool store = numkeys_idx == 2;
  SetOpArgs a;
  if (!ParseSetOpArgs(c, numkeys_idx + 1 + src.size(), op, store, card, &src, &a)) return;
  if (op != SetOp::kDiff) {
    std::stable_sort(src.begin(), src.end(),
                     [](const Source& x, const Source& y) { return x.size() < y.size(); });
  }
  if (card) {
    uint64_t count = 0;
    Intersect(src, a.aggregate, a.limit, &count);
    c.out.Int(static_cast<int64_t>(count));
    return;
  }
  Scored result = op == SetOp::kUnion   ? Unite(src, a.aggregate)
                  : op == SetOp::kInter ? Intersect(src, a.aggregate, -1, nullptr)
                                        : Subtract(src);
  FinishSetOp(c, store ? c.arg(1) : std::string_view(), op, std::move(result), a.withscores);
}

void Zunion(Context& c) { SetOpGeneric(c, 1, SetOp::kUnion, false); }
void Zinter(Context& c) { SetOpGeneric(c, 1, SetOp::kInter, false); }
void Zdiff(Context& c) { SetOpGeneric(c, 1, SetOp::kDiff, false); }
void Zunionstore(Context& c) { SetOpGeneric(c, 2, SetOp::kUnion, false); }
void Zinterstore(Context& c) { SetOpGeneric(c, 2, SetOp::kInter, false); }
void Zdiffstore(Context& c) { SetOpGeneric(c, 2, SetOp::kDiff, false); }
void Zintercard(Context& c) { SetOpGeneric(c, 1, SetOp::kInter, true); }

// ---- ZRANDMEMBER ZSCAN --------------------------------------------------------------------------

// ZRANDMEMBER key count [WITHSCORES] (Redis' zrandmemberWithCountCommand): a negative count
// samples with repetition; a count covering the set answers all of it (from the top rank down,
// as Redis' iterator walks); otherwise `count` distinct members in random order.
void ZrandmemberWithCount(Context& c, int64_t l, bool withscores) {
  ZSetValue* z;
  if (!LookupReadZset(c, c.arg(1), &z)) return;
  if (!z || l == 0) {
    c.out.EmptyArray();
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

// ---- Shared with the blocking pops --------------------------------------------------------------

namespace {

// The array headers before the popped (member, score) pairs.
void ReplyPopHeader(Context& c, std::string_view key, size_t n, const ZPopShape& shape) {
  if (shape.emit_key && shape.nested) {  // [key, [[m, s], ...]]
    c.out.Array(2);
    c.out.Bulk(key);
    c.out.Array(n);
  } else if (shape.emit_key) {  // [key, m, s]
    c.out.Array(n * 2 + 1);
    c.out.Bulk(key);
  } else {  // [m, s, ...] or [[m, s], ...]
    c.out.Array(shape.nested ? n : n * 2);
  }
}

}  // namespace

ZPopResult ZsetPop(Context& c, std::span<const std::string_view> keys, bool min, int64_t count,
                   const ZPopShape& shape) {
  ZPopResult r;
  Entry* e = nullptr;
  size_t idx = 0;
  for (; idx < keys.size(); idx++) {
    bool wrongtype;
    e = LookupWriteZset(c, keys[idx], &wrongtype);
    if (wrongtype) return r;
    if (e) break;
  }
  if (!e) {
    if (shape.nil_when_empty)
      c.out.NullArray();
    else
      c.out.EmptyArray();
    return r;
  }
  if (count == 0) {
    c.out.EmptyArray();
    return r;
  }
  std::string_view key = keys[idx];
  ZSetValue* z = Zset(e);
  size_t llen = z->Size();
  size_t n = count < 0 ? 1 : static_cast<size_t>(std::min<uint64_t>(count, llen));
  ReplyPopHeader(c, key, n, shape);
  // The popped members are copied out, then removed together.
  Scored popped;
  z->Visit(min ? 0 : llen - 1, !min, [&](std::string_view m, double s) {
    popped.emplace_back(m, s);
    return popped.size() < n;
  });
  z->RemoveRange(min ? 0 : llen - n, min ? n : llen);
  c.Changed(key, kNotifyZset, min ? "zpopmin" : "zpopmax");
  for (const auto& [m, s] : popped) {
    if (shape.nested) c.out.Array(2);
    c.out.Bulk(m);
    c.out.Double(s);
  }
  r.key_index = static_cast<int>(idx);
  r.popped = static_cast<int64_t>(n);
  r.deleted = DeleteIfEmpty(c, key, e);
  return r;
}

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
