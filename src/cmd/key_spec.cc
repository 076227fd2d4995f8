#include "cmd/key_spec.h"

#include <utility>

namespace kv::cmd {

std::vector<std::string_view> KeyFlagNames(uint32_t flags) {
  static const std::pair<KeyFlag, std::string_view> kNames[] = {
      {kKeyRO, "RO"},         {kKeyRW, "RW"},         {kKeyOW, "OW"},
      {kKeyRM, "RM"},         {kKeyAccess, "access"}, {kKeyUpdate, "update"},
      {kKeyInsert, "insert"}, {kKeyDelete, "delete"}, {kKeyNotKey, "not_key"},
      {kKeyIncomplete, "incomplete"}, {kKeyVariableFlags, "variable_flags"},
  };
  std::vector<std::string_view> out;
  for (const auto& [f, n] : kNames) {
    if (flags & f) out.push_back(n);
  }
  return out;
}

}  // namespace kv::cmd
