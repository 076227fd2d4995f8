// The `cjson` library that scripts see (JSON), with the behaviour Redis 7.0 ships (lua-cjson
// 2.1.0 as Redis bundles it, with the fix of CVE-2022-24834):
//   encode(v) the JSON text of v; decode(s) the Lua value of a JSON text;
//   encode_sparse_array([convert [, ratio [, safe]]]), encode_max_depth([n]),
//   decode_max_depth([n]), encode_number_precision([n]), encode_keep_buffer([on]),
//   encode_invalid_numbers([on|"null"]), decode_invalid_numbers([on]): each sets what it is
//   given (nil keeps a setting) and returns the settings;
//   new() a fresh module table with its own settings; null (the light userdata NULL that
//   decode gives for JSON null and encode writes as null); _NAME and _VERSION.
// The settings live in a userdata that every function of a module table holds as its upvalue,
// so they outlast the script that sets them (until SCRIPT FLUSH, as in Redis).
//
// Encoding: nil and cjson.null as null, booleans, numbers with "%.<precision>g" (14 digits by
// default; NaN and infinities per encode_invalid_numbers), strings with '"', '\', '/' and the
// control characters escaped, a table whose keys are all positive integers as an array from 1
// to the largest (holes as null; excessively sparse ones per encode_sparse_array), any other
// table, the empty one too, as an object whose keys must be strings or numbers. Decoding: the
// JSON of RFC 4627 with lua-cjson's leniencies (numbers as strtod reads them, with hex, "+",
// leading zeros, inf and nan unless decode_invalid_numbers is off; raw control characters in
// strings; a NUL byte ends the text), \u escapes and surrogate pairs as UTF-8.
//
// Every message, the checks of Lua's stack and where they fail are Redis 7.0's. Where kvstore
// differs: the text encode produces is limited to kMaxEncodedSize bytes (past it, an error
// rather than an allocation Redis would attempt), a failed allocation is a Lua error, and a
// long encode or decode answers busy clients and ends on SCRIPT KILL as Lua code does
// (ScriptMustStop), where Redis 7.0 serves no one until it is done.
#include <strings.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <lua5.1/lua.hpp>

#include "script/lua_internal.h"

namespace kv::script {

namespace {

// The longest text encode produces: twice the longest string a client sends by default
// (proto-max-bulk-len), and far above anything a script's reply is meant to carry.
constexpr size_t kMaxEncodedSize = size_t{1} << 30;

// Larger buffers are freed after each call rather than kept for the next.
constexpr size_t kKeptBufferSize = 64 * 1024;

// A byte buffer from the interpreter's allocator (so that the engine's limits on allocations
// apply to it), owned by the settings userdata, whose __gc frees it: a Lua error thrown mid-call
// longjmps past the C frames, and the buffer must not leak with them.
struct ByteBuffer {
  lua_Alloc alloc;
  void* alloc_ud;
  char* data;
  size_t len;
  size_t cap;
};

void FreeBuffer(ByteBuffer* b) {
  if (b->data != nullptr) b->alloc(b->alloc_ud, b->data, b->cap, 0);
  b->data = nullptr;
  b->len = b->cap = 0;
}

// Makes the buffer hold `cap` bytes (its contents kept); false when the allocation fails.
bool GrowBuffer(ByteBuffer* b, size_t cap) {
  void* p = b->alloc(b->alloc_ud, b->data, b->cap, cap);
  if (p == nullptr) return false;
  b->data = static_cast<char*>(p);
  b->cap = cap;
  return true;
}

// Empties the buffer for the next call, freeing it when it is large or not to be kept.
void ResetBuffer(ByteBuffer* b, bool keep) {
  if (!keep || b->cap > kKeptBufferSize) {
    FreeBuffer(b);
  } else {
    b->len = 0;
  }
}

// The settings of one module table, with Redis' defaults. Plain data in a userdata.
struct Config {
  ByteBuffer encode_buf;
  ByteBuffer decode_buf;
  int encode_sparse_convert;
  int encode_sparse_ratio;
  int encode_sparse_safe;
  int encode_max_depth;
  int decode_max_depth;
  int encode_invalid_numbers;  // 0 off (an error), 1 on (inf, nan), 2 "null"
  int decode_invalid_numbers;
  int encode_keep_buffer;
  int encode_number_precision;
};

int FreeConfig(lua_State* L) {
  auto* cfg = static_cast<Config*>(lua_touserdata(L, 1));
  if (cfg != nullptr) {
    FreeBuffer(&cfg->encode_buf);
    FreeBuffer(&cfg->decode_buf);
  }
  return 0;
}

Config* FetchConfig(lua_State* L) {
  auto* cfg = static_cast<Config*>(lua_touserdata(L, lua_upvalueindex(1)));
  if (cfg == nullptr) luaL_error(L, "BUG: Unable to fetch CJSON configuration");
  return cfg;
}

// ---------------------------------------------------------------------------------------------
// Settings.

// Checks that at most `args` arguments came, pads the missing ones with nil, and returns the
// settings.
Config* ConfigArgs(lua_State* L, int args) {
  luaL_argcheck(L, lua_gettop(L) <= args, args + 1, "found too many arguments");
  while (lua_gettop(L) < args) lua_pushnil(L);
  return FetchConfig(L);
}

// Sets *setting from argument `idx` unless it is nil (an integer in [min, max], converted to
// an int as C converts it), and pushes the setting. The range error names argument 1 whatever
// the argument, as Redis' does.
void IntegerOption(lua_State* L, int idx, int* setting, int min, int max) {
  if (!lua_isnil(L, idx)) {
    auto value = static_cast<int>(luaL_checkinteger(L, idx));
    char msg[64];
    snprintf(msg, sizeof(msg), "expected integer between %d and %d", min, max);
    luaL_argcheck(L, min <= value && value <= max, 1, msg);
    *setting = value;
  }
  lua_pushinteger(L, *setting);
}

// Sets *setting from argument `idx` unless it is nil: a boolean, or the index of one of
// `options` ("off", "on" by default). Pushes the setting: a boolean for off and on, else its
// name.
void EnumOption(lua_State* L, int idx, int* setting, const char* const* options = nullptr) {
  static const char* const kBoolOptions[] = {"off", "on", nullptr};
  if (options == nullptr) options = kBoolOptions;
  if (!lua_isnil(L, idx)) {
    if (lua_isboolean(L, idx)) {
      *setting = lua_toboolean(L, idx);
    } else {
      *setting = luaL_checkoption(L, idx, nullptr, options);
    }
  }
  if (*setting == 0 || *setting == 1) {
    lua_pushboolean(L, *setting);
  } else {
    lua_pushstring(L, options[*setting]);
  }
}

int CfgEncodeSparseArray(lua_State* L) {
  Config* cfg = ConfigArgs(L, 3);
  EnumOption(L, 1, &cfg->encode_sparse_convert);
  IntegerOption(L, 2, &cfg->encode_sparse_ratio, 0, INT_MAX);
  IntegerOption(L, 3, &cfg->encode_sparse_safe, 0, INT_MAX);
  return 3;
}

int CfgEncodeMaxDepth(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  IntegerOption(L, 1, &cfg->encode_max_depth, 1, INT_MAX);
  return 1;
}

int CfgDecodeMaxDepth(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  IntegerOption(L, 1, &cfg->decode_max_depth, 1, INT_MAX);
  return 1;
}

int CfgEncodeNumberPrecision(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  IntegerOption(L, 1, &cfg->encode_number_precision, 1, 14);
  return 1;
}

// Only a setting here: each call's buffer is the settings' own either way, kept between calls
// while it is small.
int CfgEncodeKeepBuffer(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  EnumOption(L, 1, &cfg->encode_keep_buffer);
  return 1;
}

int CfgEncodeInvalidNumbers(lua_State* L) {
  static const char* const kOptions[] = {"off", "on", "null", nullptr};
  Config* cfg = ConfigArgs(L, 1);
  EnumOption(L, 1, &cfg->encode_invalid_numbers, kOptions);
  return 1;
}

int CfgDecodeInvalidNumbers(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  EnumOption(L, 1, &cfg->decode_invalid_numbers);
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Encoding.

// How each byte appears inside a JSON string: null for itself, else its escape.
constexpr std::array<const char*, 256> kEscapes = [] {
  std::array<const char*, 256> t{};
  constexpr const char* kControl[32] = {
      "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
      "\\b",     "\\t",     "\\n",     "\\u000b", "\\f",     "\\r",     "\\u000e", "\\u000f",
      "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
      "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f"};
  for (int i = 0; i < 32; i++) t[i] = kControl[i];
  t['"'] = "\\\"";
  t['\\'] = "\\\\";
  t['/'] = "\\/";
  t[0x7f] = "\\u007f";
  return t;
}();

// Appends the JSON text of the value on top of the stack to the settings' encode buffer. The
// stack grows as Redis' does (a key and value per object level, a value per array level), so
// that lua_checkstack fails at the same depth.
class Encoder {
 public:
  Encoder(lua_State* L, Config* cfg) : L_(L), cfg_(cfg), out_(&cfg->encode_buf) {
    ResetBuffer(out_, true);
  }

  // Encodes the value on top of the stack; `depth` tables enclose it. Returns at once, leaving
  // the stack as it is, once the script is to end (stopped()).
  void Value(int depth) {
    if (++values_ % kScriptPollEvery == 0 && ScriptMustStop(L_)) stopped_ = true;
    if (stopped_) return;
    switch (lua_type(L_, -1)) {
      case LUA_TSTRING:
        String(-1);
        return;
      case LUA_TNUMBER:
        Number(-1);
        return;
      case LUA_TBOOLEAN:
        lua_toboolean(L_, -1) ? Append("true", 4) : Append("false", 5);
        return;
      case LUA_TTABLE: {
        depth++;
        // Room for a key, a value and an error message.
        if (depth > cfg_->encode_max_depth || !lua_checkstack(L_, 3)) {
          Fail("Cannot serialise, excessive nesting (%d)", depth);
        }
        int len = ArrayLength();
        if (len > 0) {
          Array(depth, len);
        } else {
          Object(depth);
        }
        return;
      }
      case LUA_TNIL:
        Append("null", 4);
        return;
      case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L_, -1) == nullptr) {
          Append("null", 4);
          return;
        }
        [[fallthrough]];
      default:
        Unsupported(-1, "type not supported");
    }
  }

  // Pushes the text (nil once stopped) and empties the buffer.
  void PushResult() {
    if (stopped_) {
      lua_pushnil(L_);
    } else {
      lua_pushlstring(L_, out_->data != nullptr ? out_->data : "", out_->len);
    }
    ResetBuffer(out_, cfg_->encode_keep_buffer);
  }

 private:
  // Raises the error (luaL_error's message), freeing a large buffer first.
  template <typename... Args>
  void Fail(const char* fmt, Args... args) {
    ResetBuffer(out_, cfg_->encode_keep_buffer);
    luaL_error(L_, fmt, args...);
  }

  void Unsupported(int idx, const char* reason) {
    Fail("Cannot serialise %s: %s", lua_typename(L_, lua_type(L_, idx)), reason);
  }

  // Fails unless `n` more bytes keep the text within kMaxEncodedSize.
  void CheckRoom(size_t n) {
    if (n > kMaxEncodedSize - out_->len) {
      Fail("Cannot serialise, the JSON text would exceed %d bytes",
           static_cast<int>(kMaxEncodedSize));
    }
  }

  // Makes room for `n` more bytes; the buffer at least doubles when it grows.
  void Reserve(size_t n) {
    CheckRoom(n);
    size_t need = out_->len + n;
    if (need <= out_->cap) return;
    size_t cap = std::max({need, std::min(out_->cap * 2, kMaxEncodedSize), size_t{256}});
    if (!GrowBuffer(out_, cap)) Fail("not enough memory");
  }

  void Append(const char* s, size_t n) {
    Reserve(n);
    std::memcpy(out_->data + out_->len, s, n);
    out_->len += n;
  }

  void AppendChar(char c) { Append(&c, 1); }

  // The string at `idx`, quoted and escaped. Its encoded length is counted first, so that the
  // buffer grows once and a string that would pass the limit fails before anything is copied.
  void String(int idx) {
    size_t len;
    const char* s = lua_tolstring(L_, idx, &len);
    size_t need = 2;
    for (size_t i = 0; i < len; i++) {
      const char* esc = kEscapes[static_cast<unsigned char>(s[i])];
      need += esc == nullptr ? 1 : std::strlen(esc);  // at most 6 a byte: no overflow
    }
    Reserve(need);
    char* o = out_->data + out_->len;
    *o++ = '"';
    if (need == len + 2) {  // Nothing to escape.
      std::memcpy(o, s, len);
      o += len;
    } else {
      for (size_t i = 0; i < len; i++) {
        const char* esc = kEscapes[static_cast<unsigned char>(s[i])];
        if (esc == nullptr) {
          *o++ = s[i];
        } else {
          while (*esc != '\0') *o++ = *esc++;
        }
      }
    }
    *o++ = '"';
    out_->len += need;
  }

  void Number(int idx) {
    double num = lua_tonumber(L_, idx);
    bool invalid = std::isinf(num) || std::isnan(num);
    if (cfg_->encode_invalid_numbers == 0) {
      if (invalid) Unsupported(idx, "must not be NaN or Inf");
    } else if (cfg_->encode_invalid_numbers == 1) {
      // "nan" whatever its sign (printf would write "-nan" for some).
      if (std::isnan(num)) return Append("nan", 3);
    } else if (invalid) {
      return Append("null", 4);
    }
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%.*g", cfg_->encode_number_precision, num);
    Append(buf, static_cast<size_t>(n));
  }

  // A double converted to int as the x86-64 instruction does it (Redis' implicit conversion):
  // out of range, INT_MIN.
  static int ToInt(double d) {
    return d >= -2147483648.0 && d < 2147483648.0 ? static_cast<int>(d) : INT_MIN;
  }

  // The array length of the table on top: the largest key when every key is a positive
  // integer (an int conversion of it, as Redis stores it), -1 when some key is not, or when
  // the array is excessively sparse and encode_sparse_array converts it to an object.
  int ArrayLength() {
    int max = 0, items = 0;
    lua_pushnil(L_);
    while (lua_next(L_, -2) != 0) {
      double k;
      if (lua_type(L_, -2) == LUA_TNUMBER && (k = lua_tonumber(L_, -2)) != 0 &&
          std::floor(k) == k && k >= 1) {
        if (k > max) max = ToInt(k);
        items++;
        lua_pop(L_, 1);
        continue;
      }
      lua_pop(L_, 2);
      return -1;
    }
    // items * ratio wraps as the 32-bit multiplication does.
    auto scaled = static_cast<int32_t>(static_cast<uint32_t>(items) *
                                       static_cast<uint32_t>(cfg_->encode_sparse_ratio));
    if (cfg_->encode_sparse_ratio > 0 && max > scaled && max > cfg_->encode_sparse_safe) {
      if (!cfg_->encode_sparse_convert) Unsupported(-1, "excessively sparse array");
      return -1;
    }
    return max;
  }

  void Array(int depth, int len) {
    // Each element takes a byte and a comma at least: a length whose text cannot fit fails
    // before the walk.
    CheckRoom(2 * static_cast<size_t>(len) + 1);
    AppendChar('[');
    for (int i = 1; i <= len; i++) {  // len < 2^29 (CheckRoom): i cannot overflow
      if (i > 1) AppendChar(',');
      lua_rawgeti(L_, -1, i);
      Value(depth);
      if (stopped_) return;
      lua_pop(L_, 1);
    }
    AppendChar(']');
  }

  void Object(int depth) {
    AppendChar('{');
    bool comma = false;
    lua_pushnil(L_);
    while (lua_next(L_, -2) != 0) {
      if (comma) AppendChar(',');
      comma = true;
      int key_type = lua_type(L_, -2);
      if (key_type == LUA_TNUMBER) {
        AppendChar('"');
        Number(-2);
        Append("\":", 2);
      } else if (key_type == LUA_TSTRING) {
        String(-2);
        AppendChar(':');
      } else {
        Unsupported(-2, "table key must be a number or string");
      }
      Value(depth);
      if (stopped_) return;
      lua_pop(L_, 1);
    }
    AppendChar('}');
  }

  lua_State* L_;
  Config* cfg_;
  ByteBuffer* out_;
  unsigned values_ = 0;   // encoded so far (for ScriptMustStop)
  bool stopped_ = false;  // the script is to end: unwind
};

int Encode(lua_State* L) {
  Config* cfg = FetchConfig(L);
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  Encoder encoder(L, cfg);
  encoder.Value(0);
  encoder.PushResult();
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Decoding.

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

  void Object() {
    Descend(3);  // The table, a key and a value.
    lua_newtable(L_);
    Token t;
    Next(&t);
    if (t.type == kObjEnd) {
      depth_--;
      return;
    }
    while (true) {
      if (t.type != kString) ParseError("object key string", t);
      lua_pushlstring(L_, t.str, t.str_len);
      Next(&t);
      if (t.type != kColon) ParseError("colon", t);
      Next(&t);
      Value(&t);
      if (stopped_) return;
      lua_rawset(L_, -3);
      Next(&t);
      if (t.type == kObjEnd) {
        depth_--;
        return;
      }
      if (t.type != kComma) ParseError("comma or object end", t);
      Next(&t);
    }
  }

  void Array() {
    Descend(2);  // The table and a value.
    lua_newtable(L_);
    Token t;
    Next(&t);
    if (t.type == kArrEnd) {
      depth_--;
      return;
    }
    for (int i = 1;; i++) {
      Value(&t);
      if (stopped_) return;
      lua_rawseti(L_, -2, i);
      Next(&t);
      if (t.type == kArrEnd) {
        depth_--;
        return;
      }
      if (t.type != kComma) ParseError("comma or array end", t);
      Next(&t);
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

// ---------------------------------------------------------------------------------------------
// The module table.

int New(lua_State* L);

// Pushes a module table with fresh settings, filled in Redis' order (so that pairs walks it in
// the same order).
void PushModule(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"encode", Encode},
      {"decode", Decode},
      {"encode_sparse_array", CfgEncodeSparseArray},
      {"encode_max_depth", CfgEncodeMaxDepth},
      {"decode_max_depth", CfgDecodeMaxDepth},
      {"encode_number_precision", CfgEncodeNumberPrecision},
      {"encode_keep_buffer", CfgEncodeKeepBuffer},
      {"encode_invalid_numbers", CfgEncodeInvalidNumbers},
      {"decode_invalid_numbers", CfgDecodeInvalidNumbers},
      {"new", New},
  };
  lua_newtable(L);
  auto* cfg = static_cast<Config*>(lua_newuserdata(L, sizeof(Config)));
  ByteBuffer empty{};
  empty.alloc = lua_getallocf(L, &empty.alloc_ud);
  *cfg = Config{.encode_buf = empty,
                .decode_buf = empty,
                .encode_sparse_convert = 0,
                .encode_sparse_ratio = 2,
                .encode_sparse_safe = 10,
                .encode_max_depth = 1000,
                .decode_max_depth = 1000,
                .encode_invalid_numbers = 0,
                .decode_invalid_numbers = 1,
                .encode_keep_buffer = 1,
                .encode_number_precision = 14};
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, FreeConfig);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  for (const luaL_Reg& f : kFunctions) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, f.func, 1);
    lua_setfield(L, -3, f.name);
  }
  lua_pop(L, 1);
  lua_pushlightuserdata(L, nullptr);
  lua_setfield(L, -2, "null");
  lua_pushliteral(L, "cjson");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "2.1.0");
  lua_setfield(L, -2, "_VERSION");
}

int New(lua_State* L) {
  PushModule(L);
  return 1;
}

}  // namespace

int OpenCjson(lua_State* L) {
  PushModule(L);
  return 1;
}

}  // namespace kv::script
