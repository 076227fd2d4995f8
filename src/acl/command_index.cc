#include "acl/command_index.h"

#include "cmd/acl_categories.h"
#include "common/strutil.h"

namespace kv::acl {

CommandIndex::CommandIndex(const cmd::CommandTable& table)
    : by_id_(table.id_count(), nullptr), categories_(table.id_count(), 0) {
  auto add = [&](const cmd::CommandSpec* spec) {
    by_id_[spec->id] = spec;
    categories_[spec->id] = cmd::Categories(*spec);
    by_name_[spec->name] = spec;
  };
  for (const cmd::CommandSpec* spec : table.all()) {
    top_.push_back(spec);
    add(spec);
    for (const auto& sub : spec->subcommands) add(sub.get());
  }
}

const cmd::CommandSpec* CommandIndex::Find(std::string_view full_name) const {
  size_t bar = full_name.find('|');
  if (bar != std::string_view::npos && full_name.find('|', bar + 1) != std::string_view::npos) {
    return nullptr;
  }
  auto it = by_name_.find(ToLower(full_name));
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace kv::acl
