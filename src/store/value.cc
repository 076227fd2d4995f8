#include "store/value.h"

#include <malloc.h>

#include <cassert>
#include <charconv>
#include <cstdint>
#include <cstdlib>

#include "common/strutil.h"

namespace kv::store {

const char* TypeName(ObjType t) {
  switch (t) {
    case ObjType::kString: return "string";
    case ObjType::kList: return "list";
    case ObjType::kSet: return "set";
    case ObjType::kZSet: return "zset";
    case ObjType::kHash: return "hash";
    case ObjType::kStream:
      return "stream";
  }
  return "none";
}

Value Value::Int(int64_t v) {
  Value r;
  r.enc_ = StrEnc::kInt;
  r.u_.ival = v;
  return r;
}

Value Value::String(std::string_view s, bool raw) {
  if (!raw && s.size() <= 20) {
    if (auto n = ParseInt64(s)) return Int(*n);
  }
  return raw ? MakeString(s, StrEnc::kRaw) : Embstr(s);
}

Value Value::Embstr(std::string_view s) {
  return MakeString(s, s.size() > kEmbstrMax ? StrEnc::kRaw : StrEnc::kEmbstr);
}

Value Value::MakeString(std::string_view s, StrEnc enc) {
  Value r;
  r.enc_ = enc;
  r.len_ = static_cast<uint32_t>(s.size());
  if (s.size() <= kInlineMax) {
    if (!s.empty()) memcpy(r.u_.inline_str, s.data(), s.size());
  } else {
    r.u_.heap_str = static_cast<char*>(malloc(s.size()));
    memcpy(r.u_.heap_str, s.data(), s.size());
  }
  return r;
}

std::optional<Value> Value::ZeroedRaw(size_t len) {
  if (len > kMaxStrLen) return std::nullopt;
  Value r;
  if (len <= kInlineMax) {
    memset(r.u_.inline_str, 0, sizeof(r.u_.inline_str));
  } else {
    r.u_.heap_str = static_cast<char*>(calloc(len, 1));
    if (r.u_.heap_str == nullptr) return std::nullopt;  // r is still the empty embstr
  }
  r.enc_ = StrEnc::kRaw;
  r.len_ = static_cast<uint32_t>(len);
  return r;
}

Value Value::Object(ObjType type, std::unique_ptr<Collection> obj) {
  Value r;
  r.type_ = type;
  r.u_.obj = obj.release();
  return r;
}

Value Value::Clone() const {
  if (type_ != ObjType::kString) return Object(type_, u_.obj->Clone());
  if (enc_ == StrEnc::kInt) return Int(u_.ival);
  char scratch[24];
  return MakeString(Str(scratch), enc_);
}

void Value::Release() {
  if (type_ != ObjType::kString) {
    delete u_.obj;
  } else if (enc_ != StrEnc::kInt && len_ > kInlineMax) {
    free(u_.heap_str);
  }
  type_ = ObjType::kString;
  enc_ = StrEnc::kInt;
  u_.ival = 0;
}

void Value::MoveFrom(Value& o) {
  type_ = o.type_;
  enc_ = o.enc_;
  len_ = o.len_;
  u_ = o.u_;
  o.type_ = ObjType::kString;
  o.enc_ = StrEnc::kInt;
  o.u_.ival = 0;
}

std::string_view Value::Str(char (&scratch)[24]) const {
  if (enc_ == StrEnc::kInt) {
    auto r = std::to_chars(scratch, scratch + sizeof(scratch), u_.ival);
    return std::string_view(scratch, r.ptr - scratch);
  }
  if (len_ <= kInlineMax) return std::string_view(u_.inline_str, len_);
  return std::string_view(u_.heap_str, len_);
}

std::string Value::ToString() const {
  char scratch[24];
  return std::string(Str(scratch));
}

size_t Value::StrLen() const {
  if (enc_ == StrEnc::kInt) {
    char scratch[24];
    return Str(scratch).size();
  }
  return len_;
}

char* Value::GrowRaw(size_t new_len) {
  assert(is_string());
  if (new_len > kMaxStrLen) return nullptr;
  if (enc_ == StrEnc::kInt) {
    char scratch[24];
    std::string_view text = Str(scratch);
    *this = MakeString(text, StrEnc::kRaw);
  }
  enc_ = StrEnc::kRaw;
  size_t len = len_;
  if (new_len <= len) return len <= kInlineMax ? u_.inline_str : u_.heap_str;
  if (new_len <= kInlineMax) {  // stays inline
    memset(u_.inline_str + len, 0, new_len - len);
  } else if (len <= kInlineMax) {  // moves from inline to the heap
    char* buf = static_cast<char*>(malloc(GrownStringCapacity(new_len)));
    if (buf == nullptr) return nullptr;
    memcpy(buf, u_.inline_str, len);
    memset(buf + len, 0, new_len - len);
    u_.heap_str = buf;
  } else {
    // realloc keeps the bytes; glibc moves a large (mmapped) block by remapping its pages, so
    // even the rare growth of a huge string copies nothing.
    if (malloc_usable_size(u_.heap_str) < new_len) {
      void* buf = realloc(u_.heap_str, GrownStringCapacity(new_len));
      if (buf == nullptr) return nullptr;  // the old buffer is still ours
      u_.heap_str = static_cast<char*>(buf);
    }
    memset(u_.heap_str + len, 0, new_len - len);
  }
  len_ = static_cast<uint32_t>(new_len);
  return len_ <= kInlineMax ? u_.inline_str : u_.heap_str;
}

size_t Value::StrCapacity() const {
  if (enc_ == StrEnc::kInt) return StrLen();
  if (len_ <= kInlineMax) return kInlineMax;
  return malloc_usable_size(u_.heap_str);
}

const char* Value::EncodingName() const {
  if (type_ != ObjType::kString) return u_.obj->EncodingName();
  switch (enc_) {
    case StrEnc::kInt: return "int";
    case StrEnc::kEmbstr: return "embstr";
    case StrEnc::kRaw: return "raw";
  }
  return "raw";
}

size_t Value::MemoryUsage() const {
  if (type_ != ObjType::kString) return sizeof(Value) + u_.obj->MemoryUsage();
  if (enc_ != StrEnc::kInt && len_ > kInlineMax) return sizeof(Value) + malloc_usable_size(u_.heap_str);
  return sizeof(Value);
}

}  // namespace kv::store
