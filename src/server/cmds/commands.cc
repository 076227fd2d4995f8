#include "server/server.h"

namespace kv::server {

void RegisterConnectionServerCommands(cmd::CommandTable& t);  // conn_cmds.cc
void RegisterInfoCommands(cmd::CommandTable& t);              // info_cmds.cc
void RegisterAdminCommands(cmd::CommandTable& t);             // admin_cmds.cc
void RegisterLatencyCommands(cmd::CommandTable& t);           // latency_cmds.cc
void RegisterDebugCommand(cmd::CommandTable& t);              // debug_cmds.cc
void RegisterPubSubCommands(cmd::CommandTable& t);            // pubsub.cc
void RegisterMultiCommands(cmd::CommandTable& t);             // multi.cc
void RegisterPersistCommands(cmd::CommandTable& t);           // persist_cmds.cc
void RegisterReplCommands(cmd::CommandTable& t);              // repl_cmds.cc
void RegisterScriptingCommands(cmd::CommandTable& t);         // scripting.cc
void RegisterFunctionCommands(cmd::CommandTable& t);          // functions.cc
void RegisterModuleCommands(cmd::CommandTable& t);            // module_cmds.cc
void RegisterLolwutCommand(cmd::CommandTable& t);             // lolwut.cc
void RegisterMigrateCommand(cmd::CommandTable& t);            // migrate_cmds.cc
void RegisterShutdownCommand(cmd::CommandTable& t);           // shutdown_cmds.cc
void RegisterFailoverCommand(cmd::CommandTable& t);           // failover_cmds.cc
void RegisterAclCommands(cmd::CommandTable& t);               // acl_cmds.cc
void RegisterClusterConnectionCommands(cmd::CommandTable& t);  // cluster_cmds.cc

void RegisterServerCommands(cmd::CommandTable& t) {
  RegisterConnectionServerCommands(t);
  RegisterInfoCommands(t);
  RegisterAdminCommands(t);
  RegisterLatencyCommands(t);
  RegisterDebugCommand(t);
  RegisterPubSubCommands(t);
  RegisterMultiCommands(t);
  RegisterPersistCommands(t);
  RegisterReplCommands(t);
  RegisterScriptingCommands(t);
  RegisterFunctionCommands(t);
  RegisterModuleCommands(t);
  RegisterLolwutCommand(t);
  RegisterMigrateCommand(t);
  RegisterShutdownCommand(t);
  RegisterFailoverCommand(t);
  RegisterAclCommands(t);
  RegisterClusterConnectionCommands(t);
}

}  // namespace kv::server
