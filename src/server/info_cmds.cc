// INFO, CONFIG, COMMAND and TIME. (Being written.)
#include "server/server.h"

namespace kv::server {
void RegisterInfoCommands(cmd::CommandTable& t) {}
}  // namespace kv::server
