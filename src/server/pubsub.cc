// Pub/sub: channel, pattern and shard channel subscriptions, PUBLISH and SPUBLISH fan-out,
// keyspace notifications, and the SUBSCRIBE family of commands. Shard channels (Redis 7.0's
// SSUBSCRIBE/SPUBLISH) are a third namespace beside channels and patterns: standalone kvstore is
// one shard, so they behave as channels that PUBLISH, patterns and notifications never reach.
// Messages to clients on other poll groups travel through Client::Push, bounded by
// client-output-buffer-limit pubsub.
#include <algorithm>

#include "cluster/cluster.h"
#include "cmd/context.h"
#include "cmd/errors.h"
#include "common/key_slot.h"
#include "common/strutil.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {

namespace {

// A pub/sub frame for a client speaking `proto`: RESP3 pushes, RESP2 arrays.
std::string Frame(int proto, std::initializer_list<std::string_view> bulks,
                  const int64_t* count = nullptr, bool null_channel = false) {
  std::string out;
  resp::ReplyWriter w(&out, proto);
  w.Push(bulks.size() + (count ? 1 : 0));
  size_t i = 0;
  for (std::string_view b : bulks) {
    if (null_channel && i == 1) w.Null();
    else w.Bulk(b);
    i++;
  }
  if (count) w.Int(*count);
  return out;
}

void Erase(std::map<std::string, std::vector<Client*>>& m, const std::string& name, Client* c) {
  auto it = m.find(name);
  if (it == m.end()) return;
  std::erase(it->second, c);
  if (it->second.empty()) m.erase(it);
}

}  // namespace

void Server::Deliver(Client* target, const std::string& frame) {
  // A client publishing to itself gets the message before its own reply, as Redis orders it
  // (a woken blocked client, whose reply goes through Push, gets it through Push too).
  if (target == current_client_ && target->in_execute()) {
    target->AppendPush(frame);
    return;
  }
  net::OutputLimit l = pubsub_limits();
  target->Push(frame, l.hard, l.soft, l.seconds);
}

int64_t Server::Publish(std::string_view channel, std::string_view message) {
  int64_t receivers = 0;
  std::string frames[2];  // by protocol: RESP2, RESP3
  auto frame_for = [&](Client* c) -> const std::string& {
    int p = c->session().resp >= 3 ? 1 : 0;
    if (frames[p].empty()) frames[p] = Frame(p ? 3 : 2, {"message", channel, message});
    return frames[p];
  };
  if (auto it = channels_.find(std::string(channel)); it != channels_.end()) {
    for (Client* c : it->second) {
      Deliver(c, frame_for(c));
      receivers++;
    }
  }
  for (const auto& [pattern, clients] : patterns_) {
    if (!GlobMatch(pattern, channel)) continue;
    for (Client* c : clients) {
      Deliver(c, Frame(c->session().resp, {"pmessage", pattern, channel, message}));
      receivers++;
    }
  }
  return receivers;
}

int64_t Server::PublishShard(std::string_view channel, std::string_view message) {
  auto it = shard_channels_.find(std::string(channel));
  if (it == shard_channels_.end()) return 0;
  std::string frames[2];  // by protocol: RESP2, RESP3
  for (Client* c : it->second) {
    int p = c->session().resp >= 3 ? 1 : 0;
    if (frames[p].empty()) frames[p] = Frame(p ? 3 : 2, {"smessage", channel, message});
    Deliver(c, frames[p]);
  }
  return static_cast<int64_t>(it->second.size());
}

void Server::UnsubscribeShardSlot(int slot) {
  std::vector<std::string> names;
  for (const auto& [name, clients] : shard_channels_) {
    if (KeyHashSlot(name) == slot) names.push_back(name);
  }
  for (const std::string& name : names) {
    std::vector<Client*> clients = shard_channels_[name];
    shard_channels_.erase(name);
    for (Client* c : clients) {
      c->shard_channels().erase(name);
      int64_t count = static_cast<int64_t>(c->shard_channels().size());
      Deliver(c, Frame(c->session().resp, {"sunsubscribe", name}, &count));
      c->set_flag(Client::kPubSub, c->subscriptions() > 0);
      c->session().subscriptions = c->subscriptions();
    }
  }
}

void Server::UnsubscribeAll(Client& c) {
  for (const auto& ch : c.channels()) Erase(channels_, ch, &c);
  for (const auto& p : c.patterns()) Erase(patterns_, p, &c);
  for (const auto& ch : c.shard_channels()) Erase(shard_channels_, ch, &c);
  c.channels().clear();
  c.patterns().clear();
  c.shard_channels().clear();
  c.set_flag(Client::kPubSub, false);
  c.session().subscriptions = 0;
}

void Server::Notify(int klass, std::string_view event, std::string_view key, int db) {
  if (!(notify_flags_ & klass)) return;
  if (channels_.empty() && patterns_.empty()) return;  // nobody can be listening
  std::string dbs = std::to_string(db);
  if (notify_flags_ & cmd::kNotifyKeyspace) {
    Publish("__keyspace@" + dbs + "__:" + std::string(key), event);
  }
  if (notify_flags_ & cmd::kNotifyKeyevent) {
    Publish("__keyevent@" + dbs + "__:" + std::string(event), key);
  }
}

namespace {

using cmd::Context;

// The three subscription namespaces and what differs between them.
enum class Kind { kChannel, kPattern, kShard };

struct KindNames {
  const char* subscribe;
  const char* unsubscribe;
};

KindNames NamesOf(Kind k) {
  switch (k) {
    case Kind::kChannel:
      return {"subscribe", "unsubscribe"};
    case Kind::kPattern:
      return {"psubscribe", "punsubscribe"};
    case Kind::kShard:
      return {"ssubscribe", "sunsubscribe"};
  }
  return {};
}

std::set<std::string>& MineOf(Client& me, Kind k) {
  if (k == Kind::kShard) return me.shard_channels();
  return k == Kind::kPattern ? me.patterns() : me.channels();
}

Server::Subscribers& AllOf(Server& s, Kind k) {
  if (k == Kind::kShard) return s.shard_channel_subscribers();
  return k == Kind::kPattern ? s.pattern_subscribers() : s.channel_subscribers();
}

// The count a confirmation carries: shard channels for SSUBSCRIBE/SUNSUBSCRIBE, channels and
// patterns together for the others (Redis 7.0 keeps the two counts apart).
int64_t CountOf(Client& me, Kind k) {
  return static_cast<int64_t>(k == Kind::kShard ? me.shard_channels().size()
                                                : me.channel_and_pattern_count());
}

void SyncPubSubState(Client& me) {
  me.set_flag(Client::kPubSub, me.subscriptions() > 0);
  me.session().subscriptions = me.subscriptions();
}

// SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE: one confirmation per name, with the count of its kind.
// Confirmations are pushes in both protocols: CLIENT REPLY OFF or SKIP does not drop them (as
// Redis sets CLIENT_PUSHING while it writes them). They go to the running command's replies.
void SubscribeTo(Context& c, Kind kind) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  auto& mine = MineOf(me, kind);
  auto& all = AllOf(s, kind);
  for (size_t i = 1; i < c.argc(); i++) {
    std::string name(c.arg(i));
    if (mine.insert(name).second) all[name].push_back(&me);
    int64_t count = CountOf(me, kind);
    me.AppendPush(Frame(c.session.resp, {NamesOf(kind).subscribe, name}, &count));
  }
  SyncPubSubState(me);
}

void UnsubscribeFrom(Context& c, Kind kind) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  auto& mine = MineOf(me, kind);
  auto& all = AllOf(s, kind);
  const char* verb = NamesOf(kind).unsubscribe;
  std::vector<std::string> names;
  if (c.argc() > 1) {
    for (size_t i = 1; i < c.argc(); i++) names.emplace_back(c.arg(i));
  } else {
    names.assign(mine.begin(), mine.end());
  }
  if (names.empty()) {  // nothing to leave: one reply with a null name
    int64_t count = CountOf(me, kind);
    me.AppendPush(Frame(c.session.resp, {verb, ""}, &count, /*null_channel=*/true));
  }
  for (const auto& name : names) {
    if (mine.erase(name)) Erase(all, name, &me);
    int64_t count = CountOf(me, kind);
    me.AppendPush(Frame(c.session.resp, {verb, name}, &count));
  }
  SyncPubSubState(me);
}

void Subscribe(Context& c) { SubscribeTo(c, Kind::kChannel); }
void PSubscribe(Context& c) { SubscribeTo(c, Kind::kPattern); }
void Unsubscribe(Context& c) { UnsubscribeFrom(c, Kind::kChannel); }
void PUnsubscribe(Context& c) { UnsubscribeFrom(c, Kind::kPattern); }
void SUnsubscribe(Context& c) { UnsubscribeFrom(c, Kind::kShard); }

// Redis 7.0 refuses SSUBSCRIBE from a client that may not block (inside MULTI; scripts cannot
// call it at all), though it lets SUBSCRIBE through in MULTI for compatibility.
void SSubscribe(Context& c) {
  if (c.session.deny_blocking) {
    c.Error("SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
    return;
  }
  SubscribeTo(c, Kind::kShard);
}

// In cluster mode the message reaches the other nodes over the bus (every node for PUBLISH,
// the shard's for SPUBLISH) instead of the replication stream, as in Redis.
void Publish(Context& c) {
  c.out.Int(ServerOf(c).Publish(c.arg(1), c.arg(2)));
  if (cluster::Cluster* cl = ServerOf(c).cluster()) {
    cl->Publish(c.arg(1), c.arg(2), /*shard=*/false);
  } else {
    c.replicate_only = true;
  }
}
void SPublish(Context& c) {
  c.out.Int(ServerOf(c).PublishShard(c.arg(1), c.arg(2)));
  if (cluster::Cluster* cl = ServerOf(c).cluster()) {
    cl->Publish(c.arg(1), c.arg(2), /*shard=*/true);
  } else {
    c.replicate_only = true;
  }
}

// PUBSUB CHANNELS / SHARDCHANNELS [pattern]: the names with subscribers, matching the pattern.
void ListChannels(Context& c, const Server::Subscribers& subs) {
  if (c.argc() > 3) {  // the subcommand's arity is -2, but Redis takes one pattern at most
    c.Error(cmd::SubcommandSyntax(c.arg(1), "pubsub"));
    return;
  }
  std::vector<std::string_view> names;
  for (const auto& [name, clients] : subs) {
    if (c.argc() < 3 || GlobMatch(c.arg(2), name)) names.push_back(name);
  }
  c.out.Array(names.size());
  for (auto n : names) c.out.Bulk(n);
}

void PubsubChannels(Context& c) { ListChannels(c, ServerOf(c).channel_subscribers()); }
void PubsubShardChannels(Context& c) { ListChannels(c, ServerOf(c).shard_channel_subscribers()); }

// PUBSUB NUMSUB: name, count pairs as a flat array in both protocols, as Redis 7.0 sends.
void PubsubNumSub(Context& c) {
  Server& s = ServerOf(c);
  c.out.Array((c.argc() - 2) * 2);
  for (size_t i = 2; i < c.argc(); i++) {
    auto it = s.channel_subscribers().find(std::string(c.arg(i)));
    c.out.Bulk(c.arg(i));
    c.out.Int(it == s.channel_subscribers().end() ? 0 : static_cast<int64_t>(it->second.size()));
  }
}

// PUBSUB SHARDNUMSUB: name, count pairs as a flat array in both protocols, as Redis 7.0 sends.
void PubsubShardNumSub(Context& c) {
  const Server::Subscribers& subs = ServerOf(c).shard_channel_subscribers();
  c.out.Array((c.argc() - 2) * 2);
  for (size_t i = 2; i < c.argc(); i++) {
    auto it = subs.find(std::string(c.arg(i)));
    c.out.Bulk(c.arg(i));
    c.out.Int(it == subs.end() ? 0 : static_cast<int64_t>(it->second.size()));
  }
}

void PubsubNumPat(Context& c) {
  c.out.Int(static_cast<int64_t>(ServerOf(c).pattern_subscribers().size()));
}

void PubsubHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: '*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
  };
  c.ReplyHelp(kLines);
}

}  // namespace

void RegisterPubSubCommands(cmd::CommandTable& t) {
  using namespace cmd;
  uint32_t sub_flags = kPubSub | kNoScript | kLoading | kStale;
  t.Add({.name = "subscribe", .arity = -2, .flags = sub_flags, .handler = Subscribe,
         .group = "pubsub", .summary = "Listen for messages published to the given channels",
         .since = "2.0.0"});
  t.Add({.name = "psubscribe", .arity = -2, .flags = sub_flags, .handler = PSubscribe,
         .group = "pubsub",
         .summary = "Listen for messages published to channels matching the given patterns",
         .since = "2.0.0"});
  t.Add({.name = "unsubscribe", .arity = -1, .flags = sub_flags, .handler = Unsubscribe,
         .group = "pubsub", .summary = "Stop listening for messages posted to the given channels",
         .since = "2.0.0"});
  t.Add({.name = "punsubscribe", .arity = -1, .flags = sub_flags, .handler = PUnsubscribe,
         .group = "pubsub",
         .summary = "Stop listening for messages posted to channels matching the given patterns",
         .since = "2.0.0"});
  t.Add({.name = "publish", .arity = 3, .flags = kPubSub | kLoading | kStale | kFast,
         .handler = Publish, .group = "pubsub", .summary = "Post a message to a channel",
         .since = "2.0.0"});
  // Shard channels are declared as keys flagged not_key (command_meta.cc), as Redis 7.0 does
  // for cluster routing: COMMAND INFO shows the range, COMMAND GETKEYS finds no keys.
  t.Add({.name = "ssubscribe",
         .arity = -2,
         .flags = sub_flags,
         .first_key = 1,
         .last_key = -1,
         .key_step = 1,
         .handler = SSubscribe,
         .group = "pubsub",
         .summary = "Listen for messages published to the given shard channels",
         .since = "7.0.0"});
  t.Add({.name = "sunsubscribe",
         .arity = -1,
         .flags = sub_flags,
         .first_key = 1,
         .last_key = -1,
         .key_step = 1,
         .handler = SUnsubscribe,
         .group = "pubsub",
         .summary = "Stop listening for messages posted to the given shard channels",
         .since = "7.0.0"});
  t.Add({.name = "spublish",
         .arity = 3,
         .flags = kPubSub | kLoading | kStale | kFast,
         .first_key = 1,
         .last_key = 1,
         .key_step = 1,
         .handler = SPublish,
         .group = "pubsub",
         .summary = "Post a message to a shard channel",
         .since = "7.0.0"});
  CommandSpec* pubsub = t.Add({.name = "pubsub", .arity = -2, .group = "pubsub",
                               .summary = "A container for Pub/Sub commands", .since = "2.8.0"});
  auto sub = [&](const char* name, int arity, uint32_t flags, Handler h, const char* summary,
                 const char* since) {
    t.AddSub(pubsub, {.name = name, .arity = arity, .flags = flags | kLoading | kStale,
                      .handler = h, .group = "pubsub", .summary = summary, .since = since});
  };
  sub("channels", -2, kPubSub, PubsubChannels, "List active channels", "2.8.0");
  sub("numsub", -2, kPubSub, PubsubNumSub, "Get the count of subscribers for channels", "2.8.0");
  sub("numpat", 2, kPubSub, PubsubNumPat, "Get the count of unique patterns pattern subscriptions",
      "2.8.0");
  sub("shardchannels", -2, kPubSub, PubsubShardChannels, "List active shard channels", "7.0.0");
  sub("shardnumsub", -2, kPubSub, PubsubShardNumSub,
      "Get the count of subscribers for shard channels", "7.0.0");
  sub("help", 2, 0, PubsubHelp, "Show helpful text about the different subcommands", "6.2.0");
}

}  // namespace kv::server
