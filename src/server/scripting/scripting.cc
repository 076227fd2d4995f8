// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD / EXISTS / FLUSH / KILL / DEBUG / HELP, on
// the Lua engine (script/); a script runs through ScriptRun (script_run.h).
#include <string>
#include <vector>

#include "cmd/context.h"
#include "cmd/key_finders.h"
#include "common/strutil.h"
#include "script/lua_engine.h"
#include "server/scripting/script_run.h"
#include "server/server.h"

namespace kv::server {

namespace {

using cmd::Context;

constexpr std::string_view kNoScriptError = "-NOSCRIPT No matching script. Please use EVAL.";

void EvalGeneric(Context& c, bool evalsha, bool ro) {
  Server& s = ServerOf(c);
  s.FeedScriptToMonitors(c.args);  // before the commands it runs, as Redis does
  auto numkeys = ParseInt64(c.arg(2));
  if (!numkeys) {
    c.Error(cmd::OpStatus::kNotInteger);
    return;
  }
  if (*numkeys > static_cast<int64_t>(c.argc()) - 3) {
    c.Error("Number of keys can't be greater than number of args");
    return;
  } else if (*numkeys < 0) {
    c.Error("Number of keys can't be negative");
    return;
  }
  script::LuaEngine& lua = s.lua();
  const script::Script* script;
  if (evalsha) {
    script = lua.Find(c.arg(1));
    if (!script) {
      c.Error(kNoScriptError);
      return;
    }
  } else {
    std::string sha, err;
    if (!lua.Load(c.arg(1), &sha, &err)) {
      c.Error(err);
      return;
    }
    script = lua.Find(sha);
  }
  if (!PrepareScript(c, s, script->flags, ro)) return;
  ScriptRun run(s, s.current_client(), c, script->flags, ro, s.oom_before_command(), true,
                script->sha);
  size_t n = static_cast<size_t>(*numkeys);
  lua.Run(*script, c.args.subspan(3, n), c.args.subspan(3 + n), run, c.out);
}

void Eval(Context& c) { EvalGeneric(c, false, false); }
void EvalRo(Context& c) { EvalGeneric(c, false, true); }
void EvalSha(Context& c) { EvalGeneric(c, true, false); }
void EvalShaRo(Context& c) { EvalGeneric(c, true, true); }

void ScriptContainer(Context&) {}  // ResolveCommand dispatches to a subcommand

void ScriptCommand(Context& c) {
  Server& s = ServerOf(c);
  std::string_view sub = c.arg(1);
  script::LuaEngine& lua = s.lua();
  if (EqualsIgnoreCase(sub, "help")) {
    static const std::string_view kHelp[] = {
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
    };
    c.ReplyHelp(kHelp);
  } else if (EqualsIgnoreCase(sub, "flush")) {
    if (c.argc() > 3 || (c.argc() == 3 && !EqualsIgnoreCase(c.arg(2), "sync") &&
                         !EqualsIgnoreCase(c.arg(2), "async"))) {
      c.Error("SCRIPT FLUSH only support SYNC|ASYNC option");
      return;
    }
    lua.Reset();  // both modes free at once: the cache is small next to a keyspace
    c.out.Ok();
  } else if (EqualsIgnoreCase(sub, "exists")) {
    c.out.Array(c.argc() - 2);
    for (size_t j = 2; j < c.argc(); j++) c.out.Int(lua.Find(c.arg(j)) ? 1 : 0);
  } else if (EqualsIgnoreCase(sub, "load")) {
    std::string sha, err;
    if (!lua.Load(c.arg(2), &sha, &err)) {
      c.Error(err);
      return;
    }
    c.out.Bulk(sha);
  } else if (EqualsIgnoreCase(sub, "kill")) {
    // A script holds the keyspace lock until it ends: none runs while this does (a busy
    // script's SCRIPT KILL is answered by ReplyWhileBusy).
    c.Error("-NOTBUSY No scripts in execution right now.");
  } else if (EqualsIgnoreCase(sub, "debug")) {
    c.Error("SCRIPT DEBUG (the Lua debugger) is not supported by kvstore");
  }
}

}  // namespace

void RegisterScriptingCommands(cmd::CommandTable& t) {
  using namespace cmd;
  constexpr uint32_t kEval = kNoScript | kStale | kSkipMonitor | kNoMandatoryKeys;
  static const CommandRow kEvals[] = {
      {"eval", -3, kEval, 0, 0, 0, Eval, "Execute a Lua script server side", "2.6.0",
       NumkeysAt2Keys},
      {"evalsha", -3, kEval, 0, 0, 0, EvalSha, "Execute a Lua script server side", "2.6.0",
       NumkeysAt2Keys},
      {"eval_ro", -3, kEval | kReadOnly, 0, 0, 0, EvalRo,
       "Execute a read-only Lua script server side", "7.0.0", NumkeysAt2Keys},
      {"evalsha_ro", -3, kEval | kReadOnly, 0, 0, 0, EvalShaRo,
       "Execute a read-only Lua script server side", "7.0.0", NumkeysAt2Keys},
  };
  AddRows(t, kEvals, "scripting");
  CommandSpec* script = t.Add({.name = "script",
                               .arity = -2,
                               .handler = ScriptContainer,
                               .group = "scripting",
                               .summary = "A container for Lua scripts management commands",
                               .since = "2.6.0"});
  static const CommandRow kSubs[] = {
      {"debug", 3, kNoScript, 0, 0, 0, ScriptCommand, "Set the debug mode for executed scripts.",
       "3.2.0"},
      {"exists", -3, kNoScript, 0, 0, 0, ScriptCommand,
       "Check existence of scripts in the script cache.", "2.6.0"},
      {"flush", -2, kNoScript, 0, 0, 0, ScriptCommand,
       "Remove all the scripts from the script cache.", "2.6.0"},
      {"help", 2, kLoading | kStale, 0, 0, 0, ScriptCommand,
       "Show helpful text about the different subcommands", "5.0.0"},
      {"kill", 2, kNoScript | kAllowBusy, 0, 0, 0, ScriptCommand,
       "Kill the script currently in execution.", "2.6.0"},
      {"load", 3, kNoScript | kStale, 0, 0, 0, ScriptCommand,
       "Load the specified Lua script into the script cache.", "2.6.0"},
  };
  AddSubRows(t, script, kSubs, "scripting");
}

}  // namespace kv::server
