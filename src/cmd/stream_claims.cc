// XCLAIM and XAUTOCLAIM (Redis 7.0 t_stream.c): pending entries of a consumer group change owner.
// Each claim propagates as an XCLAIM ... FORCE JUSTID LASTID; an entry deleted from the stream
// meanwhile leaves the PEL (propagated the same way); the command itself is never propagated.
#include <string>
#include <vector>

#include "cmd/stream_cmds.h"
#include "common/strutil.h"

namespace kv::cmd::stream {

using store::StreamConsumer;
using store::StreamGroup;
using store::StreamID;
using store::StreamNack;
using store::StreamValue;

namespace {

// A claimed entry: answered into `sub` (its ID alone with JUSTID), propagated as an XCLAIM.
void ReplyClaimed(Context& c, Context& sub, const StreamValue& s, const StreamGroup& g, StreamID id,
                  const StreamNack& nack, bool justid) {
  if (justid) {
    sub.out.Bulk(id.ToString());
  } else {
    ReplyOneEntry(sub, s, id);
  }
  c.propagate.push_back(XclaimArgv(c.arg(1), c.arg(2), g, id, nack));
  c.dirty++;
}

}  // namespace

// XCLAIM key group consumer min-idle-time id ... [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE]
// [JUSTID] [LASTID id]
void XClaim(Context& c) {
  c.prevent_propagation = true;
  StreamValue* s;
  StreamGroup* g = LookupGroup(c, &s);
  if (!g) return;
  auto minidle_v = ParseInt64(c.arg(4));
  if (!minidle_v) {
    c.Error("Invalid min-idle-time argument for XCLAIM");
    return;
  }
  int64_t minidle = *minidle_v < 0 ? 0 : *minidle_v;
  std::vector<StreamID> ids;
  size_t j = 5;
  for (; j < c.argc(); j++) {
    StreamID id;
    if (!ParseId(nullptr, c.arg(j), &id, 0, true, nullptr)) break;
    ids.push_back(id);
  }
  size_t last_id_arg = j;  // IDs are arguments 5 .. j-1
  int64_t retrycount = -1, deliverytime = -1;
  bool force = false, justid = false, propagate_last_id = false;
  StreamID last_id;
  const int64_t now = c.now_ms;
  for (; j < c.argc(); j++) {
    size_t moreargs = c.argc() - 1 - j;
    std::string_view opt = c.arg(j);
    auto int_arg = [&](const char* what, int64_t* v) {
      auto r = ParseInt64(c.arg(++j));
      if (!r) {
        c.Error(std::string("Invalid ") + what + " option argument for XCLAIM");
        return false;
      }
      *v = *r;
      return true;
    };
    if (EqualsIgnoreCase(opt, "force")) {
      force = true;
    } else if (EqualsIgnoreCase(opt, "justid")) {
      justid = true;
    } else if (EqualsIgnoreCase(opt, "idle") && moreargs) {
      if (!int_arg("IDLE", &deliverytime)) return;
      deliverytime = now - deliverytime;
    } else if (EqualsIgnoreCase(opt, "time") && moreargs) {
      if (!int_arg("TIME", &deliverytime)) return;
    } else if (EqualsIgnoreCase(opt, "retrycount") && moreargs) {
      if (!int_arg("RETRYCOUNT", &retrycount)) return;
    } else if (EqualsIgnoreCase(opt, "lastid") && moreargs) {
      if (!ParseId(&c, c.arg(++j), &last_id, 0, true, nullptr)) return;
    } else {
      c.Error("Unrecognized XCLAIM option '" + std::string(opt.substr(0, opt.find('\0'))) + "'");
      return;
    }
  }
  if (last_id > g->last_id) {
    g->last_id = last_id;
    propagate_last_id = true;
  }
  if (deliverytime != -1) {
    if (deliverytime < 0 || deliverytime > now) deliverytime = now;
  } else {
    deliverytime = now;
  }
  // Redis 7.0 finds (or creates) the consumer when it first claims something.
  StreamConsumer* consumer = nullptr;

  std::string body;
  resp::ReplyWriter w(&body, c.out.proto());
  Context sub(c.args, w, c.ks, c.session, c.hooks, c.stats, c.now_ms);
  size_t n = 0;
  for (size_t k = 5; k < last_id_arg; k++) {
    StreamID id = ids[k - 5];
    auto pit = g->pel.find(id);
    StreamNack* nack = pit == g->pel.end() ? nullptr : pit->second.get();
    if (!EntryExists(*s, id)) {
      if (nack) {  // the entry is gone: so goes its pending entry
        c.propagate.push_back(XclaimArgv(c.arg(1), c.arg(2), *g, id, *nack));
        propagate_last_id = false;
        c.dirty++;
        RemoveNack(*g, id);
      }
      continue;
    }
    if (force && !nack) {
      auto fresh = std::make_unique<StreamNack>();
      fresh->consumer = nullptr;
      nack = fresh.get();
      g->pel.emplace(id, std::move(fresh));
    }
    if (!nack) continue;
    if (nack->consumer && minidle && now - nack->delivery_time < minidle) continue;
    if (!consumer) consumer = Claimer(c, *g, c.arg(3), c.arg(1));
    nack->delivery_time = deliverytime;
    if (retrycount >= 0) {
      nack->delivery_count = static_cast<uint64_t>(retrycount);
    } else if (!justid) {
      nack->delivery_count++;
    }
    GiveNack(nack, id, consumer);
    ReplyClaimed(c, sub, *s, *g, id, *nack, justid);
    n++;
    propagate_last_id = false;
  }
  if (propagate_last_id) {
    c.propagate.push_back(SetIdArgv(c.arg(1), c.arg(2), *g));
    c.dirty++;
  }
  c.out.Array(n);
  c.out.Raw(body);
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void XAutoClaim(Context& c) {
  c.prevent_propagation = true;
  auto minidle_v = ParseInt64(c.arg(4));
  if (!minidle_v) {
    c.Error("Invalid min-idle-time argument for XAUTOCLAIM");
    return;
  }
  int64_t minidle = *minidle_v < 0 ? 0 : *minidle_v;
  StreamID start;
  bool startex;
  if (!ParseIntervalId(c, c.arg(5), &start, &startex, 0)) return;
  if (startex && !start.Incr()) {
    c.Error("invalid start ID for the interval");
    return;
  }
  int64_t count = 100;
  bool justid = false;
  constexpr int64_t kAttemptsFactor = 10;
  for (size_t j = 6; j < c.argc(); j++) {
    size_t moreargs = c.argc() - 1 - j;
    if (EqualsIgnoreCase(c.arg(j), "count") && moreargs) {
      auto v = ParseInt64(c.arg(j + 1));
      if (!v || *v < 1 || *v > INT64_MAX / 16) {
        c.Error("COUNT must be > 0");
        return;
      }
      count = *v;
      j++;
    } else if (EqualsIgnoreCase(c.arg(j), "justid")) {
      justid = true;
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  StreamValue* s;
  StreamGroup* g = LookupGroup(c, &s);
  if (!g) return;
  // Redis allocates room for COUNT deleted IDs (16 bytes each) up front and answers this when
  // the allocation fails, as it does on x86-64 Linux from 2^42 IDs (64 TiB) on. kvstore keeps
  // only the IDs it deletes, but answers alike there.
  if (count >= int64_t{1} << 42) {
    c.Error("Insufficient memory, failed allocating transient memory, COUNT too high.");
    return;
  }
  const int64_t now = c.now_ms;
  StreamConsumer* consumer = nullptr;  // found or created at the first claim, as in Redis 7.0

  int64_t attempts = count * kAttemptsFactor;
  std::string body;
  resp::ReplyWriter w(&body, c.out.proto());
  Context sub(c.args, w, c.ks, c.session, c.hooks, c.stats, c.now_ms);
  size_t n = 0;
  std::vector<StreamID> deleted;
  auto it = g->pel.lower_bound(start);
  while (attempts-- && count && it != g->pel.end()) {
    StreamID id = it->first;
    StreamNack* nack = it->second.get();
    if (!EntryExists(*s, id)) {
      c.propagate.push_back(XclaimArgv(c.arg(1), c.arg(2), *g, id, *nack));
      c.dirty++;
      ++it;
      RemoveNack(*g, id);
      deleted.push_back(id);
      count--;
      continue;
    }
    ++it;
    if (minidle && now - nack->delivery_time < minidle) continue;
    if (!consumer) consumer = Claimer(c, *g, c.arg(3), c.arg(1));
    nack->delivery_time = now;
    if (!justid) nack->delivery_count++;
    GiveNack(nack, id, consumer);
    ReplyClaimed(c, sub, *s, *g, id, *nack, justid);
    n++;
    count--;
  }
  c.out.Array(3);
  c.out.Bulk(it == g->pel.end() ? "0-0" : it->first.ToString());
  c.out.Array(n);
  c.out.Raw(body);
  c.out.Array(deleted.size());
  for (StreamID id : deleted) c.out.Bulk(id.ToString());
}

}  // namespace kv::cmd::stream
