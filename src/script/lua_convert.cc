// Lua values and RESP replies, both ways, with Redis 7.0's rules (script_lua.c):
//   reply -> Lua: integer -> number, bulk -> string, null bulk / null array -> false, status ->
//   {ok=s}, error -> {err=s}, array -> table; RESP3 (after redis.setresp(3)): map -> {map=t},
//   set -> {set=t} (members -> true), null -> nil, boolean, double -> {double=n}, big number ->
//   {big_number=s}, verbatim -> {verbatim_string={format=f, string=s}}; attributes dropped.
//   Lua -> reply: string -> bulk, number -> integer (truncated), boolean -> 1 / null (RESP2
//   scripts) or a boolean (RESP3), tables {err}, {ok}, {double}, {big_number},
//   {verbatim_string}, {map}, {set}, else an array up to the first nil; anything else -> null.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "script/lua_internal.h"

namespace kv::script {

void PushError(lua_State* L, std::string_view error) {
  std::string code = "ERR", msg;
  if (!error.empty() && error[0] == '-') {
    size_t sp = error.find(' ');
    if (sp == std::string_view::npos) {
      msg = error.substr(1);
    } else {
      code = error.substr(1, sp - 1);
      msg = error.substr(sp + 1);
    }
  } else {
    msg = error;
  }
  // sdstrim(msg, "\r\n"): both ends.
  size_t b = msg.find_first_not_of("\r\n");
  size_t e = msg.find_last_not_of("\r\n");
  msg = b == std::string::npos ? std::string() : msg.substr(b, e - b + 1);
  std::string final = code + " " + msg;
  lua_newtable(L);
  lua_pushstring(L, "err");
  lua_pushlstring(L, final.data(), final.size());
  lua_settable(L, -3);
}

bool ErrorCounted(lua_State* L, int t) {
  lua_pushstring(L, "ignore_error_stats_update");
  lua_rawget(L, t);
  bool counted = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return counted;
}

namespace {

// A trusted reply (the server wrote it): no bounds are checked beyond the end pointer.
class ReplyParser {
 public:
  ReplyParser(lua_State* L, const char* p, const char* end) : L_(L), p_(p), end_(end) {}

  // Parses one reply; pushes its value when `push` (attributes are parsed and dropped).
  void Parse(bool push) {
    if (p_ >= end_) {
      if (push) lua_pushboolean(L_, 0);
      return;
    }
    luaL_checkstack(L_, 4, "lua stack limit reach when parsing redis.call reply");
    char type = *p_++;
    std::string_view line = Line();
    switch (type) {
      case ':':
        if (push) lua_pushnumber(L_, static_cast<lua_Number>(strtoll(line.data(), nullptr, 10)));
        return;
      case '$': {
        long long n = strtoll(line.data(), nullptr, 10);
        if (n < 0) {
          if (push) lua_pushboolean(L_, 0);
          return;
        }
        if (push) lua_pushlstring(L_, p_, static_cast<size_t>(n));
        p_ += n + 2;
        return;
      }
      case '+':
        if (push) {
          lua_newtable(L_);
          lua_pushstring(L_, "ok");
          lua_pushlstring(L_, line.data(), line.size());
          lua_settable(L_, -3);
        }
        return;
      case '-':
        if (push) {
          PushError(L_, "-" + std::string(line));
          // The command counted this error already: the script's failure must not again.
          lua_pushstring(L_, "ignore_error_stats_update");
          lua_pushboolean(L_, 1);
          lua_settable(L_, -3);
        }
        return;
      case '*': {
        long long n = strtoll(line.data(), nullptr, 10);
        if (n < 0) {
          if (push) lua_pushboolean(L_, 0);
          return;
        }
        if (push) lua_newtable(L_);
        for (long long j = 0; j < n; j++) {
          if (push) lua_pushnumber(L_, static_cast<lua_Number>(j + 1));
          Parse(push);
          if (push) lua_settable(L_, -3);
        }
        return;
      }
      case '%':
      case '~': {
        long long n = strtoll(line.data(), nullptr, 10);
        if (push) {
          lua_newtable(L_);
          lua_pushstring(L_, type == '%' ? "map" : "set");
          lua_newtable(L_);
        }
        for (long long j = 0; j < n; j++) {
          Parse(push);
          if (type == '%') {
            Parse(push);
          } else if (push) {
            luaL_checkstack(L_, 1, "lua stack limit reach when parsing redis.call reply");
            lua_pushboolean(L_, 1);
          }
          if (push) lua_settable(L_, -3);
        }
        if (push) lua_settable(L_, -3);
        return;
      }
      case '_':
        if (push) lua_pushnil(L_);
        return;
      case '#':
        if (push) lua_pushboolean(L_, line == "t");
        return;
      case ',':
        if (push) {
          lua_newtable(L_);
          lua_pushstring(L_, "double");
          lua_pushnumber(L_, strtod(std::string(line).c_str(), nullptr));
          lua_settable(L_, -3);
        }
        return;
      case '(':
        if (push) {
          lua_newtable(L_);
          lua_pushstring(L_, "big_number");
          lua_pushlstring(L_, line.data(), line.size());
          lua_settable(L_, -3);
        }
        return;
      case '=': {
        long long n = strtoll(line.data(), nullptr, 10);
        if (push) {
          lua_newtable(L_);
          lua_pushstring(L_, "verbatim_string");
          lua_newtable(L_);
          lua_pushstring(L_, "string");
          lua_pushlstring(L_, p_ + 4, static_cast<size_t>(n) - 4);
          lua_settable(L_, -3);
          lua_pushstring(L_, "format");
          lua_pushlstring(L_, p_, 3);
          lua_settable(L_, -3);
          lua_settable(L_, -3);
        }
        p_ += n + 2;
        return;
      }
      case '|': {
        long long n = strtoll(line.data(), nullptr, 10);
        for (long long j = 0; j < 2 * n; j++) Parse(false);
        Parse(push);  // the reply the attribute came with
        return;
      }
      default:
        if (push) lua_pushboolean(L_, 0);
        return;
    }
  }

 private:
  std::string_view Line() {
    const char* start = p_;
    const char* cr = static_cast<const char*>(memchr(p_, '\r', static_cast<size_t>(end_ - p_)));
    if (!cr) cr = end_;
    p_ = cr + 2 <= end_ ? cr + 2 : end_;
    return std::string_view(start, static_cast<size_t>(cr - start));
  }

  lua_State* L_;
  const char* p_;
  const char* end_;
};

// Field `name` of the table on top, pushed; its Lua type. Raw: a reply's tables never run
// their metatables (an __index that raises would escape the conversion, CVE-2022-24736; one
// that invents values would make an endless array).
int GetField(lua_State* L, const char* name) {
  lua_pushstring(L, name);
  lua_rawget(L, -2);
  return lua_type(L, -1);
}

// One conversion's limits, from the interpreter's memory when it starts: no more elements than
// its tables have slots (a slot takes at least 16 bytes), plus a million, and no more bytes than
// four times its memory or 512 MiB, whichever is more. A tree of tables passes neither. Tables
// that hold each other many times over (`t = {t, t}` nested 64 deep is 2^64 elements), or one
// long string placed in many slots, would otherwise grow the reply until the server runs out of
// memory.
struct ReplyBudget {
  resp::ReplyWriter* w;
  size_t start;
  size_t max_bytes;
  size_t max_elements;
  const char* stack_base;  // an address in WriteReply's frame
  size_t elements = 0;

  // The C stack the conversion has used. A level takes under 200 bytes in a release build, so
  // the Lua stack's limit (about 8,000 levels, as in Redis) comes first; in a build whose frames
  // are larger (sanitizers) this stops the recursion before the thread's stack runs out.
  bool StackExhausted() const {
    char here;
    return static_cast<size_t>(stack_base - &here) > kMaxStackBytes;
  }
  static constexpr size_t kMaxStackBytes = 4u << 20;

  void CountElement(lua_State* L) {
    if (++elements > max_elements) Fail(L, "elements");
  }
  void CheckBytes(lua_State* L) const {
    if (w->buffer()->size() - start > max_bytes) Fail(L, "bytes");
  }
  [[noreturn]] static void Fail(lua_State* L, const char* what) {
    lua_pushfstring(L,
                    "the script's reply has more %s than its values hold (do tables or long "
                    "strings repeat within it many times over?)",
                    what);
    lua_error(L);
    __builtin_unreachable();
  }
};

void WriteValue(lua_State* L, resp::ReplyWriter& w, int script_resp, ReplyBudget& budget);

// (long long) of a double as x86-64 converts it: out of range and NaN give INT64_MIN.
int64_t TruncateNumber(double d) {
  if (std::isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0) {
    return INT64_MIN;
  }
  return static_cast<int64_t>(d);
}

std::string SpacesForNewlines(const char* s, size_t len) {
  std::string out(s, len);
  for (char& ch : out) {
    if (ch == '\r' || ch == '\n') ch = ' ';
  }
  return out;
}

}  // namespace

void PushReply(lua_State* L, std::string_view reply) {
  ReplyParser(L, reply.data(), reply.data() + reply.size()).Parse(true);
}

void WriteReply(lua_State* L, resp::ReplyWriter& w, int script_resp) {
  size_t heap = static_cast<size_t>(lua_gc(L, LUA_GCCOUNT, 0)) * 1024;
  char base;
  ReplyBudget budget{&w, w.buffer()->size(), std::max<size_t>(size_t{512} << 20, 4 * heap),
                     heap / 16 + 1000000, &base};
  WriteValue(L, w, script_resp, budget);
}

namespace {

// The conversion itself (Redis' luaReplyToRedisReply). Its depth is bounded as Redis bounds it:
// a table nested past the Lua stack's limit (about 8,000 levels) becomes the error "reached
// lua stack limit" in place of its contents. Uses no C++ object that needs destruction across
// a Lua call (a Lua error longjmps through here).
void WriteValue(lua_State* L, resp::ReplyWriter& w, int script_resp, ReplyBudget& budget) {
  if (!lua_checkstack(L, 4) || budget.StackExhausted()) {
    w.Error("reached lua stack limit");
    lua_pop(L, 1);
    return;
  }
  budget.CountElement(L);
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      w.Bulk(std::string_view(s, len));
      budget.CheckBytes(L);
      break;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        if (lua_toboolean(L, -1)) {
          w.Int(1);
        } else {
          w.Null();
        }
      } else {
        w.Bool(lua_toboolean(L, -1));
      }
      break;
    case LUA_TNUMBER:
      w.Int(TruncateNumber(lua_tonumber(L, -1)));
      break;
    case LUA_TTABLE: {
      if (GetField(L, "err") == LUA_TSTRING) {
        size_t len;
        const char* s = lua_tolstring(L, -1, &len);
        w.Error("-" + std::string(s, len));
        lua_pop(L, 1);
        if (ErrorCounted(L, lua_gettop(L))) w.MarkLastErrorCounted();
        lua_pop(L, 1);
        return;
      }
      lua_pop(L, 1);
      if (GetField(L, "ok") == LUA_TSTRING) {
        size_t len;
        const char* s = lua_tolstring(L, -1, &len);
        w.Raw("+" + SpacesForNewlines(s, len) + "\r\n");
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      if (GetField(L, "double") == LUA_TNUMBER) {
        w.Double(lua_tonumber(L, -1));
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      if (GetField(L, "big_number") == LUA_TSTRING) {
        size_t len;
        const char* s = lua_tolstring(L, -1, &len);
        std::string num = SpacesForNewlines(s, len);
        if (w.proto() >= 3) {
          w.Raw("(" + num + "\r\n");
        } else {
          w.Bulk(num);
        }
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      if (GetField(L, "verbatim_string") == LUA_TTABLE) {
        if (GetField(L, "format") == LUA_TSTRING) {
          size_t fmt_len;
          const char* fmt = lua_tolstring(L, -1, &fmt_len);  // stays on the stack
          lua_pushstring(L, "string");
          lua_rawget(L, -3);
          if (lua_type(L, -1) == LUA_TSTRING) {
            size_t len;
            const char* s = lua_tolstring(L, -1, &len);
            w.Verbatim(std::string_view(s, len), std::string_view(fmt, fmt_len).substr(0, 3));
            lua_pop(L, 4);  // the string, the format, the field and the table
            return;
          }
          lua_pop(L, 1);
        }
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
      for (const char* kind : {"map", "set"}) {
        if (GetField(L, kind) != LUA_TTABLE) {
          lua_pop(L, 1);
          continue;
        }
        budget.CheckBytes(L);
        bool map = kind[0] == 'm';
        size_t n = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          n++;
          lua_pop(L, 1);
        }
        if (map) {
          w.Map(n);
        } else {
          w.Set(n);
        }
        lua_pushnil(L);
        while (lua_next(L, -2)) {
          // Stack: table, field, key, value.
          if (map) {
            lua_pushvalue(L, -2);
            WriteValue(L, w, script_resp, budget);  // the key
            WriteValue(L, w, script_resp, budget);  // the value
          } else {
            lua_pop(L, 1);  // the member's `true`
            lua_pushvalue(L, -1);
            WriteValue(L, w, script_resp, budget);
          }
        }
        lua_pop(L, 2);
        return;
      }
      // An array: elements 1.. up to the first nil.
      budget.CheckBytes(L);
      int n = 0;
      while (true) {
        lua_rawgeti(L, -1, n + 1);
        bool end = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (end) break;
        n++;
      }
      w.Array(static_cast<size_t>(n));
      for (int j = 1; j <= n; j++) {
        lua_rawgeti(L, -1, j);
        WriteValue(L, w, script_resp, budget);
      }
      break;
    }
    default:
      w.Null();
  }
  lua_pop(L, 1);
}

}  // namespace

}  // namespace kv::script
