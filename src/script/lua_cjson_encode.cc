// cjson.encode: the JSON text of a Lua value, in the settings' encode buffer (the library is
// lua_cjson.cc). Nil and cjson.null as null, booleans, numbers with "%.<precision>g" (14 digits
// by default; NaN and infinities per encode_invalid_numbers), strings with '"', '\', '/' and the
// control characters escaped, a table whose keys are all positive integers as an array from 1
// to the largest (holes as null; excessively sparse ones per encode_sparse_array), any other
// table, the empty one too, as an object whose keys must be strings or numbers.
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <lua5.1/lua.hpp>

#include "script/lua_cjson.h"
#include "script/lua_internal.h"

namespace kv::script::cjson {

namespace {

// The longest text encode produces: twice the longest string a client sends by default
// (proto-max-bulk-len), and far above anything a script's reply is meant to carry.
constexpr size_t kMaxEncodedSize = size_t{1} << 30;

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

}  // namespace

int Encode(lua_State* L) {
  Config* cfg = FetchConfig(L);
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  Encoder encoder(L, cfg);
  encoder.Value(0);
  encoder.PushResult();
  return 1;
}

}  // namespace kv::script::cjson
