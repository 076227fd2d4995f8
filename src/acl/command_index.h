// The ACL's view of the command table: every command and subcommand by id with its categories,
// and lookup by original full name ("get", "config|get"), which rename-command does not affect
// (rules name commands as registered, as Redis' ACL uses its original command table).
//
// Built once after every command is registered; immutable afterwards, so any thread may read
// it. It borrows the table, which must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cmd/command.h"

namespace kv::acl {

class CommandIndex {
 public:
  explicit CommandIndex(const cmd::CommandTable& table);

  // Ids are 0..id_count()-1.
  int id_count() const { return static_cast<int>(by_id_.size()); }
  const cmd::CommandSpec* ById(int id) const { return by_id_[id]; }
  // The cmd::Categories bits of command `id`.
  uint32_t CategoriesOf(int id) const { return categories_[id]; }
  // Redis' lookupCommandBySds: "name" or "name|sub", case-insensitive; nullptr if unknown,
  // if `name` has no such subcommand, or if the name has more than one '|'.
  const cmd::CommandSpec* Find(std::string_view full_name) const;
  // Top-level commands in registration order.
  const std::vector<const cmd::CommandSpec*>& top() const { return top_; }

 private:
  std::vector<const cmd::CommandSpec*> by_id_;
  std::vector<uint32_t> categories_;
  std::vector<const cmd::CommandSpec*> top_;
  std::unordered_map<std::string, const cmd::CommandSpec*> by_name_;  // lower-case full names
};

}  // namespace kv::acl
