// Generic keyspace commands (Redis' db.c and OBJECT from object.c): DEL UNLINK EXISTS TYPE
// RENAME RENAMENX KEYS SCAN RANDOMKEY DBSIZE MOVE SWAPDB COPY FLUSHDB FLUSHALL, TOUCH and OBJECT;
// the EXPIRE and TTL families and PERSIST (expire.c) are in expire.cc, registered from here.
// Replies, errors, notifications and propagation follow Redis 7.0.
#include <malloc.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/context.h"
#include "cmd/keyspace_cmds.h"
#include "cmd/registry.h"
#include "common/strutil.h"

namespace kv::cmd {
namespace keyspace {

// ---- shared helpers ------------------------------------------------------------------------

// Redis' lookupKeyReadWithFlags(LOOKUP_NOTOUCH[|LOOKUP_NONOTIFY]): honours TTLs and counts
// hits/misses but leaves the access clock alone, so TYPE, TTL and OBJECT do not disturb
// OBJECT IDLETIME/FREQ. (Context::LookupRead always touches.)
store::Entry* LookupNoTouch(Context& c, std::string_view key, bool notify_miss) {
  store::Entry* e = c.ks.Lookup(c.session.db, key, c.now_ms);
  if (e) {
    c.stats.keyspace_hits++;
  } else {
    c.stats.keyspace_misses++;
    if (notify_miss) c.Notify(kNotifyKeyMiss, "keymiss", key);
  }
  return e;
}

}  // namespace keyspace

namespace {

using keyspace::LookupNoTouch;

// Redis' getIntFromObjectOrReply: an integer that must fit in an int. `msg`, when given,
// replaces both error texts (SWAPDB's "invalid first DB index").
bool ParseInt32(Context& c, std::string_view s, int* v, std::string_view msg = {}) {
  auto r = ParseInt64(s);
  if (!r || *r < INT_MIN || *r > INT_MAX) {
    if (!msg.empty())
      c.Error(msg);
    else if (!r)
      c.Error(OpStatus::kNotInteger);
    else
      c.Error("value is out of range, value must between -2147483648 and 2147483647");
    return false;
  }
  *v = static_cast<int>(*r);
  return true;
}

// A DB index argument of MOVE and COPY: an int, then a database that exists.
bool ParseDbIndex(Context& c, std::string_view s, int* db) {
  if (!ParseInt32(c, s, db)) return false;
  if (*db < 0 || *db >= c.ks.num_dbs()) {
    c.Error(OpStatus::kDbIndex);
    return false;
  }
  return true;
}

// ---- DEL UNLINK EXISTS TYPE TOUCH --------------------------------------------------------

// DEL and UNLINK: deletion is synchronous for both (no lazy-free thread).
void Del(Context& c) {
  int64_t deleted = 0;
  // UNLINK frees big values on the background thread; DEL too under lazyfree-lazy-user-del.
  bool unlink = c.spec ? c.spec->name == "unlink" : EqualsIgnoreCase(c.arg(0), "unlink");
  bool lazy = unlink || c.ks.lazy_free_settings().user_del;
  for (size_t i = 1; i < c.argc(); i++) {
    std::string_view key = c.arg(i);
    // The lookup expires a stale key first, so it counts as absent (and is propagated as an
    // expiry, not as this DEL).
    if (c.LookupWrite(key) && c.ks.Delete(c.session.db, key, lazy)) {
      c.Changed(key, kNotifyGeneric, "del");
      deleted++;
    }
  }
  c.out.Int(deleted);
}

// A key named twice counts twice, as in Redis.
void Exists(Context& c) {
  int64_t n = 0;
  for (size_t i = 1; i < c.argc(); i++) {
    if (LookupNoTouch(c, c.arg(i))) n++;
  }
  c.out.Int(n);
}

void Type(Context& c) {
  store::Entry* e = LookupNoTouch(c, c.arg(1));
  c.out.Simple(e ? store::TypeName(e->value.type()) : "none");
}

void Touch(Context& c) {
  int64_t n = 0;
  for (size_t i = 1; i < c.argc(); i++) {
    if (c.LookupRead(c.arg(i))) n++;
  }
  c.out.Int(n);
}

// ---- RENAME RENAMENX MOVE COPY -----------------------------------------------------------

// Re-keys `src` (an entry of db) as `to`, which must be absent. Keeps the TTL and the access
// clock, as Redis keeps the same object.
void RekeyEntry(store::Db& db, store::Entry* src, std::string_view to) {
  int64_t expire = db.GetExpire(src);
  store::Entry* old = db.Unlink(src->key());
  store::Entry* e = db.Add(to, std::move(old->value));
  e->access = old->access;
  store::Entry::Destroy(old);
  if (expire >= 0) db.SetExpire(e, expire);
}

void RenameGeneric(Context& c, bool nx) {
  std::string_view from = c.arg(1), to = c.arg(2);
  store::Entry* src = c.LookupWrite(from);
  if (!src) {
    c.Error(OpStatus::kNoSuchKey);
    return;
  }
  // Redis 7.0: renaming a key to itself is a no-op that still requires the key to exist.
  if (from == to) {
    if (nx)
      c.out.Int(0);
    else
      c.out.Ok();
    return;
  }
  if (c.LookupWrite(to)) {
    if (nx) {
      c.out.Int(0);
      return;
    }
    c.ks.ServerDelete(c.session.db, to);  // overwritten silently: no "del" event, as in Redis
  }
  RekeyEntry(c.db(), src, to);
  // One change (Redis' dirty++ once), two modified keys and two events.
  c.Changed(from, kNotifyGeneric, "rename_from");
  c.hooks.KeyModified(c.session.db, to);
  c.Notify(kNotifyGeneric, "rename_to", to);
  if (nx)
    c.out.Int(1);
  else
    c.out.Ok();
}

void Rename(Context& c) { RenameGeneric(c, false); }
void RenameNx(Context& c) { RenameGeneric(c, true); }

void Move(Context& c) {
  if (c.hooks.ClusterMode()) {
    c.Error("MOVE is not allowed in cluster mode");
    return;
  }
  std::string_view key = c.arg(1);
  int dst;
  if (!ParseDbIndex(c, c.arg(2), &dst)) return;
  if (dst == c.session.db) {
    c.Error("source and destination objects are the same");
    return;
  }
  store::Entry* e = c.LookupWrite(key);
  if (!e || c.ks.Lookup(dst, key, c.now_ms)) {
    c.out.Int(0);
    return;
  }
  store::Db& from = c.db();
  int64_t expire = from.GetExpire(e);
  e = from.Unlink(key);
  store::Db& to = c.ks.db(dst);
  to.Adopt(e);  // Adopt drops the TTL slot; the key keeps its TTL in the new db
  if (expire >= 0) to.SetExpire(e, expire);
  c.Changed(key, kNotifyGeneric, "move_from");
  c.hooks.KeyModified(dst, key);
  c.hooks.Notify(kNotifyGeneric, "move_to", key, dst);
  c.out.Int(1);
}

// COPY source destination [DB destination-db] [REPLACE]
void Copy(Context& c) {
  std::string_view key = c.arg(1), newkey = c.arg(2);
  int dst = c.session.db;
  bool replace = false;
  for (size_t i = 3; i < c.argc(); i++) {
    if (EqualsIgnoreCase(c.arg(i), "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(c.arg(i), "db") && i + 1 < c.argc()) {
      if (!ParseDbIndex(c, c.arg(++i), &dst)) return;
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  if (c.hooks.ClusterMode() && (c.session.db != 0 || dst != 0)) {
    c.Error("Copying to another database is not allowed in cluster mode");
    return;
  }
  if (dst == c.session.db && key == newkey) {
    c.Error("source and destination objects are the same");
    return;
  }
  store::Entry* src = c.LookupRead(key);
  if (!src) {
    c.out.Int(0);
    return;
  }
  int64_t expire = c.db().GetExpire(src);
  if (c.ks.Lookup(dst, newkey, c.now_ms)) {
    if (!replace) {
      c.out.Int(0);
      return;
    }
    c.ks.ServerDelete(dst, newkey);  // no "del" event, as in Redis
  }
  store::Entry* e = c.ks.Set(dst, newkey, src->value.Clone());
  if (expire >= 0) c.ks.db(dst).SetExpire(e, expire);
  c.dirty++;
  c.hooks.KeyModified(dst, newkey);
  c.hooks.Notify(kNotifyGeneric, "copy_to", newkey, dst);
  c.out.Int(1);
}

// ---- KEYS SCAN RANDOMKEY DBSIZE ----------------------------------------------------------

// Keys that are logically expired are hidden but not deleted, as Redis' keysCommand does.
void Keys(Context& c) {
  std::string_view pattern = c.arg(1);
  bool all = pattern == "*";
  store::Db& db = c.db();
  std::vector<std::string_view> found;  // views into entries; nothing changes before the reply
  db.table().ForEach([&](store::Entry* e) {
    if ((all || GlobMatch(pattern, e->key())) && !db.IsExpired(e, c.now_ms)) {
      found.push_back(e->key());
    }
  });
  c.out.Array(found.size());
  for (std::string_view k : found) c.out.Bulk(k);
}

struct ScanOptions {
  int64_t count = 10;
  bool has_pattern = false;  // MATCH given, and not the match-all "*"
  std::string_view pattern;
  bool has_type = false;
  std::string_view type;
};

bool ParseScanOptions(Context& c, size_t i, ScanOptions* o) {
  for (; i < c.argc(); i += 2) {
    bool has_value = i + 1 < c.argc();
    std::string_view opt = c.arg(i);
    if (EqualsIgnoreCase(opt, "count") && has_value) {
      if (!c.ParseInt(c.arg(i + 1), &o->count)) return false;
      if (o->count < 1) {
        c.Error(OpStatus::kSyntax);
        return false;
      }
    } else if (EqualsIgnoreCase(opt, "match") && has_value) {
      o->pattern = c.arg(i + 1);
      o->has_pattern = o->pattern != "*";
    } else if (EqualsIgnoreCase(opt, "type") && has_value) {
      o->has_type = true;
      o->type = c.arg(i + 1);
    } else {
      c.Error(OpStatus::kSyntax);
      return false;
    }
  }
  return true;
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
void Scan(Context& c) {
  uint64_t cursor;
  if (!ParseScanCursor(c.arg(1), &cursor)) {
    c.Error(OpStatus::kInvalidCursor);
    return;
  }
  ScanOptions opt;
  if (!ParseScanOptions(c, 2, &opt)) return;
  // COUNT bounds the keys visited (matching or not); at most 10*COUNT bucket steps so that a
  // sparse table cannot make one call long, as in Redis.
  std::vector<std::string> keys;
  int64_t visited = 0;
  auto visit = [&](store::Entry* e) {
    visited++;
    if (!opt.has_pattern || GlobMatch(opt.pattern, e->key())) keys.emplace_back(e->key());
  };
  int64_t max_steps = opt.count > INT64_MAX / 10 ? INT64_MAX : opt.count * 10;
  do {
    cursor = c.db().table().Scan(cursor, visit);
  } while (cursor && max_steps-- && visited < opt.count);
  // Filter after the walk: the lookups may delete expired keys, which Scan forbids.
  std::vector<std::string_view> out;
  for (const std::string& k : keys) {
    store::Entry* e = c.ks.Lookup(c.session.db, k, c.now_ms);
    if (!e) continue;
    if (opt.has_type && !EqualsIgnoreCase(opt.type, store::TypeName(e->value.type()))) continue;
    out.push_back(k);
  }
  c.out.Array(2);
  c.out.Bulk(std::to_string(cursor));
  c.out.Array(out.size());
  for (std::string_view k : out) c.out.Bulk(k);
}

// Expired keys met on the way are deleted (Redis' dbRandomKey). Where expiry does not delete
// (a replica) a db of only expired keys would loop forever, so after 100 misses the stale key
// is returned, as Redis does.
void RandomKey(Context& c) {
  store::Db& db = c.db();
  for (int misses = 0;;) {
    store::Entry* e = db.table().Random();
    if (!e) {
      c.out.Null();
      return;
    }
    if (!db.IsExpired(e, c.now_ms)) {
      c.out.Bulk(e->key());
      return;
    }
    std::string key(e->key());
    if (!c.ks.Lookup(c.session.db, key, c.now_ms) && db.Find(key) && ++misses >= 100) {
      c.out.Bulk(key);
      return;
    }
  }
}

void DbSize(Context& c) { c.out.Int(static_cast<int64_t>(c.db().size())); }

// ---- SWAPDB FLUSHDB FLUSHALL -------------------------------------------------------------

void SwapDb(Context& c) {
  if (c.hooks.ClusterMode()) {
    c.Error("SWAPDB is not allowed in cluster mode");
    return;
  }
  int a, b;
  if (!ParseInt32(c, c.arg(1), &a, "invalid first DB index")) return;
  if (!ParseInt32(c, c.arg(2), &b, "invalid second DB index")) return;
  int n = c.ks.num_dbs();
  if (a < 0 || a >= n || b < 0 || b >= n) {
    c.Error(OpStatus::kDbIndex);
    return;
  }
  // Watchers of either db see their keys change, and clients blocked in one may find their
  // keys in the other.
  c.hooks.DbReplaced(a, b);
  if (b != a) c.hooks.DbReplaced(b, a);
  c.ks.SwapDb(a, b);
  c.dirty++;
  c.out.Ok();
}

// FLUSHDB/FLUSHALL [ASYNC|SYNC]. Both free synchronously (no lazy-free thread).
// FLUSHALL / FLUSHDB [SYNC|ASYNC]: whether to free on the background thread (ASYNC, or neither
// under lazyfree-lazy-user-flush yes). nullopt after a syntax error.
std::optional<bool> ParseFlushArgs(Context& c) {
  if (c.argc() == 1) return c.ks.lazy_free_settings().user_flush;
  if (c.argc() == 2 && EqualsIgnoreCase(c.arg(1), "sync")) return false;
  if (c.argc() == 2 && EqualsIgnoreCase(c.arg(1), "async")) return true;
  c.Error(OpStatus::kSyntax);
  return std::nullopt;
}

// After a sync flush that freed keys, hands glibc's free heap pages back to the OS; otherwise
// RSS stays at its peak (glibc shrinks the heap only from its top, and a freed keyspace leaves
// free pages all over it). Redis 7.0 purges jemalloc at the end of a sync flush for the same
// reason; an ASYNC flush trims on the background freer once it is done. Cost, measured after a
// 1M-key flush: ~5 ms, except the first flush after the keys were first allocated, where glibc
// also coalesces the million freed chunks (~300 ms more, next to ~200-500 ms for the flush).
void ReleaseFreedMemory(size_t freed_keys, bool async) {
  if (freed_keys > 0 && !async) malloc_trim(0);
}

void FlushDb(Context& c) {
  auto async = ParseFlushArgs(c);
  if (!async) return;
  store::Db& db = c.db();
  c.hooks.DbReplaced(c.session.db, -1);
  size_t freed = db.size();
  c.dirty += freed;
  c.ks.FlushDb(c.session.db, *async);
  c.hooks.Flushed();
  ReleaseFreedMemory(freed, *async);
  // Redis forces propagation even when the db was empty; here propagation follows dirty.
  if (c.dirty == 0) c.dirty = 1;
  c.out.Ok();
}

void FlushAll(Context& c) {
  auto async = ParseFlushArgs(c);
  if (!async) return;
  size_t freed = 0;
  for (int i = 0; i < c.ks.num_dbs(); i++) {
    c.hooks.DbReplaced(i, -1);
    freed += c.ks.db(i).size();
  }
  c.dirty += freed;
  c.ks.FlushAll(*async);
  c.hooks.Flushed();
  ReleaseFreedMemory(freed, *async);
  c.dirty++;  // Redis counts the flush itself as one more change
  c.hooks.FlushedAll();
  c.out.Ok();
}

// ---- OBJECT ------------------------------------------------------------------------------

// Redis' objectCommandLookupOrReply: no touch, no keymiss event, null reply when absent.
store::Entry* ObjectLookup(Context& c) {
  store::Entry* e = LookupNoTouch(c, c.arg(2), /*notify_miss=*/false);
  if (!e) c.out.Null();
  return e;
}

void ObjectEncoding(Context& c) {
  if (store::Entry* e = ObjectLookup(c)) c.out.Bulk(e->value.EncodingName());
}

void ObjectFreq(Context& c) {
  store::Entry* e = ObjectLookup(c);
  if (!e) return;
  if (!c.ks.lfu()) {
    c.Error(
        "An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
        "that when switching between policies at runtime LRU and LFU data will take some "
        "time to adjust.");
    return;
  }
  c.out.Int(c.ks.LfuFrequency(e));
}

void ObjectIdleTime(Context& c) {
  store::Entry* e = ObjectLookup(c);
  if (!e) return;
  if (c.ks.lfu()) {
    c.Error(
        "An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to "
        "adjust.");
    return;
  }
  c.out.Int(c.ks.IdleSeconds(e));
}

// Values are never shared here; where Redis would share an integer 0..9999 (as its settings
// are now: Redis decides when it makes the value), OBJ_SHARED_REFCOUNT, as it reports.
void ObjectRefCount(Context& c) {
  store::Entry* e = ObjectLookup(c);
  if (!e) return;
  const store::Value& v = e->value;
  bool shared =
      v.is_int() && v.IntValue() >= 0 && v.IntValue() < 10000 && c.hooks.SharesIntegers();
  c.out.Int(shared ? INT_MAX : 1);
}

void ObjectHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
  };
  c.ReplyHelp(kLines);
}

// The container itself never runs: ResolveCommand dispatches to a subcommand or fails arity.
void ObjectContainer(Context& c) { c.Error(UnknownSubcommand(c.arg(1), "object")); }

// ---- registration ------------------------------------------------------------------------

void RegisterObjectCommand(CommandTable& t) {
  CommandSpec* obj = t.Add({.name = "object",
                            .arity = -2,
                            .handler = ObjectContainer,
                            .group = "keyspace",
                            .summary = "A container for object introspection commands",
                            .since = "2.2.3"});
  auto sub = [&](const char* name, Handler h, const char* summary, const char* since) {
    t.AddSub(obj, {.name = name,
                   .arity = 3,
                   .flags = kReadOnly,
                   .first_key = 2,
                   .last_key = 2,
                   .key_step = 1,
                   .handler = h,
                   .group = "keyspace",
                   .summary = summary,
                   .since = since});
  };
  sub("encoding", ObjectEncoding, "Inspect the internal encoding of a Redis object", "2.2.3");
  sub("freq", ObjectFreq, "Get the logarithmic access frequency counter of a Redis object",
      "4.0.0");
  sub("idletime", ObjectIdleTime, "Get the time since a Redis object was last accessed", "2.2.3");
  sub("refcount", ObjectRefCount, "Get the number of references to the value of the key", "2.2.3");
  t.AddSub(obj, {.name = "help",
                 .arity = 2,
                 .flags = kLoading | kStale,
                 .handler = ObjectHelp,
                 .group = "keyspace",
                 .summary = "Show helpful text about the different subcommands",
                 .since = "6.2.0"});
}

}  // namespace

void RegisterKeyCommands(CommandTable& t) {
  // Spec fields: name, arity, flags, first/last key and step (as Redis 7.0 COMMAND INFO).
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, Handler h,
                 const char* group, const char* summary, const char* since,
                 const char* acl_categories = "") {
    t.Add({.name = name,
           .arity = arity,
           .flags = flags,
           .first_key = first,
           .last_key = last,
           .key_step = first ? 1 : 0,
           .handler = h,
           .group = group,
           .acl_categories = acl_categories,
           .summary = summary,
           .since = since});
  };
  add("del", -2, kWrite, 1, -1, Del, "keyspace", "Delete a key", "1.0.0");
  add("unlink", -2, kWrite | kFast, 1, -1, Del, "keyspace",
      "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non "
      "blocking.",
      "4.0.0");
  add("exists", -2, kReadOnly | kFast, 1, -1, Exists, "keyspace", "Determine if a key exists",
      "1.0.0");
  add("type", 2, kReadOnly | kFast, 1, 1, Type, "keyspace", "Determine the type stored at key",
      "1.0.0");
  add("touch", -2, kReadOnly | kFast, 1, -1, Touch, "keyspace",
      "Alters the last access time of a key(s). Returns the number of existing keys specified.",
      "3.2.1");
  add("rename", 3, kWrite, 1, 2, Rename, "keyspace", "Rename a key", "1.0.0");
  add("renamenx", 3, kWrite | kFast, 1, 2, RenameNx, "keyspace",
      "Rename a key, only if the new key does not exist", "1.0.0");
  add("move", 3, kWrite | kFast, 1, 1, Move, "keyspace", "Move a key to another database", "1.0.0");
  add("copy", -3, kWrite | kDenyOom, 1, 2, Copy, "keyspace", "Copy a key", "6.2.0");
  add("keys", 2, kReadOnly, 0, 0, Keys, "keyspace", "Find all keys matching the given pattern",
      "1.0.0", "keyspace dangerous");
  add("scan", -2, kReadOnly | kTouchesArbitraryKeys, 0, 0, Scan, "keyspace",
      "Incrementally iterate the keys space", "2.8.0");
  add("randomkey", 1, kReadOnly | kTouchesArbitraryKeys, 0, 0, RandomKey, "keyspace",
      "Return a random key from the keyspace", "1.0.0");
  // Server-group commands that Redis files under @keyspace.
  add("dbsize", 1, kReadOnly | kFast, 0, 0, DbSize, "server",
      "Return the number of keys in the selected database", "1.0.0", "keyspace");
  add("swapdb", 3, kWrite | kFast, 0, 0, SwapDb, "server", "Swaps two Redis databases", "4.0.0",
      "keyspace dangerous");
  add("flushdb", -1, kWrite, 0, 0, FlushDb, "server", "Remove all keys from the current database",
      "1.0.0", "keyspace dangerous");
  add("flushall", -1, kWrite, 0, 0, FlushAll, "server", "Remove all keys from all databases",
      "1.0.0", "keyspace dangerous");
  keyspace::RegisterExpireCommands(t);
  RegisterObjectCommand(t);
}

}  // namespace kv::cmd
