// SAVE, BGSAVE, LASTSAVE, DUMP and RESTORE.
#include "acl/user.h"
#include "cmd/command.h"
#include "cmd/context.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "persist/dump.h"
#include "server/client.h"
#include "server/persistence/aof.h"
#include "server/persistence/persistence.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;
using cmd::OpStatus;

void Save(Context& c) {
  Persistence& p = ServerOf(c).persistence();
  if (p.AnyRdbChild()) {
    c.Error("Background save already in progress");
    return;
  }
  if (p.SaveNow().ok()) {
    c.out.Ok();
  } else {
    c.Error("-ERR");
  }
}

void Bgsave(Context& c) {
  // SCHEDULE waits for a child of another kind (an AOF rewrite), never for one writing an RDB
  // snapshot, as in Redis.
  if (c.argc() > 1 && !(c.argc() == 2 && EqualsIgnoreCase(c.arg(1), "SCHEDULE"))) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  Persistence& p = ServerOf(c).persistence();
  if (p.AnyRdbChild()) {
    c.Error("Background save already in progress");
    return;
  }
  if (ServerOf(c).AnyChild() || ServerOf(c).in_exec()) {
    // An AOF rewrite runs (or a transaction): SCHEDULE, or being inside EXEC, waits for it, as
    // in Redis.
    if (c.argc() == 2 || ServerOf(c).in_exec()) {
      p.ScheduleBackgroundSave();
      c.out.Simple("Background saving scheduled");
    } else {
      c.Error(
          "Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE "
          "SCHEDULE in order to schedule a BGSAVE whenever possible.");
    }
    return;
  }
  if (p.StartBackgroundSave().ok()) {
    c.out.Simple("Background saving started");
  } else {
    c.Error("-ERR");
  }
}

void BgRewriteAof(Context& c) {
  Server& s = ServerOf(c);
  std::string reply = s.aof().BgRewriteCommand(s.in_exec());
  if (reply[0] == '-') {
    c.Error(reply);
  } else {
    c.out.Simple(reply);
  }
}

void Lastsave(Context& c) { c.out.Int(ServerOf(c).persistence().last_save_s()); }

void Dump(Context& c) {
  store::Entry* e = c.LookupRead(c.arg(1));
  if (!e) {
    c.out.Null();
    return;
  }
  c.out.Bulk(
      persist::DumpValue(e->value, c.ks.limits(), ServerOf(c).config().GetBool("rdbcompression")));
}

struct RestoreOptions {
  bool replace = false, absttl = false;
  int64_t idle = -1, freq = -1;
};

// Redis' restoreCommand option loop: IDLETIME and FREQ exclude each other (the second one is a
// syntax error), and each checks its range.
bool ParseRestoreOptions(Context& c, RestoreOptions* o) {
  for (size_t j = 4; j < c.argc(); j++) {
    std::string_view a = c.arg(j);
    bool more = j + 1 < c.argc();
    if (EqualsIgnoreCase(a, "REPLACE")) {
      o->replace = true;
    } else if (EqualsIgnoreCase(a, "ABSTTL")) {
      o->absttl = true;
    } else if (EqualsIgnoreCase(a, "IDLETIME") && more && o->freq == -1) {
      if (!c.ParseInt(c.arg(++j), &o->idle)) return false;
      if (o->idle < 0) {
        c.Error("Invalid IDLETIME value, must be >= 0");
        return false;
      }
    } else if (EqualsIgnoreCase(a, "FREQ") && more && o->idle == -1) {
      if (!c.ParseInt(c.arg(++j), &o->freq)) return false;
      if (o->freq < 0 || o->freq > 255) {
        c.Error("Invalid FREQ value, must be >= 0 and <= 255");
        return false;
      }
    } else {
      c.Error(OpStatus::kSyntax);
      return false;
    }
  }
  return true;
}

void Restore(Context& c) {
  RestoreOptions o;
  if (!ParseRestoreOptions(c, &o)) return;
  int64_t ttl;
  if (!c.ParseInt(c.arg(2), &ttl)) return;
  if (ttl < 0) {
    c.Error("Invalid TTL value, must be >= 0");
    return;
  }
  std::string_view key = c.arg(1), payload = c.arg(3);
  store::Entry* existing = c.LookupWrite(key);
  if (existing && !o.replace) {
    c.Error(OpStatus::kBusyKey);
    return;
  }
  if (!persist::VerifyDumpPayload(payload, !ServerOf(c).debug_state().skip_checksum_validation)
           .ok()) {
    c.Error("DUMP payload version or checksum are wrong");
    return;
  }
  // What Redis' sanitize-dump-payload would check in depth (its INFO counts those): every
  // packed payload with "yes", those of clients but the primary and skip-sanitize-payload users
  // with "clients". kvstore checks every payload in depth whatever it says.
  {
    Server& s = ServerOf(c);
    std::string mode = s.config().GetString("sanitize-dump-payload");
    const Client& me = s.current_client();
    bool skip = (me.flags() & Client::kMaster) ||
                (me.acl_user() && (me.acl_user()->flags & acl::kUserSkipSanitizePayload));
    // Redis' deep checks are of packed encodings (ziplist, intset, listpack, quicklist and
    // stream blobs: RDB types 9 to 21), once per payload here.
    uint8_t type = payload.empty() ? 0 : static_cast<uint8_t>(payload[0]);
    bool packed = type >= 9 && type <= 21;
    if (packed && (mode == "yes" || (mode == "clients" && !skip))) {
      s.stats().dump_payload_sanitizations++;
    }
  }
  auto value = persist::RestoreValue(payload, c.ks.limits());
  // An empty collection is refused, an empty stream is not (Redis 7.0's rdbLoadObject).
  if (!value.ok() || (!value->is_string() && value->type() != store::ObjType::kStream &&
                      value->object()->Size() == 0)) {
    // Why, at verbose level, as Redis logs a RESTORE's corrupt payload.
    LOG_VERBOSE("Bad data format in the RESTORE payload of key '%s': %s",
                std::string(key.substr(0, 64)).c_str(),
                value.ok() ? "an empty collection" : value.status().message().c_str());
    c.Error("Bad data format");
    return;
  }
  bool deleted = existing && c.ks.ServerDelete(c.session.db, key);
  if (ttl > 0 && !o.absttl) ttl += c.now_ms;
  if (ttl > 0 && ttl <= c.now_ms && c.ks.PastTtlDeletes()) {
    // Already expired: the key is gone (replicated as a DEL when one was replaced).
    if (deleted) {
      c.rewrite = std::vector<std::string>{"DEL", std::string(key)};
      c.Changed(key, cmd::kNotifyGeneric, "del");
    }
    c.out.Ok();
    return;
  }
  store::Entry* e = c.db().Add(key, std::move(*value));
  c.ks.InitAccess(e);
  if (ttl > 0) {
    c.db().SetExpire(e, ttl);
    // Replicas and the AOF get the absolute time, so a late replay cannot lengthen the TTL.
    if (!o.absttl) {
      std::vector<std::string> argv;
      for (size_t i = 0; i < c.argc(); i++) argv.emplace_back(c.arg(i));
      argv[2] = std::to_string(ttl);
      argv.emplace_back("ABSTTL");
      c.rewrite = std::move(argv);
    }
  }
  if (o.idle >= 0) c.ks.SetIdleSeconds(e, o.idle);
  if (o.freq >= 0) c.ks.SetLfuFrequency(e, static_cast<int>(o.freq));
  c.Changed(key, cmd::kNotifyGeneric, "restore");
  c.out.Ok();
}

}  // namespace

void RegisterPersistCommands(cmd::CommandTable& t) {
  using namespace cmd;
  t.Add({.name = "save",
         .arity = 1,
         .flags = kAdmin | kNoScript | kNoMulti,
         .handler = Save,
         .group = "server",
         .summary = "Synchronously save the dataset to disk",
         .since = "1.0.0"});
  t.Add({.name = "bgsave",
         .arity = -1,
         .flags = kAdmin | kNoScript,
         .handler = Bgsave,
         .group = "server",
         .summary = "Asynchronously save the dataset to disk",
         .since = "1.0.0"});
  t.Add({.name = "bgrewriteaof",
         .arity = 1,
         .flags = kAdmin | kNoScript | kNoAsyncLoading,
         .handler = BgRewriteAof,
         .group = "server",
         .summary = "Asynchronously rewrite the append-only file",
         .since = "1.0.0"});
  t.Add({.name = "lastsave",
         .arity = 1,
         .flags = kLoading | kStale | kFast,
         .handler = Lastsave,
         .group = "server",
         .summary = "Get the UNIX time stamp of the last successful save to disk",
         .since = "1.0.0"});
  t.Add({.name = "dump",
         .arity = 2,
         .flags = kReadOnly,
         .first_key = 1,
         .last_key = 1,
         .key_step = 1,
         .handler = Dump,
         .group = "keyspace",
         .summary = "Return a serialized version of the value stored at the specified key.",
         .since = "2.6.0"});
  t.Add({.name = "restore",
         .arity = -4,
         .flags = kWrite | kDenyOom,
         .first_key = 1,
         .last_key = 1,
         .key_step = 1,
         .handler = Restore,
         .group = "keyspace",
         .summary = "Create a key using the provided serialized value, previously obtained using "
                    "DUMP.",
         .since = "2.6.0"});
  // What MIGRATE sends in cluster mode; outside it, RESTORE under another name (as in Redis).
  t.Add({.name = "restore-asking",
         .arity = -4,
         .flags = kWrite | kDenyOom | cmd::kAsking,
         .first_key = 1,
         .last_key = 1,
         .key_step = 1,
         .handler = Restore,
         .group = "server",
         .summary = "An internal command for migrating keys in a cluster",
         .since = "3.0.0"});
}

}  // namespace kv::server
