#include "cmd/context.h"

#include <cmath>
#include <cstdint>

#include "cmd/command.h"
#include "common/strutil.h"

namespace kv::cmd {

store::Entry* Context::LookupRead(std::string_view key) {
  store::Entry* e = ks.Lookup(session.db, key, now_ms,
                              session.obey ? store::Looker::kPrimary : store::Looker::kClient);
  if (e) {
    stats.keyspace_hits++;
    ks.Touch(e);
  } else {
    stats.keyspace_misses++;
    Notify(kNotifyKeyMiss, "keymiss", key);
  }
  return e;
}

store::Entry* Context::LookupWrite(std::string_view key) {
  // A write command of a writable replica's own client removes the expired key it finds (as
  // Redis' LOOKUP_WRITE); a read command that looks up for writing (PFCOUNT's cache) hides it.
  store::Looker who = store::Looker::kClient;
  if (session.obey) {
    who = store::Looker::kPrimary;
  } else if (spec != nullptr &&
             ((spec->flags | (spec->parent ? spec->parent->flags : 0)) & kWrite)) {
    who = store::Looker::kClientWrite;
  }
  store::Entry* e = ks.Lookup(session.db, key, now_ms, who);
  if (e) ks.Touch(e);
  return e;
}

store::Entry* Context::LookupReadOfType(std::string_view key, store::ObjType type,
                                        bool* wrongtype) {
  store::Entry* e = LookupRead(key);
  *wrongtype = e && e->value.type() != type;
  if (*wrongtype) {
    Error(OpStatus::kWrongType);
    return nullptr;
  }
  return e;
}

void Context::Changed(std::string_view key, int klass, std::string_view event) {
  dirty++;
  hooks.KeyModified(session.db, key);
  if (!event.empty()) Notify(klass, event, key);
}

void Context::ReplyHelp(std::span<const std::string_view> lines) {
  out.Array(lines.size() + 3);
  out.Simple(ToUpper(args[0]) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  for (std::string_view line : lines) out.Simple(line);
  out.Simple("HELP");
  out.Simple("    Prints this help.");
}

bool Context::ParseCollectionScanOptions(CollectionScanOptions* o) {
  for (size_t i = 3; i < argc(); i += 2) {
    bool has_value = i + 1 < argc();
    if (EqualsIgnoreCase(arg(i), "count") && has_value) {
      if (!ParseInt(arg(i + 1), &o->count)) return false;
      if (o->count < 1) {
        Error(OpStatus::kSyntax);
        return false;
      }
    } else if (EqualsIgnoreCase(arg(i), "match") && has_value) {
      o->pattern = arg(i + 1);
      o->use_pattern = o->pattern != "*";
    } else {
      Error(OpStatus::kSyntax);
      return false;
    }
  }
  return true;
}

bool Context::ParseInt(std::string_view s, int64_t* v, OpStatus err) {
  auto r = kv::ParseInt64(s);
  if (!r) {
    Error(err);
    return false;
  }
  *v = *r;
  return true;
}

bool Context::ParseBlockTimeout(std::string_view s, int64_t* deadline_ms) {
  // Redis' getTimeoutFromObjectOrReply in seconds: ceil(seconds * 1000), then the checks.
  auto secs = kv::ParseLongDouble(s);
  if (!secs) {
    Error("timeout is not a float or out of range");
    return false;
  }
  long double ms = std::ceil(*secs * 1000.0L);
  if (ms > static_cast<long double>(INT64_MAX)) {
    Error("timeout is out of range");
    return false;
  }
  if (ms < 0) {
    Error(OpStatus::kNegativeTimeout);
    return false;
  }
  int64_t tms = static_cast<int64_t>(ms);
  if (tms > 0 && tms > INT64_MAX - now_ms) {
    Error("timeout is out of range");
    return false;
  }
  *deadline_ms = tms > 0 ? now_ms + tms : 0;
  return true;
}

bool Context::ParseBlockTimeoutMs(std::string_view s, int64_t* deadline_ms) {
  auto ms = kv::ParseInt64(s);
  if (!ms) {
    Error("timeout is not an integer or out of range");
    return false;
  }
  if (*ms < 0) {
    Error(OpStatus::kNegativeTimeout);
    return false;
  }
  if (*ms > 0 && *ms > INT64_MAX - now_ms) {
    Error("timeout is out of range");
    return false;
  }
  *deadline_ms = *ms > 0 ? now_ms + *ms : 0;
  return true;
}

bool Context::ParseDouble(std::string_view s, double* v) {
  auto r = kv::ParseDouble(s);
  if (!r) {
    Error(OpStatus::kNotFloat);
    return false;
  }
  *v = *r;
  return true;
}

}  // namespace kv::cmd
