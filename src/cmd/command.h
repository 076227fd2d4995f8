// The command table. Each command is data: name, arity, flags and key positions beside its
// handler. The dispatcher, COMMAND, INFO commandstats and replication read the flags instead of
// special-casing names.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cmd/key_spec.h"

namespace kv::cmd {

class Context;
using Handler = void (*)(Context&);

// Finds the keys of a command whose key positions depend on its arguments ("movable keys"):
// given the whole invocation (args[0] is the name, arity already checked), returns the key
// argument indexes in Redis' order, empty when the arguments name no keys. See key_finders.h.
using KeyFinder = std::vector<int> (*)(std::span<const std::string_view> args);

// Command flags, named as in Redis' COMMAND INFO.
enum Flag : uint32_t {
  kWrite = 1u << 0,            // may modify the keyspace
  kReadOnly = 1u << 1,         // never modifies the keyspace
  kAdmin = 1u << 2,            // administrative
  kFast = 1u << 3,             // O(1) or O(log n)
  kPubSub = 1u << 4,           // pub/sub related
  kNoScript = 1u << 5,         // not allowed in scripts
  kLoading = 1u << 6,          // allowed while loading the dataset
  kStale = 1u << 7,            // allowed on a replica with stale data
  kNoAuth = 1u << 8,           // allowed before authentication
  kDenyOom = 1u << 9,          // refused when over maxmemory
  kSkipMonitor = 1u << 10,     // not shown to MONITOR
  kSkipSlowlog = 1u << 11,     // not logged in SLOWLOG
  kNoMulti = 1u << 12,         // not allowed inside MULTI
  kBlocking = 1u << 13,        // may block the client
  kNoPropagate = 1u << 14,     // never replicated even if it changed data
  kAllowBusy = 1u << 15,       // allowed while the server is busy
  kMovableKeys = 1u << 16,     // keys found by a KeyFinder; CommandTable sets it, never a table row
  kNoAsyncLoading = 1u << 17,  // refused during asynchronous loading
  kNoMandatoryKeys = 1u << 18,  // may take no keys though it declares some (EVAL with numkeys 0)
  // May expire keys it was not given (SCAN, RANDOMKEY): run on its own, the DELs it causes are
  // not wrapped in MULTI/EXEC. Internal, as in Redis 7.0: COMMAND INFO does not show it.
  kTouchesArbitraryKeys = 1u << 19,
  kAsking = 1u << 20,  // served for a slot being imported after ASKING (RESTORE-ASKING)
};

// Names of the flags set in `flags`, in Redis' order, for COMMAND INFO.
std::vector<std::string_view> FlagNames(uint32_t flags);

struct CommandStats {
  uint64_t calls = 0;
  uint64_t usec = 0;
  uint64_t rejected_calls = 0;
  uint64_t failed_calls = 0;
};

struct CommandSpec {
  std::string name;    // lower case; subcommands are "parent|sub"
  int arity = 0;       // >0 exact argument count (with the name), <0 at least -arity
  uint32_t flags = 0;
  int first_key = 0;   // 0: no keys
  int last_key = 0;    // negative counts from the end (-1: last argument)
  int key_step = 0;
  Handler handler = nullptr;
  // Set for movable-key commands; first_key..last_key then only describe Redis' legacy range
  // (what COMMAND INFO reports), and the finder is the authority on which arguments are keys.
  KeyFinder getkeys = nullptr;
  std::string group;   // "string", "keyspace", "connection", "server", ...
  // Redis' explicit ACL categories, space separated without '@' ("keyspace dangerous"), for the
  // commands whose categories are not the one their group implies; empty: the group's. The
  // categories the flags imply (@write, @fast, @admin, ...) are added either way.
  std::string acl_categories;
  // Redis 7.0's key specs and command tips (COMMAND INFO, COMMAND GETKEYSANDFLAGS), and the
  // flags of keys the specs cannot describe. CommandTable fills them from command_meta.h.
  std::vector<KeySpec> key_specs;
  std::vector<std::string> tips;
  KeyFlagsFn key_flags = nullptr;
  std::string summary; // one line, for COMMAND DOCS
  std::string since;   // version the command appeared in Redis
  std::vector<std::unique_ptr<CommandSpec>> subcommands;
  CommandSpec* parent = nullptr;
  // Small, dense and stable for the table's life: CommandTable numbers commands and
  // subcommands 0, 1, 2, ... in registration order (ACL selectors keep a bitmap by id).
  int id = -1;
  CommandStats stats;  // updated under the keyspace lock

  bool IsWrite() const { return flags & kWrite; }
  bool HasKeys() const { return first_key > 0 || getkeys != nullptr; }
  // Key argument indexes of the legacy range (first_key, last_key, key_step) for an invocation
  // with argc arguments. Complete only for commands without a key finder.
  std::vector<int> KeyIndexes(int argc) const;
  template <typename Fn>
  void ForEachKeyIndex(int argc, Fn fn) const {
    if (first_key <= 0) return;
    int last = last_key < 0 ? argc + last_key : last_key;
    int step = key_step > 0 ? key_step : 1;
    for (int i = first_key; i <= last && i < argc; i += step) fn(i);
  }
  // Key argument indexes of a concrete invocation whose arity has been checked: the finder's
  // answer for movable-key commands, the legacy range otherwise.
  std::vector<int> FindKeys(std::span<const std::string_view> args) const;
  CommandSpec* FindSub(std::string_view name) const;
};

class CommandTable {
 public:
  // Adds a command; returns it so subcommands can be attached.
  CommandSpec* Add(CommandSpec spec);
  CommandSpec* AddSub(CommandSpec* parent, CommandSpec spec);
  // Case-insensitive lookup of a top-level command by the name clients use (after renames).
  CommandSpec* Find(std::string_view name) const;
  // rename-command: `to` empty disables the command. Returns false if `from` is unknown.
  bool Rename(std::string_view from, std::string_view to);
  // Every top-level command, by original name.
  const std::vector<CommandSpec*>& all() const { return all_; }
  // Resets every command's statistics (CONFIG RESETSTAT).
  void ResetStats();
  // How many ids have been given out: every id is below this.
  int id_count() const { return next_id_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::vector<std::unique_ptr<CommandSpec>> owned_;
  std::vector<CommandSpec*> all_;
  std::unordered_map<std::string, CommandSpec*, Hash, std::equal_to<>> by_name_;
  int next_id_ = 0;
};

}  // namespace kv::cmd

namespace kv::cmd {

// One row of a command family's registration table; the family's group is given once.
struct CommandRow {
  const char* name;
  int arity;
  uint32_t flags;
  int first_key, last_key, key_step;
  Handler handler;
  const char* summary;
  const char* since;
  KeyFinder getkeys = nullptr;  // movable-key commands only
};
void AddRows(CommandTable& table, std::span<const CommandRow> rows, const char* group);
// The same for the subcommands of `parent` (a container AddRows or Add registered).
void AddSubRows(CommandTable& table, CommandSpec* parent, std::span<const CommandRow> rows,
                const char* group);

// Redis' getKeysFromCommandWithSpecs, for COMMAND GETKEYSANDFLAGS and ACL key checks: the key
// specs answer, with their flags, unless they do not fit the arguments or a spec has variable
// flags; then the key finder (or the legacy range) does, with the flags the command's key_flags
// function records (none for most). args is the whole invocation, arity checked.
std::vector<KeyRef> KeysAndFlags(const CommandSpec& spec, std::span<const std::string_view> args);
// The same into `out` (cleared first), for callers on every command's path (the ACL check)
// that keep one buffer and so allocate nothing once it has grown.
void KeysAndFlagsInto(const CommandSpec& spec, std::span<const std::string_view> args,
                      std::vector<KeyRef>* out);

// Resolves args to the command (or subcommand) to run and checks its arity. On failure returns
// nullptr and sets *error to Redis' message (unknown command, unknown subcommand, arity).
// Whether `argc` arguments (the name included) fit `arity` (>0 exact, <0 at least -arity).
bool ArityOk(int arity, size_t argc);
const CommandSpec* ResolveCommand(const CommandTable& table,
                                  std::span<const std::string_view> args, std::string* error);

}  // namespace kv::cmd
