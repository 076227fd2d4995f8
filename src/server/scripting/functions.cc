// FUNCTION LOAD / DELETE / LIST / DUMP / RESTORE / FLUSH / STATS / KILL / HELP and FCALL,
// FCALL_RO (Redis 7.0's functions.c), on the function libraries (script/function_libraries.h).
// A function runs through ScriptRun (script_run.h) as an EVAL does. FUNCTION LOAD, DELETE,
// RESTORE and FLUSH change the dataset: they go to replicas and the AOF as they came, and the
// libraries are in every RDB (FUNCTION2 records) and AOF rewrite (FUNCTION LOAD commands).
#include <string>
#include <vector>

#include "cmd/context.h"
#include "cmd/errors.h"
#include "cmd/key_finders.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "persist/dump.h"
#include "script/function_libraries.h"
#include "server/scripting/script_run.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;

void FunctionContainer(Context&) {}  // ResolveCommand dispatches to a subcommand

void FunctionLoad(Context& c) {
  bool replace = false;
  size_t at = 2;
  for (; at + 1 < c.argc(); at++) {
    if (!EqualsIgnoreCase(c.arg(at), "replace")) {
      c.Error("Unknown option given: " + std::string(c.arg(at)));
      return;
    }
    replace = true;
  }
  // A replica or the AOF loads what its primary loaded, however long the code takes.
  int64_t timeout = c.session.obey ? 0 : script::FunctionLibraries::kLoadTimeoutMs;
  std::string name, err;
  if (!ServerOf(c).functions().Load(c.arg(at), replace, timeout, &name, &err)) {
    c.Error(err);
    return;
  }
  c.dirty++;
  c.out.Bulk(name);
}

void FunctionDelete(Context& c) {
  if (!ServerOf(c).functions().Delete(c.arg(2))) {
    c.Error("Library not found");
    return;
  }
  c.dirty++;
  c.out.Ok();
}

void WriteFlags(resp::ReplyWriter& w, uint32_t flags) {
  size_t n = 0;
  for (const auto& f : script::kFlagNames) n += (flags & f.flag) ? 1 : 0;
  w.Set(n);
  for (const auto& f : script::kFlagNames) {
    if (flags & f.flag) w.Simple(f.name);
  }
}

void FunctionList(Context& c) {
  bool with_code = false;
  bool has_pattern = false;
  std::string_view pattern;
  for (size_t i = 2; i < c.argc(); i++) {
    if (!with_code && EqualsIgnoreCase(c.arg(i), "withcode")) {
      with_code = true;
      continue;
    }
    if (!has_pattern && EqualsIgnoreCase(c.arg(i), "libraryname")) {
      if (i + 1 >= c.argc()) {
        c.Error("library name argument was not given");
        return;
      }
      pattern = c.arg(++i);
      has_pattern = true;
      continue;
    }
    c.Error("Unknown argument " + std::string(c.arg(i)));
    return;
  }
  std::vector<const script::Library*> shown;
  for (const auto& [name, lib] : ServerOf(c).functions().libraries()) {
    if (!has_pattern || GlobMatch(pattern, name, true)) shown.push_back(&lib);
  }
  resp::ReplyWriter& w = c.out;
  w.Array(shown.size());
  for (const script::Library* lib : shown) {
    w.Map(with_code ? 4 : 3);
    w.Bulk("library_name");
    w.Bulk(lib->name);
    w.Bulk("engine");
    w.Bulk("LUA");
    w.Bulk("functions");
    w.Array(lib->functions.size());
    for (const script::FunctionDef& f : lib->functions) {
      w.Map(3);
      w.Bulk("name");
      w.Bulk(f.name);
      w.Bulk("description");
      if (f.has_desc) {
        w.Bulk(f.desc);
      } else {
        w.Null();
      }
      w.Bulk("flags");
      WriteFlags(w, f.flags);
    }
    if (with_code) {
      w.Bulk("library_code");
      w.Bulk(lib->code);
    }
  }
}

void FunctionDump(Context& c) {
  c.out.Bulk(persist::DumpFunctions(ServerOf(c).functions().Codes()));
}

void FunctionRestore(Context& c) {
  if (c.argc() > 4) {
    c.Error(cmd::SubcommandSyntax(c.arg(1), c.arg(0)));
    return;
  }
  using Policy = script::FunctionLibraries::Policy;
  Policy policy = Policy::kAppend;
  if (c.argc() == 4) {
    std::string_view p = c.arg(3);
    if (EqualsIgnoreCase(p, "append")) {
      policy = Policy::kAppend;
    } else if (EqualsIgnoreCase(p, "replace")) {
      policy = Policy::kReplace;
    } else if (EqualsIgnoreCase(p, "flush")) {
      policy = Policy::kFlush;
    } else {
      c.Error("Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
      return;
    }
  }
  std::string_view payload = c.arg(2);
  if (!persist::VerifyDumpPayload(payload, !ServerOf(c).debug_state().skip_checksum_validation)
           .ok()) {
    c.Error("DUMP payload version or checksum are wrong");
    return;
  }
  auto codes = persist::FunctionCodes(payload);
  if (!codes.ok()) {
    c.Error(codes.status().message());
    return;
  }
  std::string err;
  if (!ServerOf(c).functions().Restore(*codes, policy, &err)) {
    c.Error(err);
    return;
  }
  c.dirty++;
  c.out.Ok();
}

void FunctionFlush(Context& c) {
  if (c.argc() > 3) {
    c.Error(cmd::SubcommandSyntax(c.arg(1), c.arg(0)));
    return;
  }
  if (c.argc() == 3 && !EqualsIgnoreCase(c.arg(2), "sync") &&
      !EqualsIgnoreCase(c.arg(2), "async")) {
    c.Error("FUNCTION FLUSH only supports SYNC|ASYNC option");
    return;
  }
  ServerOf(c).functions().Flush();  // both modes free at once: libraries are small
  c.dirty++;
  c.out.Ok();
}

void FunctionStats(Context& c) {
  // A busy script's FUNCTION STATS is answered by Server::ReplyWhileBusy; none runs now.
  script::FunctionLibraries& f = ServerOf(c).functions();
  BusyScript none;
  none.libraries = f.libraries().size();
  none.functions = f.function_count();
  WriteFunctionStats(c.out, none);
}

void FunctionKill(Context& c) { c.Error("-NOTBUSY No scripts in execution right now."); }

void FunctionHelp(Context& c) {
  static const std::string_view kHelp[] = {
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME "
      "argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored using "
      "FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
  };
  c.ReplyHelp(kHelp);
}

void FcallGeneric(Context& c, bool ro) {
  Server& s = ServerOf(c);
  s.FeedScriptToMonitors(c.args);  // before the commands it runs, as Redis does
  const script::FunctionDef* f = s.functions().Find(c.arg(1));
  if (!f) {
    c.Error("Function not found");
    return;
  }
  auto numkeys = ParseInt64(c.arg(2));
  if (!numkeys) {
    c.Error("Bad number of keys provided");
    return;
  }
  if (*numkeys > static_cast<int64_t>(c.argc()) - 3) {
    c.Error("Number of keys can't be greater than number of args");
    return;
  } else if (*numkeys < 0) {
    c.Error("Number of keys can't be negative");
    return;
  }
  if (!PrepareScript(c, s, f->flags, ro)) return;
  ScriptRun run(s, s.current_client(), c, f->flags, ro, s.oom_before_command(), false, f->name);
  size_t n = static_cast<size_t>(*numkeys);
  s.functions().engine().RunFunction(*f, c.args.subspan(3, n), c.args.subspan(3 + n), run, c.out);
}

void Fcall(Context& c) { FcallGeneric(c, false); }
void FcallRo(Context& c) { FcallGeneric(c, true); }

}  // namespace

script::FunctionLibraries& Server::functions() {
  if (!functions_) {
    functions_ = std::make_unique<script::FunctionLibraries>(kRedisCompatVersion);
  }
  return *functions_;
}

std::vector<std::string> Server::FunctionCodes() const {
  return functions_ ? functions_->Codes() : std::vector<std::string>{};
}

Status Server::InstallFunctions(const std::vector<std::string>& codes, FunctionsLoad how) {
  if (codes.empty() && !functions_) return Status::Ok();
  std::string err;
  if (how != FunctionsLoad::kReplaceAll) {
    for (const std::string& code : codes) {
      std::string name;
      if (!functions().Load(code, how == FunctionsLoad::kMerge, 0, &name, &err)) {
        return Status::Corruption("failed loading a function library: " + err);
      }
    }
    return Status::Ok();
  }
  if (!functions().ReplaceAll(codes, &err)) {
    return Status::Corruption("failed loading a function library: " + err);
  }
  if (!codes.empty()) {
    LOG_NOTICE("Loaded %zu function libraries (%zu functions)", functions_->libraries().size(),
               functions_->function_count());
  }
  return Status::Ok();
}

void RegisterFunctionCommands(cmd::CommandTable& t) {
  using namespace cmd;
  constexpr uint32_t kFcall = kNoScript | kStale | kSkipMonitor | kNoMandatoryKeys;
  static const CommandRow kFcalls[] = {
      {"fcall", -3, kFcall, 0, 0, 0, Fcall, "Invoke a function", "7.0.0", NumkeysAt2Keys},
      {"fcall_ro", -3, kFcall | kReadOnly, 0, 0, 0, FcallRo, "Invoke a read-only function", "7.0.0",
       NumkeysAt2Keys},
  };
  AddRows(t, kFcalls, "scripting");
  CommandSpec* function = t.Add({.name = "function",
                                 .arity = -2,
                                 .handler = FunctionContainer,
                                 .group = "scripting",
                                 .summary = "A container for function commands",
                                 .since = "7.0.0"});
  static const CommandRow kSubs[] = {
      {"delete", 3, kWrite | kNoScript, 0, 0, 0, FunctionDelete, "Delete a function by name",
       "7.0.0"},
      {"dump", 2, kNoScript, 0, 0, 0, FunctionDump,
       "Dump all functions into a serialized binary payload", "7.0.0"},
      {"flush", -2, kWrite | kNoScript, 0, 0, 0, FunctionFlush, "Deleting all functions", "7.0.0"},
      {"help", 2, kLoading | kStale, 0, 0, 0, FunctionHelp,
       "Show helpful text about the different subcommands", "7.0.0"},
      {"kill", 2, kNoScript | kAllowBusy, 0, 0, 0, FunctionKill,
       "Kill the function currently in execution.", "7.0.0"},
      {"list", -2, kNoScript, 0, 0, 0, FunctionList, "List information about all the functions",
       "7.0.0"},
      {"load", -3, kWrite | kDenyOom | kNoScript, 0, 0, 0, FunctionLoad,
       "Create a function with the given arguments (name, code, description)", "7.0.0"},
      {"restore", -3, kWrite | kDenyOom | kNoScript, 0, 0, 0, FunctionRestore,
       "Restore all the functions on the given payload", "7.0.0"},
      {"stats", 2, kNoScript | kAllowBusy, 0, 0, 0, FunctionStats,
       "Return information about the function currently running (name, description, duration)",
       "7.0.0"},
  };
  AddSubRows(t, function, kSubs, "scripting");
}

}  // namespace kv::server
