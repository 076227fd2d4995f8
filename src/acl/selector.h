// ACL selectors (Redis 7.0's ACL v2): what one set of permissions allows. A user has a root
// selector and any number of additional ones; a command is allowed when any selector allows it.
//
// A selector holds the commands it allows as a bitmap by cmd::CommandSpec::id, the "first
// arguments" allowed for commands that are otherwise denied (+select|0), key patterns each
// with read/write permissions, channel patterns, and the allkeys / allchannels / allcommands
// flags. Plain data: copy it to stage changes. Not synchronized; the owner serializes access.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "acl/command_index.h"

namespace kv::acl {

// What a key pattern grants. "~p" and "%RW~p" are kKeyReadWrite.
enum KeyPerm : uint8_t {
  kKeyRead = 1u << 0,
  kKeyWrite = 1u << 1,
  kKeyReadWrite = kKeyRead | kKeyWrite,
};

struct KeyPattern {
  std::string pattern;
  uint8_t perms = kKeyReadWrite;  // KeyPerm bits
};

// Why a rule was refused; RuleErrorMessage gives Redis' text for each.
enum class RuleError {
  kNone,
  kUnknownName,             // unknown command or category
  kSyntax,                  // not a rule, or a pattern with spaces
  kKeyPatternAfterAll,      // ~p after allkeys
  kChannelPatternAfterAll,  // &p after allchannels
  kNoSuchPassword,          // <pw or !hash naming a password the user does not have
  kBadHash,                 // #hash or !hash that is not 64 lowercase hex digits
  kFirstArgOfSubcommand,    // +cmd|sub|arg
};
std::string_view RuleErrorMessage(RuleError e);

// What rules need to know beyond the rule itself.
struct RuleEnv {
  const CommandIndex& commands;
  // acl-pubsub-default: true for allchannels, false for resetchannels. New selectors and
  // "reset" start from it.
  bool pubsub_allchannels = false;
};

struct Selector {
  bool root = false;  // the user's root selector (rules outside parentheses)
  bool allkeys = false;
  bool allchannels = false;
  bool allcommands = false;  // every command, skipping the bitmap
  // Redis' reserved "future commands" bit: set by +@all / allcommands, cleared only by -@all /
  // nocommands. ACL LIST starts a description with +@all when it is set, -@all otherwise.
  bool future_commands = false;
  std::vector<uint64_t> allowed;                      // a bit per command id
  std::map<int, std::vector<std::string>> firstargs;  // command id -> allowed argv[1] values
  std::vector<KeyPattern> keys;
  std::vector<std::string> channels;

  // An empty selector (no commands, keys or channels) sized for env's command table; channels
  // follow acl-pubsub-default.
  static Selector Create(const RuleEnv& env, bool root);

  bool CommandBit(int id) const {
    size_t w = static_cast<size_t>(id) / 64;
    return w < allowed.size() && (allowed[w] >> (id % 64) & 1);
  }
  // Sets or clears the bit of one command; clearing also clears allcommands.
  void SetCommandBit(int id, bool value);
  // Sets or clears a command and, for a container, all its subcommands, and forgets the
  // command's allowed first arguments (Redis' ACLChangeSelectorPerm).
  void ChangeCommand(const cmd::CommandSpec& spec, bool allow);
  // Sets or clears every command of a category (an AclCategory index).
  void ChangeCategory(const CommandIndex& commands, int category, bool allow);
  // +@all / -@all.
  void SetAllCommands(bool allow);
};

// Applies one selector rule (Redis' ACLSetSelector): +cmd -cmd +cmd|sub -cmd|sub +cmd|firstarg
// +@cat -@cat allcommands nocommands ~pat %R~pat %W~pat %RW~pat allkeys resetkeys &pat
// allchannels resetchannels. Names and categories match case-insensitively. On error the
// selector is unchanged.
RuleError ApplySelectorRule(Selector& s, std::string_view op, const RuleEnv& env);

// Builds a selector from "(rule rule ...)" (the parentheses included), splitting the inside as
// Redis' sdssplitargs does (quotes allowed). kNone and the selector, or the first rule's error.
RuleError SelectorFromOpSet(std::string_view opset, const RuleEnv& env, Selector* out);

}  // namespace kv::acl
