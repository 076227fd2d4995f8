// The ACL check: may a user run this command with these arguments? The one function that
// dispatch, MULTI/EXEC, scripts and pub/sub call (Redis 7.0's ACLCheckAllUserCommandPerm). It
// reads the command table's data only: the command's id and flags, its key specs (through
// cmd::KeysAndFlags, the same keys and flags COMMAND GETKEYSANDFLAGS reports) and, for the
// pub/sub commands, which arguments are channels. Pure; safe from any thread that may read the
// user.
#pragma once

#include <span>
#include <string_view>

#include "acl/user.h"

namespace kv::acl {

enum class Denial {
  kNone,     // allowed
  kCommand,  // no selector allows the command ("no permissions to run the '...' command")
  kKey,      // a key no selector allows ("no permissions to access a key"); arg names it
  kChannel,  // a channel no selector allows; arg names it
};

struct CheckResult {
  Denial denial = Denial::kNone;
  int arg = 0;  // for kKey / kChannel: the index in args of the offending key or channel
  bool allowed() const { return denial == Denial::kNone; }
};

// `spec` is the resolved command (a subcommand when args name one) and `args` the whole
// invocation (args[0] is the command name), arity already checked. The root selector then each
// other selector is tried; the first that allows the command allows it. When none does, the
// reason is the most specific one any selector gave (channel over key over command) and, among
// equals, the one with the highest argument index, as Redis reports it.
CheckResult CheckCommand(const User& u, const cmd::CommandSpec& spec,
                         std::span<const std::string_view> args);

// Whether some selector of the user both allows the command and reaches every key with `perms`
// (allkeys, or a "*" pattern granting them): what SORT's BY and GET patterns, which name keys
// the arguments do not, require (Redis' ACLUserCheckCmdWithUnrestrictedKeyAccess).
bool RunsWithUnrestrictedKeys(const User& u, const cmd::CommandSpec& spec,
                              std::span<const std::string_view> args, uint8_t perms);

// Whether some selector of the user may access `key` with `perms` (KeyPerm bits), e.g. for
// commands that reach keys their arguments do not name.
bool CheckKey(const User& u, std::string_view key, uint8_t perms);

// Whether some selector of the user allows `channel` (a channel name, glob-matched against the
// user's patterns; or with is_pattern, a PSUBSCRIBE pattern, which must equal one of them).
bool CheckChannel(const User& u, std::string_view channel, bool is_pattern);

}  // namespace kv::acl
