// The HASH command family with Redis 7.0 semantics (t_hash.c): HSET HSETNX HMSET HGET HMGET
// HDEL HLEN HEXISTS HSTRLEN HGETALL HKEYS HVALS HINCRBY HINCRBYFLOAT HSCAN HRANDFIELD. Replies
// (RESP2 and RESP3), error texts, the order of argument checks, keyspace events and replication
// rewrites follow Redis 7.0; encodings and conversions are store::HashValue's.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cmd/context.h"
#include "cmd/registry.h"
#include "common/hash.h"
#include "common/strutil.h"
#include "store/hash_type.h"

namespace kv::cmd {
namespace {

using store::Entry;
using store::HashValue;
using store::ObjType;
using store::Value;

std::string_view CommandName(const Context& c) { return c.spec ? c.spec->name : c.arg(0); }

// Redis' lookupKeyReadOrReply + checkType: the hash at `key`, or null when it is missing or
// (having answered WRONGTYPE) of another type; *wrongtype tells the two apart.
HashValue* LookupRead(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupReadOfType(key, ObjType::kHash, wrongtype);
  return e ? e->value.As<HashValue>() : nullptr;
}

// Redis' lookupKeyWrite + checkType.
HashValue* LookupWrite(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupWrite(key);
  *wrongtype = e && e->value.type() != ObjType::kHash;
  if (*wrongtype) c.Error(OpStatus::kWrongType);
  return e && !*wrongtype ? e->value.As<HashValue>() : nullptr;
}

// Redis' hashTypeLookupWriteOrCreate: the hash at `key`, created empty when missing (dbAdd, which
// fires "new"); null, having answered WRONGTYPE, when the key holds another type.
HashValue* LookupOrCreate(Context& c, std::string_view key) {
  bool wrongtype;
  HashValue* h = LookupWrite(c, key, &wrongtype);
  if (h || wrongtype) return h;
  Entry* e =
      c.ks.Set(c.session.db, key, Value::Object(ObjType::kHash, std::make_unique<HashValue>()));
  c.Notify(kNotifyNew, "new", key);
  return e->value.As<HashValue>();
}

// ---- Setting fields ----------------------------------------------------------------------------

// HSET key field value [field value ...] answers the number of new fields; HMSET answers OK.
// Arity is checked before the lookup, so an odd count answers the arity error on any key.
void HSetGeneric(Context& c, bool hmset) {
  if (c.argc() % 2 == 1) {
    c.Error(WrongArity(CommandName(c)));
    return;
  }
  std::string_view key = c.arg(1);
  HashValue* h = LookupOrCreate(c, key);
  if (!h) return;
  const store::EncodingLimits& limits = c.ks.limits();
  h->PrepareForInsert(c.args.subspan(2), limits);
  int64_t created = 0;
  for (size_t j = 2; j < c.argc(); j += 2) created += h->Set(c.arg(j), c.arg(j + 1), limits);
  if (hmset) c.out.Ok();
  else c.out.Int(created);
  c.Changed(key, kNotifyHash, "hset");
  c.dirty += (c.argc() - 2) / 2 - 1;  // Redis counts one change per pair
}

void HSet(Context& c) { HSetGeneric(c, false); }
void HMSet(Context& c) { HSetGeneric(c, true); }

// HSETNX key field value: the key is created (empty) before the field is checked, as in Redis;
// it cannot stay empty since a missing key has no field.
void HSetNx(Context& c) {
  std::string_view key = c.arg(1);
  HashValue* h = LookupOrCreate(c, key);
  if (!h) return;
  if (h->Exists(c.arg(2))) {
    c.out.Int(0);
    return;
  }
  h->PrepareForInsert(c.args.subspan(2, 2), c.ks.limits());
  h->Set(c.arg(2), c.arg(3), c.ks.limits());
  c.out.Int(1);
  c.Changed(key, kNotifyHash, "hset");
}

// HINCRBY key field increment. The increment is parsed before the lookup; a missing field
// counts from 0.
void HIncrBy(Context& c) {
  int64_t incr;
  if (!c.ParseInt(c.arg(3), &incr)) return;
  std::string_view key = c.arg(1);
  HashValue* h = LookupOrCreate(c, key);
  if (!h) return;
  int64_t value = 0;
  if (std::optional<std::string_view> cur = h->Get(c.arg(2))) {
    std::optional<int64_t> v = ParseInt64(*cur);
    if (!v) {
      c.Error("hash value is not an integer");
      return;
    }
    value = *v;
  }
  if (__builtin_add_overflow(value, incr, &value)) {
    c.Error(OpStatus::kOverflow);
    return;
  }
  h->Set(c.arg(2), Int64ToString(value), c.ks.limits());
  c.out.Int(value);
  c.Changed(key, kNotifyHash, "hincrby");
}

// HINCRBYFLOAT key field increment: long double arithmetic, stored and answered in Redis'
// human-friendly form. An infinite increment is refused before the lookup. Propagated as
// "HSET key field <result>" so replicas never redo float math.
void HIncrByFloat(Context& c) {
  std::optional<long double> incr = ParseLongDouble(c.arg(3));
  if (!incr) {
    c.Error(OpStatus::kNotFloat);
    return;
  }
  if (std::isnan(*incr) || std::isinf(*incr)) {
    c.Error("value is NaN or Infinity");
    return;
  }
  std::string_view key = c.arg(1);
  HashValue* h = LookupOrCreate(c, key);
  if (!h) return;
  long double value = 0;
  if (std::optional<std::string_view> cur = h->Get(c.arg(2))) {
    std::optional<long double> v = ParseLongDouble(*cur);
    if (!v) {
      c.Error("hash value is not a float");
      return;
    }
    value = *v;
  }
  value += *incr;
  if (std::isnan(value) || std::isinf(value)) {
    c.Error(OpStatus::kNanOrInf);
    return;
  }
  std::string text = LongDoubleToString(value);
  h->Set(c.arg(2), text, c.ks.limits());
  c.out.Bulk(text);
  c.Changed(key, kNotifyHash, "hincrbyfloat");
  c.rewrite = std::vector<std::string>{"HSET", std::string(key), std::string(c.arg(2)), text};
}

// HDEL key field [field ...]: the key goes when its last field does ("hdel", then "del").
void HDel(Context& c) {
  std::string_view key = c.arg(1);
  bool wrongtype;
  HashValue* h = LookupWrite(c, key, &wrongtype);
  if (wrongtype) return;
  int64_t deleted = 0;
  bool key_removed = false;
  for (size_t j = 2; h && j < c.argc(); j++) {
    if (!h->Delete(c.arg(j))) continue;
    deleted++;
    if (h->Size() == 0) {
      c.ks.Delete(c.session.db, key);
      key_removed = true;
      break;
    }
  }
  if (deleted) {
    c.Changed(key, kNotifyHash, "hdel");
    if (key_removed) c.Notify(kNotifyGeneric, "del", key);
    c.dirty += deleted - 1;
  }
  c.out.Int(deleted);
}

// ---- Reading fields ----------------------------------------------------------------------------

void HGet(Context& c) {
  bool wrongtype;
  HashValue* h = LookupRead(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  std::optional<std::string_view> v = h ? h->Get(c.arg(2)) : std::nullopt;
  if (v) c.out.Bulk(*v);
  else c.out.Null();
}

// HMGET key field [field ...]: a missing key is an empty hash (all nulls).
void HMGet(Context& c) {
  bool wrongtype;
  HashValue* h = LookupRead(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  c.out.Array(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++) {
    std::optional<std::string_view> v = h ? h->Get(c.arg(j)) : std::nullopt;
    if (v) c.out.Bulk(*v);
    else c.out.Null();
  }
}

void HLen(Context& c) {
  bool wrongtype;
  HashValue* h = LookupRead(c, c.arg(1), &wrongtype);
  if (!wrongtype) c.out.Int(h ? static_cast<int64_t>(h->Size()) : 0);
}

void HExists(Context& c) {
  bool wrongtype;
  HashValue* h = LookupRead(c, c.arg(1), &wrongtype);
  if (!wrongtype) c.out.Int(h && h->Exists(c.arg(2)) ? 1 : 0);
}

void HStrLen(Context& c) {
  bool wrongtype;
  HashValue* h = LookupRead(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  std::optional<std::string_view> v = h ? h->Get(c.arg(2)) : std::nullopt;
  c.out.Int(v ? static_cast<int64_t>(v->size()) : 0);
}

enum GetAllWhat { kFields = 1, kValues = 2 };

// HGETALL answers a map (RESP3 %, RESP2 flat pairs); HKEYS and HVALS a flat array. The listpack
// answers in insertion order, the hashtable in table order.
void GetAllGeneric(Context& c, int what) {
  bool wrongtype;
  HashValue* h = LookupRead(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  bool both = what == (kFields | kValues);
  size_t n = h ? h->Size() : 0;
  if (both) c.out.Map(n);
  else c.out.Array(n);
  if (!h) return;
  h->ForEach([&](std::string_view f, std::string_view v) {
    if (what & kFields) c.out.Bulk(f);
    if (what & kValues) c.out.Bulk(v);
  });
}

void HGetAll(Context& c) { GetAllGeneric(c, kFields | kValues); }
void HKeys(Context& c) { GetAllGeneric(c, kFields); }
void HVals(Context& c) { GetAllGeneric(c, kValues); }

// ---- HSCAN -------------------------------------------------------------------------------------

// HSCAN key cursor [MATCH pattern] [COUNT count]. The cursor is checked first, then the key, then
// the options (a missing key answers an empty scan whatever they are). A listpack answers all of
// itself with cursor 0. For a hashtable COUNT bounds the fields visited, with at most 20*COUNT
// bucket steps (Redis doubles COUNT for key/value pairs, then allows ten steps per element).
// MATCH filters fields after the walk; a matching field comes with its value.
void HScan(Context& c) {
  uint64_t cursor;
  if (!ParseScanCursor(c.arg(2), &cursor)) {
    c.Error(OpStatus::kInvalidCursor);
    return;
  }
  bool wrongtype;
  HashValue* h = LookupRead(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  Context::CollectionScanOptions opt;
  if (h && !c.ParseCollectionScanOptions(&opt)) return;
  std::vector<HashValue::Pair> found;
  auto visit = [&](std::string_view f, std::string_view v) {
    if (!opt.use_pattern || GlobMatch(opt.pattern, f)) found.emplace_back(f, v);
  };
  uint64_t next = 0;
  if (h && h->is_listpack()) {
    h->ForEach(visit);
  } else if (h) {
    int64_t steps = opt.count > INT64_MAX / 20 ? INT64_MAX : opt.count * 20;
    size_t visited = 0;
    next = cursor;
    do {
      next = h->Scan(next, [&](std::string_view f, std::string_view v) {
        visited++;
        visit(f, v);
      });
    } while (next && steps-- && visited < static_cast<uint64_t>(opt.count));
  }
  c.out.Array(2);
  c.out.Bulk(std::to_string(next));
  c.out.Array(found.size() * 2);
  for (const auto& [f, v] : found) {
    c.out.Bulk(f);
    c.out.Bulk(v);
  }
}

// ---- HRANDFIELD --------------------------------------------------------------------------------

// Writes one HRANDFIELD element: the field, or with values a [field, value] pair (RESP3) or the
// two flat (RESP2).
void ReplyRandField(Context& c, bool withvalues, std::string_view f, std::string_view v) {
  if (withvalues && c.out.proto() >= 3) c.out.Array(2);
  c.out.Bulk(f);
  if (withvalues) c.out.Bulk(v);
}

void ReplyRandLen(Context& c, bool withvalues, uint64_t n) {
  c.out.Array(withvalues && c.out.proto() < 3 ? n * 2 : n);
}

// `count` distinct random entries of a hash with more than `count` fields. Few to drop: drop
// random ones from a copy. Few to keep: the listpack samples in order (Redis'
// lpRandomPairsUnique); the hashtable draws until it has enough distinct fields.
void ReplyUniqueRandom(Context& c, HashValue* h, uint64_t count, bool withvalues) {
  if (count * 3 > h->Size() || h->is_listpack()) {
    std::vector<HashValue::Pair> all = h->Entries();
    if (count * 3 > all.size()) {
      while (all.size() > count) {
        std::swap(all[RandomBelow(all.size())], all.back());
        all.pop_back();
      }
      for (const auto& [f, v] : all) ReplyRandField(c, withvalues, f, v);
      return;
    }
    uint64_t need = count;
    for (size_t i = 0; i < all.size() && need > 0; i++) {
      if (RandomBelow(all.size() - i) >= need) continue;
      need--;
      ReplyRandField(c, withvalues, all[i].first, all[i].second);
    }
    return;
  }
  std::unordered_set<std::string_view> picked;
  while (picked.size() < count) {
    auto [f, v] = h->RandomEntry();
    if (picked.insert(f).second) ReplyRandField(c, withvalues, f, v);
  }
}

// Redis' hrandfieldWithCountCommand. A negative count may repeat fields and answers exactly
// -count of them (at most kMaxRandomRepeats); a positive one answers min(count, size) distinct
// fields.
void HRandFieldWithCount(Context& c, int64_t l, bool withvalues) {
  bool wrongtype;
  HashValue* h = LookupRead(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  uint64_t count = l >= 0 ? static_cast<uint64_t>(l) : static_cast<uint64_t>(-l);
  if (!h || count == 0) {
    c.out.EmptyArray();
    return;
  }
  if (l < -kMaxRandomRepeats) {
    c.Error(CountOutOfRange(-kMaxRandomRepeats, withvalues ? INT64_MAX / 2 : INT64_MAX));
    return;
  }
  uint64_t size = h->Size();
  if (l < 0 || count == 1) {
    ReplyRandLen(c, withvalues, count);
    if (h->is_listpack()) {  // index a snapshot: walking the listpack per pick is O(size)
      std::vector<HashValue::Pair> all = h->Entries();
      while (count--) {
        const auto& [f, v] = all[RandomBelow(all.size())];
        ReplyRandField(c, withvalues, f, v);
      }
    } else {
      while (count--) {
        auto [f, v] = h->RandomEntry();
        ReplyRandField(c, withvalues, f, v);
      }
    }
    return;
  }
  ReplyRandLen(c, withvalues, std::min(count, size));
  if (count >= size) {
    h->ForEach([&](std::string_view f, std::string_view v) {
      ReplyRandField(c, withvalues, f, v);
    });
    return;
  }
  ReplyUniqueRandom(c, h, count, withvalues);
}

// HRANDFIELD key [count [WITHVALUES]]. The count and the options are checked before the key.
void HRandField(Context& c) {
  if (c.argc() >= 3) {
    int64_t l;
    if (!c.ParseInt(c.arg(2), &l)) return;
    if (l == std::numeric_limits<int64_t>::min()) {
      c.Error(CountOutOfRange(-INT64_MAX, INT64_MAX));
      return;
    }
    if (c.argc() > 4 || (c.argc() == 4 && !EqualsIgnoreCase(c.arg(3), "withvalues"))) {
      c.Error(OpStatus::kSyntax);
      return;
    }
    bool withvalues = c.argc() == 4;
    constexpr int64_t kHalf = std::numeric_limits<int64_t>::max() / 2;
    if (withvalues && (l < -kHalf || l > kHalf)) {
      c.Error("value is out of range");  // the reply length (2 * count) must fit
      return;
    }
    HRandFieldWithCount(c, l, withvalues);
    return;
  }
  bool wrongtype;
  HashValue* h = LookupRead(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  if (h) c.out.Bulk(h->RandomEntry().first);
  else c.out.Null();
}

}  // namespace

// Arity, flags and key positions are those Redis 7.0's COMMAND INFO reports.
void RegisterHashCommands(CommandTable& t) {
  struct Row {
    const char* name;
    int arity;
    uint32_t flags;
    Handler handler;
    const char* summary;
    const char* since;
  };
  const uint32_t kW = kWrite | kDenyOom;
  static const Row kRows[] = {
      {"hset", -4, kW | kFast, HSet, "Set the string value of a hash field", "2.0.0"},
      {"hsetnx", 4, kW | kFast, HSetNx,
       "Set the value of a hash field, only if the field does not exist", "2.0.0"},
      {"hmset", -4, kW | kFast, HMSet, "Set multiple hash fields to multiple values", "2.0.0"},
      {"hget", 3, kReadOnly | kFast, HGet, "Get the value of a hash field", "2.0.0"},
      {"hmget", -3, kReadOnly | kFast, HMGet, "Get the values of all the given hash fields",
       "2.0.0"},
      {"hdel", -3, kWrite | kFast, HDel, "Delete one or more hash fields", "2.0.0"},
      {"hlen", 2, kReadOnly | kFast, HLen, "Get the number of fields in a hash", "2.0.0"},
      {"hexists", 3, kReadOnly | kFast, HExists, "Determine if a hash field exists", "2.0.0"},
      {"hstrlen", 3, kReadOnly | kFast, HStrLen,
       "Get the length of the value of a hash field", "3.2.0"},
      {"hgetall", 2, kReadOnly, HGetAll, "Get all the fields and values in a hash", "2.0.0"},
      {"hkeys", 2, kReadOnly, HKeys, "Get all the fields in a hash", "2.0.0"},
      {"hvals", 2, kReadOnly, HVals, "Get all the values in a hash", "2.0.0"},
      {"hincrby", 4, kW | kFast, HIncrBy,
       "Increment the integer value of a hash field by the given number", "2.0.0"},
      {"hincrbyfloat", 4, kW | kFast, HIncrByFloat,
       "Increment the float value of a hash field by the given amount", "2.6.0"},
      {"hscan", -3, kReadOnly, HScan, "Incrementally iterate hash fields and associated values",
       "2.8.0"},
      {"hrandfield", -2, kReadOnly, HRandField, "Get one or multiple random fields from a hash",
       "6.2.0"},
  };
  for (const Row& r : kRows) {
    CommandSpec spec;  // field by field: designated initializers warn about the rest
    spec.name = r.name;
    spec.arity = r.arity;
    spec.flags = r.flags;
    spec.first_key = 1;
    spec.last_key = 1;
    spec.key_step = 1;
    spec.handler = r.handler;
    spec.group = "hash";
    spec.summary = r.summary;
    spec.since = r.since;
    t.Add(std::move(spec));
  }
}

}  // namespace kv::cmd
