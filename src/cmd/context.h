// What a command handler sees: its arguments, the reply writer, the keyspace, the calling
// connection's session state, and hooks into the server for effects beyond the keyspace
// (keyspace notifications, WATCH invalidation, replication rewrites).
//
// A Context lives for one command and is used on one thread, with the keyspace lock held.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/errors.h"
#include "resp/writer.h"
#include "store/keyspace.h"

namespace kv::cmd {

struct CommandSpec;

// Keyspace notification classes, Redis' NOTIFY_* bits.
enum NotifyClass : int {
  kNotifyKeyspace = 1 << 0,   // K
  kNotifyKeyevent = 1 << 1,   // E
  kNotifyGeneric = 1 << 2,    // g
  kNotifyString = 1 << 3,     // $
  kNotifyList = 1 << 4,       // l
  kNotifySet = 1 << 5,        // s
  kNotifyHash = 1 << 6,       // h
  kNotifyZset = 1 << 7,       // z
  kNotifyExpired = 1 << 8,    // x
  kNotifyEvicted = 1 << 9,    // e
  kNotifyStream = 1 << 10,    // t
  kNotifyKeyMiss = 1 << 11,   // m
  kNotifyLoaded = 1 << 12,    // module only
  kNotifyModule = 1 << 13,    // d
  kNotifyNew = 1 << 14,       // n
};

enum class ReplyMode { kOn, kOff, kSkip };

// Per-connection state that commands read and change.
struct Session {
  uint64_t id = 0;
  int db = 0;
  int resp = 2;
  bool authenticated = false;
  std::string user = "default";
  std::string name;
  std::string lib_name, lib_ver;
  bool no_evict = false;
  ReplyMode reply_mode = ReplyMode::kOn;
  bool close_after_reply = false;  // QUIT, or an error that ends the connection
  size_t subscriptions = 0;        // pub/sub channels and patterns (PING answers differently)
  bool deny_blocking = false;      // inside MULTI/EXEC: blocking commands answer at once
  // A script's own client (Redis' CLIENT_SCRIPT): XREAD's BLOCK is an error there, and SORT
  // orders a set it would leave unsorted, so that the script's result is deterministic.
  bool script = false;
  // The primary's link or the AOF loader (Redis' mustObeyClient): what they send is applied
  // as it comes (XADD/XTRIM's LIMIT, for one, is not enforced).
  bool obey = false;
  // A blocked command run again because a key it waits on changed (XREADGROUP words a missing
  // group differently then).
  bool woken = false;
  // Cluster mode: ASKING was sent (for the next command, or until EXEC), and READONLY (reads of
  // the primary's slots served on a replica).
  bool asking = false;
  bool cluster_readonly = false;
};

class Context;

// The server's side of the contract, implemented in server/. Data commands call these for
// effects that reach beyond the keyspace.
class ServerHooks {
 public:
  virtual ~ServerHooks() = default;
  // A key's value changed (WATCH invalidation, client-side caching).
  virtual void KeyModified(int db, std::string_view key) = 0;
  // Database `db` is about to be emptied (FLUSHDB, FLUSHALL: replaced_with < 0) or to take
  // database replaced_with's keys (SWAPDB): its watched keys and blocked clients learn of it.
  virtual void DbReplaced(int db, int replaced_with) {}
  // FLUSHDB or FLUSHALL emptied the database(s): once per command (client-side caching's null).
  virtual void Flushed() {}
  // FLUSHALL emptied every database (the server resets its snapshot, as Redis does).
  virtual void FlushedAll() {}
  // Fires a keyspace notification if notify-keyspace-events enables its class.
  virtual void Notify(int klass, std::string_view event, std::string_view key, int db) = 0;
  // proto-max-bulk-len, for commands that grow strings.
  virtual int64_t MaxBulkLen() const = 0;
  // Whether the running command's user may read any key (ACL): SORT's BY and GET patterns,
  // which reach keys its arguments do not name, need it.
  virtual bool ReadsAnyKey(const Context& c) const { return true; }
  // hll-sparse-max-bytes: the size at which a sparse HyperLogLog turns dense.
  virtual int64_t HllSparseMaxBytes() const { return 3000; }
  // Whether Redis would share small integer values now (OBJECT REFCOUNT): not while maxmemory
  // is set with an LRU or LFU policy, whose per-object clock a shared object cannot keep.
  virtual bool SharesIntegers() const { return true; }
  // cluster-enabled: one database only (SELECT, MOVE, SWAPDB and COPY's DB refuse others).
  virtual bool ClusterMode() const { return false; }
};

// What a blocking command that found nothing to serve asks of the dispatcher: park the client
// on these keys (of the session's db) until one of them changes, then run the command again;
// at the deadline (0: never) answer the timeout reply instead.
struct BlockRequest {
  std::vector<std::string> keys;
  int64_t deadline_ms = 0;
  bool null_array = true;  // timeout reply: null array (BLPOP...) or null bulk (BLMOVE...)
  // Only a key holding this type wakes the client (a SET on the key does not, as in Redis).
  store::ObjType type = store::ObjType::kList;
  // When not empty, the command to run again per key (parallel to `keys`) when that key wakes
  // the client, instead of the original: as Redis serves a blocked XREAD from the one stream
  // that got entries, after the ID it blocked with ("$" resolved).
  std::vector<std::vector<std::string>> key_retry_args;
  // XREADGROUP: a waited-on key deleted or replaced by another type ends the wait with
  // -UNBLOCKED (the group went with it).
  bool unblock_on_delete = false;
};

// Counters the dispatcher folds into INFO stats.
struct ExecStats {
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
};

// The most members SRANDMEMBER, HRANDFIELD and ZRANDMEMBER answer for a negative count, where
// members repeat. Redis 7.0 has no bound there and sets out to build a reply of up to 2^63
// members (it never finishes, and runs out of memory); kvstore answers
// CountOutOfRange(-kMaxRandomRepeats, ...) for an existing key instead. A reply at the bound is
// still about a gigabyte.
inline constexpr int64_t kMaxRandomRepeats = int64_t{1} << 27;

class Context {
 public:
  Context(std::span<const std::string_view> args, resp::ReplyWriter& out, store::Keyspace& ks,
          Session& session, ServerHooks& hooks, ExecStats& stats, int64_t now_ms)
      : args(args), out(out), ks(ks), session(session), hooks(hooks), stats(stats),
        now_ms(now_ms) {}

  std::span<const std::string_view> args;  // args[0] is the command name as sent
  resp::ReplyWriter& out;
  store::Keyspace& ks;
  Session& session;
  ServerHooks& hooks;
  ExecStats& stats;
  const int64_t now_ms;  // one wall-clock reading for the whole command, as Redis does
  const CommandSpec* spec = nullptr;

  // Number of keyspace changes made (Redis' server.dirty delta); a write command that changed
  // nothing is not propagated.
  uint64_t dirty = 0;
  // When set, replication and MONITOR-free consumers see this argv instead of the original
  // (SET with EX becomes SET with PXAT, ...).
  std::optional<std::vector<std::string>> rewrite;
  // When not empty, replication sees these commands, in order, instead of the original and of
  // `rewrite` (Redis' alsoPropagate with the command's own propagation prevented). The feed
  // wraps a command's writes in MULTI/EXEC when there is more than one.
  std::vector<std::vector<std::string>> propagate;
  // With `propagate` empty: replicate nothing even though data changed (Redis'
  // preventCommandPropagation; XREADGROUP and XCLAIM replicate only what they add to it).
  bool prevent_propagation = false;
  // Replicate this command (to replicas, not to the AOF) though it changed no data: PUBLISH
  // and SPUBLISH, so a replica's subscribers get the message too (Redis'
  // forceCommandPropagation(PROPAGATE_REPL)).
  bool replicate_only = false;
  // Set by a blocking command that must wait (never when session.deny_blocking).
  std::optional<BlockRequest> block;
  // Arguments MONITOR and SLOWLOG show as "(redacted)" (passwords), in the order redacted.
  std::vector<size_t> redacted;

  size_t argc() const { return args.size(); }
  void Redact(size_t i) { redacted.push_back(i); }
  std::string_view arg(size_t i) const { return args[i]; }
  store::Db& db() { return ks.db(session.db); }

  // Lookup for reading: counts hits/misses and updates the access clock.
  store::Entry* LookupRead(std::string_view key);
  // Lookup for writing: no hit/miss counting.
  store::Entry* LookupWrite(std::string_view key);
  // Both lookups with a type check: on mismatch they answer WRONGTYPE and set *wrongtype.
  store::Entry* LookupReadOfType(std::string_view key, store::ObjType type, bool* wrongtype);

  // Records a change to `key` (dirty count, WATCH, notification).
  void Changed(std::string_view key, int klass, std::string_view event);
  void Notify(int klass, std::string_view event, std::string_view key) {
    hooks.Notify(klass, event, key, session.db);
  }

  void Error(OpStatus s) { ReplyError(out, s); }
  void Error(std::string_view msg) { out.Error(msg); }

  // Redis' addReplyHelp: "<CMD> <subcommand> ... Subcommands are:", the lines, then the HELP
  // entry, each a status reply.
  void ReplyHelp(std::span<const std::string_view> lines);

  // HSCAN/SSCAN/ZSCAN options after the cursor: COUNT and MATCH (TYPE is SCAN's only, a syntax
  // error here), as Redis' scanGenericCommand parses them.
  struct CollectionScanOptions {
    int64_t count = 10;
    bool use_pattern = false;  // MATCH given, and not the match-all "*"
    std::string_view pattern;
  };
  bool ParseCollectionScanOptions(CollectionScanOptions* o);

  // Argument parsing helpers: on failure they answer the Redis error and return false.
  bool ParseInt(std::string_view s, int64_t* v, OpStatus err = OpStatus::kNotInteger);
  bool ParseDouble(std::string_view s, double* v);
  // A blocking command's timeout in seconds (fractions allowed), as an absolute deadline in ms
  // (0: wait forever). Errors as Redis' getTimeoutFromObjectOrReply.
  bool ParseBlockTimeout(std::string_view s, int64_t* deadline_ms);
  // The same for a timeout in milliseconds, an integer (XREAD's BLOCK).
  bool ParseBlockTimeoutMs(std::string_view s, int64_t* deadline_ms);
};

}  // namespace kv::cmd
