// Consumer groups (Redis 7.0 t_stream.c): XGROUP, XACK, XPENDING, and the group side of
// XREADGROUP (XCLAIM and XAUTOCLAIM are in stream_claims.cc). What they change reaches replicas and
// the AOF as Redis sends it: XCLAIM ... FORCE JUSTID LASTID per delivered or claimed entry, XGROUP
// SETID for NOACK reads, XGROUP CREATECONSUMER for consumers a NOACK read creates; never the
// command itself.
#include <string>
#include <vector>

#include "cmd/errors.h"
#include "cmd/stream_cmds.h"
#include "common/strutil.h"

namespace kv::cmd::stream {

using store::StreamConsumer;
using store::StreamGroup;
using store::StreamID;
using store::StreamNack;
using store::StreamValue;

bool RangeHasTombstones(const StreamValue& s, StreamID start, StreamID end) {
  if (!s.length() || s.max_deleted_id() == StreamID::Min()) return false;
  return start <= s.max_deleted_id() && s.max_deleted_id() <= end;
}

StreamGroup* FindGroup(StreamValue& s, std::string_view name) {
  auto it = s.groups().find(name);
  return it == s.groups().end() ? nullptr : it->second.get();
}

StreamConsumer* CreateConsumer(Context& c, StreamGroup& g, std::string_view name,
                               std::string_view key) {
  auto consumer = std::make_unique<StreamConsumer>();
  consumer->name = std::string(name);
  consumer->seen_time = c.now_ms;
  StreamConsumer* p = consumer.get();
  g.consumers.emplace(std::string(name), std::move(consumer));
  c.dirty++;
  c.Notify(kNotifyStream, "xgroup-createconsumer", key);
  return p;
}

StreamConsumer* Claimer(Context& c, StreamGroup& g, std::string_view name, std::string_view key) {
  auto it = g.consumers.find(name);
  StreamConsumer* consumer =
      it != g.consumers.end() ? it->second.get() : CreateConsumer(c, g, name, key);
  consumer->seen_time = c.now_ms;
  return consumer;
}

std::vector<std::string> XclaimArgv(std::string_view key, std::string_view group,
                                    const StreamGroup& g, StreamID id, const StreamNack& nack) {
  return {"XCLAIM",
          std::string(key),
          std::string(group),
          nack.consumer->name,
          "0",
          id.ToString(),
          "TIME",
          std::to_string(nack.delivery_time),
          "RETRYCOUNT",
          std::to_string(nack.delivery_count),
          "FORCE",
          "JUSTID",
          "LASTID",
          g.last_id.ToString()};
}

std::vector<std::string> SetIdArgv(std::string_view key, std::string_view group,
                                   const StreamGroup& g) {
  return {"XGROUP",
          "SETID",
          std::string(key),
          std::string(group),
          g.last_id.ToString(),
          "ENTRIESREAD",
          std::to_string(g.entries_read)};
}

bool EntryExists(const StreamValue& s, StreamID id) {
  bool found = false;
  s.Range(id, id, false, [&](StreamID, std::span<const StreamValue::FieldValue>) {
    found = true;
    return false;
  });
  return found;
}

// The entry at id as a reply element; false (nothing answered) when it is gone.
bool ReplyOneEntry(Context& c, const StreamValue& s, StreamID id) {
  bool found = false;
  s.Range(id, id, false, [&](StreamID eid, std::span<const StreamValue::FieldValue> f) {
    ReplyEntry(c, eid, f);
    found = true;
    return false;
  });
  return found;
}

// Moves a pending entry to `to` (the NACK stays in the group's PEL).
void GiveNack(StreamNack* nack, StreamID id, StreamConsumer* to) {
  if (nack->consumer == to) return;
  if (nack->consumer) nack->consumer->pel.erase(id);
  to->pel[id] = nack;
  nack->consumer = to;
}

void RemoveNack(StreamGroup& g, StreamID id) {
  auto it = g.pel.find(id);
  if (it == g.pel.end()) return;
  if (it->second->consumer) it->second->consumer->pel.erase(id);
  g.pel.erase(it);
}

StreamGroup* LookupGroup(Context& c, StreamValue** s) {
  bool wrongtype;
  *s = ReadStream(c, c.arg(1), &wrongtype);
  if (wrongtype) return nullptr;
  StreamGroup* g = *s ? FindGroup(**s, c.arg(2)) : nullptr;
  if (!g) {
    c.Error("-NOGROUP No such key '" + std::string(c.arg(1)) + "' or consumer group '" +
            std::string(c.arg(2)) + "'");
  }
  return g;
}

void ReplyGroupRange(Context& c, StreamValue& s, std::string_view key, std::string_view group_name,
                     StreamGroup& g, StreamConsumer& consumer, StreamID start, size_t count,
                     bool noack, bool history) {
  std::string body;
  resp::ReplyWriter w(&body, c.out.proto());
  Context sub(c.args, w, c.ks, c.session, c.hooks, c.stats, c.now_ms);
  size_t n = 0;
  if (history) {
    // streamReplyWithRangeFromConsumerPEL: its pending entries from start; one deleted since
    // is answered as [id, nil].
    for (auto it = consumer.pel.lower_bound(start);
         it != consumer.pel.end() && (!count || n < count); ++it) {
      if (!ReplyOneEntry(sub, s, it->first)) {
        w.Array(2);
        w.Bulk(it->first.ToString());
        w.NullArray();
      } else {
        it->second->delivery_time = c.now_ms;
        it->second->delivery_count++;
      }
      n++;
    }
    c.out.Array(n);
    c.out.Raw(body);
    return;
  }
  bool propagate_last_id = false;
  s.Range(start, StreamID::Max(), false,
          [&](StreamID id, std::span<const StreamValue::FieldValue> fields) {
            if (id > g.last_id) {
              if (g.entries_read != -1 && !RangeHasTombstones(s, id, StreamID::Max())) {
                g.entries_read++;
              } else if (s.entries_added()) {
                g.entries_read = s.EstimateDistance(id);
              }
              g.last_id = id;
              if (noack) propagate_last_id = true;
            }
            ReplyEntry(sub, id, fields);
            if (!noack) {
              auto it = g.pel.find(id);
              StreamNack* nack;
              if (it == g.pel.end()) {
                auto fresh = std::make_unique<StreamNack>();
                nack = fresh.get();
                g.pel.emplace(id, std::move(fresh));
              } else {
                nack = it->second.get();  // delivered before: it moves to this consumer
              }
              GiveNack(nack, id, &consumer);
              nack->delivery_time = c.now_ms;
              nack->delivery_count = 1;
              c.propagate.push_back(XclaimArgv(key, group_name, g, id, *nack));
            }
            n++;
            return !count || n < count;
          });
  if (propagate_last_id) c.propagate.push_back(SetIdArgv(key, group_name, g));
  c.out.Array(n);
  c.out.Raw(body);
}

namespace {

// XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP (xgroupCommand, which every
// subcommand runs).
void XGroupImpl(Context& c) {
  std::string_view opt = c.arg(1);
  StreamValue* s = nullptr;
  StreamGroup* cg = nullptr;
  bool mkstream = false;
  int64_t entries_read = -1;
  std::string_view group;
  if (c.argc() >= 4) {
    bool create = EqualsIgnoreCase(opt, "create"), setid = EqualsIgnoreCase(opt, "setid");
    for (size_t i = 5; i < c.argc();) {
      if (create && EqualsIgnoreCase(c.arg(i), "mkstream")) {
        mkstream = true;
        i++;
      } else if ((create || setid) && EqualsIgnoreCase(c.arg(i), "entriesread") &&
                 i + 1 < c.argc()) {
        auto v = ParseInt64(c.arg(i + 1));
        if (!v) {
          c.Error(OpStatus::kNotInteger);
          return;
        }
        if (*v < 0 && *v != -1) {
          c.Error("value for ENTRIESREAD must be positive or -1");
          return;
        }
        entries_read = *v;
        i += 2;
      } else {
        c.Error(SubcommandSyntax(c.arg(1), "xgroup"));
        return;
      }
    }
    bool wrongtype;
    s = WriteStream(c, c.arg(2), &wrongtype);
    if (wrongtype) return;
    group = c.arg(3);
  }
  if (c.argc() >= 4 && !mkstream) {
    if (!s) {
      c.Error(
          "The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
          "use the MKSTREAM option to create an empty stream automatically.");
      return;
    }
    cg = FindGroup(*s, group);
    if (!cg && (EqualsIgnoreCase(opt, "setid") || EqualsIgnoreCase(opt, "createconsumer") ||
                EqualsIgnoreCase(opt, "delconsumer"))) {
      c.Error("-NOGROUP No such consumer group '" + std::string(group) + "' for key name '" +
              std::string(c.arg(2)) + "'");
      return;
    }
  }
  if (c.argc() == 2 && EqualsIgnoreCase(opt, "help")) {
    static constexpr std::string_view kLines[] = {
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
    };
    c.ReplyHelp(kLines);
  } else if (EqualsIgnoreCase(opt, "create") && c.argc() >= 5 && c.argc() <= 8) {
    StreamID id;
    if (c.arg(4) == "$") {
      id = s ? s->last_id() : StreamID{};
    } else if (!ParseId(&c, c.arg(4), &id, 0, true, nullptr)) {
      return;
    }
    if (!s) {
      c.ks.Set(c.session.db, c.arg(2),
               store::Value::Object(store::ObjType::kStream, std::make_unique<StreamValue>()));
      s = c.LookupWrite(c.arg(2))->value.As<StreamValue>();
      c.Notify(kNotifyNew, "new", c.arg(2));
      c.hooks.KeyModified(c.session.db, c.arg(2));
    }
    if (FindGroup(*s, group)) {
      c.Error("-BUSYGROUP Consumer Group name already exists");
      return;
    }
    auto g = std::make_unique<StreamGroup>();
    g->last_id = id;
    g->entries_read = entries_read;
    s->groups().emplace(std::string(group), std::move(g));
    c.out.Ok();
    c.dirty++;  // Redis signals the key only when MKSTREAM created it
    c.Notify(kNotifyStream, "xgroup-create", c.arg(2));
  } else if (EqualsIgnoreCase(opt, "setid") && (c.argc() == 5 || c.argc() == 7)) {
    StreamID id;
    if (c.arg(4) == "$") {
      id = s->last_id();
    } else if (!ParseId(&c, c.arg(4), &id, 0, false, nullptr)) {
      return;
    }
    cg->last_id = id;
    cg->entries_read = entries_read;
    c.out.Ok();
    c.dirty++;
    c.Notify(kNotifyStream, "xgroup-setid", c.arg(2));
  } else if (EqualsIgnoreCase(opt, "destroy") && c.argc() == 4) {
    if (cg) {
      s->groups().erase(s->groups().find(group));
      c.out.Int(1);
      // Also wakes XREADGROUP clients blocked on the group, to answer -NOGROUP.
      c.Changed(c.arg(2), kNotifyStream, "xgroup-destroy");
    } else {
      c.out.Int(0);
    }
  } else if (EqualsIgnoreCase(opt, "createconsumer") && c.argc() == 5) {
    if (cg->consumers.count(c.arg(4))) {
      c.out.Int(0);
    } else {
      CreateConsumer(c, *cg, c.arg(4), c.arg(2));
      c.out.Int(1);
    }
  } else if (EqualsIgnoreCase(opt, "delconsumer") && c.argc() == 5) {
    int64_t pending = 0;
    auto it = cg->consumers.find(c.arg(4));
    if (it != cg->consumers.end()) {
      pending = static_cast<int64_t>(it->second->pel.size());
      for (const auto& [id, nack] : it->second->pel) cg->pel.erase(id);
      cg->consumers.erase(it);
      c.dirty++;
      c.Notify(kNotifyStream, "xgroup-delconsumer", c.arg(2));
    }
    c.out.Int(pending);
  } else {
    c.Error(SubcommandSyntax(c.arg(1), "xgroup"));
  }
}

}  // namespace

void XGroup(Context& c) { XGroupImpl(c); }

void XAck(Context& c) {
  bool wrongtype;
  StreamValue* s = ReadStream(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  StreamGroup* g = s ? FindGroup(*s, c.arg(2)) : nullptr;
  if (!g) {
    c.out.Int(0);
    return;
  }
  std::vector<StreamID> ids;
  if (!ParseIds(c, 3, &ids)) return;
  int64_t acked = 0;
  for (StreamID id : ids) {
    if (!g->pel.count(id)) continue;
    RemoveNack(*g, id);
    acked++;
    c.dirty++;
  }
  c.out.Int(acked);
}

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
void XPending(Context& c) {
  bool justinfo = c.argc() == 3;
  if (c.argc() != 3 && (c.argc() < 6 || c.argc() > 9)) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  StreamID start, end;
  int64_t count = 0, minidle = 0;
  std::string_view consumer_name;
  bool have_consumer = false;
  if (c.argc() >= 6) {
    size_t idx = 3;
    if (EqualsIgnoreCase(c.arg(3), "idle")) {
      auto v = ParseInt64(c.arg(4));
      if (!v) {
        c.Error(OpStatus::kNotInteger);
        return;
      }
      minidle = *v;
      if (c.argc() < 8) {
        c.Error(OpStatus::kSyntax);
        return;
      }
      idx += 2;
    }
    auto v = ParseInt64(c.arg(idx + 2));
    if (!v) {
      c.Error(OpStatus::kNotInteger);
      return;
    }
    count = *v < 0 ? 0 : *v;
    bool startex, endex;
    if (!ParseIntervalId(c, c.arg(idx), &start, &startex, 0)) return;
    if (startex && !start.Incr()) {
      c.Error("invalid start ID for the interval");
      return;
    }
    if (!ParseIntervalId(c, c.arg(idx + 1), &end, &endex, UINT64_MAX)) return;
    if (endex && !end.Decr()) {
      c.Error("invalid end ID for the interval");
      return;
    }
    if (idx + 3 < c.argc()) {
      consumer_name = c.arg(idx + 3);
      have_consumer = true;
    }
  }
  StreamValue* s;
  StreamGroup* g = LookupGroup(c, &s);
  if (!g) return;
  if (justinfo) {
    c.out.Array(4);
    c.out.Int(static_cast<int64_t>(g->pel.size()));
    if (g->pel.empty()) {
      c.out.Null();
      c.out.Null();
      c.out.NullArray();
      return;
    }
    c.out.Bulk(g->pel.begin()->first.ToString());
    c.out.Bulk(g->pel.rbegin()->first.ToString());
    size_t with = 0;
    for (const auto& [name, cons] : g->consumers) with += cons->pel.empty() ? 0 : 1;
    c.out.Array(with);
    for (const auto& [name, cons] : g->consumers) {
      if (cons->pel.empty()) continue;
      c.out.Array(2);
      c.out.Bulk(name);
      c.out.Bulk(std::to_string(cons->pel.size()));
    }
    return;
  }
  const std::map<StreamID, StreamNack*>* cpel = nullptr;
  if (have_consumer) {
    auto it = g->consumers.find(consumer_name);
    if (it == g->consumers.end()) {
      c.out.Array(0);
      return;
    }
    cpel = &it->second->pel;
  }
  std::string body;
  resp::ReplyWriter w(&body, c.out.proto());
  size_t n = 0;
  auto visit = [&](StreamID id, const StreamNack& nack) {
    if (id > end || count == 0) return false;
    if (minidle && c.now_ms - nack.delivery_time < minidle) return true;
    n++;
    count--;
    w.Array(4);
    w.Bulk(id.ToString());
    w.Bulk(nack.consumer->name);
    int64_t elapsed = c.now_ms - nack.delivery_time;
    w.Int(elapsed < 0 ? 0 : elapsed);
    w.Int(static_cast<int64_t>(nack.delivery_count));
    return true;
  };
  if (cpel) {
    for (auto it = cpel->lower_bound(start); it != cpel->end(); ++it) {
      if (!visit(it->first, *it->second)) break;
    }
  } else {
    for (auto it = g->pel.lower_bound(start); it != g->pel.end(); ++it) {
      if (!visit(it->first, *it->second)) break;
    }
  }
  c.out.Array(n);
  c.out.Raw(body);
}

}  // namespace kv::cmd::stream
