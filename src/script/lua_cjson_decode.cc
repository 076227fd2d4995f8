// cjson.decode: the Lua value of a JSON text (the library is lua_cjson.cc). The JSON of
// RFC 4627 with lua-cjson's leniencies (numbers as strtod reads them, with hex, "+", leading
// zeros, inf and nan unless decode_invalid_numbers is off; raw control characters in strings;
// a NUL byte ends the text), \u escapes and surrogate pairs as UTF-8.
#include <strings.h>

#include <array>
#include <cstdlib>
#include <cstring>

#include <lua5.1/lua.hpp>

#include "script/lua_cjson.h"
#include "script/lua_internal.h"

namespace kv::script::cjson {

namespace {

enum TokenType {
  kObjBegin,
  kObjEnd,
  kArrBegin,
  kArrEnd,
  kString,
  kNumber,
  kBoolean,
  kNull,
  kColon,
  kComma,
  kEnd,
  kWhitespace,
  kError,
  kUnknown,  // the start of a string, number or word: looked at further
};

// The names errors give tokens (found ... at character n).
const char* const kTokenNames[] = {"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END",
                                   "T_STRING",    "T_NUMBER",  "T_BOOLEAN",   "T_NULL",
                                   "T_COLON",     "T_COMMA",   "T_END",       "T_WHITESPACE",
                                   "T_ERROR",     "T_UNKNOWN"};

// The token each byte starts.
constexpr std::array<TokenType, 256> kByteTokens = [] {
  std::array<TokenType, 256> t{};
  t.fill(kError);
  t['{'] = kObjBegin;
  t['}'] = kObjEnd;
  t['['] = kArrBegin;
  t[']'] = kArrEnd;
  t[','] = kComma;
  t[':'] = kColon;
  t['\0'] = kEnd;
  for (unsigned char c : {' ', '\t', '\n', '\r'}) t[c] = kWhitespace;
  for (unsigned char c : {'f', 'i', 'I', 'n', 'N', 't', '"', '+', '-'}) t[c] = kUnknown;
  for (int c = '0'; c <= '9'; c++) t[c] = kUnknown;
  return t;
}();

// The byte each escape letter stands for; 0 for an invalid escape, 'u' for \uXXXX.
constexpr std::array<char, 256> kUnescapes = [] {
  std::array<char, 256> t{};
  t['"'] = '"';
  t['\\'] = '\\';
  t['/'] = '/';
  t['b'] = '\b';
  t['t'] = '\t';
  t['n'] = '\n';
  t['f'] = '\f';
  t['r'] = '\r';
  t['u'] = 'u';
  return t;
}();

struct Token {
  TokenType type;
  size_t index;       // of its first byte (of the error's, for kError)
  const char* error;  // kError: what is wrong
  double number;
  bool boolean;
  const char* str;  // kString: its bytes, decoded
  size_t str_len;
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The four hex digits at p as a number, or -1. Stops at the first non-digit (the text's NUL
// terminator too).
int Hex4(const char* p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    int d = HexDigit(p[i]);
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}

// Writes a code point (at most 0x10ffff here) as UTF-8; returns the bytes written.
size_t Utf8(char* out, int cp) {
  if (cp <= 0x7f) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp <= 0x7ff) {
    out[0] = static_cast<char>(0xc0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp <= 0xffff) {
    out[0] = static_cast<char>(0xe0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out[2] = static_cast<char>(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = static_cast<char>(0xf0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
  out[3] = static_cast<char>(0x80 | (cp & 0x3f));
  return 4;
}

// Parses one JSON text into Lua values on the stack. The text is a Lua string, so a NUL
// byte follows its last one: the scanner stops there without length checks, as Redis' does
// (an embedded NUL ends the text the same way).
class Decoder {
 public:
  Decoder(lua_State* L, Config* cfg, const char* data)
      : L_(L), cfg_(cfg), data_(data), p_(data), tmp_(&cfg->decode_buf) {
    ResetBuffer(tmp_, true);
  }

  // Makes the decode buffer hold `len` bytes; false when the allocation fails.
  bool Prepare(size_t len) { return len <= tmp_->cap || GrowBuffer(tmp_, len); }

  // Decodes the whole text: one value, then only whitespace. Pushes the value (nil when the
  // script is to end).
  void Run() {
    Token t;
    Next(&t);
    Value(&t);
    if (stopped_) {
      ResetBuffer(tmp_, true);
      lua_pushnil(L_);
      return;
    }
    Next(&t);
    if (t.type != kEnd) ParseError("the end", t);
    ResetBuffer(tmp_, true);
  }

 private:
  template <typename... Args>
  void Fail(const char* fmt, Args... args) {
    ResetBuffer(tmp_, true);
    luaL_error(L_, fmt, args...);
  }

  void ParseError(const char* expected, const Token& t) {
    const char* found = t.type == kError ? t.error : kTokenNames[t.type];
    Fail("Expected %s but found %s at character %d", expected, found,
         static_cast<int>(t.index + 1));
  }

  void SetError(Token* t, const char* what) {
    t->type = kError;
    t->index = static_cast<size_t>(p_ - data_);
    t->error = what;
  }

  // Whether the number at p_ is one that strict JSON refuses though strtod reads it: a leading
  // '+', hex, leading zeros, inf or nan.
  bool InvalidNumber() const {
    const char* p = p_;
    if (*p == '+') return true;
    if (*p == '-') p++;
    if (*p == '0') {
      char c = p[1];
      return (c | 0x20) == 'x' || (c >= '0' && c <= '9');
    }
    // Bytes above 0x7f compare as negative chars, as in Redis' build.
    if (static_cast<signed char>(*p) <= '9') return false;
    return strncasecmp(p, "inf", 3) == 0 || strncasecmp(p, "nan", 3) == 0;
  }

  void NumberToken(Token* t) {
    char* end;
    // strtod in the process' C locale (kvstore never changes LC_NUMERIC).
    t->type = kNumber;
    t->number = strtod(p_, &end);
    if (end == p_) {
      SetError(t, "invalid number");
    } else {
      p_ = end;
    }
  }

  void Next(Token* t) {
    unsigned char c;
    while ((t->type = kByteTokens[c = static_cast<unsigned char>(*p_)]) == kWhitespace) p_++;
    t->index = static_cast<size_t>(p_ - data_);
    if (t->type == kError) return SetError(t, "invalid token");
    if (t->type == kEnd) return;
    if (t->type != kUnknown) {
      p_++;
      return;
    }
    if (c == '"') return StringToken(t);
    if (c == '-' || (c >= '0' && c <= '9')) {
      if (!cfg_->decode_invalid_numbers && InvalidNumber()) return SetError(t, "invalid number");
      return NumberToken(t);
    }
    if (std::strncmp(p_, "true", 4) == 0) {
      t->type = kBoolean;
      t->boolean = true;
      p_ += 4;
    } else if (std::strncmp(p_, "false", 5) == 0) {
      t->type = kBoolean;
      t->boolean = false;
      p_ += 5;
    } else if (std::strncmp(p_, "null", 4) == 0) {
      t->type = kNull;
      p_ += 4;
    } else if (cfg_->decode_invalid_numbers && InvalidNumber()) {
      // Inf, NaN and "+n" reach strtod only when invalid numbers are allowed; otherwise they
      // are invalid tokens, not invalid numbers.
      NumberToken(t);
    } else {
      SetError(t, "invalid token");
    }
  }

  // Appends the code point of the \u escape at p_ (one, or a surrogate pair of two) and moves
  // past it; false when it is not a valid escape.
  bool UnicodeEscape() {
    int cp = Hex4(p_ + 2);
    if (cp < 0) return false;
    size_t escape_len = 6;
    if ((cp & 0xf800) == 0xd800) {
      // A surrogate: it must be a high one, followed by a \u escape of a low one.
      if (cp & 0x400) return false;
      if (p_[6] != '\\' || p_[7] != 'u') return false;
      int low = Hex4(p_ + 8);
      if (low < 0 || (low & 0xfc00) != 0xdc00) return false;
      cp = (((cp & 0x3ff) << 10) | (low & 0x3ff)) + 0x10000;
      escape_len = 12;
    }
    tmp_->len += Utf8(tmp_->data + tmp_->len, cp);
    p_ += escape_len;
    return true;
  }

  // A string: decoded into the settings' decode buffer, which holds the whole text (no string
  // decodes to more bytes than its JSON form takes).
  void StringToken(Token* t) {
    p_++;  // The opening quote.
    tmp_->len = 0;
    char c;
    while ((c = *p_) != '"') {
      if (c == '\0') return SetError(t, "unexpected end of string");
      if (c == '\\') {
        c = kUnescapes[static_cast<unsigned char>(p_[1])];
        if (c == 'u') {
          if (!UnicodeEscape()) return SetError(t, "invalid unicode escape code");
          continue;
        }
        if (c == '\0') return SetError(t, "invalid escape code");
        p_++;
      }
      tmp_->data[tmp_->len++] = c;
      p_++;
    }
    p_++;  // The closing quote.
    t->type = kString;
    t->str = tmp_->data;
    t->str_len = tmp_->len;
  }

  // One more level of nesting, with `slots` free on Lua's stack.
  void Descend(int slots) {
    depth_++;
    if (depth_ <= cfg_->decode_max_depth && lua_checkstack(L_, slots)) return;
    Fail("Found too many nested data structures (%d) at character %d", depth_,
         static_cast<int>(p_ - data_));
  }

  // Pushes the value that starts with token t. Returns at once, with whatever it pushed, once
  // the script is to end.
  void Value(Token* t) {
    if (++values_ % kScriptPollEvery == 0 && ScriptMustStop(L_)) stopped_ = true;
    if (stopped_) return;
    switch (t->type) {
      case kString:
        lua_pushlstring(L_, t->str, t->str_len);
        return;
      case kNumber:
        lua_pushnumber(L_, t->number);
        return;
      case kBoolean:
        lua_pushboolean(L_, t->boolean);
        return;
      case kObjBegin:
        return Object();
      case kArrBegin:
        return Array();
      case kNull:
        lua_pushlightuserdata(L_, nullptr);
        return;
      default:
        ParseError("value", *t);
    }
  }

  // Whether t ends the table being read (`end`: kObjEnd or kArrEnd); if so, leaves its level.
  bool TableEnds(const Token& t, TokenType end) {
    if (t.type != end) return false;
    depth_--;
    return true;
  }

  // Enters a table, with `slots` free on Lua's stack, pushes it and reads its first token into
  // t. True when the table is empty (it is left at once).
  bool OpenTable(int slots, TokenType end, Token* t) {
    Descend(slots);
    lua_newtable(L_);
    Next(t);
    return TableEnds(*t, end);
  }

  // After a member: reads the token that follows. True when it ends the table; else it must be
  // a comma (`expected` names what was due) and t becomes the token after it.
  bool NextMember(TokenType end, const char* expected, Token* t) {
    Next(t);
    if (TableEnds(*t, end)) return true;
    if (t->type != kComma) ParseError(expected, *t);
    Next(t);
    return false;
  }

  void Object() {
    Token t;
    if (OpenTable(3, kObjEnd, &t)) return;  // The table, a key and a value.
    do {
      if (t.type != kString) ParseError("object key string", t);
      lua_pushlstring(L_, t.str, t.str_len);
      Next(&t);
      if (t.type != kColon) ParseError("colon", t);
      Next(&t);
      Value(&t);
      if (stopped_) return;
      lua_rawset(L_, -3);
    } while (!NextMember(kObjEnd, "comma or object end", &t));
  }

  void Array() {
    Token t;
    if (OpenTable(2, kArrEnd, &t)) return;  // The table and a value.
    for (int i = 1;; i++) {
      Value(&t);
      if (stopped_) return;
      lua_rawseti(L_, -2, i);
      if (NextMember(kArrEnd, "comma or array end", &t)) return;
    }
  }

  lua_State* L_;
  Config* cfg_;
  const char* data_;
  const char* p_;
  ByteBuffer* tmp_;
  int depth_ = 0;
  unsigned values_ = 0;   // decoded so far (for ScriptMustStop)
  bool stopped_ = false;  // the script is to end: unwind
};

}  // namespace

int Decode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  Config* cfg = FetchConfig(L);
  size_t len;
  const char* data = luaL_checklstring(L, 1, &len);
  // Text in UTF-16 or UTF-32 has a NUL among its first two bytes (the first character of a
  // JSON text is ASCII).
  if (len >= 2 && (data[0] == '\0' || data[1] == '\0')) {
    luaL_error(L, "JSON parser does not support UTF-16 or UTF-32");
  }
  Decoder decoder(L, cfg, data);
  if (!decoder.Prepare(len + 1)) luaL_error(L, "not enough memory");
  decoder.Run();
  return 1;
}

}  // namespace kv::script::cjson
