// XREAD (Redis 7.0 xreadCommand): the entries after the given IDs of several streams, at once
// or, with BLOCK, when one of the streams gets new entries.
#include <string>
#include <vector>

#include "cmd/stream_cmds.h"
#include "common/strutil.h"

namespace kv::cmd::stream {

using store::StreamID;
using store::StreamValue;

namespace {
constexpr int64_t kBlockedDefaultCount = 1000;  // XREAD_BLOCKED_DEFAULT_COUNT
}  // namespace

void XRead(Context& c) {
  int64_t deadline = 0, count = 0;
  bool block = false;
  size_t streams_arg = 0, streams_count = 0;
  for (size_t i = 1; i < c.argc(); i++) {
    size_t moreargs = c.argc() - i - 1;
    std::string_view o = c.arg(i);
    if (EqualsIgnoreCase(o, "block") && moreargs) {
      if (!c.ParseBlockTimeoutMs(c.arg(++i), &deadline)) return;
      block = true;
    } else if (EqualsIgnoreCase(o, "count") && moreargs) {
      auto v = ParseInt64(c.arg(++i));
      if (!v) {
        c.Error(OpStatus::kNotInteger);
        return;
      }
      count = *v < 0 ? 0 : *v;
    } else if (EqualsIgnoreCase(o, "streams") && moreargs) {
      streams_arg = i + 1;
      streams_count = c.argc() - streams_arg;
      if (streams_count % 2 != 0) {
        c.Error(
            "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.");
        return;
      }
      streams_count /= 2;
      break;
    } else if (EqualsIgnoreCase(o, "group") && moreargs >= 2) {
      c.Error("The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
      return;
    } else if (EqualsIgnoreCase(o, "noack")) {
      c.Error("The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
      return;
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  if (streams_arg == 0) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  std::vector<StreamID> ids(streams_count);
  for (size_t i = 0; i < streams_count; i++) {
    std::string_view key = c.arg(streams_arg + i), arg = c.arg(streams_arg + streams_count + i);
    bool wrongtype;
    StreamValue* s = ReadStream(c, key, &wrongtype);
    if (wrongtype) return;
    if (arg == "$") {
      ids[i] = s ? s->last_id() : StreamID{};
      continue;
    }
    if (arg == ">") {
      c.Error(
          "The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
          "<consumer> option.");
      return;
    }
    if (!ParseId(&c, arg, &ids[i], 0, true, nullptr)) return;
  }

  // Serve what is there: every stream holding an entry after its ID.
  std::string body;
  resp::ReplyWriter w(&body, c.out.proto());
  Context sub(c.args, w, c.ks, c.session, c.hooks, c.stats, c.now_ms);
  size_t served = 0;
  for (size_t i = 0; i < streams_count; i++) {
    std::string_view key = c.arg(streams_arg + i);
    store::Entry* e = c.LookupRead(key);
    if (!e || e->value.type() != store::ObjType::kStream) continue;
    const StreamValue& s = *e->value.As<StreamValue>();
    StreamID maxid;
    if (s.length() == 0 || !s.EdgeId(false, &maxid) || !(maxid > ids[i])) continue;
    served++;
    if (c.out.proto() == 2) w.Array(2);
    w.Bulk(key);
    StreamID start = ids[i];
    start.Incr();
    ReplyRange(sub, s, start, StreamID::Max(), static_cast<size_t>(count), false);
  }
  if (served) {
    if (c.out.proto() == 2) {
      c.out.Array(served);
    } else {
      c.out.Map(served);
    }
    c.out.Raw(body);
    return;
  }
  if (!block || c.session.deny_blocking) {
    c.out.NullArray();
    return;
  }
  BlockRequest req;
  req.keys.assign(c.args.begin() + static_cast<std::ptrdiff_t>(streams_arg),
                  c.args.begin() + static_cast<std::ptrdiff_t>(streams_arg + streams_count));
  req.deadline_ms = deadline;
  req.null_array = true;
  req.type = store::ObjType::kStream;
  // Woken, it reads after the IDs it blocked with ("$" resolved), at most COUNT or 1000.
  req.retry_args = {"XREAD", "COUNT", std::to_string(count ? count : kBlockedDefaultCount),
                    "BLOCK", "0",     "STREAMS"};
  for (size_t i = 0; i < streams_count; i++) req.retry_args.emplace_back(c.arg(streams_arg + i));
  for (const StreamID& id : ids) req.retry_args.push_back(id.ToString());
  c.block = std::move(req);
}

}  // namespace kv::cmd::stream
