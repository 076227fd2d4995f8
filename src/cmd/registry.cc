#include "cmd/registry.h"

namespace kv::cmd {

void RegisterDataCommands(CommandTable& table) {
  RegisterConnectionCommands(table);
  RegisterKeyCommands(table);
  RegisterStringCommands(table);
}

}  // namespace kv::cmd
