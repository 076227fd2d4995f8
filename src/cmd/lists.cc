// (Being written.)
#include "cmd/context.h"
#include "cmd/registry.h"

namespace kv::cmd {
void RegisterListCommands(CommandTable& t) {}
}  // namespace kv::cmd
