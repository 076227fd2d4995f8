// A command table for the ACL tests: the data command families as the server registers them,
// plus stand-ins for the server-level commands the tests need (CONFIG and CLIENT containers,
// DEBUG, AUTH, the pub/sub commands), with Redis' flags.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "acl/command_index.h"
#include "acl/selector.h"
#include "cmd/command.h"
#include "cmd/registry.h"

namespace kv::acl {

inline void Noop(cmd::Context&) {}

class AclTestTable {
 public:
  AclTestTable() {
    using namespace cmd;
    RegisterDataCommands(table_);
    auto container = [&](const char* name, std::vector<std::pair<const char*, uint32_t>> subs) {
      CommandSpec* c = table_.Add({.name = name, .arity = -2, .handler = Noop, .group = "server"});
      for (const auto& [sub, flags] : subs) {
        table_.AddSub(
            c, {.name = sub, .arity = -2, .flags = flags, .handler = Noop, .group = "server"});
      }
    };
    container("config", {{"get", kAdmin | kNoScript | kLoading | kStale},
                         {"set", kAdmin | kNoScript | kLoading | kStale},
                         {"help", kLoading | kStale}});
    container("client", {{"kill", kAdmin | kNoScript | kLoading | kStale},
                         {"id", kNoScript | kLoading | kStale}});
    table_.Add({.name = "debug",
                .arity = -2,
                .flags = kAdmin | kNoScript | kLoading | kStale,
                .handler = Noop,
                .group = "server"});
    table_.Add({.name = "auth",
                .arity = -2,
                .flags = kNoScript | kLoading | kStale | kFast | kNoAuth,
                .handler = Noop,
                .group = "connection"});
    auto pubsub = [&](const char* name, int arity, uint32_t extra) {
      table_.Add({.name = name,
                  .arity = arity,
                  .flags = kPubSub | kLoading | kStale | extra,
                  .handler = Noop,
                  .group = "pubsub"});
    };
    pubsub("publish", 3, kFast);
    pubsub("spublish", 3, kFast);
    pubsub("subscribe", -2, kNoScript);
    pubsub("ssubscribe", -2, kNoScript);
    pubsub("psubscribe", -2, kNoScript);
    pubsub("unsubscribe", -1, kNoScript);
    index_ = std::make_unique<CommandIndex>(table_);
  }

  const cmd::CommandTable& table() const { return table_; }
  // For tests that rename commands; index() keeps describing the table as first built.
  cmd::CommandTable& mutable_table() { return table_; }
  const CommandIndex& index() const { return *index_; }
  RuleEnv env(bool pubsub_allchannels = false) const { return {*index_, pubsub_allchannels}; }

 private:
  cmd::CommandTable table_;
  std::unique_ptr<CommandIndex> index_;
};

}  // namespace kv::acl
