// A key's value: a string (stored inline when short, as an integer when it is one, or in its own
// heap buffer) or a collection object. Move-only; 16 bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/table_stats.h"

namespace kv::store {

// Numbering follows Redis' OBJ_* types (the RDB writer relies on it).
enum class ObjType : uint8_t {
  kString = 0,
  kList = 1,
  kSet = 2,
  kZSet = 3,
  kHash = 4,
  kStream = 6
};

// How a string is held. OBJECT ENCODING reports int / embstr / raw like Redis.
enum class StrEnc : uint8_t { kInt, kEmbstr, kRaw };

// Base of the collection types (hash, list, set, zset), defined in their own files.
class Collection {
 public:
  // Visitor for ForEach: `first` is the list element, set member, zset member or hash field;
  // `second` is the hash value, or the zset score as Redis formats it for digests ("%.17g");
  // empty for lists and sets. Views are valid only during the call.
  using Visitor = std::function<void(std::string_view first, std::string_view second)>;

  virtual ~Collection() = default;
  virtual std::unique_ptr<Collection> Clone() const = 0;
  // Number of elements (list items, set members, zset members, hash fields).
  virtual size_t Size() const = 0;
  // Visits every element: lists head to tail, zsets by rank, sets and hashes in any order.
  // Integer-encoded members are visited as their decimal text.
  virtual void ForEach(const Visitor& fn) const = 0;
  // Approximate bytes used, for MEMORY USAGE and INFO.
  virtual size_t MemoryUsage() const = 0;
  // The encoding name OBJECT ENCODING reports ("listpack", "hashtable", ...).
  virtual const char* EncodingName() const = 0;
  // DEBUG HTSTATS-KEY: the hash table's figures when the encoding is one (empty otherwise).
  virtual std::vector<TableStats> HashTableStats() const { return {}; }
};

const char* TypeName(ObjType t);

// Redis' SDS_MAX_PREALLOC: the most spare room a growing string is given.
inline constexpr size_t kStringMaxPrealloc = 1 << 20;

// The capacity a string that must grow to `need` bytes is given, as Redis 7.0's greedy
// sdsMakeRoomFor does: twice `need` below 1 MB, `need` + 1 MB above. A string grown by repeated
// appends is therefore reallocated O(log n) times below 1 MB and once per MB above, so appends
// copy O(total) bytes in all instead of the whole string each time.
inline constexpr size_t GrownStringCapacity(size_t need) {
  return need < kStringMaxPrealloc ? need * 2 : need + kStringMaxPrealloc;
}

class Value {
 public:
  static constexpr size_t kInlineMax = 8;     // strings up to this size live in the Value itself
  static constexpr size_t kEmbstrMax = 44;    // Redis' OBJ_ENCODING_EMBSTR_SIZE_LIMIT
  // The longest string a Value holds (its length is 32 bits). Commands that grow a string to a
  // length a client chose (SETRANGE, APPEND, SETBIT, BITFIELD) refuse to go past it whatever
  // proto-max-bulk-len allows.
  static constexpr size_t kMaxStrLen = UINT32_MAX;

  Value() : type_(ObjType::kString), enc_(StrEnc::kEmbstr), len_(0) { u_.ival = 0; }
  ~Value() { Release(); }
  Value(Value&& o) noexcept { MoveFrom(o); }
  Value& operator=(Value&& o) noexcept {
    if (this != &o) {
      Release();
      MoveFrom(o);
    }
    return *this;
  }
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  // A string value. Strings that are canonical integers (and short) are stored as integers,
  // as Redis' tryObjectEncoding does, unless `raw` is set (APPEND/SETRANGE results).
  static Value String(std::string_view s, bool raw = false);
  // A string never integer-encoded (embstr when short, else raw), as Redis' createStringObject
  // makes for computed results such as INCRBYFLOAT's.
  static Value Embstr(std::string_view s);
  static Value Int(int64_t v);
  // A raw string of `len` zero bytes, sized exactly (Redis' sdsnewlen(NULL, len) for SETRANGE on
  // a new key): one allocation, zeroed by calloc, so fresh pages are never written twice.
  // Nothing when `len` is over kMaxStrLen or the memory cannot be had.
  static std::optional<Value> ZeroedRaw(size_t len);
  static Value Object(ObjType type, std::unique_ptr<Collection> obj);
  Value Clone() const;

  ObjType type() const { return type_; }
  bool is_string() const { return type_ == ObjType::kString; }
  bool is_int() const { return is_string() && enc_ == StrEnc::kInt; }
  StrEnc str_encoding() const { return enc_; }

  // String access. `scratch` holds the text of integer-encoded values.
  std::string_view Str(char (&scratch)[24]) const;
  std::string ToString() const;
  int64_t IntValue() const { return u_.ival; }
  size_t StrLen() const;
  // Makes this string raw (an integer becomes its decimal text), as Redis' dbUnshareStringValue
  // does before APPEND and SETRANGE, and at least `new_len` bytes long; added bytes are zero.
  // When the buffer must grow it is given GrownStringCapacity(new_len), so StrLen() stays the
  // length while the spare room is reused by later growth. Returns the bytes, writable up to
  // StrLen() until the value next changes; null, the string's bytes and length unchanged, when
  // `new_len` is over kMaxStrLen or the memory cannot be had.
  char* GrowRaw(size_t new_len);
  // Bytes the string's buffer holds without reallocating: at least StrLen(). MemoryUsage counts
  // them all, as Redis' MEMORY USAGE counts an sds' free space.
  size_t StrCapacity() const;

  Collection* object() const { return type_ == ObjType::kString ? nullptr : u_.obj; }
  template <typename T>
  T* As() const { return static_cast<T*>(object()); }

  const char* EncodingName() const;
  size_t MemoryUsage() const;
  // Brings the start of what the value points to (a long string's bytes, a collection) into
  // the cache ahead of a read: a walk over many keys (a snapshot) overlaps those misses.
  void Prefetch() const {
    if (type_ != ObjType::kString) {
      __builtin_prefetch(u_.obj);
    } else if (enc_ != StrEnc::kInt && len_ > kInlineMax) {
      __builtin_prefetch(u_.heap_str);
    }
  }

 private:
  static Value MakeString(std::string_view s, StrEnc enc);
  void Release();
  void MoveFrom(Value& o);

  ObjType type_;
  StrEnc enc_;
  uint32_t len_;  // string length (non-integer strings)
  union {
    int64_t ival;
    char inline_str[kInlineMax];
    char* heap_str;
    Collection* obj;
  } u_;
};

static_assert(sizeof(Value) == 16);

}  // namespace kv::store
