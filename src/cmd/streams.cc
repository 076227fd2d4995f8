// Streams (Redis 7.0 t_stream.c): the ID parsing and reply helpers the stream files share, XLEN
// XRANGE XREVRANGE XDEL XSETID, and the registration of the whole family (XADD and XTRIM are in
// stream_add.cc, XREAD and XREADGROUP in stream_read.cc, the consumer groups in stream_groups.cc
// and stream_claims.cc, XINFO in stream_info.cc). The type is store/stream_type.h; argument
// parsing, replies, errors and what is propagated follow Redis' functions named in the comments.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/context.h"
#include "cmd/errors.h"
#include "cmd/key_finders.h"
#include "cmd/registry.h"
#include "cmd/stream_cmds.h"
#include "common/strutil.h"

namespace kv::cmd {
namespace stream {

using store::Entry;
using store::ObjType;
using store::StreamID;
using store::StreamValue;

namespace {

// Redis' string2ull: string2ll, else strtoull (which takes leading spaces and a '+').
bool String2ull(const char* s, uint64_t* v) {
  if (auto ll = ParseInt64(s)) {
    if (*ll < 0) return false;
    *v = static_cast<uint64_t>(*ll);
    return true;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long r = strtoull(s, &end, 10);
  if (errno == EINVAL || errno == ERANGE || !(*s != '\0' && *end == '\0')) return false;
  *v = r;
  return true;
}

}  // namespace

bool ParseId(Context* c, std::string_view arg, StreamID* id, uint64_t missing_seq, bool strict,
             bool* seq_given) {
  char buf[128];
  if (arg.size() > sizeof(buf) - 1) goto invalid;
  memcpy(buf, arg.data(), arg.size());
  buf[arg.size()] = '\0';
  if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0') goto invalid;
  if (seq_given) *seq_given = true;
  if (buf[0] == '-' && buf[1] == '\0') {
    *id = StreamID::Min();
    return true;
  }
  if (buf[0] == '+' && buf[1] == '\0') {
    *id = StreamID::Max();
    return true;
  }
  {
    uint64_t ms, seq;
    char* dash = strchr(buf, '-');
    if (dash) *dash = '\0';
    if (!String2ull(buf, &ms)) goto invalid;
    if (dash) {
      if (seq_given && dash[1] == '*' && dash[2] == '\0') {
        seq = 0;
        *seq_given = false;
      } else if (!String2ull(dash + 1, &seq)) {
        goto invalid;
      }
    } else {
      seq = missing_seq;
    }
    *id = {ms, seq};
    return true;
  }
invalid:
  if (c) c->Error("Invalid stream ID specified as stream command argument");
  return false;
}

StreamValue* ReadStream(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupReadOfType(key, ObjType::kStream, wrongtype);
  return e ? e->value.As<StreamValue>() : nullptr;
}

StreamValue* WriteStream(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupWrite(key);
  *wrongtype = e && e->value.type() != ObjType::kStream;
  if (*wrongtype) {
    c.Error(OpStatus::kWrongType);
    return nullptr;
  }
  return e ? e->value.As<StreamValue>() : nullptr;
}

void ReplyEntry(Context& c, StreamID id, std::span<const StreamValue::FieldValue> fields) {
  c.out.Array(2);
  c.out.Bulk(id.ToString());
  c.out.Array(fields.size() * 2);
  for (const auto& [f, v] : fields) {
    c.out.Bulk(f);
    c.out.Bulk(v);
  }
}

size_t ReplyRange(Context& c, const StreamValue& s, StreamID start, StreamID end, size_t count,
                  bool rev) {
  std::string body;
  resp::ReplyWriter w(&body, c.out.proto());
  resp::ReplyWriter& saved = c.out;
  size_t n = 0;
  // Entries go to a side buffer: the array's length comes first.
  Context sub(c.args, w, c.ks, c.session, c.hooks, c.stats, c.now_ms);
  s.Range(start, end, rev, [&](StreamID id, std::span<const StreamValue::FieldValue> fields) {
    ReplyEntry(sub, id, fields);
    n++;
    return count == 0 || n < count;
  });
  saved.Array(n);
  saved.Raw(body);
  return n;
}

bool ParseIds(Context& c, size_t from, std::vector<StreamID>* ids) {
  ids->resize(c.argc() - from);
  for (size_t j = from; j < c.argc(); j++) {
    if (!ParseId(&c, c.arg(j), &(*ids)[j - from], 0, true, nullptr)) return false;
  }
  return true;
}

// Redis' streamParseIntervalIDOrReply: "(" makes the bound exclusive (and the ID strict).
bool ParseIntervalId(Context& c, std::string_view arg, StreamID* id, bool* exclude,
                     uint64_t missing_seq) {
  *exclude = arg.size() > 1 && arg[0] == '(';
  if (*exclude) return ParseId(&c, arg.substr(1), id, missing_seq, true, nullptr);
  return ParseId(&c, arg, id, missing_seq, false, nullptr);
}

namespace {

void XLen(Context& c) {
  bool wrongtype;
  StreamValue* s = ReadStream(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  c.out.Int(s ? static_cast<int64_t>(s->length()) : 0);
}

// XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n] (xrangeGenericCommand).
void RangeGeneric(Context& c, bool rev) {
  std::string_view startarg = rev ? c.arg(3) : c.arg(2);
  std::string_view endarg = rev ? c.arg(2) : c.arg(3);
  StreamID start, end;
  bool startex, endex;
  if (!ParseIntervalId(c, startarg, &start, &startex, 0)) return;
  if (startex && !start.Incr()) {
    c.Error("invalid start ID for the interval");
    return;
  }
  if (!ParseIntervalId(c, endarg, &end, &endex, UINT64_MAX)) return;
  if (endex && !end.Decr()) {
    c.Error("invalid end ID for the interval");
    return;
  }
  int64_t count = -1;
  for (size_t j = 4; j < c.argc(); j++) {
    if (EqualsIgnoreCase(c.arg(j), "count") && j + 1 < c.argc()) {
      auto v = ParseInt64(c.arg(j + 1));
      if (!v) {
        c.Error(OpStatus::kNotInteger);
        return;
      }
      count = *v < 0 ? 0 : *v;
      j++;
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  bool wrongtype;
  StreamValue* s = ReadStream(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  if (!s) {
    c.out.EmptyArray();
    return;
  }
  if (count == 0) {
    c.out.NullArray();
    return;
  }
  ReplyRange(c, *s, start, end, count == -1 ? 0 : static_cast<size_t>(count), rev);
}

void XRange(Context& c) { RangeGeneric(c, false); }
void XRevRange(Context& c) { RangeGeneric(c, true); }

void XDel(Context& c) {
  bool wrongtype;
  StreamValue* s = WriteStream(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  if (!s) {
    c.out.Int(0);
    return;
  }
  // Every ID is checked before anything is deleted.
  std::vector<StreamID> ids;
  if (!ParseIds(c, 2, &ids)) return;
  int64_t deleted = 0;
  bool first_entry = false;
  for (const StreamID& id : ids) {
    if (!s->Delete(id)) continue;
    if (id == s->first_id()) first_entry = true;
    if (id > s->max_deleted_id()) s->set_max_deleted_id(id);
    deleted++;
  }
  if (deleted) {
    if (s->length() == 0) {
      s->set_first_id(StreamID{});
    } else if (first_entry) {
      StreamID first;
      s->EdgeId(true, &first);
      s->set_first_id(first);
    }
    c.Changed(c.arg(1), kNotifyStream, "xdel");
    c.dirty += static_cast<uint64_t>(deleted) - 1;
  }
  c.out.Int(deleted);
}

void XSetId(Context& c) {
  StreamID id, max_xdel;
  int64_t entries_added = -1;
  if (!ParseId(&c, c.arg(2), &id, 0, true, nullptr)) return;
  for (size_t i = 3; i < c.argc();) {
    size_t moreargs = c.argc() - 1 - i;
    std::string_view opt = c.arg(i);
    if (EqualsIgnoreCase(opt, "entriesadded") && moreargs) {
      auto v = ParseInt64(c.arg(i + 1));
      if (!v) {
        c.Error(OpStatus::kNotInteger);
        return;
      }
      if (*v < 0) {
        c.Error("entries_added must be positive");
        return;
      }
      entries_added = *v;
      i += 2;
    } else if (EqualsIgnoreCase(opt, "maxdeletedid") && moreargs) {
      if (!ParseId(&c, c.arg(i + 1), &max_xdel, 0, true, nullptr)) return;
      if (id < max_xdel) {
        c.Error("The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
        return;
      }
      i += 2;
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  bool wrongtype;
  StreamValue* s = WriteStream(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  if (!s) {
    c.Error(OpStatus::kNoSuchKey);
    return;
  }
  if (s->length() > 0) {
    StreamID maxid;
    s->EdgeId(false, &maxid);
    if (id < maxid) {
      c.Error("The ID specified in XSETID is smaller than the target stream top item");
      return;
    }
    if (entries_added != -1 && s->length() > static_cast<uint64_t>(entries_added)) {
      c.Error("The entries_added specified in XSETID is smaller than the target stream length");
      return;
    }
  }
  s->set_last_id(id);
  if (entries_added != -1) s->set_entries_added(static_cast<uint64_t>(entries_added));
  if (max_xdel != StreamID::Min()) s->set_max_deleted_id(max_xdel);
  c.out.Ok();
  c.Changed(c.arg(1), kNotifyStream, "xsetid");
}

// The container never runs itself: ResolveCommand dispatches to a subcommand or fails arity.
void XGroupContainer(Context& c) { c.Error(UnknownSubcommand(c.arg(1), "xgroup")); }
void XInfoContainer(Context& c) { c.Error(UnknownSubcommand(c.arg(1), "xinfo")); }

}  // namespace
}  // namespace stream

void RegisterStreamCommands(CommandTable& t) {
  using namespace stream;  // NOLINT(build/namespaces): the handlers
  static const CommandRow kRows[] = {
      {"xadd", -5, kWrite | kDenyOom | kFast, 1, 1, 1, XAdd, "Appends a new entry to a stream",
       "5.0.0"},
      {"xlen", 2, kReadOnly | kFast, 1, 1, 1, XLen, "Return the number of entries in a stream",
       "5.0.0"},
      {"xrange", -4, kReadOnly, 1, 1, 1, XRange,
       "Return a range of elements in a stream, with IDs matching the specified IDs interval",
       "5.0.0"},
      {"xrevrange", -4, kReadOnly, 1, 1, 1, XRevRange,
       "Return a range of elements in a stream, with IDs matching the specified IDs interval, in "
       "reverse order (from greater to smaller IDs) compared to XRANGE",
       "5.0.0"},
      {"xdel", -3, kWrite | kFast, 1, 1, 1, XDel,
       "Removes the specified entries from the stream. Returns the number of items actually "
       "deleted, that may be different from the number of IDs passed in case certain IDs do "
       "not exist.",
       "5.0.0"},
      {"xtrim", -4, kWrite, 1, 1, 1, XTrim,
       "Trims the stream to (approximately if '~' is passed) "
       "a certain size",
       "5.0.0"},
      {"xsetid", -3, kWrite | kDenyOom | kFast, 1, 1, 1, XSetId,
       "An internal command for replicating stream values", "5.0.0"},
      {"xread", -4, kReadOnly | kBlocking, 0, 0, 0, XRead,
       "Return never seen elements in multiple streams, with IDs greater than the ones reported "
       "by the caller for each stream. Can block.",
       "5.0.0", XreadKeys},
  };
  AddRows(t, kRows, "stream");
  static const CommandRow kGroupRows[] = {
      {"xreadgroup", -7, kWrite | kBlocking, 0, 0, 0, XReadGroup,
       "Return new entries from a stream using a consumer group, or access the history of the "
       "pending entries for a given consumer. Can block.",
       "5.0.0", XreadKeys},
      {"xack", -4, kWrite | kFast, 1, 1, 1, XAck,
       "Marks a pending message as correctly processed, effectively removing it from the "
       "pending entries list of the consumer group. Return value of the command is the number "
       "of messages successfully acknowledged, that is, the IDs we were actually able to "
       "resolve in the PEL.",
       "5.0.0"},
      {"xpending", -3, kReadOnly, 1, 1, 1, XPending,
       "Return information and entries from a stream consumer group pending entries list, that "
       "are messages fetched but never acknowledged.",
       "5.0.0"},
      {"xclaim", -6, kWrite | kFast, 1, 1, 1, XClaim,
       "Changes (or acquires) ownership of a message in a consumer group, as if the message was "
       "delivered to the specified consumer.",
       "5.0.0"},
      {"xautoclaim", -6, kWrite | kFast, 1, 1, 1, XAutoClaim,
       "Changes (or acquires) ownership of messages in a consumer group, as if the messages "
       "were delivered to the specified consumer.",
       "6.2.0"},
  };
  AddRows(t, kGroupRows, "stream");
  // XGROUP and XINFO: every subcommand runs the one handler, as in Redis.
  struct Sub {
    const char* name;
    int arity;
    uint32_t flags;
    const char* summary;
    const char* since;
  };
  auto container = [&](const char* name, Handler container_fn, Handler fn, const char* summary,
                       std::span<const Sub> subs) {
    CommandSpec* parent = t.Add({.name = name,
                                 .arity = -2,
                                 .handler = container_fn,
                                 .group = "stream",
                                 .summary = summary,
                                 .since = "5.0.0"});
    for (const Sub& sub : subs) {
      t.AddSub(parent, {.name = sub.name,
                        .arity = sub.arity,
                        .flags = sub.flags,
                        .first_key = 2,
                        .last_key = 2,
                        .key_step = 1,
                        .handler = fn,
                        .group = "stream",
                        .summary = sub.summary,
                        .since = sub.since});
    }
    t.AddSub(parent, {.name = "help",
                      .arity = 2,
                      .flags = kLoading | kStale,
                      .handler = fn,
                      .group = "stream",
                      .summary = "Show helpful text about the different subcommands",
                      .since = "5.0.0"});
  };
  static const Sub kGroupSubs[] = {
      {"create", -5, kWrite | kDenyOom, "Create a consumer group.", "5.0.0"},
      {"setid", -5, kWrite, "Set a consumer group to an arbitrary last delivered ID value.",
       "5.0.0"},
      {"destroy", 4, kWrite, "Destroy a consumer group.", "5.0.0"},
      {"createconsumer", 5, kWrite | kDenyOom, "Create a consumer in a consumer group.", "6.2.0"},
      {"delconsumer", 5, kWrite, "Delete a consumer from a consumer group.", "5.0.0"},
  };
  container("xgroup", XGroupContainer, XGroup, "A container for consumer groups commands",
            kGroupSubs);
  static const Sub kInfoSubs[] = {
      {"consumers", 4, kReadOnly, "List the consumers in a consumer group", "5.0.0"},
      {"groups", 3, kReadOnly, "List the consumer groups of a stream", "5.0.0"},
      {"stream", -3, kReadOnly, "Get information about a stream", "5.0.0"},
  };
  container("xinfo", XInfoContainer, XInfo, "A container for stream introspection commands",
            kInfoSubs);
}

}  // namespace kv::cmd
