#include "server/server.h"

namespace kv::server {

void RegisterConnectionServerCommands(cmd::CommandTable& t);  // conn_cmds.cc
void RegisterInfoCommands(cmd::CommandTable& t);              // info_cmds.cc
void RegisterAdminCommands(cmd::CommandTable& t);             // admin_cmds.cc
void RegisterDebugCommand(cmd::CommandTable& t);              // debug_cmds.cc
void RegisterPubSubCommands(cmd::CommandTable& t);            // pubsub.cc
void RegisterMultiCommands(cmd::CommandTable& t);             // multi.cc
void RegisterPersistCommands(cmd::CommandTable& t);           // persist_cmds.cc
void RegisterReplCommands(cmd::CommandTable& t);              // repl_cmds.cc
void RegisterScriptingCommands(cmd::CommandTable& t);         // scripting.cc
void RegisterFunctionCommands(cmd::CommandTable& t);          // functions.cc
void RegisterModuleCommands(cmd::CommandTable& t);            // module_cmds.cc
void RegisterLolwutCommand(cmd::CommandTable& t);             // lolwut.cc

void RegisterServerCommands(cmd::CommandTable& t) {
  RegisterConnectionServerCommands(t);
  RegisterInfoCommands(t);
  RegisterAdminCommands(t);
  RegisterDebugCommand(t);
  RegisterPubSubCommands(t);
  RegisterMultiCommands(t);
  RegisterPersistCommands(t);
  RegisterReplCommands(t);
  RegisterScriptingCommands(t);
  RegisterFunctionCommands(t);
  RegisterModuleCommands(t);
  RegisterLolwutCommand(t);
}

}  // namespace kv::server
