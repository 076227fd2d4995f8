// What Redis 7.0 declares about each command beyond what kvstore's registrations drive: key
// specs, command tips, and the flags and ACL categories that only describe a command here
// (kvstore has no asynchronous loading and no ACL users, so no_async_loading and the
// categories change nothing but COMMAND's replies; allow_busy marks what a busy script's
// server still answers, Server::ReplyWhileBusy). CommandTable attaches a
// command's row when the command is registered, so every family registers only what it runs.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "cmd/key_spec.h"

namespace kv::cmd {

struct CommandMeta {
  std::string_view name;            // full name: "get", "client|list"
  std::string_view tips;            // space separated, in Redis' order
  std::vector<KeySpec> key_specs;   // in Redis' order
  uint32_t flags = 0;               // Flag bits added to the registration's
  std::string_view acl_categories;  // used when the registration names none
  KeyFlagsFn key_flags = nullptr;
};

// The row for a full command name, or nullptr (commands Redis 7.0 lacks, and commands with
// nothing to add).
const CommandMeta* FindCommandMeta(std::string_view name);

}  // namespace kv::cmd
