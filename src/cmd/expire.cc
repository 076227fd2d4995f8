// The EXPIRE and TTL families and PERSIST (Redis 7.0 expire.c): EXPIRE PEXPIRE EXPIREAT PEXPIREAT
// TTL PTTL EXPIRETIME PEXPIRETIME PERSIST. keys.cc registers them, after FLUSHALL and before
// OBJECT. Replies, errors, notifications and propagation follow Redis 7.0.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/command.h"
#include "cmd/context.h"
#include "cmd/keyspace_cmds.h"
#include "common/strutil.h"

namespace kv::cmd::keyspace {
namespace {

// ---- EXPIRE PEXPIRE EXPIREAT PEXPIREAT ---------------------------------------------------

enum ExpireFlag : int { kExpireNx = 1, kExpireXx = 2, kExpireGt = 4, kExpireLt = 8 };

bool ParseExpireFlags(Context& c, int* flags) {
  for (size_t i = 3; i < c.argc(); i++) {
    std::string_view opt = c.arg(i);
    if (EqualsIgnoreCase(opt, "nx"))
      *flags |= kExpireNx;
    else if (EqualsIgnoreCase(opt, "xx"))
      *flags |= kExpireXx;
    else if (EqualsIgnoreCase(opt, "gt"))
      *flags |= kExpireGt;
    else if (EqualsIgnoreCase(opt, "lt"))
      *flags |= kExpireLt;
    else {
      // Redis formats it with %s, which stops at a NUL byte.
      c.Error("Unsupported option " + std::string(opt.substr(0, opt.find('\0'))));
      return false;
    }
  }
  if ((*flags & kExpireNx) && (*flags & (kExpireXx | kExpireGt | kExpireLt))) {
    c.Error("NX and XX, GT or LT options at the same time are not compatible");
    return false;
  }
  if ((*flags & kExpireGt) && (*flags & kExpireLt)) {
    c.Error("GT and LT options at the same time are not compatible");
    return false;
  }
  return true;
}

// Whether NX/XX/GT/LT allow replacing expiry `current` (-1: none, i.e. infinite) by `when`.
bool ExpireAllowed(int flags, int64_t current, int64_t when) {
  if ((flags & kExpireNx) && current != -1) return false;
  if ((flags & kExpireXx) && current == -1) return false;
  if ((flags & kExpireGt) && (current == -1 || when <= current)) return false;
  if ((flags & kExpireLt) && current != -1 && when >= current) return false;
  return true;
}

// `basetime` is now for the relative forms and 0 for the AT forms; `seconds` says the unit of
// the argument. Replicates as PEXPIREAT <absolute ms> (options kept), or DEL when the time is
// already past.
void ExpireGeneric(Context& c, int64_t basetime, bool seconds) {
  std::string_view key = c.arg(1);
  int flags = 0;
  if (!ParseExpireFlags(c, &flags)) return;
  int64_t when;
  if (!c.ParseInt(c.arg(2), &when)) return;
  // Negative times are allowed (they delete); only overflow is an error.
  if (seconds && (when > INT64_MAX / 1000 || when < INT64_MIN / 1000)) {
    c.Error(InvalidExpireTime(c.spec->name));
    return;
  }
  if (seconds) when *= 1000;
  if (when > INT64_MAX - basetime) {
    c.Error(InvalidExpireTime(c.spec->name));
    return;
  }
  when += basetime;
  store::Entry* e = c.LookupWrite(key);
  if (!e || !ExpireAllowed(flags, c.db().GetExpire(e), when)) {
    c.out.Int(0);
    return;
  }
  if (when <= c.now_ms && c.ks.PastTtlDeletes()) {
    // Under lazyfree-lazy-expire freed in the background and propagated as UNLINK, as in Redis.
    bool lazy = c.ks.lazy_free_settings().expire;
    c.ks.Delete(c.session.db, key, lazy);
    c.rewrite = std::vector<std::string>{lazy ? "UNLINK" : "DEL", std::string(key)};
    c.Changed(key, kNotifyGeneric, "del");
    c.out.Int(1);
    return;
  }
  c.db().SetExpire(e, when);
  if (basetime != 0 || seconds) {
    std::vector<std::string> argv(c.args.begin(), c.args.end());
    argv[0] = "PEXPIREAT";
    argv[2] = std::to_string(when);
    c.rewrite = std::move(argv);
  }
  c.Changed(key, kNotifyGeneric, "expire");
  c.out.Int(1);
}

void Expire(Context& c) { ExpireGeneric(c, c.now_ms, true); }
void PExpire(Context& c) { ExpireGeneric(c, c.now_ms, false); }
void ExpireAt(Context& c) { ExpireGeneric(c, 0, true); }
void PExpireAt(Context& c) { ExpireGeneric(c, 0, false); }

// ---- TTL PTTL EXPIRETIME PEXPIRETIME PERSIST ---------------------------------------------

// -2: no key; -1: no TTL; else the remaining (or, with `absolute`, the Unix) time, never
// negative, in ms or rounded to the nearest second.
void TtlGeneric(Context& c, bool ms, bool absolute) {
  store::Entry* e = LookupNoTouch(c, c.arg(1));
  if (!e) {
    c.out.Int(-2);
    return;
  }
  int64_t expire = c.db().GetExpire(e);
  if (expire == -1) {
    c.out.Int(-1);
    return;
  }
  int64_t t = absolute ? expire : expire - c.now_ms;
  if (t < 0) t = 0;
  c.out.Int(ms ? t : (t + 500) / 1000);
}

void Ttl(Context& c) { TtlGeneric(c, false, false); }
void PTtl(Context& c) { TtlGeneric(c, true, false); }
void ExpireTime(Context& c) { TtlGeneric(c, false, true); }
void PExpireTime(Context& c) { TtlGeneric(c, true, true); }

void Persist(Context& c) {
  std::string_view key = c.arg(1);
  store::Entry* e = c.LookupWrite(key);
  if (!e || !c.db().RemoveExpire(e)) {
    c.out.Int(0);
    return;
  }
  c.Changed(key, kNotifyGeneric, "persist");
  c.out.Int(1);
}

}  // namespace

// ---- registration ------------------------------------------------------------------------

void RegisterExpireCommands(CommandTable& t) {
  // EXPIRE and its kin take a key and a time (and options); TTL, its kin and PERSIST the key.
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, const char* summary,
                 const char* since) {
    t.Add({.name = name,
           .arity = arity,
           .flags = flags,
           .first_key = 1,
           .last_key = 1,
           .key_step = 1,
           .handler = h,
           .group = "keyspace",
           .summary = summary,
           .since = since});
  };
  auto expire = [&](const char* name, Handler h, const char* summary, const char* since) {
    add(name, -3, kWrite | kFast, h, summary, since);
  };
  auto ttl = [&](const char* name, Handler h, const char* summary, const char* since) {
    add(name, 2, kReadOnly | kFast, h, summary, since);
  };
  expire("expire", Expire, "Set a key's time to live in seconds", "1.0.0");
  expire("pexpire", PExpire, "Set a key's time to live in milliseconds", "2.6.0");
  expire("expireat", ExpireAt, "Set the expiration for a key as a UNIX timestamp", "1.2.0");
  expire("pexpireat", PExpireAt,
         "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0");
  ttl("ttl", Ttl, "Get the time to live for a key in seconds", "1.0.0");
  ttl("pttl", PTtl, "Get the time to live for a key in milliseconds", "2.6.0");
  ttl("expiretime", ExpireTime, "Get the expiration Unix timestamp for a key", "7.0.0");
  ttl("pexpiretime", PExpireTime, "Get the expiration Unix timestamp for a key in milliseconds",
      "7.0.0");
  add("persist", 2, kWrite | kFast, Persist, "Remove the expiration from a key", "2.2.0");
}

}  // namespace kv::cmd::keyspace
