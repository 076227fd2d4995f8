#include "server/server.h"

namespace kv::server {

void RegisterConnectionServerCommands(cmd::CommandTable& t);  // conn_cmds.cc

void RegisterServerCommands(cmd::CommandTable& t) { RegisterConnectionServerCommands(t); }

}  // namespace kv::server
