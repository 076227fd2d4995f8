#include "store/value.h"

#include <malloc.h>

#include <charconv>
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
