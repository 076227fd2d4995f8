// Pub/sub: channel and pattern subscriptions, PUBLISH fan-out, keyspace notifications, and the
// SUBSCRIBE family of commands. Messages to clients on other poll groups travel through
// Client::Push, bounded by client-output-buffer-limit pubsub.
#include <algorithm>

#include "cmd/context.h"
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
  target->Push(frame, pubsub_limits_.hard, pubsub_limits_.soft, pubsub_limits_.seconds);
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

void Server::UnsubscribeAll(Client& c) {
  for (const auto& ch : c.channels()) Erase(channels_, ch, &c);
  for (const auto& p : c.patterns()) Erase(patterns_, p, &c);
  c.channels().clear();
  c.patterns().clear();
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

// SUBSCRIBE / PSUBSCRIBE: one confirmation per name, with the client's subscription count.
// Confirmations are pushes in both protocols: CLIENT REPLY OFF or SKIP does not drop them (as
// Redis sets CLIENT_PUSHING while it writes them). They go to the running command's replies.
void SubscribeTo(Context& c, bool pattern) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  auto& mine = pattern ? me.patterns() : me.channels();
  auto& all = pattern ? s.pattern_subscribers() : s.channel_subscribers();
  for (size_t i = 1; i < c.argc(); i++) {
    std::string name(c.arg(i));
    if (mine.insert(name).second) all[name].push_back(&me);
    int64_t count = static_cast<int64_t>(me.subscriptions());
    me.AppendPush(Frame(c.session.resp, {pattern ? "psubscribe" : "subscribe", name}, &count));
  }
  me.set_flag(Client::kPubSub, me.subscriptions() > 0);
  me.session().subscriptions = me.subscriptions();
}

void UnsubscribeFrom(Context& c, bool pattern) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  auto& mine = pattern ? me.patterns() : me.channels();
  auto& all = pattern ? s.pattern_subscribers() : s.channel_subscribers();
  const char* kind = pattern ? "punsubscribe" : "unsubscribe";
  std::vector<std::string> names;
  if (c.argc() > 1) {
    for (size_t i = 1; i < c.argc(); i++) names.emplace_back(c.arg(i));
  } else {
    names.assign(mine.begin(), mine.end());
  }
  if (names.empty()) {  // nothing to leave: one reply with a null name
    int64_t count = static_cast<int64_t>(me.subscriptions());
    me.AppendPush(Frame(c.session.resp, {kind, ""}, &count, /*null_channel=*/true));
  }
  for (const auto& name : names) {
    if (mine.erase(name)) {
      auto it = all.find(name);
      if (it != all.end()) {
        std::erase(it->second, &me);
        if (it->second.empty()) all.erase(it);
      }
    }
    int64_t count = static_cast<int64_t>(me.subscriptions());
    me.AppendPush(Frame(c.session.resp, {kind, name}, &count));
  }
  me.set_flag(Client::kPubSub, me.subscriptions() > 0);
  me.session().subscriptions = me.subscriptions();
}

void Subscribe(Context& c) { SubscribeTo(c, false); }
void PSubscribe(Context& c) { SubscribeTo(c, true); }
void Unsubscribe(Context& c) { UnsubscribeFrom(c, false); }
void PUnsubscribe(Context& c) { UnsubscribeFrom(c, true); }

void Publish(Context& c) { c.out.Int(ServerOf(c).Publish(c.arg(1), c.arg(2))); }

void PubsubChannels(Context& c) {
  Server& s = ServerOf(c);
  std::vector<std::string_view> names;
  for (const auto& [name, subs] : s.channel_subscribers()) {
    if (c.argc() < 3 || GlobMatch(c.arg(2), name)) names.push_back(name);
  }
  c.out.Array(names.size());
  for (auto n : names) c.out.Bulk(n);
}

void PubsubNumSub(Context& c) {
  Server& s = ServerOf(c);
  c.out.Map(c.argc() - 2);
  for (size_t i = 2; i < c.argc(); i++) {
    auto it = s.channel_subscribers().find(std::string(c.arg(i)));
    c.out.Bulk(c.arg(i));
    c.out.Int(it == s.channel_subscribers().end() ? 0 : static_cast<int64_t>(it->second.size()));
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
  sub("help", 2, 0, PubsubHelp, "Show helpful text about the different subcommands", "6.2.0");
}

}  // namespace kv::server
