// CLIENT PAUSE, as Redis 7.0: while a pause is in force, a client's command that the pause
// covers (any command for ALL; for WRITE, commands that may reach the replication stream:
// writes, PUBLISH, PFCOUNT, and scripts that do not declare no-writes) is held before it runs,
// its request left unread in the client's input, and nothing after it runs. Keys neither
// expire nor get evicted meanwhile (expired keys only read as absent). Replicas are never
// held; the primary's link is, as in Redis (the replica's offset stays where it was).
//
// Held clients run again in the order they were held, one after the other, whatever poll
// group they live on: the server releases the first (its loop is woken to read its input), and
// when that client has gone through its input the next one's turn comes (ResumedClientDone).
// A command that arrives while released clients are still waiting for their turn is held
// behind them, so that nothing overtakes what the pause held, as in Redis, where the held
// clients run before the server reads anything new.
//
// Besides CLIENT PAUSE's own (which CLIENT UNPAUSE and its timeout end), writes are paused
// for a purpose, as Redis' pause purposes: a FAILOVER, a shutdown waiting for its replicas.
// Each ends on its own; the pause in force is the strictest of them all.
//
// Every function here runs with the keyspace lock held.
#include <algorithm>

#include "cmd/command.h"
#include "common/clock.h"
#include "repl/primary/primary.h"
#include "server/client.h"
#include "server/poll_group.h"
#include "server/server.h"

namespace kv::server {

namespace {

// Redis 7.0's CMD_MAY_REPLICATE commands that are not writes (the command table has no flag
// for it): what they do reaches the replication stream (PUBLISH's message, PFCOUNT's cached
// cardinality), or may (EVAL, EVALSHA and FCALL, unless the script declares no-writes).
bool NamedMayReplicate(std::string_view name, bool* script) {
  *script = name == "eval" || name == "evalsha" || name == "fcall";
  return *script || name == "publish" || name == "spublish" || name == "pfcount";
}

}  // namespace

bool Server::MayReplicate(Client& c, const cmd::CommandSpec& spec,
                          std::span<const std::string_view> args, uint32_t flags) {
  if (flags & cmd::kWrite) return true;
  const std::string& name = spec.parent ? spec.parent->name : spec.name;
  if (name == "exec") return ExecMayReplicate(c);
  bool script;
  if (!NamedMayReplicate(name, &script)) return false;
  if (!script) return true;
  // A script that declares its flags keeps may-replicate only if it may write; one that
  // declares none (or that is not known yet) keeps the command's: ScriptCommandFlags leaves a
  // flag the script does not decide as it finds it, so kWrite stands for may-replicate here.
  uint32_t base = spec.parent ? spec.parent->flags | spec.flags : spec.flags;
  return (ScriptCommandFlags(args, base | cmd::kWrite) & cmd::kWrite) != 0;
}

// EXEC holds when one of the commands it queued may replicate (Redis sums their flags as they
// are queued; kvstore looks at them when EXEC comes).
bool Server::ExecMayReplicate(Client& c) {
  if (!c.tx().active) return false;
  std::vector<std::string_view> views;
  for (const auto& argv : c.tx().queued) {
    views.assign(argv.begin(), argv.end());
    std::string error;
    const cmd::CommandSpec* spec = cmd::ResolveCommand(commands_, views, &error);
    if (spec == nullptr || spec->name == "exec") continue;
    uint32_t flags = spec->parent ? spec->parent->flags | spec->flags : spec->flags;
    if (flags & cmd::kNoMandatoryKeys) flags = ScriptCommandFlags(views, flags);
    if (MayReplicate(c, *spec, views, flags)) return true;
  }
  return false;
}

void Server::PauseClients(int64_t end_ms, PauseType type, net::EventLoop& loop) {
  EndPauseIfDue();  // a pause that is over does not lend its type to the new one
  if (client_pause_type_ == PauseType::kOff) {
    pause_end_ms_ = end_ms;
    client_pause_type_ = type;
  } else {
    pause_end_ms_ = std::max(pause_end_ms_, end_ms);
    client_pause_type_ = std::max(client_pause_type_, type);
  }
  UpdatePauseType();
  EndPauseIfDue();  // a timeout of 0 (or one that wrapped around) is over already
  if (client_pause_type_ == PauseType::kOff || pause_timer_armed_) return;
  // The end is timed on the caller's loop; the cron checks it too, should the clock jump.
  pause_timer_armed_ = true;
  loop.AddTimer(std::max<int64_t>(1, pause_end_ms_ - WallMs() + 1), [this] {
    // A busy script holds the lock: this loop's clients are to get -BUSY meanwhile, so the
    // end waits for the script instead of the loop waiting for the lock.
    std::unique_lock lock(mu_, std::defer_lock);
    if (!LockUnlessBusy(lock)) return int64_t{10};
    EndPauseIfDue();
    if (client_pause_type_ == PauseType::kOff) {
      pause_timer_armed_ = false;
      return int64_t{-1};
    }
    return std::max<int64_t>(1, pause_end_ms_ - WallMs() + 1);  // extended meanwhile
  });
}

void Server::UnpauseClients() {
  pause_end_ms_ = 0;
  // The rest of the input of the client that ends the pause runs before the clients it
  // releases (Redis reads that client's input to its end before it runs theirs).
  unpauser_ = current_client_;
  client_pause_type_ = PauseType::kOff;
  UpdatePauseType();
  if (resuming_ == nullptr) unpauser_ = nullptr;
}

void Server::PauseWritesFor(PausePurpose purpose) {
  EndPauseIfDue();
  purpose_paused_[static_cast<int>(purpose)] = true;
  UpdatePauseType();
}

void Server::UnpauseFor(PausePurpose purpose) {
  purpose_paused_[static_cast<int>(purpose)] = false;
  UpdatePauseType();
}

bool Server::clients_paused() {
  EndPauseIfDue();
  return pause_type_ != PauseType::kOff;
}

void Server::EndPauseIfDue() {
  if (client_pause_type_ != PauseType::kOff && pause_end_ms_ < WallMs()) {
    client_pause_type_ = PauseType::kOff;
    UpdatePauseType();
  }
}

// The pause in force is the strictest of CLIENT PAUSE's and the writes paused for a purpose
// (Redis' pause purposes: a shutdown waiting for its replicas, a FAILOVER), each of which ends
// on its own.
void Server::UpdatePauseType() {
  PauseType type = client_pause_type_;
  for (bool paused : purpose_paused_) {
    if (paused) type = std::max(type, PauseType::kWrite);
  }
  PauseType old = pause_type_;
  pause_type_ = type;
  keyspace_->set_expire_paused(type != PauseType::kOff);
  if (type < old) ReleaseNextHeld();
}

// kWrite: a command that may replicate, held by a WRITE or ALL pause; kAny: another command,
// held by an ALL pause; kOrder: a command no pause covers, held behind released clients.
bool Server::Releasable(HoldKind kind) const {
  switch (kind) {
    case HoldKind::kWrite:
      return pause_type_ == PauseType::kOff;
    case HoldKind::kAny:
      return pause_type_ != PauseType::kAll;
    case HoldKind::kOrder:
      return true;
  }
  return true;
}

size_t Server::ReleasableCount() const {
  size_t n = held_kinds_[static_cast<int>(HoldKind::kOrder)];
  if (pause_type_ != PauseType::kAll) n += held_kinds_[static_cast<int>(HoldKind::kAny)];
  if (pause_type_ == PauseType::kOff) n += held_kinds_[static_cast<int>(HoldKind::kWrite)];
  return n;
}

bool Server::HoldForPause(Client& c, const cmd::CommandSpec& spec,
                          std::span<const std::string_view> args, uint32_t flags) {
  if (pause_type_ == PauseType::kOff && held_.empty() && resuming_ == nullptr) return false;
  if (c.flags() & (Client::kReplica | Client::kSlotImport)) return false;
  EndPauseIfDue();
  HoldKind kind;
  bool writes = pause_type_ != PauseType::kOff && MayReplicate(c, spec, args, flags);
  if (pause_type_ == PauseType::kAll || (pause_type_ == PauseType::kWrite && writes)) {
    kind = writes ? HoldKind::kWrite : HoldKind::kAny;
  } else if (&c != resuming_ && &c != unpauser_ &&
             (resuming_ != nullptr || ReleasableCount() > 0)) {
    kind = HoldKind::kOrder;
  } else {
    return false;
  }
  held_.push_back({&c, kind});
  held_kinds_[static_cast<int>(kind)]++;
  c.set_paused(true);
  return true;
}

// Wakes the first held client the pause no longer covers, unless one is having its turn.
void Server::ReleaseNextHeld() {
  if (resuming_ != nullptr) return;
  for (auto it = held_.begin(); it != held_.end(); ++it) {
    if (!Releasable(it->kind)) continue;
    Client* c = it->client;
    held_kinds_[static_cast<int>(it->kind)]--;
    held_.erase(it);
    c->set_paused(false);
    c->set_resuming(true);
    resuming_ = c;
    PollGroup* g = &c->group();
    uint64_t id = c->id();
    g->loop().Post([g, id] {
      if (Client* cl = g->Find(id)) cl->ResumeInput();
    });
    return;
  }
}

void Server::InputDone(Client& c) {
  if (unpauser_ == &c) unpauser_ = nullptr;
  // Checked first: the pause check reads the clock, and this runs after every batch.
  if (primary_->acks_requested()) primary_->SendRequestedAcks(clients_paused());
}

void Server::ResumedClientDone(Client& c) {
  c.set_resuming(false);
  if (resuming_ != &c) return;
  resuming_ = nullptr;
  ReleaseNextHeld();
}

void Server::ForgetHeld(Client& c) {
  for (auto it = held_.begin(); it != held_.end(); ++it) {
    if (it->client != &c) continue;
    held_kinds_[static_cast<int>(it->kind)]--;
    held_.erase(it);
    break;
  }
  c.set_paused(false);
  if (unpauser_ == &c) unpauser_ = nullptr;
  if (resuming_ == &c) ResumedClientDone(c);
}

}  // namespace kv::server
