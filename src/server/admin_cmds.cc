// DEBUG, LATENCY, SLOWLOG, MEMORY, MONITOR and SHUTDOWN. (Being written.)
#include "server/server.h"

namespace kv::server {
void RegisterAdminCommands(cmd::CommandTable& t) {}
}  // namespace kv::server
