// The sorted-set range commands (Redis 7.0 t_zset.c): ZRANGE in all its forms and ZRANGESTORE,
// ZCOUNT, ZLEXCOUNT and ZREMRANGEBY{RANK,SCORE,LEX}. Range searches follow Redis' own algorithms
// so that even ranges Redis leaves loosely defined (lex ranges over mixed scores in a listpack)
// answer the same.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/zset_cmds.h"
#include "common/strutil.h"

namespace kv::cmd::zset {
namespace {

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
    if (c.ks.ServerDelete(c.session.db, dst)) c.Changed(dst, kNotifyGeneric, "del");
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

}  // namespace

void ZremRangeByRank(Context& c) { ZremRangeGeneric(c, RangeType::kRank, "zremrangebyrank"); }
void ZremRangeByScore(Context& c) { ZremRangeGeneric(c, RangeType::kScore, "zremrangebyscore"); }
void ZremRangeByLex(Context& c) { ZremRangeGeneric(c, RangeType::kLex, "zremrangebylex"); }

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

}  // namespace kv::cmd::zset
