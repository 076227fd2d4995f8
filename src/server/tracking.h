// Client-side caching (Redis 7.0's tracking.c): which clients may hold which keys, and the
// invalidation messages they get when those keys change.
//
// Default mode remembers the keys of each read-only command a tracking client runs (by name, across
// databases, as Redis does) and invalidates them once, on their next change: the key leaves the
// table and each client that read it gets `>2 invalidate [key]`, or, through REDIRECT, a RESP2
// subscriber gets a `message` on __redis__:invalidate. BCAST mode remembers nothing per client:
// every change to a key under one of the client's prefixes is collected and sent at the end of the
// event-loop round, one message per prefix; NOLOOP leaves out the keys a client changed last, where
// a script's writes are the script's, not its caller's, and expiry and eviction are no client's.
// FLUSHDB and FLUSHALL send a null (every key) to every tracking client and empty the table.
// tracking-table-max-keys bounds the table: before each command and from the cron, keys past it
// are dropped as if they had changed.
//
// A message for the client whose command is running waits for the command's end (after its reply,
// after EXEC's and a script's too), as Redis 7.0 orders it; one due before the command started (a
// key evicted for it) goes out at once, before its reply, as do those for other clients, through
// Client::Push when the recipient lives on another poll group.
//
// Threading: everything here runs with the keyspace lock held.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kv::cmd {
struct CommandSpec;
}  // namespace kv::cmd

namespace kv::net {
class EventLoop;
}  // namespace kv::net

namespace kv::server {

class Client;
class Server;

// One client's tracking state (CLIENT TRACKING, CLIENT CACHING), kept on the Client.
struct ClientTracking {
  bool on = false;
  bool bcast = false, optin = false, optout = false, noloop = false;
  bool caching = false;            // CLIENT CACHING given for the next command (or transaction)
  bool broken_redirect = false;    // the redirect client was gone when a message was due
  uint64_t redirect = 0;           // 0: none
  std::set<std::string> prefixes;  // BCAST's (the empty prefix when none was given)
};

// What CLIENT TRACKING ON asked for, once parsed and checked.
struct TrackingOptions {
  uint64_t redirect = 0;
  bool bcast = false, optin = false, optout = false, noloop = false;
  std::vector<std::string> prefixes;
};

class Tracking {
 public:
  explicit Tracking(Server& server) : server_(server) {}

  // CLIENT TRACKING ON (options checked by the caller) and OFF; a closed or RESET client is turned
  // off too. Entries of the table that name the client are dropped lazily.
  void Enable(Client& c, const TrackingOptions& o);
  void Disable(Client& c);
  // Redis' prefix collision check: "" when the prefixes overlap neither each other nor the
  // client's; else the error to answer.
  std::string PrefixCollision(const Client& c, const std::vector<std::string>& prefixes) const;

  // Before each command and from the cron: drops keys past tracking-table-max-keys, invalidating
  // them.
  void LimitUsedSlots();
  // After a command `spec` ran for `c`: a read-only one's keys are remembered (default mode, with
  // OPTIN/OPTOUT and CLIENT CACHING deciding), and a flush's null goes out.
  void AfterCommand(Client& c, const cmd::CommandSpec& spec, uint32_t flags,
                    std::span<const std::string_view> args);
  // A read-only command ran inside the script `caller_args` runs: as Redis 7.0, the keys remembered
  // are the script command's own (its KEYS).
  void AfterScriptRead(Client& caller, std::span<const std::string_view> caller_args);
  // After a top-level command of `c` (and its replies): its own pending invalidations, and the end
  // of a CLIENT CACHING outside a transaction.
  void AfterExecute(Client& c, std::span<const std::string_view> args);
  // Sends the invalidations that waited for the end of a command (blocked clients served after the
  // command that woke them have theirs sent here too).
  void FlushPending();

  // A key changed. `modifier` is the client whose command changed it (NOLOOP skips it in BCAST
  // mode); nullptr for expiry and eviction. Inside a script the change is the script's.
  void InvalidateKey(std::string_view key, const Client* modifier);
  // FLUSHDB / FLUSHALL emptied a database (once per command): the null goes to every tracking
  // client now, the running client's after its command.
  void Flushed() { InvalidateAllOnFlush(); }
  // A full sync replaced the dataset outside any command: the null goes out now.
  void FlushNow() {
    InvalidateAllOnFlush();
    FlushPending();
  }
  // Between ScriptCommandStarts and ScriptCommandEnds a script's command runs: for NOLOOP in BCAST
  // mode its writes are the script client's (never a tracking one), not the caller's.
  void ScriptCommandStarts() { script_depth_++; }
  void ScriptCommandEnds() { script_depth_--; }
  // While true, the running client's command has not started yet (maxmemory evicts for it):
  // invalidations of its own keys go out at once, ahead of its reply.
  void set_before_command(bool on) { before_command_ = on; }
  // While set, changes of these keys are none to caching: a served blocked list pop, which Redis
  // 7.0 makes without signalling the list as modified.
  void set_unchanged_keys(std::span<const std::string_view> keys) { unchanged_keys_ = keys; }

  // The broadcast of what a client's input just changed, sent before that client's replies are
  // written (Client::ProcessInput): whoever learns of the write from its reply and then asks
  // a BCAST client to do something finds the invalidation ahead of that reply, as Redis
  // writes the round's broadcasts before its replies. Keyspace lock held.
  void BroadcastPending() {
    if (!broadcast_scheduled_) return;
    broadcast_scheduled_ = false;  // the posted run finds nothing left
    Broadcast();
  }

  size_t clients() const { return clients_; }
  size_t total_keys() const { return table_.size(); }
  uint64_t total_items() const { return items_; }
  size_t total_prefixes() const { return prefixes_.size(); }

 private:
  struct BcastState {
    // Changed this round, by their last modifier: a client, kScriptWriter, or nullptr.
    std::map<std::string, const void*> keys;
    std::set<Client*> clients;
  };
  void RememberKeys(Client& c, const cmd::CommandSpec& spec,
                    std::span<const std::string_view> args);
  // Drops `key` from the table, telling the clients that read it. `from_command`: a message for the
  // running client waits for the command's end.
  void InvalidateTracked(std::string_view key, bool from_command);
  void InvalidateAllOnFlush();
  void RememberToBroadcast(std::string_view key, const void* modifier);
  void ScheduleBroadcast();
  void RunScheduledBroadcast(net::EventLoop* loop);
  void Broadcast();
  // Sends `proto` (the RESP of the keys: an array, or a null) to `c` or its redirect client.
  void Send(Client& c, std::string_view proto);
  void Deliver(Client& to, const std::string& frame);
  Client* Find(uint64_t id) const;

  Server& server_;
  size_t clients_ = 0;
  std::unordered_map<std::string, std::set<uint64_t>> table_;  // key -> client ids
  uint64_t items_ = 0;                                         // ids across the table
  std::map<std::string, BcastState> prefixes_;
  // Invalidations for the running client (by id), sent after its command: a key, or nullopt (a
  // flush).
  std::vector<std::pair<uint64_t, std::optional<std::string>>> pending_;
  bool broadcast_scheduled_ = false;
  int script_depth_ = 0;
  bool before_command_ = false;
  std::span<const std::string_view> unchanged_keys_;
  unsigned limit_rounds_ = 0;  // LimitUsedSlots' consecutive calls that stayed over the limit
};

}  // namespace kv::server
