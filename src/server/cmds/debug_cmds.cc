// DEBUG: every action of Redis 7.0's DEBUG (as its HELP lists them, plus its unlisted
// SET-DISABLE-DENY-SCRIPTS), with its arities, replies and error texts, and kvstore's own
// REPLICATION-BREAK-DATA-LINK and REPLICATION-FAIL-SNAPSHOT (docs/replication-rdma.md). This
// file holds the action table and the keyspace and crash actions; debug_cmds.h names the rest.
//
// Every handler runs on a poll-group thread with the keyspace lock held (see server.h). That is
// what makes DEBUG SLEEP stop the whole server, as it does in Redis.
#include "server/cmds/debug_cmds.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

#include "cmd/context.h"
#include "cmd/errors.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "persist/dump.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "server/client.h"
#include "server/crash.h"
#include "server/persistence/persistence.h"
#include "server/server.h"
#include "server/slot_migration.h"
#include "store/digest.h"
#include "store/list_type.h"

namespace kv::server {
namespace {

using cmd::Context;

constexpr std::string_view kDebugDisabled =
    "DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can "
    "run it from a local connection, otherwise you need to set this option in the configuration "
    "file, and then restart the server.";

constexpr uint32_t kLruClockMax = (1u << 24) - 1;  // Redis' LRU_CLOCK_MAX: 24 bits of seconds

// DEBUG OBJECT's serializedlength: Redis' rdbSavedObjectLen, the bytes of the value as the RDB
// saves it (compressed as rdbcompression says) without its type byte: DUMP's payload less
// that byte and the footer (version and checksum).
size_t SerializedLength(Context& c, const store::Value& v) {
  constexpr size_t kDumpOverhead = 1 + 2 + 8;
  std::string payload =
      persist::DumpValue(v, c.ks.limits(), ServerOf(c).config().GetBool("rdbcompression"));
  return payload.size() - kDumpOverhead;
}

// DEBUG OBJECT reads the table directly (no lazy expiry), as Redis' dictFind does.
void DebugObject(Context& c) {
  store::Entry* e = c.db().Find(c.arg(2));
  if (!e) {
    c.Error(cmd::OpStatus::kNoSuchKey);
    return;
  }
  const store::Value& v = e->value;
  // The same sharing rule as OBJECT REFCOUNT (keys.cc): Redis' shared integers 0..9999.
  bool shared = v.is_int() && v.IntValue() >= 0 && v.IntValue() < 10000;
  // Entry::access holds the LRU seconds or the LFU state in Redis' 24-bit layout.
  uint32_t lru = e->access & kLruClockMax;
  uint32_t now = static_cast<uint32_t>(WallMs() / 1000) & kLruClockMax;
  uint64_t idle = now >= lru ? now - lru : now + (kLruClockMax - lru);
  // A list adds its quicklist's figures, as Redis does; ql_uncompressed_size counts kvstore's
  // node bytes, which frame elements much as a listpack does (a plain node: its element's
  // bytes, as Redis counts them).
  char extra[160] = "";
  if (v.type() == store::ObjType::kList) {
    const auto* l = v.As<store::ListValue>();
    snprintf(extra, sizeof(extra),
             " ql_nodes:%zu ql_avg_node:%.2f ql_listpack_max:%lld ql_compressed:%d"
             " ql_uncompressed_size:%zu",
             l->node_count(), static_cast<double>(l->Size()) / static_cast<double>(l->node_count()),
             static_cast<long long>(l->fill()), l->compress_depth() != 0 ? 1 : 0,
             l->uncompressed_bytes());
  }
  char buf[400];
  snprintf(
      buf, sizeof(buf),
      "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%llu%s",
      static_cast<const void*>(&v), shared ? INT_MAX : 1, v.EncodingName(), SerializedLength(c, v),
      lru, static_cast<unsigned long long>(idle), extra);
  c.out.Simple(buf);
}

// Like Redis (strtod, then nanosleep), a malformed or negative duration sleeps for nothing.
void DebugSleep(Context& c) {
  double secs = strtod(std::string(c.arg(2)).c_str(), nullptr);
  if (secs > 0) {
    secs = std::min(secs, 1e9);  // keeps the duration arithmetic finite
    std::this_thread::sleep_for(std::chrono::duration<double>(secs));
  }
  c.out.Ok();
}

// Redis parses the flag with atoi: anything that is not a non-zero number turns expiry off.
void DebugSetActiveExpire(Context& c) {
  ServerOf(c).set_active_expire(atoi(std::string(c.arg(2)).c_str()) != 0);
  c.out.Ok();
}

// DEBUG SEGFAULT, PANIC and ASSERT: the three ways a server dies, with the crash report each
// leaves in the log (crash.h).
void DebugSegfault(Context&) {
  // A write to a read-only page: a real fault, which the compiler cannot see coming.
  void* page = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *static_cast<volatile char*>(page) = 'x';
}

void DebugPanic(Context&) {
  KV_PANIC("DEBUG PANIC called at Unix time " + std::to_string(time(nullptr)));
}

void DebugAssert(Context&) { KV_ASSERT_FAILED("1 == 2"); }

// DEBUG REPLICATE <command> [arg ...]: sends the command to the replicas (not to the AOF) as
// if it had run here; tests use it to make a replica apply what it refuses.
void DebugReplicate(Context& c) {
  std::vector<std::string_view> argv(c.args.begin() + 2, c.args.end());
  ServerOf(c).primary().feed().Add(c.session.db, std::span<const std::string_view>(argv),
                                   /*to_replicas=*/true, /*to_aof=*/false);
  c.out.Ok();
}

void DebugDigest(Context& c) { c.out.Simple(store::DatasetDigest(c.ks)); }

// Keys are looked up without lazy expiry, as in Redis: a logically expired key still digests.
void DebugDigestValue(Context& c) {
  c.out.Array(c.argc() - 2);
  for (size_t i = 2; i < c.argc(); i++) {
    c.out.Simple(store::ValueDigest(c.db(), c.db().Find(c.arg(i))));
  }
}

// DEBUG POPULATE <count> [prefix] [size], as in Redis: keys "<prefix>:0" to "<prefix>:<count-1>"
// (prefix "key"; the name cut at 127 bytes) holding "value:<n>", or with a size that many bytes:
// "value:<n>" cut or padded with zero bytes. Keys that exist are left alone. Like any DEBUG
// action it is not replicated. A size over proto-max-bulk-len is refused, where Redis would try.
void DebugPopulate(Context& c) {
  int64_t count = 0, size = 0;
  // Redis answers "must be positive" for what does not parse, too.
  if (!c.ParseInt(c.arg(2), &count, cmd::OpStatus::kPositive)) return;
  if (count < 0) {
    c.Error(cmd::OpStatus::kPositive);
    return;
  }
  if (c.argc() == 5) {
    if (!c.ParseInt(c.arg(4), &size, cmd::OpStatus::kPositive)) return;
    if (size < 0) {
      c.Error(cmd::OpStatus::kPositive);
      return;
    }
    if (size > c.hooks.MaxBulkLen()) {
      c.Error(cmd::OpStatus::kStringTooLong);
      return;
    }
  }
  std::string prefix = c.argc() >= 4 ? std::string(c.arg(3)) : "key";
  c.db().Reserve(static_cast<size_t>(std::min<int64_t>(count, int64_t{1} << 26)),
                 c.db().expires_size());
  char key[128], value[64];
  for (int64_t j = 0; j < count; j++) {
    int klen = snprintf(key, sizeof(key), "%s:%lld", prefix.c_str(), static_cast<long long>(j));
    std::string_view k(key, std::min<size_t>(static_cast<size_t>(klen), sizeof(key) - 1));
    if (c.LookupWrite(k)) continue;
    int vlen = snprintf(value, sizeof(value), "value:%lld", static_cast<long long>(j));
    std::string v = size == 0 ? std::string(value, static_cast<size_t>(vlen))
                              : std::string(static_cast<size_t>(size), '\0');
    if (size > 0) memcpy(v.data(), value, std::min<size_t>(v.size(), static_cast<size_t>(vlen)));
    c.ks.Set(c.session.db, k, store::Value::String(v));
    c.Notify(cmd::kNotifyNew, "new", k);
    c.hooks.KeyModified(c.session.db, k);
  }
  c.out.Ok();
}

// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save, empty the dataset, load the file back. With
// NOFLUSH a key both in memory and in the file is an error, unless MERGE (the file wins).
void DebugReload(Context& c) {
  bool save = true, flush = true, merge = false;
  for (size_t i = 2; i < c.argc(); i++) {
    std::string_view a = c.arg(i);
    if (EqualsIgnoreCase(a, "NOSAVE")) {
      save = false;
    } else if (EqualsIgnoreCase(a, "NOFLUSH")) {
      flush = false;
    } else if (EqualsIgnoreCase(a, "MERGE")) {
      merge = true;
    } else {
      c.Error("DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
      return;
    }
  }
  Persistence& p = ServerOf(c).persistence();
  if (save && p.AnyRdbChild()) {
    // The file may be what a disk-based sync is sending.
    c.Error("Background save already in progress");
    return;
  }
  if (save && !p.SaveNow().ok()) {
    c.Error("-ERR");
    return;
  }
  if (!p.Reload(flush, merge).ok()) {
    c.Error("Error trying to load the RDB dump");
    return;
  }
  c.out.Ok();
}

// "AFTER <bytes>" at arguments 2 and 3 of a DEBUG action: false (with the error answered) when
// malformed.
bool ParseAfterBytes(Context& c, uint64_t* after) {
  int64_t n = 0;
  if (!EqualsIgnoreCase(c.arg(2), "after")) {
    c.Error(cmd::OpStatus::kSyntax);
    return false;
  }
  if (!c.ParseInt(c.arg(3), &n)) return false;
  if (n < 0) {
    c.Error("byte count must be positive");
    return false;
  }
  *after = static_cast<uint64_t>(n);
  return true;
}

// DEBUG REPLICATION-BREAK-DATA-LINK [AFTER <bytes>]: fails the RDMA data links of this server
// (both sides), now or once that many more bytes have moved over them. A link broken while it
// streams is resumed with PSYNC; one broken mid-snapshot is rebuilt and the snapshot goes on.
// A whole-slot migration's link (this node the source) fails the migration.
void DebugBreakDataLink(Context& c) {
  uint64_t after = 0;
  if (c.argc() == 3) {  // the action table allows 2 to 4 arguments
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  if (c.argc() == 4 && !ParseAfterBytes(c, &after)) return;
  ServerOf(c).primary().BreakDataLinks(after);
  ServerOf(c).replica().BreakDataLink(after);
  if (ServerOf(c).has_slot_migrations()) ServerOf(c).slot_migrations().BreakDataLink(after);
  c.out.Ok();
}

// DEBUG SLOT-MIGRATION-HOLD <streaming|handover|claimed|none>: this node's slot migrations
// (exports) stop at that step until another is set (docs/cluster.md); tests kill nodes there.
void DebugSlotMigrationHold(Context& c) {
  Server& s = ServerOf(c);
  if (!s.has_slot_migrations()) {
    c.Error("This instance has cluster support disabled");
    return;
  }
  if (!s.slot_migrations().Hold(c.arg(2))) {
    c.Error("unknown step (streaming, handover, claimed or none)");
    return;
  }
  c.out.Ok();
}

// DEBUG REPLICATION-FAIL-SNAPSHOT AFTER <bytes>: the next diskless replication snapshot child
// fails once it has written that many bytes of the RDB to a replica (a test hook, like the
// above): the replicas of that sync drop it and sync again.
void DebugFailSnapshot(Context& c) {
  uint64_t after = 0;
  if (!ParseAfterBytes(c, &after)) return;
  ServerOf(c).primary().FailNextSnapshot(after);
  c.out.Ok();
}

// DEBUG is one command in Redis (arity -2): the first argument picks the action and each action
// checks its own argument count, answering the same syntax error for an unknown action or a
// wrong count. Hence a table here rather than subcommands in the command table.
struct DebugAction {
  std::string_view name;
  size_t min_argc, max_argc;  // counting "DEBUG" and the action
  cmd::Handler handler;
};
constexpr size_t kAny = SIZE_MAX;

// In Redis' order of tests. The crash actions, RELOAD, LOADAOF and RESTART take any number of
// arguments (Redis does not check the count for them).
constexpr DebugAction kDebugActions[] = {
    {"help", 2, 2, debug::Help},
    {"segfault", 2, kAny, DebugSegfault},
    {"panic", 2, kAny, DebugPanic},
    {"restart", 2, kAny, debug::Restart},
    {"crash-and-recover", 2, kAny, debug::Restart},
    {"oom", 2, kAny, debug::Oom},
    {"assert", 2, kAny, DebugAssert},
    {"log", 3, 3, debug::Log},
    {"leak", 3, 3, debug::Leak},
    {"reload", 2, kAny, DebugReload},
    {"loadaof", 2, kAny, debug::LoadAof},
    {"drop-cluster-packet-filter", 3, 3, debug::DropClusterPacketFilter},
    {"object", 3, 3, DebugObject},
    {"sdslen", 3, 3, debug::SdsLen},
    {"listpack", 3, 3, debug::Listpack},
    {"quicklist", 3, 4, debug::Quicklist},
    {"populate", 3, 5, DebugPopulate},
    {"digest", 2, 2, DebugDigest},
    {"digest-value", 2, kAny, DebugDigestValue},
    {"protocol", 3, 3, debug::Protocol},
    {"sleep", 3, 3, DebugSleep},
    {"set-active-expire", 3, 3, DebugSetActiveExpire},
    {"quicklist-packed-threshold", 3, 3, debug::QuicklistPackedThreshold},
    {"set-skip-checksum-validation", 3, 3, debug::SetSkipChecksumValidation},
    {"aof-flush-sleep", 3, 3, debug::AofFlushSleep},
    {"replicate", 3, kAny, DebugReplicate},
    {"error", 3, 3, debug::Error},
    {"structsize", 2, 2, debug::StructSize},
    {"htstats", 3, 3, debug::HtStats},
    {"htstats-key", 3, 3, debug::HtStatsKey},
    {"change-repl-id", 2, 2, debug::ChangeReplId},
    {"stringmatch-test", 2, 2, debug::StringmatchTest},
    {"set-disable-deny-scripts", 3, 3, debug::SetDisableDenyScripts},
    {"config-rewrite-force-all", 2, 2, debug::ConfigRewriteForceAll},
    {"client-eviction", 2, 2, debug::ClientEviction},
    {"pause-cron", 3, 3, debug::PauseCron},
    {"replybuffer", 4, 4, debug::ReplyBuffer},
    {"clusterlink", 5, 5, debug::ClusterLink},
    // kvstore's own (docs/replication-rdma.md).
    {"replication-break-data-link", 2, 4, DebugBreakDataLink},
    {"replication-fail-snapshot", 4, 4, DebugFailSnapshot},
    {"slot-migration-hold", 3, 3, DebugSlotMigrationHold},
};

void Debug(Context& c) {
  // Redis refuses it in processCommand (a "protected" command): yes, no, or local connections.
  Server& s = ServerOf(c);
  if (!s.config().Allows("enable-debug-command", s.current_client().is_local())) {
    c.Error(kDebugDisabled);
    return;
  }
  for (const DebugAction& a : kDebugActions) {
    if (EqualsIgnoreCase(c.arg(1), a.name) && c.argc() >= a.min_argc && c.argc() <= a.max_argc) {
      a.handler(c);
      return;
    }
  }
  c.Error(cmd::SubcommandSyntax(c.arg(1), c.arg(0)));
}

}  // namespace

void RegisterDebugCommand(cmd::CommandTable& t) {
  t.Add({.name = "debug",
         .arity = -2,
         .flags = cmd::kAdmin | cmd::kNoScript | cmd::kLoading | cmd::kStale,
         .handler = Debug,
         .group = "server",
         .summary = "A container for debugging commands",
         .since = "1.0.0"});
}

}  // namespace kv::server
