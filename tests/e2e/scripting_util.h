// Helpers shared by the differential Lua scripting tests: an EVAL of a script without keys and
// the runner that starts every group from an empty dataset and an empty script cache. They live
// in their own namespace, beside functions_test.cc's Compare and Servers.
#pragma once

#include <string>
#include <vector>

#include "tests/support/script_diff.h"

namespace kv::test::lua_diff {

inline Cmd Eval(const std::string& body) { return {"EVAL", body, "0"}; }

// pcall(f, ...) as a reply: {"true"|"false", the result as a string ("table" for a table)}.
inline Cmd Pcall(const std::string& call) {
  return Eval("local ok, r = pcall(" + call +
              ") return {tostring(ok), type(r) == 'table' and 'table' or tostring(r)}");
}

// FLUSHALL and SCRIPT FLUSH, then `cmds`, on both servers (script_diff.h).
using Servers = DiffServers;
inline void Compare(Servers& s, const std::vector<Cmd>& cmds, bool resp3) {
  std::vector<Cmd> all = {{"FLUSHALL"}, {"SCRIPT", "FLUSH"}};
  all.insert(all.end(), cmds.begin(), cmds.end());
  CompareReplies(s, all, resp3);
}

}  // namespace kv::test::lua_diff
