// The function libraries behind FUNCTION and FCALL, as Redis 7.0 keeps them (functions.c): each
// library is its code (with its `#!lua name=<library>` shebang) and the functions it registered
// when it loaded; function names are unique across libraries and found in any letter case,
// library names are case sensitive. Every library runs in one functions engine (a LuaEngine of
// kind kFunctions), which FUNCTION FLUSH replaces with a fresh one.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "script/lua_engine.h"

namespace kv::script {

struct Library {
  std::string name;
  std::string code;                    // as loaded, shebang included
  std::vector<FunctionDef> functions;  // in registration order
};

// A library's shebang line (functionExtractLibMetaData): the engine and name=, and where its
// code starts (the newline that ends the line). False with *err (Redis' message).
struct LibraryMeta {
  std::string engine;
  std::string name;
  size_t code_at = 0;
};
bool ParseLibraryMeta(std::string_view code, LibraryMeta* meta, std::string* err);

class FunctionLibraries {
 public:
  // FUNCTION LOAD's time limit for running a library's code (0: none, for a replica or the
  // AOF, which must load what their primary loaded).
  static constexpr int64_t kLoadTimeoutMs = 500;

  explicit FunctionLibraries(std::string version);

  // FUNCTION LOAD [REPLACE]: compiles and runs the library's code, and adds (or with `replace`,
  // swaps in) the library. Sets *name; false with *err (Redis' message, without "ERR "), and
  // then nothing changed.
  bool Load(std::string_view code, bool replace, int64_t timeout_ms, std::string* name,
            std::string* err);
  // FUNCTION DELETE: false when there is no such library.
  bool Delete(std::string_view name);
  // FUNCTION FLUSH: no libraries, and a fresh engine.
  void Flush();
  // FUNCTION RESTORE's policies: FLUSH replaces every library by the payload's; APPEND adds them
  // and fails on a library name already taken; REPLACE swaps such libraries. A function name
  // that another library (one that stays) has already fails in both. False with *err, and then
  // nothing changed.
  enum class Policy { kAppend, kReplace, kFlush };
  bool Restore(const std::vector<std::string>& codes, Policy policy, std::string* err);
  // Replaces every library with these (a full sync's or a startup's load). False with *err
  // (naming the library that failed) and nothing changed.
  bool ReplaceAll(const std::vector<std::string>& codes, std::string* err);

  // A function by name, in any letter case; null when there is none.
  const FunctionDef* Find(std::string_view name) const;
  // The libraries by name.
  const std::map<std::string, Library, std::less<>>& libraries() const { return set_.libs; }
  // Every library's code (what RDB files and FUNCTION DUMP hold).
  std::vector<std::string> Codes() const;
  size_t function_count() const { return set_.by_name.size(); }

  LuaEngine& engine() { return *engine_; }
  // The memory the libraries' structures take besides the engine (used_memory_functions).
  size_t overhead_bytes() const;

 private:
  // Libraries and the index of their functions by lowercase name (library, position).
  struct Set {
    std::map<std::string, Library, std::less<>> libs;
    std::map<std::string, std::pair<std::string, size_t>, std::less<>> by_name;
  };
  // functionsCreateWithLibraryCtx: parses, builds and adds one library to `set`.
  bool Create(Set& set, std::string_view code, bool replace, int64_t timeout_ms, std::string* name,
              std::string* err);
  // The first function of `lib` whose name (in any case) `set` has, or null.
  static const FunctionDef* Collision(const Set& set, const Library& lib);
  static void Link(Set& set, Library lib);
  static Library Unlink(Set& set, std::string_view name);
  void Free(Library& lib);
  void FreeAll(Set& set);

  std::string version_;
  std::unique_ptr<LuaEngine> engine_;
  Set set_;
};

}  // namespace kv::script
