// A check of Debian's Lua 5.1 lexer and parser on malformed sources, for what kvstore cannot
// patch from outside (CVE-2025-46819, an out-of-bounds read in Redis' copy of the lexer): every
// prefix of the sources that reach the lexer's error paths (long brackets, strings, escapes,
// numbers, comments), then 30,000 random sources over the bytes those paths read. Each is loaded
// from an exact-size heap copy, so a read past it or past the lexer's buffer is a heap error.
// ctest runs it under valgrind (ScriptLexerValgrind), which reports any such read; without
// valgrind it only shows that no source crashes the parser. Exits 0 when all were loaded.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <lua5.1/lua.hpp>
#include <random>
#include <string>
#include <vector>

namespace {

int loads = 0;

void Load(lua_State* L, const std::string& src, const char* name) {
  char* copy = static_cast<char*>(malloc(src.size() ? src.size() : 1));
  memcpy(copy, src.data(), src.size());
  if (luaL_loadbuffer(L, copy, src.size(), name) != 0) (void)lua_tostring(L, -1);
  lua_settop(L, 0);
  free(copy);
  loads++;
}

}  // namespace

int main() {
  lua_State* L = luaL_newstate();
  const std::vector<std::string> edges = {
      "[==",
      "x = [==[abc]=]",
      "x = [=",
      "x=[==x",
      "\"\\",
      "'\\9999'",
      "x = 0x",
      "x = 1e",
      "x=1..2",
      "x = '",
      "x = \"abc\n",
      "[[\n",
      "x = [[",
      "--[[",
      "return [=[ ]==]",
      "a.",
      "local",
      "x = 1e+",
      "x = 3..",
      "\x1b",
      "x = '\\",
      std::string("x = [\0=[", 8),
      "return [==========",
      "x=[=====\n",
      "--[==[ ]=]",
      "x = \"\\\r\\\n\"",
      "x = [[\r\n]]",
      "return \"\\1234\"",
      "f(",
      "x = {",
      "return ~",
      "x = #",
      "::a::",
      "goto",
      "x = " + std::string(300, '['),
      "x = [" + std::string(5000, '=') + "[",
      "--[" + std::string(5000, '=') + "[ x ]" + std::string(4999, '=') + "]"};
  for (const std::string& e : edges) {
    // Every prefix of a short source; of a long one, every 97th and the last few.
    for (size_t cut = 0; cut <= e.size(); cut += (e.size() > 100 && cut + 8 < e.size()) ? 97 : 1) {
      Load(L, e.substr(0, cut), "=chunk");
      Load(L, e.substr(0, cut), "@user_script");
      Load(L, e.substr(0, cut), e.substr(0, cut).c_str());  // the source as its own name
    }
  }
  const char alphabet[] = "[]=-\"'\\\n\r0x1e.a \x1b\x80\xff;{}";
  std::mt19937 rng(46819);
  for (int n = 0; n < 30000; n++) {
    std::string src;
    size_t len = rng() % 16;
    for (size_t j = 0; j < len; j++) src.push_back(alphabet[rng() % (sizeof(alphabet) - 1)]);
    Load(L, src, n % 2 ? "=c" : src.c_str());
  }
  lua_close(L);
  printf("lua lexer: %d malformed sources loaded\n", loads);
  return 0;
}
