// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
//         [AUTH2 username password] [KEYS key ...]
//
// As Redis 7.0's migrateCommand: the keys found here are sent to the target as RESTORE
// commands carrying DUMP payloads and their remaining TTLs (after AUTH and, when the cached
// connection has another db selected, SELECT), pipelined over one blocking connection
// (migrate_sockets.h), and the replies read back. Without COPY the keys the target
// acknowledged are deleted here, and the command reaches replicas and the AOF as a DEL of
// those keys. A connection that fails before any reply is retried once on a fresh connection,
// unless it timed out.
//
// The command runs under the keyspace lock, like any other, and blocks for up to its timeout
// waiting on the target: a MIGRATE to this very server times out ("IOERR ... reading"), as it
// does in Redis, whose main thread is the one that would have to answer.
#include <errno.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/context.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "persist/dump.h"
#include "server/cmds/migrate_sockets.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;
using cmd::OpStatus;

struct MigrateArgs {
  bool copy = false, replace = false;
  bool auth = false, auth2 = false;  // AUTH password, AUTH2 username password
  std::string_view username, password;
  size_t first_key = 3, num_keys = 1;
  int64_t timeout_ms = 0, dbid = 0;
};

// Redis' option loop, then timeout and db (in that order, as Redis checks them).
bool ParseMigrateArgs(Context& c, MigrateArgs* a) {
  for (size_t j = 6; j < c.argc(); j++) {
    std::string_view opt = c.arg(j);
    size_t more = c.argc() - 1 - j;
    if (EqualsIgnoreCase(opt, "copy")) {
      a->copy = true;
    } else if (EqualsIgnoreCase(opt, "replace")) {
      a->replace = true;
    } else if (EqualsIgnoreCase(opt, "auth") && more >= 1) {
      a->auth = true;
      a->password = c.arg(++j);
      c.Redact(j);
    } else if (EqualsIgnoreCase(opt, "auth2") && more >= 2) {
      a->auth = a->auth2 = true;
      a->username = c.arg(++j);
      c.Redact(j);
      a->password = c.arg(++j);
      c.Redact(j);
    } else if (EqualsIgnoreCase(opt, "keys")) {
      if (!c.arg(3).empty()) {
        c.Error(
            "When using MIGRATE KEYS option, the key argument must be set to the empty "
            "string");
        return false;
      }
      a->first_key = j + 1;
      a->num_keys = c.argc() - j - 1;
      break;  // every argument left is a key
    } else {
      c.Error(OpStatus::kSyntax);
      return false;
    }
  }
  if (!c.ParseInt(c.arg(5), &a->timeout_ms) || !c.ParseInt(c.arg(4), &a->dbid)) return false;
  if (a->timeout_ms <= 0) a->timeout_ms = 1000;
  return true;
}

void AppendBulk(std::string* out, std::string_view s) {
  out->append("$").append(std::to_string(s.size())).append("\r\n");
  out->append(s).append("\r\n");
}

void AppendCommand(std::string* out, std::initializer_list<std::string_view> args) {
  out->append("*").append(std::to_string(args.size())).append("\r\n");
  for (std::string_view a : args) AppendBulk(out, a);
}

// The pipelined request: AUTH, SELECT when `select`, and a RESTORE per key still there (keys
// whose TTL passed since they were looked up are dropped from `keys`).
std::string BuildRequest(Context& c, const MigrateArgs& a, bool select,
                         std::vector<std::string_view>* keys) {
  std::string req;
  if (a.auth && !a.auth2) AppendCommand(&req, {"AUTH", a.password});
  if (a.auth2) AppendCommand(&req, {"AUTH", a.username, a.password});
  std::string dbid = std::to_string(a.dbid);
  if (select) AppendCommand(&req, {"SELECT", dbid});
  bool compress = ServerOf(c).config().GetBool("rdbcompression");
  std::vector<std::string_view> kept;
  for (std::string_view key : *keys) {
    store::Entry* e = c.db().Find(key);
    if (!e) continue;
    int64_t ttl = 0, expireat = c.db().GetExpire(e);
    if (expireat != -1) {
      ttl = expireat - WallMs();
      if (ttl < 0) continue;
      if (ttl < 1) ttl = 1;
    }
    kept.push_back(key);
    std::string payload = persist::DumpValue(e->value, c.ks.limits(), compress);
    std::string ttl_s = std::to_string(ttl);
    // A cluster node sends RESTORE-ASKING, which a node importing the slot serves (Redis).
    std::string_view restore = ServerOf(c).cluster() ? "RESTORE-ASKING" : "RESTORE";
    if (a.replace) {
      AppendCommand(&req, {restore, key, ttl_s, payload, "REPLACE"});
    } else {
      AppendCommand(&req, {restore, key, ttl_s, payload});
    }
  }
  *keys = std::move(kept);
  return req;
}

// How one attempt ended when it did not answer the client.
struct SocketError {
  bool failed = false;
  bool writing = false;  // the error was in sending the request
  bool retry = false;    // nothing was processed and the error was no timeout
};

// Reads the RESTORE replies: deletes the acknowledged keys (unless COPY), answers the first
// error the target gave, or +OK. Returns the socket error to report, if any.
SocketError ReadReplies(Context& c, const MigrateArgs& a, MigrateSockets::Conn& cs,
                        const std::vector<std::string_view>& keys, const std::string& auth_reply,
                        const std::string& select_reply, bool select, bool may_retry) {
  std::string line;
  bool target_error = false;
  std::vector<std::string> del = {"DEL"};
  size_t j = 0;
  int err = 0;
  bool socket_error = false;
  for (; j < keys.size(); j++) {
    if (!cs.ReadLine(a.timeout_ms, &line, &err) || line.empty()) {
      socket_error = true;
      break;
    }
    const std::string* bad = nullptr;
    if (a.auth && auth_reply[0] == '-') {
      bad = &auth_reply;
    } else if (select && select_reply[0] == '-') {
      bad = &select_reply;
    } else if (line[0] == '-') {
      bad = &line;
    }
    if (bad) {
      if (!target_error) {
        cs.last_dbid = -1;
        target_error = true;
        c.Error("Target instance replied with error: " + bad->substr(1));
      }
    } else if (!a.copy) {
      c.ks.ServerDelete(c.session.db, keys[j]);
      c.Changed(keys[j], cmd::kNotifyGeneric, "del");
      del.emplace_back(keys[j]);
    }
  }
  if (!target_error && socket_error && j == 0 && may_retry && err != ETIMEDOUT) {
    return {.failed = true, .retry = true};
  }
  if (del.size() > 1) c.rewrite = std::move(del);
  if (!target_error && socket_error) return {.failed = true};
  if (!target_error) {
    cs.last_dbid = a.dbid;
    c.out.Ok();
  }
  return {};
}

// One try over the cached connection (or a new one). Answers the client unless it returns a
// socket error.
SocketError Attempt(Context& c, const MigrateArgs& a, std::vector<std::string_view> keys,
                    bool may_retry) {
  MigrateSockets& sockets = ServerOf(c).migrate_sockets();
  // Redis connects with TLS where tls-cluster says so (its cluster links and MIGRATE alike).
  Server& s = ServerOf(c);
  std::shared_ptr<net::TlsContext> tls =
      s.config().GetBool("tls-cluster") ? s.tls_context() : nullptr;
  MigrateSockets::Conn* cs = sockets.Get(c.arg(1), c.arg(2), a.timeout_ms, WallMs() / 1000, tls);
  if (!cs) {
    c.Error("-IOERR error or timeout connecting to the client");
    return {};
  }
  bool select = cs->last_dbid != a.dbid;
  std::string req = BuildRequest(c, a, select, &keys);
  int err = 0;
  if (!cs->Write(req, a.timeout_ms, &err)) {
    return {.failed = true, .writing = true, .retry = may_retry && err != ETIMEDOUT};
  }
  std::string auth_reply, select_reply;
  if ((a.auth && (!cs->ReadLine(a.timeout_ms, &auth_reply, &err) || auth_reply.empty())) ||
      (select && (!cs->ReadLine(a.timeout_ms, &select_reply, &err) || select_reply.empty()))) {
    return {.failed = true, .retry = may_retry && err != ETIMEDOUT};
  }
  return ReadReplies(c, a, *cs, keys, auth_reply, select_reply, select, may_retry);
}

void Migrate(Context& c) {
  MigrateArgs a;
  if (!ParseMigrateArgs(c, &a)) return;
  // The keys that are here; none is NOKEY, not an error (they may just have expired).
  std::vector<std::string_view> keys;
  for (size_t j = 0; j < a.num_keys; j++) {
    std::string_view key = c.arg(a.first_key + j);
    if (c.LookupRead(key)) keys.push_back(key);
  }
  if (keys.empty()) {
    c.out.Simple("NOKEY");
    return;
  }
  MigrateSockets& sockets = ServerOf(c).migrate_sockets();
  for (bool may_retry = true;; may_retry = false) {
    SocketError e = Attempt(c, a, keys, may_retry);
    if (!e.failed) return;
    // A cached connection the target closed is common: one retry on a fresh connection.
    sockets.Close(c.arg(1), c.arg(2));
    if (e.retry) continue;
    c.Error(e.writing ? "-IOERR error or timeout writing to target instance"
                      : "-IOERR error or timeout reading to target instance");
    return;
  }
}

// Redis' migrateGetKeys: the key argument, or with KEYS (and an empty key argument) every
// argument after it; AUTH's and AUTH2's arguments are skipped on the way there.
std::vector<int> MigrateKeys(std::span<const std::string_view> args) {
  const int argc = static_cast<int>(args.size());
  int first = 3, num = 1;
  for (int i = 6; i < argc; i++) {
    if (EqualsIgnoreCase(args[i], "keys")) {
      if (!args[3].empty()) return {};
      first = i + 1;
      num = argc - first;
      break;
    }
    if (EqualsIgnoreCase(args[i], "auth")) {
      i += 1;
    } else if (EqualsIgnoreCase(args[i], "auth2")) {
      i += 2;
    }
  }
  std::vector<int> keys;
  for (int i = 0; i < num; i++) keys.push_back(first + i);
  return keys;
}

}  // namespace

void RegisterMigrateCommand(cmd::CommandTable& t) {
  t.Add({.name = "migrate",
         .arity = -6,
         .flags = cmd::kWrite,
         .first_key = 3,
         .last_key = 3,
         .key_step = 1,
         .handler = Migrate,
         .getkeys = MigrateKeys,
         .group = "keyspace",
         .acl_categories = "keyspace dangerous",
         .summary = "Atomically transfer a key from a Redis instance to another one.",
         .since = "2.6.0"});
}

}  // namespace kv::server
