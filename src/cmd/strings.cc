// The STRING command family with Redis 7.0 semantics (t_string.c): GET/SET and their variants,
// MGET/MSET, ranges and counters (LCS is in string_lcs.cc). Replies, error texts, keyspace events
// and replication rewrites follow Redis 7.0 exactly; each handler's comment notes the
// non-obvious parts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/context.h"
#include "cmd/string_ops.h"
#include "cmd/registry.h"
#include "common/strutil.h"

namespace kv::cmd {

using store::Entry;
using store::Value;

// A write lookup that insists on a string; answers WRONGTYPE and sets *wrongtype otherwise.
Entry* LookupWriteString(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupWrite(key);
  *wrongtype = e && !e->value.is_string();
  if (*wrongtype) {
    c.Error(OpStatus::kWrongType);
    return nullptr;
  }
  return e;
}

// Redis 7.0's dbAdd fires the "new" event (class n) for every key it creates, before the
// command's own event.
void NotifyNew(Context& c, std::string_view key) { c.Notify(kNotifyNew, "new", key); }

// Redis' setKey: stores `v` at `key`, dropping the TTL unless keep_ttl. `exists` is the result
// of the caller's LookupWrite (which already removed a stale key, reporting its expiry).
Entry* SetKey(Context& c, std::string_view key, Value v, bool keep_ttl, bool exists) {
  Entry* e = c.ks.Set(c.session.db, key, std::move(v), keep_ttl);
  if (!exists) NotifyNew(c, key);
  return e;
}

// Stores `v` at `key`: replaces the value of `e` in place (keeping its TTL, as Redis'
// dbOverwrite does) or adds a new key when `e` is null. Returns the key's entry.
Entry* StoreKeepTtl(Context& c, Entry* e, std::string_view key, Value v) {
  if (e) {
    c.ks.Overwrite(e, std::move(v));
    return e;
  }
  e = c.ks.Set(c.session.db, key, std::move(v));
  NotifyNew(c, key);
  return e;
}

namespace {

using store::Entry;
using store::ObjType;
using store::Value;

// ---- Shared helpers ---------------------------------------------------------------------------

std::vector<std::string> Argv(std::initializer_list<std::string_view> parts) {
  return std::vector<std::string>(parts.begin(), parts.end());
}

void ReplyValue(Context& c, const Value& v) {
  char scratch[24];
  c.out.Bulk(v.Str(scratch));
}

// Redis' getGenericCommand: answers the string at `key` or null. Returns false (having answered
// WRONGTYPE) when the key holds another type, so callers stop before changing anything.
bool ReplyGet(Context& c, std::string_view key) {
  bool wrongtype;
  Entry* e = c.LookupReadOfType(key, ObjType::kString, &wrongtype);
  if (wrongtype) return false;
  if (e)
    ReplyValue(c, e->value);
  else
    c.out.Null();
  return true;
}

std::string_view CommandName(const Context& c) { return c.spec ? c.spec->name : c.arg(0); }

// ---- SET / GETEX option parsing -----------------------------------------------------------------

// Option bits of SET and GETEX (Redis' OBJ_* flags).
enum ExtFlag : uint32_t {
  kSetNx = 1u << 0,
  kSetXx = 1u << 1,
  kEx = 1u << 2,
  kPx = 1u << 3,
  kKeepTtl = 1u << 4,
  kSetGet = 1u << 5,
  kExAt = 1u << 6,
  kPxAt = 1u << 7,
  kPersist = 1u << 8,
};
constexpr uint32_t kAnyExpire = kEx | kPx | kExAt | kPxAt;

enum class ExtCmd { kSet, kGetEx };

struct ExtOption {
  std::string_view name;
  uint32_t flag;
  uint32_t conflicts;  // flags that make this option a syntax error when already given
  bool set_only;       // SET accepts it; GETEX does not
  bool get_only;       // GETEX accepts it; SET does not
  bool takes_arg;      // followed by the expire time
};

// Redis 7.0's parseExtendedStringArgumentsOrReply rules. Repeating an option is allowed (the last
// time given wins); combining conflicting ones is a syntax error.
constexpr ExtOption kExtOptions[] = {
    {"NX", kSetNx, kSetXx, true, false, false},
    {"XX", kSetXx, kSetNx, true, false, false},
    {"GET", kSetGet, 0, true, false, false},
    {"KEEPTTL", kKeepTtl, kPersist | kAnyExpire, true, false, false},
    {"PERSIST", kPersist, kKeepTtl | kAnyExpire, false, true, false},
    {"EX", kEx, kKeepTtl | kPersist | (kAnyExpire & ~kEx), false, false, true},
    {"PX", kPx, kKeepTtl | kPersist | (kAnyExpire & ~kPx), false, false, true},
    {"EXAT", kExAt, kKeepTtl | kPersist | (kAnyExpire & ~kExAt), false, false, true},
    {"PXAT", kPxAt, kKeepTtl | kPersist | (kAnyExpire & ~kPxAt), false, false, true},
};

struct ExtArgs {
  uint32_t flags = 0;
  std::optional<std::string_view> expire;  // the EX/PX/EXAT/PXAT argument, unparsed
};

// Parses the options after SET's value or GETEX's key; answers "syntax error" on failure.
bool ParseExtArgs(Context& c, ExtCmd cmd, ExtArgs* out) {
  for (size_t j = cmd == ExtCmd::kSet ? 3 : 2; j < c.argc(); j++) {
    const ExtOption* match = nullptr;
    for (const ExtOption& o : kExtOptions) {
      if (EqualsIgnoreCase(c.arg(j), o.name)) match = &o;
    }
    bool has_next = j + 1 < c.argc();
    if (!match || (out->flags & match->conflicts) ||
        (match->set_only && cmd != ExtCmd::kSet) || (match->get_only && cmd != ExtCmd::kGetEx) ||
        (match->takes_arg && !has_next)) {
      c.Error(OpStatus::kSyntax);
      return false;
    }
    out->flags |= match->flag;
    if (match->takes_arg) out->expire = c.arg(++j);
  }
  return true;
}

// Redis' getExpireMillisecondsOrReply: turns the EX/PX/EXAT/PXAT argument into an absolute Unix
// time in ms. Zero, negative and overflowing times are "invalid expire time in '<cmd>' command".
bool ExpireToAbsMs(Context& c, std::string_view arg, uint32_t flags, int64_t* when_ms) {
  int64_t v;
  if (!c.ParseInt(arg, &v)) return false;
  bool seconds = flags & (kEx | kExAt);
  bool relative = flags & (kEx | kPx);
  bool bad = v <= 0 || (seconds && v > std::numeric_limits<int64_t>::max() / 1000);
  if (!bad && seconds) v *= 1000;
  if (!bad && relative) bad = __builtin_add_overflow(v, c.now_ms, &v) || v <= 0;
  if (bad) {
    c.Error(InvalidExpireTime(CommandName(c)));
    return false;
  }
  *when_ms = v;
  return true;
}

// ---- GET / SET family ---------------------------------------------------------------------------

void Get(Context& c) { ReplyGet(c, c.arg(1)); }

// SET's argv without its GET options, for propagation (the value at index 2 stays even if it
// reads "get").
std::vector<std::string> ArgvWithoutGet(const Context& c) {
  std::vector<std::string> argv;
  for (size_t j = 0; j < c.argc(); j++) {
    if (j >= 3 && EqualsIgnoreCase(c.arg(j), "GET")) continue;
    argv.emplace_back(c.arg(j));
  }
  return argv;
}

// Redis' setGenericCommand, shared by SET, SETNX, SETEX and PSETEX. `counter_reply` selects
// SETNX's :1/:0 instead of +OK/null. An expire turns the propagated command into
// "SET key value PXAT <abs-ms>"; a time already past is stored and left to lazy expiry.
void SetGeneric(Context& c, uint32_t flags, std::string_view key, std::string_view val,
                std::optional<std::string_view> expire, bool counter_reply) {
  int64_t when = 0;
  if (expire && !ExpireToAbsMs(c, *expire, flags, &when)) return;
  if ((flags & kSetGet) && !ReplyGet(c, key)) return;
  bool found = c.LookupWrite(key) != nullptr;
  if (((flags & kSetNx) && found) || ((flags & kSetXx) && !found)) {
    if (flags & kSetGet) return;  // the old value was the reply
    if (counter_reply) c.out.Int(0);
    else c.out.Null();
    return;
  }
  Entry* e = SetKey(c, key, Value::String(val), flags & kKeepTtl, found);
  c.Changed(key, kNotifyString, "set");
  if (expire) {
    c.db().SetExpire(e, when);
    c.rewrite = Argv({"SET", key, val, "PXAT", Int64ToString(when)});
    c.Notify(kNotifyGeneric, "expire", key);
  } else if (flags & kSetGet) {
    c.rewrite = ArgvWithoutGet(c);
  }
  if (flags & kSetGet) return;
  if (counter_reply) c.out.Int(1);
  else c.out.Ok();
}

void Set(Context& c) {
  ExtArgs a;
  if (!ParseExtArgs(c, ExtCmd::kSet, &a)) return;
  SetGeneric(c, a.flags, c.arg(1), c.arg(2), a.expire, /*counter_reply=*/false);
}

void SetNx(Context& c) {
  SetGeneric(c, kSetNx, c.arg(1), c.arg(2), std::nullopt, /*counter_reply=*/true);
}

// SETEX/PSETEX key ttl value.
void SetEx(Context& c) { SetGeneric(c, kEx, c.arg(1), c.arg(3), c.arg(2), false); }
void PSetEx(Context& c) { SetGeneric(c, kPx, c.arg(1), c.arg(3), c.arg(2), false); }

// GETSET key value: GET then SET (dropping the TTL); propagated as SET.
void GetSet(Context& c) {
  std::string_view key = c.arg(1);
  if (!ReplyGet(c, key)) return;
  SetKey(c, key, Value::String(c.arg(2)), false, c.LookupWrite(key) != nullptr);
  c.Changed(key, kNotifyString, "set");
  c.rewrite = Argv({"SET", key, c.arg(2)});
}

// GETDEL key: propagated as DEL when it deleted something.
void GetDel(Context& c) {
  std::string_view key = c.arg(1);
  if (!ReplyGet(c, key)) return;
  if (!c.ks.Delete(c.session.db, key)) return;
  c.rewrite = Argv({"DEL", key});
  c.Changed(key, kNotifyGeneric, "del");
}

// GETEX key [EX|PX|EXAT|PXAT t|PERSIST]. As in Redis 7.0 the key is looked up before the time is
// validated (a missing key answers null whatever the time). Never propagated as is: an absolute
// time already past deletes the key (DEL), a time sets PEXPIREAT, PERSIST becomes PERSIST.
void GetEx(Context& c) {
  ExtArgs a;
  if (!ParseExtArgs(c, ExtCmd::kGetEx, &a)) return;
  std::string_view key = c.arg(1);
  bool wrongtype;
  Entry* e = c.LookupReadOfType(key, ObjType::kString, &wrongtype);
  if (wrongtype) return;
  if (!e) {
    c.out.Null();
    return;
  }
  int64_t when = 0;
  if (a.expire && !ExpireToAbsMs(c, *a.expire, a.flags, &when)) return;
  ReplyValue(c, e->value);
  if ((a.flags & (kExAt | kPxAt)) && when <= c.now_ms && c.ks.PastTtlDeletes()) {
    bool lazy = c.ks.lazy_free_settings().expire;  // UNLINK under lazyfree-lazy-expire
    c.ks.Delete(c.session.db, key, lazy);
    c.rewrite = Argv({lazy ? "UNLINK" : "DEL", key});
    c.Changed(key, kNotifyGeneric, "del");
  } else if (a.expire) {
    c.db().SetExpire(e, when);
    c.rewrite = Argv({"PEXPIREAT", key, Int64ToString(when)});
    c.Changed(key, kNotifyGeneric, "expire");
  } else if ((a.flags & kPersist) && c.db().RemoveExpire(e)) {
    c.rewrite = Argv({"PERSIST", key});
    c.Changed(key, kNotifyGeneric, "persist");
  }
}

// MGET: keys that are missing or not strings answer null.
void MGet(Context& c) {
  c.out.Array(c.argc() - 1);
  for (size_t j = 1; j < c.argc(); j++) {
    Entry* e = c.LookupRead(c.arg(j));
    if (e && e->value.is_string()) ReplyValue(c, e->value);
    else c.out.Null();
  }
}

// MSET/MSETNX key value [key value ...]: every key is overwritten (TTL dropped); MSETNX sets
// nothing when any key exists.
void MSetGeneric(Context& c, bool nx) {
  if (c.argc() % 2 == 0) {
    c.Error(WrongArity(CommandName(c)));
    return;
  }
  if (nx) {
    for (size_t j = 1; j < c.argc(); j += 2) {
      if (c.LookupWrite(c.arg(j))) {
        c.out.Int(0);
        return;
      }
    }
  }
  for (size_t j = 1; j < c.argc(); j += 2) {
    bool exists = c.LookupWrite(c.arg(j)) != nullptr;
    SetKey(c, c.arg(j), Value::String(c.arg(j + 1)), false, exists);
    c.Changed(c.arg(j), kNotifyString, "set");
  }
  if (nx) c.out.Int(1);
  else c.out.Ok();
}

void MSet(Context& c) { MSetGeneric(c, false); }
void MSetNx(Context& c) { MSetGeneric(c, true); }

// ---- Ranges and lengths -------------------------------------------------------------------------

// APPEND key value: a new key takes the value as SET would (int-encoded when it is one); an
// appended result is raw, even when the tail is empty. The TTL is kept. The string grows in
// place with spare room (Value::GrowRaw), so repeated appends do not copy the whole string.
void Append(Context& c) {
  std::string_view key = c.arg(1);
  std::string_view tail = c.arg(2);
  bool wrongtype;
  Entry* e = LookupWriteString(c, key, &wrongtype);
  if (wrongtype) return;
  size_t total = tail.size();
  if (!e) {
    if (total > Value::kMaxStrLen) {
      c.Error(OpStatus::kStringOverMax);
      return;
    }
    StoreKeepTtl(c, nullptr, key, Value::String(tail));
  } else {
    size_t cur = e->value.StrLen();
    total += cur;
    if (static_cast<int64_t>(total) > c.hooks.MaxBulkLen()) {
      c.Error(OpStatus::kStringTooLong);
      return;
    }
    if (total > Value::kMaxStrLen) {
      c.Error(OpStatus::kStringOverMax);
      return;
    }
    char* buf = e->value.GrowRaw(total);
    if (buf == nullptr) {
      c.Error(OpStatus::kNoMemory);
      return;
    }
    if (!tail.empty()) memcpy(buf + cur, tail.data(), tail.size());
  }
  c.Changed(key, kNotifyString, "append");
  c.out.Int(static_cast<int64_t>(total));
}

void StrLen(Context& c) {
  bool wrongtype;
  Entry* e = c.LookupReadOfType(c.arg(1), ObjType::kString, &wrongtype);
  if (wrongtype) return;
  c.out.Int(e ? static_cast<int64_t>(e->value.StrLen()) : 0);
}

// GETRANGE/SUBSTR key start end: inclusive, negative indexes count from the end, clamped.
void GetRange(Context& c) {
  int64_t start, end;
  if (!c.ParseInt(c.arg(2), &start) || !c.ParseInt(c.arg(3), &end)) return;
  bool wrongtype;
  Entry* e = c.LookupReadOfType(c.arg(1), ObjType::kString, &wrongtype);
  if (wrongtype) return;
  if (!e) {
    c.out.Bulk("");
    return;
  }
  char scratch[24];
  std::string_view str = e->value.Str(scratch);
  int64_t len = static_cast<int64_t>(str.size());
  if (start < 0 && end < 0 && start > end) {
    c.out.Bulk("");
    return;
  }
  if (start < 0) start = std::max<int64_t>(0, len + start);
  if (end < 0) end = std::max<int64_t>(0, len + end);
  if (end >= len) end = len - 1;
  if (start > end || len == 0) c.out.Bulk("");
  else c.out.Bulk(str.substr(start, end - start + 1));
}

// SETRANGE key offset value: zero-pads up to offset; an empty value changes nothing (and creates
// no key) but still answers the length. The result is raw and keeps the TTL.
void SetRange(Context& c) {
  int64_t offset;
  if (!c.ParseInt(c.arg(2), &offset)) return;
  if (offset < 0) {
    c.Error("offset is out of range");
    return;
  }
  std::string_view key = c.arg(1);
  std::string_view patch = c.arg(3);
  bool wrongtype;
  Entry* e = LookupWriteString(c, key, &wrongtype);
  if (wrongtype) return;
  if (patch.empty()) {
    c.out.Int(e ? static_cast<int64_t>(e->value.StrLen()) : 0);
    return;
  }
  // offset + size > max, written so that it cannot overflow.
  if (offset > c.hooks.MaxBulkLen() - static_cast<int64_t>(patch.size())) {
    c.Error(OpStatus::kStringTooLong);
    return;
  }
  // proto-max-bulk-len may allow more than a value holds: refused, never wrapped.
  size_t need = static_cast<size_t>(offset) + patch.size();
  if (need > Value::kMaxStrLen) {
    c.Error(OpStatus::kStringOverMax);
    return;
  }
  // One allocation and one zero fill: a new key gets an exact zeroed buffer (Redis'
  // sdsnewlen(NULL, n)); an existing one grows in place (sdsgrowzero). Memory the allocator
  // refuses is an error reply, and the key is left as it was.
  if (!e) {
    std::optional<Value> zeroed = Value::ZeroedRaw(need);
    if (!zeroed) {
      c.Error(OpStatus::kNoMemory);
      return;
    }
    e = StoreKeepTtl(c, nullptr, key, std::move(*zeroed));
  }
  Value& v = e->value;
  char* buf = v.GrowRaw(std::max(need, v.StrLen()));
  if (buf == nullptr) {
    c.Error(OpStatus::kNoMemory);
    return;
  }
  memcpy(buf + offset, patch.data(), patch.size());
  c.Changed(key, kNotifyString, "setrange");
  c.out.Int(static_cast<int64_t>(v.StrLen()));
}

// ---- Counters -----------------------------------------------------------------------------------

// INCR/DECR/INCRBY/DECRBY: a missing key counts from 0; the TTL is kept.
void IncrDecr(Context& c, int64_t by) {
  std::string_view key = c.arg(1);
  bool wrongtype;
  Entry* e = LookupWriteString(c, key, &wrongtype);
  if (wrongtype) return;
  int64_t cur = 0;
  if (e) {
    char scratch[24];
    if (e->value.is_int()) cur = e->value.IntValue();
    else if (!c.ParseInt(e->value.Str(scratch), &cur)) return;
  }
  int64_t next;
  if (__builtin_add_overflow(cur, by, &next)) {
    c.Error(OpStatus::kOverflow);
    return;
  }
  StoreKeepTtl(c, e, key, Value::Int(next));
  c.Changed(key, kNotifyString, "incrby");
  c.out.Int(next);
}

void Incr(Context& c) { IncrDecr(c, 1); }
void Decr(Context& c) { IncrDecr(c, -1); }

void IncrBy(Context& c) {
  int64_t by;
  if (c.ParseInt(c.arg(2), &by)) IncrDecr(c, by);
}

void DecrBy(Context& c) {
  int64_t by;
  if (!c.ParseInt(c.arg(2), &by)) return;
  if (by == std::numeric_limits<int64_t>::min()) {  // cannot be negated
    c.Error("decrement would overflow");
    return;
  }
  IncrDecr(c, -by);
}

// A string value as a long double (Redis' getLongDoubleFromObject); nullopt when not a number.
std::optional<long double> ValueAsLongDouble(const Value& v) {
  if (v.is_int()) return static_cast<long double>(v.IntValue());
  char scratch[24];
  return ParseLongDouble(v.Str(scratch));
}

// INCRBYFLOAT key increment: long double arithmetic, replied and stored in Redis' human-friendly
// form. Always propagated as "SET key <result> KEEPTTL" so replicas never redo float math.
void IncrByFloat(Context& c) {
  std::string_view key = c.arg(1);
  bool wrongtype;
  Entry* e = LookupWriteString(c, key, &wrongtype);
  if (wrongtype) return;
  std::optional<long double> cur = e ? ValueAsLongDouble(e->value) : 0.0L;
  std::optional<long double> by = ParseLongDouble(c.arg(2));
  if (!cur || !by) {
    c.Error(OpStatus::kNotFloat);
    return;
  }
  long double next = *cur + *by;
  if (std::isnan(next) || std::isinf(next)) {
    c.Error(OpStatus::kNanOrInf);
    return;
  }
  std::string text = LongDoubleToString(next);
  StoreKeepTtl(c, e, key, Value::Embstr(text));
  c.Changed(key, kNotifyString, "incrbyfloat");
  c.out.Bulk(text);
  c.rewrite = Argv({"SET", key, text, "KEEPTTL"});
}
}  // namespace

// Arity, flags and key positions are those Redis 7.0's COMMAND INFO reports.
void RegisterStringCommands(CommandTable& t) {
  const uint32_t kW = kWrite | kDenyOom;
  static const CommandRow kRows[] = {
      {"get", 2, kReadOnly | kFast, 1, 1, 1, Get, "Get the value of a key", "1.0.0"},
      {"set", -3, kW, 1, 1, 1, Set, "Set the string value of a key", "1.0.0"},
      {"setnx", 3, kW | kFast, 1, 1, 1, SetNx,
       "Set the value of a key, only if the key does not exist", "1.0.0"},
      {"setex", 4, kW, 1, 1, 1, SetEx, "Set the value and expiration of a key", "2.0.0"},
      {"psetex", 4, kW, 1, 1, 1, PSetEx,
       "Set the value and expiration in milliseconds of a key", "2.6.0"},
      {"mget", -2, kReadOnly | kFast, 1, -1, 1, MGet, "Get the values of all the given keys",
       "1.0.0"},
      {"mset", -3, kW, 1, -1, 2, MSet, "Set multiple keys to multiple values", "1.0.1"},
      {"msetnx", -3, kW, 1, -1, 2, MSetNx,
       "Set multiple keys to multiple values, only if none of the keys exist", "1.0.1"},
      {"getset", 3, kW | kFast, 1, 1, 1, GetSet,
       "Set the string value of a key and return its old value", "1.0.0"},
      {"getdel", 2, kWrite | kFast, 1, 1, 1, GetDel, "Get the value of a key and delete the key",
       "6.2.0"},
      {"getex", -2, kWrite | kFast, 1, 1, 1, GetEx,
       "Get the value of a key and optionally set its expiration", "6.2.0"},
      {"append", 3, kW | kFast, 1, 1, 1, Append, "Append a value to a key", "2.0.0"},
      {"strlen", 2, kReadOnly | kFast, 1, 1, 1, StrLen,
       "Get the length of the value stored in a key", "2.2.0"},
      {"getrange", 4, kReadOnly, 1, 1, 1, GetRange,
       "Get a substring of the string stored at a key", "2.4.0"},
      {"substr", 4, kReadOnly, 1, 1, 1, GetRange, "Get a substring of the string stored at a key",
       "1.0.0"},
      {"setrange", 4, kW, 1, 1, 1, SetRange,
       "Overwrite part of a string at key starting at the specified offset", "2.2.0"},
      {"incr", 2, kW | kFast, 1, 1, 1, Incr, "Increment the integer value of a key by one",
       "1.0.0"},
      {"decr", 2, kW | kFast, 1, 1, 1, Decr, "Decrement the integer value of a key by one",
       "1.0.0"},
      {"incrby", 3, kW | kFast, 1, 1, 1, IncrBy,
       "Increment the integer value of a key by the given amount", "1.0.0"},
      {"decrby", 3, kW | kFast, 1, 1, 1, DecrBy,
       "Decrement the integer value of a key by the given number", "1.0.0"},
      {"incrbyfloat", 3, kW | kFast, 1, 1, 1, IncrByFloat,
       "Increment the float value of a key by the given amount", "2.6.0"},
      {"lcs", -3, kReadOnly, 1, 2, 1, Lcs, "Find longest common substring", "7.0.0"},
  };
  AddRows(t, kRows, "string");
}

}  // namespace kv::cmd
