// A key's value: a string (stored inline when short, as an integer when it is one, or in its own
// heap buffer) or a collection object. Move-only; 16 bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace kv::store {

// Numbering follows Redis' OBJ_* types (the RDB writer relies on it).
enum class ObjType : uint8_t { kString = 0, kList = 1, kSet = 2, kZSet = 3, kHash = 4 };

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
};

const char* TypeName(ObjType t);

class Value {
 public:
  static constexpr size_t kInlineMax = 8;     // strings up to this size live in the Value itself
  static constexpr size_t kEmbstrMax = 44;    // Redis' OBJ_ENCODING_EMBSTR_SIZE_LIMIT

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
