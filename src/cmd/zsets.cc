// (Being written.)
#include "cmd/context.h"
#include "cmd/registry.h"

namespace kv::cmd {
void RegisterZsetCommands(CommandTable& t) {}
}  // namespace kv::cmd
