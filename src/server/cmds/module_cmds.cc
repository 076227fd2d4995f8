// MODULE: Redis 7.0's container for loading and listing modules. kvstore loads no Redis modules
// (it could not run their C API), so MODULE LIST is always empty, MODULE UNLOAD answers Redis'
// own "no such module" error, and MODULE LOAD / LOADEX are refused with a message that says why.
//
// As in Redis 7.0, only LOAD, LOADEX and UNLOAD are "protected" (enable-module-command: no, yes,
// or local connections); HELP and LIST always run. Redis checks this in processCommand after the
// arity check, which is where a subcommand handler runs here.
#include <string_view>

#include "cmd/context.h"
#include "common/logging.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;

constexpr std::string_view kModuleDisabled =
    "MODULE command not allowed. If the enable-module-command option is set to \"local\", you can "
    "run it from a local connection, otherwise you need to set this option in the configuration "
    "file, and then restart the server.";

// Redis answers "Error loading the extension. Please check the server logs." for any failed
// load; kvstore says plainly that no load can succeed.
constexpr std::string_view kNoModules = "kvstore does not load Redis modules";

// Answers the protected-command error and returns false when enable-module-command refuses
// this client.
bool ModuleAllowed(Context& c) {
  Server& s = ServerOf(c);
  if (s.config().Allows("enable-module-command", s.current_client().is_local())) return true;
  c.Error(kModuleDisabled);
  return false;
}

void ModuleHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "LIST",
      "    Return a list of loaded modules.",
      "LOAD <path> [<arg> ...]",
      "    Load a module library from <path>, passing to it any optional arguments.",
      "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
      "    Load a module library from <path>, while passing it module configurations and "
      "optional arguments.",
      "UNLOAD <name>",
      "    Unload a module.",
  };
  c.ReplyHelp(kLines);
}

void ModuleList(Context& c) { c.out.Array(0); }

// MODULE LOAD and LOADEX.
void ModuleLoad(Context& c) {
  if (!ModuleAllowed(c)) return;
  std::string path(c.arg(2));
  LOG_WARNING("Module %s failed to load: %s", path.c_str(), kNoModules.data());
  c.Error(kNoModules);
}

void ModuleUnload(Context& c) {
  if (!ModuleAllowed(c)) return;
  c.Error("Error unloading module: no such module with that name");
}

}  // namespace

void RegisterModuleCommands(cmd::CommandTable& t) {
  using namespace cmd;
  constexpr uint32_t kLoadFlags = kAdmin | kNoScript | kNoAsyncLoading;
  CommandSpec* parent = t.Add({.name = "module",
                               .arity = -2,
                               .group = "server",
                               .summary = "A container for module commands",
                               .since = "4.0.0"});
  struct Sub {
    const char* name;
    int arity;
    uint32_t flags;
    Handler handler;
    const char* summary;
    const char* since;
  };
  const Sub kSubs[] = {
      {"help", 2, kLoading | kStale, ModuleHelp,
       "Show helpful text about the different subcommands", "5.0.0"},
      {"list", 2, kAdmin | kNoScript, ModuleList, "List all modules loaded by the server", "4.0.0"},
      {"load", -3, kLoadFlags, ModuleLoad, "Load a module", "4.0.0"},
      {"loadex", -3, kLoadFlags, ModuleLoad, "Load a module with extended parameters", "7.0.0"},
      {"unload", 3, kLoadFlags, ModuleUnload, "Unload a module", "4.0.0"},
  };
  for (const Sub& s : kSubs) {
    t.AddSub(parent, {.name = s.name,
                      .arity = s.arity,
                      .flags = s.flags,
                      .handler = s.handler,
                      .group = "server",
                      .summary = s.summary,
                      .since = s.since});
  }
}

}  // namespace kv::server
