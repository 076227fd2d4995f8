// Generic keyspace commands. (Being written.)
#include "cmd/context.h"
#include "cmd/registry.h"

namespace kv::cmd {
void RegisterKeyCommands(CommandTable& t) {}
}  // namespace kv::cmd
