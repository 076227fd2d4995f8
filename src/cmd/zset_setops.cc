// ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD (Redis 7.0
// zunionInterDiffGenericCommand): sources may be sorted sets or plain sets (score 1), with
// WEIGHTS, AGGREGATE, WITHSCORES and LIMIT as Redis parses them.
#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cmd/command.h"
#include "cmd/zset_cmds.h"
#include "common/strutil.h"

namespace kv::cmd::zset {
namespace {

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
    if (c.ks.ServerDelete(c.session.db, dst)) c.Changed(dst, kNotifyGeneric, "del");
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

}  // namespace

void Zunion(Context& c) { SetOpGeneric(c, 1, SetOp::kUnion, false); }
void Zinter(Context& c) { SetOpGeneric(c, 1, SetOp::kInter, false); }
void Zdiff(Context& c) { SetOpGeneric(c, 1, SetOp::kDiff, false); }
void Zunionstore(Context& c) { SetOpGeneric(c, 2, SetOp::kUnion, false); }
void Zinterstore(Context& c) { SetOpGeneric(c, 2, SetOp::kInter, false); }
void Zdiffstore(Context& c) { SetOpGeneric(c, 2, SetOp::kDiff, false); }
void Zintercard(Context& c) { SetOpGeneric(c, 1, SetOp::kInter, true); }

}  // namespace kv::cmd::zset
