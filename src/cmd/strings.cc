// String commands. (Being written.)
#include "cmd/context.h"
#include "cmd/registry.h"

namespace kv::cmd {
void RegisterStringCommands(CommandTable& t) {}
}  // namespace kv::cmd
