// ACL categories of commands (@read, @write, @keyspace, ...), computed from the command table:
// a command's explicit categories or its group's, plus those its flags imply, the way Redis 7.0
// derives its implicit ones. COMMAND INFO / COMMAND LIST and the ACL module read them.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "cmd/command.h"

namespace kv::cmd {

// Redis' ACL categories, in its table order (COMMAND INFO and ACL CAT list them in this order).
enum AclCategory : int {
  kCatKeyspace,
  kCatRead,
  kCatWrite,
  kCatSet,
  kCatSortedSet,
  kCatList,
  kCatHash,
  kCatString,
  kCatBitmap,
  kCatHyperLogLog,
  kCatGeo,
  kCatStream,
  kCatPubSub,
  kCatAdmin,
  kCatFast,
  kCatSlow,
  kCatBlocking,
  kCatDangerous,
  kCatConnection,
  kCatTransaction,
  kCatScripting,
  kNumCategories
};

// The category names (without '@'), indexed by AclCategory.
std::span<const std::string_view> AclCategoryNames();

// The index of a category by name, case-insensitively ("READ" -> kCatRead), or -1.
int AclCategoryIndex(std::string_view name);

// A bit (1u << AclCategory) per category of the command: its explicit categories or its
// group's, then those its flags imply. Containers carry their explicit categories and @slow.
uint32_t Categories(const CommandSpec& spec);

}  // namespace kv::cmd
