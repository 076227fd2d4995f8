#include "server/tracking.h"

#include <iterator>
#include <mutex>
#include <random>

#include "cmd/command.h"
#include "common/strutil.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {

namespace {

constexpr std::string_view kPrefixOverlapTail = ". Prefixes for a single client must not overlap.";

// Two prefixes collide when one starts the other: a key could match both (Redis'
// stringCheckPrefix).
bool PrefixesOverlap(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

void AppendBulk(std::string* out, std::string_view s) {
  out->append("$").append(std::to_string(s.size())).append("\r\n").append(s).append("\r\n");
}

// The modifier of a script's writes for BCAST's NOLOOP: Redis' script client, which no client is.
constexpr char kScriptWriter = 0;

// The keys part of a message for one key: an array of one.
std::string OneKey(std::string_view key) {
  std::string out = "*1\r\n";
  AppendBulk(&out, key);
  return out;
}

// The keys part of a flush's message: a null in the tracking client's protocol (also when the
// message goes to a redirect client of another protocol, as Redis sends it).
std::string_view NullFor(Client& c) { return c.session().resp >= 3 ? "_\r\n" : "$-1\r\n"; }

}  // namespace

void Tracking::Enable(Client& c, const TrackingOptions& o) {
  ClientTracking& t = c.tracking();
  if (!t.on) clients_++;
  t.on = true;
  t.broken_redirect = t.bcast = t.optin = t.optout = t.noloop = false;
  t.redirect = o.redirect;
  if (o.bcast) {
    t.bcast = true;
    std::vector<std::string> prefixes = o.prefixes;
    if (prefixes.empty()) prefixes.emplace_back();  // every key
    for (const std::string& p : prefixes) {
      if (prefixes_[p].clients.insert(&c).second) t.prefixes.insert(p);
    }
  }
  t.optin = o.optin;
  t.optout = o.optout;
  t.noloop = o.noloop;
}

void Tracking::Disable(Client& c) {
  ClientTracking& t = c.tracking();
  if (t.bcast) {
    for (const std::string& p : t.prefixes) {
      auto it = prefixes_.find(p);
      if (it == prefixes_.end()) continue;
      it->second.clients.erase(&c);
      if (it->second.clients.empty()) prefixes_.erase(it);
    }
  }
  t.prefixes.clear();
  if (t.on) {
    clients_--;
    t.on = t.broken_redirect = t.bcast = t.optin = t.optout = t.noloop = t.caching = false;
  }
}

std::string Tracking::PrefixCollision(const Client& c,
                                      const std::vector<std::string>& prefixes) const {
  const std::set<std::string>& mine = c.tracking().prefixes;
  for (size_t i = 0; i < prefixes.size(); i++) {
    for (const std::string& p : mine) {
      if (PrefixesOverlap(p, prefixes[i])) {
        return "Prefix '" + prefixes[i] + "' overlaps with an existing prefix '" + p + "'" +
               std::string(kPrefixOverlapTail);
      }
    }
    for (size_t j = i + 1; j < prefixes.size(); j++) {
      if (PrefixesOverlap(prefixes[i], prefixes[j])) {
        return "Prefix '" + prefixes[i] + "' overlaps with another provided prefix '" +
               prefixes[j] + "'" + std::string(kPrefixOverlapTail);
      }
    }
  }
  return "";
}

// Redis' trackingLimitUsedSlots: random keys go until the table fits, with an effort that grows
// each time the last call could not get there.
void Tracking::LimitUsedSlots() {
  if (clients_ == 0 || table_.empty()) return;
  int64_t max_keys = server_.config().GetInt("tracking-table-max-keys");
  if (max_keys <= 0) return;  // no limit
  auto fits = [&] { return table_.size() <= static_cast<size_t>(max_keys); };
  if (fits()) {
    limit_rounds_ = 0;
    return;
  }
  static thread_local std::minstd_rand rng{std::random_device{}()};
  for (int effort = 100 * static_cast<int>(limit_rounds_ + 1); effort > 0 && !table_.empty();
       effort--) {
    // A random non-empty bucket, then a random entry of it.
    size_t bucket;
    do {
      bucket = rng() % table_.bucket_count();
    } while (table_.bucket_size(bucket) == 0);
    auto it = table_.begin(bucket);
    std::advance(it, rng() % table_.bucket_size(bucket));
    std::string key = it->first;
    InvalidateTracked(key, /*from_command=*/false);
    if (fits()) {
      limit_rounds_ = 0;
      return;
    }
  }
  limit_rounds_++;
}

void Tracking::AfterCommand(Client& c, const cmd::CommandSpec& spec, uint32_t,
                            std::span<const std::string_view> args) {
  if (!c.tracking().on || c.tracking().bcast) return;
  uint32_t flags = spec.parent ? spec.parent->flags | spec.flags : spec.flags;
  if (!(flags & cmd::kReadOnly)) return;
  // A read-only script's keys are remembered per command it runs (AfterScriptRead).
  if (spec.name == "eval_ro" || spec.name == "evalsha_ro" || spec.name == "fcall_ro") return;
  RememberKeys(c, spec, args);
}

void Tracking::AfterScriptRead(Client& caller, std::span<const std::string_view> caller_args) {
  if (!caller.tracking().on || caller.tracking().bcast || caller_args.empty()) return;
  const cmd::CommandSpec* spec = server_.commands().Find(caller_args[0]);
  if (spec != nullptr) RememberKeys(caller, *spec, caller_args);
}

void Tracking::RememberKeys(Client& c, const cmd::CommandSpec& spec,
                            std::span<const std::string_view> args) {
  const ClientTracking& t = c.tracking();
  // OPTIN remembers only after CLIENT CACHING YES, OPTOUT all but after CLIENT CACHING NO.
  if ((t.optin && !t.caching) || (t.optout && t.caching)) return;
  if (!cmd::ArityOk(spec.arity, args.size())) return;
  for (int i : spec.FindKeys(args)) {
    if (i <= 0 || static_cast<size_t>(i) >= args.size()) continue;
    auto [it, created] = table_.try_emplace(std::string(args[i]));
    if (it->second.insert(c.id()).second) items_++;
  }
}

void Tracking::AfterExecute(Client& c, std::span<const std::string_view> args) {
  FlushPending();
  // CLIENT CACHING covers the next command, or a whole transaction (Redis' resetClient).
  if (c.tracking().caching && !c.in_multi() && !args.empty() &&
      !EqualsIgnoreCase(args[0], "client")) {
    c.tracking().caching = false;
  }
}

void Tracking::FlushPending() {
  if (pending_.empty()) return;
  auto pending = std::move(pending_);
  pending_.clear();
  for (const auto& [id, key] : pending) {
    Client* c = Find(id);
    if (c == nullptr) continue;
    Send(*c, key ? OneKey(*key) : std::string(NullFor(*c)));
  }
}

void Tracking::InvalidateKey(std::string_view key, const Client* modifier) {
  for (std::string_view k : unchanged_keys_) {
    if (k == key) return;
  }
  if (!prefixes_.empty()) {
    const void* by = modifier;
    if (modifier != nullptr && script_depth_ > 0) by = &kScriptWriter;
    RememberToBroadcast(key, by);
  }
  if (!table_.empty()) InvalidateTracked(key, /*from_command=*/!before_command_);
}

void Tracking::InvalidateTracked(std::string_view key, bool from_command) {
  auto it = table_.find(std::string(key));
  if (it == table_.end()) return;
  std::set<uint64_t> ids = std::move(it->second);
  table_.erase(it);
  items_ -= ids.size();
  Client* current = server_.current_client_;
  std::string proto;
  for (uint64_t id : ids) {
    Client* target = Find(id);
    // Entries of clients that left, turned tracking off or switched to BCAST go unsent.
    if (target == nullptr || !target->tracking().on || target->tracking().bcast) continue;
    if (target->tracking().noloop && target == current) continue;
    if (from_command && target == current) {
      pending_.emplace_back(id, std::string(key));  // after the command's reply
      continue;
    }
    if (proto.empty()) proto = OneKey(key);
    Send(*target, proto);
  }
}

void Tracking::InvalidateAllOnFlush() {
  if (clients_ > 0) {
    Client* current = server_.current_client_;
    for (const auto& [id, c] : server_.clients()) {
      if (!c->tracking().on) continue;
      if (c == current) {
        pending_.emplace_back(id, std::nullopt);
      } else {
        Send(*c, NullFor(*c));
      }
    }
  }
  table_.clear();
  items_ = 0;
}

void Tracking::RememberToBroadcast(std::string_view key, const void* modifier) {
  bool any = false;
  for (auto& [prefix, state] : prefixes_) {
    if (!key.starts_with(prefix)) continue;
    state.keys[std::string(key)] = modifier;  // the last modifier counts for NOLOOP
    any = true;
  }
  if (any) ScheduleBroadcast();
}

// As Redis sends them before it sleeps: at the end of the current event-loop round, so that a
// pipeline's changes go out together, after its replies.
void Tracking::ScheduleBroadcast() {
  if (broadcast_scheduled_) return;
  broadcast_scheduled_ = true;
  Client* current = server_.current_client_;
  net::EventLoop* loop = current ? &current->group().loop() : &server_.group(0).loop();
  loop->Post([this, loop] { RunScheduledBroadcast(loop); });
}

void Tracking::RunScheduledBroadcast(net::EventLoop* loop) {
  // A busy script holds the lock: this loop serves its clients meanwhile, and tries again.
  server_.WhenLocked(*loop, [this] { BroadcastPending(); });
}

namespace {

// The array of the changed keys, less those `skip` changed last (NOLOOP); "" when none is left.
std::string BroadcastArray(const std::map<std::string, const void*>& keys, const Client* skip) {
  size_t n = 0;
  for (const auto& [key, modifier] : keys) n += (skip == nullptr || modifier != skip);
  if (n == 0) return "";
  std::string out = "*" + std::to_string(n) + "\r\n";
  for (const auto& [key, modifier] : keys) {
    if (skip == nullptr || modifier != skip) AppendBulk(&out, key);
  }
  return out;
}

}  // namespace

void Tracking::Broadcast() {
  for (auto& [prefix, state] : prefixes_) {
    if (state.keys.empty()) continue;
    std::string all = BroadcastArray(state.keys, nullptr);
    for (Client* c : state.clients) {
      if (!c->tracking().noloop) {
        Send(*c, all);
      } else if (std::string mine = BroadcastArray(state.keys, c); !mine.empty()) {
        Send(*c, mine);
      }
    }
    state.keys.clear();
  }
}

// Redis' sendTrackingMessage: RESP3 clients get a push; through REDIRECT, a RESP2 client gets a
// message on __redis__:invalidate if it is subscribed (to anything), else nothing.
void Tracking::Send(Client& c, std::string_view proto) {
  Client* to = &c;
  ClientTracking& t = c.tracking();
  bool redirected = t.redirect != 0;
  if (redirected) {
    to = Find(t.redirect);
    if (to == nullptr) {
      t.broken_redirect = true;
      if (c.session().resp >= 3) {
        Deliver(c, ">2\r\n$21\r\ntracking-redir-broken\r\n:" + std::to_string(t.redirect) + "\r\n");
      }
      return;
    }
  }
  std::string frame;
  if (to->session().resp >= 3) {
    frame = ">2\r\n$10\r\ninvalidate\r\n";
  } else if (redirected) {
    if (!(to->flags() & Client::kPubSub)) return;
    frame = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
  } else {
    return;  // RESP2 has no pushes on the connection itself
  }
  frame.append(proto);
  Deliver(*to, frame);
}

void Tracking::Deliver(Client& to, const std::string& frame) {
  // The running client's own connection: in order with its replies (this thread's buffer).
  if (&to == server_.current_client_ && to.in_execute()) {
    to.AppendPush(frame);
    return;
  }
  if (to.subscriptions() > 0) {
    net::OutputLimit l = server_.pubsub_limits();
    to.Push(frame, l.hard, l.soft, l.seconds);
  } else {
    to.Push(frame);  // client-output-buffer-limit normal applies as it is written
  }
}

Client* Tracking::Find(uint64_t id) const {
  auto it = server_.clients().find(id);
  return it == server_.clients().end() ? nullptr : it->second;
}

}  // namespace kv::server
