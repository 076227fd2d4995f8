#include "cmd/acl_categories.h"

#include <utility>
#include <vector>

#include "common/strutil.h"

namespace kv::cmd {
namespace {

constexpr std::string_view kCategoryNames[kNumCategories] = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting"};

// The category a command group implies ("keyspace" commands are @keyspace, ...), or -1. The
// pubsub group implies none: its commands are @pubsub by their flag, PUBSUB HELP is not.
int GroupCategory(std::string_view group) {
  static const std::pair<std::string_view, AclCategory> kGroups[] = {
      {"keyspace", kCatKeyspace},
      {"generic", kCatKeyspace},
      {"string", kCatString},
      {"list", kCatList},
      {"set", kCatSet},
      {"sorted-set", kCatSortedSet},
      {"zset", kCatSortedSet},
      {"hash", kCatHash},
      {"bitmap", kCatBitmap},
      {"hyperloglog", kCatHyperLogLog},
      {"geo", kCatGeo},
      {"stream", kCatStream},
      {"connection", kCatConnection},
      {"transactions", kCatTransaction},
      {"scripting", kCatScripting},
  };
  for (const auto& [name, cat] : kGroups) {
    if (name == group) return cat;
  }
  return -1;
}

// The space-separated words of s.
std::vector<std::string_view> SplitWords(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    size_t end = s.find(' ', i);
    if (end == std::string_view::npos) end = s.size();
    if (end > i) out.push_back(s.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

}  // namespace

std::span<const std::string_view> AclCategoryNames() { return kCategoryNames; }

int AclCategoryIndex(std::string_view name) {
  for (int i = 0; i < kNumCategories; i++) {
    if (EqualsIgnoreCase(name, kCategoryNames[i])) return i;
  }
  return -1;
}

uint32_t Categories(const CommandSpec& c) {
  uint32_t cats = 0;
  auto add = [&](AclCategory cat) { cats |= 1u << cat; };
  if (!c.acl_categories.empty()) {
    for (std::string_view name : SplitWords(c.acl_categories)) {
      for (int i = 0; i < kNumCategories; i++) {
        if (kCategoryNames[i] == name) add(static_cast<AclCategory>(i));
      }
    }
  } else if (c.subcommands.empty()) {
    int g = GroupCategory(c.group);
    if (g >= 0) add(static_cast<AclCategory>(g));
  }
  if (c.flags & kWrite) add(kCatWrite);
  if ((c.flags & kReadOnly) && !(cats & (1u << kCatScripting))) add(kCatRead);
  if (c.flags & kAdmin) {
    add(kCatAdmin);
    add(kCatDangerous);
  }
  if (c.flags & kPubSub) add(kCatPubSub);
  if (c.flags & kFast) add(kCatFast);
  if (c.flags & kBlocking) add(kCatBlocking);
  if (!(cats & (1u << kCatFast))) add(kCatSlow);
  return cats;
}

}  // namespace kv::cmd
