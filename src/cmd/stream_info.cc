// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP (Redis 7.0's
// xinfoCommand), with the group lag as streamReplyWithCGLag computes it and the radix tree's
// node count computed for the node keys as Redis' rax would hold them.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cmd/errors.h"
#include "cmd/stream_cmds.h"
#include "common/strutil.h"

namespace kv::cmd::stream {

using store::StreamGroup;
using store::StreamID;
using store::StreamValue;

namespace {

// The nodes of a radix tree (Redis' rax) holding the stream's 16-byte big-endian node keys:
// the root, one node per key, per prefix where keys branch, and per child of such a prefix
// (chains without branches or keys are one compressed node).
size_t RaxNodes(const StreamValue& s) {
  using Key = unsigned __int128;
  std::vector<Key> keys;
  keys.reserve(s.nodes().size());
  for (const auto& [id, lp] : s.nodes()) keys.push_back((Key(id.ms) << 64) | id.seq);
  if (keys.empty()) return 1;
  auto prefix = [](Key k, int bytes) -> std::pair<int, Key> {
    if (bytes == 0) return {0, 0};
    Key mask = bytes >= 16 ? ~Key(0) : ~(~Key(0) >> (8 * bytes));
    return {bytes, k & mask};
  };
  auto lcp = [](Key a, Key b) {
    Key x = a ^ b;
    int n = 0;
    while (n < 16 && !((x >> (8 * (15 - n))) & 0xff)) n++;
    return n;
  };
  std::vector<std::pair<int, Key>> nodes = {{0, 0}};  // the root
  for (size_t i = 0; i < keys.size(); i++) {
    nodes.push_back({16, keys[i]});
    if (i + 1 == keys.size()) continue;
    int l = lcp(keys[i], keys[i + 1]);
    nodes.push_back(prefix(keys[i], l));  // where they branch
    nodes.push_back(prefix(keys[i], l + 1));
    nodes.push_back(prefix(keys[i + 1], l + 1));
  }
  std::sort(nodes.begin(), nodes.end());
  return static_cast<size_t>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

// streamReplyWithCGLag (7.0): the entries the group has not read yet, or null when tombstones
// make that unknowable.
void ReplyLag(Context& c, const StreamValue& s, const StreamGroup& g) {
  if (!s.entries_added()) {
    c.out.Int(0);
    return;
  }
  if (g.entries_read != -1 && !RangeHasTombstones(s, g.last_id, StreamID::Max())) {
    c.out.Int(static_cast<int64_t>(s.entries_added()) - g.entries_read);
    return;
  }
  int64_t read = s.EstimateDistance(g.last_id);
  if (read != -1) {
    c.out.Int(static_cast<int64_t>(s.entries_added()) - read);
  } else {
    c.out.Null();
  }
}

void ReplyEntriesRead(Context& c, const StreamGroup& g) {
  if (g.entries_read != -1) {
    c.out.Int(g.entries_read);
  } else {
    c.out.Null();
  }
}

// One entry ([id, fields]) or null: XINFO STREAM's first-entry and last-entry.
void ReplyEdgeEntry(Context& c, const StreamValue& s, bool rev) {
  bool emitted = false;
  s.Range(StreamID::Min(), StreamID::Max(), rev,
          [&](StreamID id, std::span<const StreamValue::FieldValue> f) {
            ReplyEntry(c, id, f);
            emitted = true;
            return false;
          });
  if (!emitted) c.out.Null();
}

void StreamInfo(Context& c, const StreamValue& s) {
  bool full = c.argc() > 3;
  int64_t count = 10;
  if (full) {
    if ((c.argc() != 4 && c.argc() != 6) || !EqualsIgnoreCase(c.arg(3), "full") ||
        (c.argc() == 6 && !EqualsIgnoreCase(c.arg(4), "count"))) {
      c.Error(SubcommandSyntax(c.arg(1), "xinfo"));
      return;
    }
    if (c.argc() == 6) {
      auto v = ParseInt64(c.arg(5));
      if (!v) {
        c.Error(OpStatus::kNotInteger);
        return;
      }
      count = *v < 0 ? 10 : *v;
    }
  }
  c.out.Map(full ? 9 : 10);
  c.out.Bulk("length");
  c.out.Int(static_cast<int64_t>(s.length()));
  c.out.Bulk("radix-tree-keys");
  c.out.Int(static_cast<int64_t>(s.nodes().size()));
  c.out.Bulk("radix-tree-nodes");
  c.out.Int(static_cast<int64_t>(RaxNodes(s)));
  c.out.Bulk("last-generated-id");
  c.out.Bulk(s.last_id().ToString());
  c.out.Bulk("max-deleted-entry-id");
  c.out.Bulk(s.max_deleted_id().ToString());
  c.out.Bulk("entries-added");
  c.out.Int(static_cast<int64_t>(s.entries_added()));
  c.out.Bulk("recorded-first-entry-id");
  c.out.Bulk(s.first_id().ToString());
  if (!full) {
    c.out.Bulk("groups");
    c.out.Int(static_cast<int64_t>(s.groups().size()));
    c.out.Bulk("first-entry");
    ReplyEdgeEntry(c, s, false);
    c.out.Bulk("last-entry");
    ReplyEdgeEntry(c, s, true);
    return;
  }
  const size_t limit = static_cast<size_t>(count);  // 0: everything
  c.out.Bulk("entries");
  ReplyRange(c, s, StreamID::Min(), StreamID::Max(), limit, false);
  c.out.Bulk("groups");
  c.out.Array(s.groups().size());
  for (const auto& [name, g] : s.groups()) {
    c.out.Map(7);
    c.out.Bulk("name");
    c.out.Bulk(name);
    c.out.Bulk("last-delivered-id");
    c.out.Bulk(g->last_id.ToString());
    c.out.Bulk("entries-read");
    ReplyEntriesRead(c, *g);
    c.out.Bulk("lag");
    ReplyLag(c, s, *g);
    c.out.Bulk("pel-count");
    c.out.Int(static_cast<int64_t>(g->pel.size()));
    c.out.Bulk("pending");
    size_t n = limit ? std::min(limit, g->pel.size()) : g->pel.size();
    c.out.Array(n);
    size_t i = 0;
    for (auto it = g->pel.begin(); i < n; ++it, ++i) {
      c.out.Array(4);
      c.out.Bulk(it->first.ToString());
      c.out.Bulk(it->second->consumer->name);
      c.out.Int(it->second->delivery_time);
      c.out.Int(static_cast<int64_t>(it->second->delivery_count));
    }
    c.out.Bulk("consumers");
    c.out.Array(g->consumers.size());
    for (const auto& [cname, consumer] : g->consumers) {
      c.out.Map(4);
      c.out.Bulk("name");
      c.out.Bulk(cname);
      c.out.Bulk("seen-time");
      c.out.Int(consumer->seen_time);
      c.out.Bulk("pel-count");
      c.out.Int(static_cast<int64_t>(consumer->pel.size()));
      c.out.Bulk("pending");
      size_t cn = limit ? std::min(limit, consumer->pel.size()) : consumer->pel.size();
      c.out.Array(cn);
      size_t j = 0;
      for (auto it = consumer->pel.begin(); j < cn; ++it, ++j) {
        c.out.Array(3);
        c.out.Bulk(it->first.ToString());
        c.out.Int(it->second->delivery_time);
        c.out.Int(static_cast<int64_t>(it->second->delivery_count));
      }
    }
  }
}

}  // namespace

void XInfo(Context& c) {
  if (EqualsIgnoreCase(c.arg(1), "help")) {
    static constexpr std::string_view kLines[] = {
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
    };
    c.ReplyHelp(kLines);
    return;
  }
  std::string_view opt = c.arg(1), key = c.arg(2);
  bool wrongtype;
  StreamValue* s = ReadStream(c, key, &wrongtype);
  if (wrongtype) return;
  if (!s) {
    c.Error(OpStatus::kNoSuchKey);
    return;
  }
  if (EqualsIgnoreCase(opt, "consumers") && c.argc() == 4) {
    StreamGroup* g = FindGroup(*s, c.arg(3));
    if (!g) {
      c.Error("-NOGROUP No such consumer group '" + std::string(c.arg(3)) + "' for key name '" +
              std::string(key) + "'");
      return;
    }
    c.out.Array(g->consumers.size());
    for (const auto& [name, consumer] : g->consumers) {
      int64_t idle = c.now_ms - consumer->seen_time;
      c.out.Map(3);
      c.out.Bulk("name");
      c.out.Bulk(name);
      c.out.Bulk("pending");
      c.out.Int(static_cast<int64_t>(consumer->pel.size()));
      c.out.Bulk("idle");
      c.out.Int(idle < 0 ? 0 : idle);
    }
  } else if (EqualsIgnoreCase(opt, "groups") && c.argc() == 3) {
    c.out.Array(s->groups().size());
    for (const auto& [name, g] : s->groups()) {
      c.out.Map(6);
      c.out.Bulk("name");
      c.out.Bulk(name);
      c.out.Bulk("consumers");
      c.out.Int(static_cast<int64_t>(g->consumers.size()));
      c.out.Bulk("pending");
      c.out.Int(static_cast<int64_t>(g->pel.size()));
      c.out.Bulk("last-delivered-id");
      c.out.Bulk(g->last_id.ToString());
      c.out.Bulk("entries-read");
      ReplyEntriesRead(c, *g);
      c.out.Bulk("lag");
      ReplyLag(c, *s, *g);
    }
  } else if (EqualsIgnoreCase(opt, "stream")) {
    StreamInfo(c, *s);
  } else {
    c.Error(SubcommandSyntax(c.arg(1), "xinfo"));
  }
}

}  // namespace kv::cmd::stream
