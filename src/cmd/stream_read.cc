// XREAD and XREADGROUP (Redis 7.0 xreadCommand): the entries after the given IDs of several
// streams, or a consumer group's next entries (or a consumer's pending ones), at once or, with
// BLOCK, when one of the streams gets new entries.
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

namespace {

// Redis' xreadCommand, behind XREAD and XREADGROUP.
void ReadGeneric(Context& c, bool group_read) {
  int64_t deadline = 0, count = 0;
  bool block = false, noack = false;
  size_t streams_arg = 0, streams_count = 0;
  std::string_view group_name, consumer_name;
  bool have_group = false;
  for (size_t i = 1; i < c.argc(); i++) {
    size_t moreargs = c.argc() - i - 1;
    std::string_view o = c.arg(i);
    if (EqualsIgnoreCase(o, "block") && moreargs) {
      // A script could never wait: Redis refuses BLOCK there rather than ignore it.
      if (c.session.script) {
        c.Error(std::string(c.arg(0)) + " command is not allowed with BLOCK option from scripts");
        return;
      }
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
        // Redis 7.0 words it so for XREADGROUP too.
        c.Error(
            "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.");
        return;
      }
      streams_count /= 2;
      break;
    } else if (EqualsIgnoreCase(o, "group") && moreargs >= 2) {
      if (!group_read) {
        c.Error("The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
        return;
      }
      group_name = c.arg(i + 1);
      consumer_name = c.arg(i + 2);
      have_group = true;
      i += 2;
    } else if (EqualsIgnoreCase(o, "noack")) {
      if (!group_read) {
        c.Error("The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
        return;
      }
      noack = true;
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  if (streams_arg == 0) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  if (group_read && !have_group) {
    c.Error("Missing GROUP option for XREADGROUP");
    return;
  }
  if (group_read) c.prevent_propagation = true;  // it propagates XCLAIMs and the like instead
  std::vector<StreamID> ids(streams_count);
  std::vector<store::StreamGroup*> groups(streams_count, nullptr);
  for (size_t i = 0; i < streams_count; i++) {
    std::string_view key = c.arg(streams_arg + i), arg = c.arg(streams_arg + streams_count + i);
    bool wrongtype;
    StreamValue* s = ReadStream(c, key, &wrongtype);
    if (wrongtype) return;
    if (have_group) {
      groups[i] = s ? FindGroup(*s, group_name) : nullptr;
      if (!groups[i]) {
        if (c.session.woken) {
          c.Error("-NOGROUP the consumer group this client was blocked on no longer exists");
        } else {
          c.Error("-NOGROUP No such key '" + std::string(key) + "' or consumer group '" +
                  std::string(group_name) + "' in XREADGROUP with GROUP option");
        }
        return;
      }
    }
    if (arg == "$") {
      if (group_read) {
        c.Error(
            "The $ ID is meaningless in the context of XREADGROUP: you want to read the history "
            "of this consumer by specifying a proper ID, or use the > ID to get new messages. "
            "The $ ID would just return an empty result set.");
        return;
      }
      ids[i] = s ? s->last_id() : StreamID{};
      continue;
    }
    if (arg == ">") {
      if (!group_read) {
        c.Error(
            "The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
            "<consumer> option.");
        return;
      }
      ids[i] = StreamID::Max();
      continue;
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
    StreamValue& s = *e->value.As<StreamValue>();
    StreamID gt = ids[i];
    bool serve = false, history = false;
    store::StreamConsumer* consumer = nullptr;
    // A fresh read serves a stream whose last entry is past the ID; a woken one, as Redis'
    // serveClientsBlockedOnStreamKey, one whose last ID is (its reply may then be empty).
    StreamID maxid;
    auto past = [&](const StreamID& id) {
      if (c.session.woken) return s.last_id() > id;
      return s.length() && s.EdgeId(false, &maxid) && maxid > id;
    };
    if (have_group) {
      store::StreamGroup& g = *groups[i];
      if (gt != StreamID::Max()) {
        serve = history = true;  // the consumer's own pending entries
      } else if (past(g.last_id)) {
        serve = true;
        gt = g.last_id;
      }
    } else {
      serve = past(gt);
    }
    if (!serve) continue;
    if (have_group) {  // Redis 7.0 makes the consumer only when it serves it
      store::StreamGroup& g = *groups[i];
      auto it = g.consumers.find(consumer_name);
      if (it != g.consumers.end()) {
        consumer = it->second.get();
      } else {
        consumer = CreateConsumer(c, g, consumer_name, key);
        if (noack) {
          c.propagate.push_back({"XGROUP", "CREATECONSUMER", std::string(key),
                                 std::string(group_name), std::string(consumer_name)});
        }
      }
      consumer->seen_time = c.now_ms;
    }
    served++;
    if (c.out.proto() == 2) w.Array(2);
    w.Bulk(key);
    StreamID start = gt;
    start.Incr();
    if (have_group) {
      ReplyGroupRange(sub, s, key, group_name, *groups[i], *consumer, start,
                      static_cast<size_t>(count), noack, history);
      for (auto& p : sub.propagate) c.propagate.push_back(std::move(p));  // in Redis' order
      sub.propagate.clear();
      c.dirty++;
    } else {
      ReplyRange(sub, s, start, StreamID::Max(), static_cast<size_t>(count), false);
    }
  }
  c.dirty += sub.dirty;
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
  req.unblock_on_delete = group_read;
  // Woken by one of its streams, it reads that stream alone, after the ID it blocked with ("$"
  // resolved; ">" stays the group's next), at most COUNT or 1000.
  std::vector<std::string> prefix;
  std::string n = std::to_string(count ? count : kBlockedDefaultCount);
  if (group_read) {
    prefix = {"XREADGROUP", "GROUP", std::string(group_name), std::string(consumer_name),
              "COUNT",      n};
    if (noack) prefix.emplace_back("NOACK");
  } else {
    prefix = {"XREAD", "COUNT", n};
  }
  prefix.insert(prefix.end(), {"BLOCK", "0", "STREAMS"});
  for (size_t i = 0; i < streams_count; i++) {
    std::vector<std::string> argv = prefix;
    argv.emplace_back(c.arg(streams_arg + i));
    argv.push_back(ids[i] == StreamID::Max() && group_read ? ">" : ids[i].ToString());
    req.key_retry_args.push_back(std::move(argv));
  }
  c.block = std::move(req);
}

}  // namespace

void XRead(Context& c) { ReadGeneric(c, false); }
void XReadGroup(Context& c) { ReadGeneric(c, true); }

}  // namespace kv::cmd::stream
