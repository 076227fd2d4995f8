// Reads the pieces of an RDB stream: lengths, strings (raw, integer-encoded, LZF), doubles, and
// whole values of every type Redis 7.0 loads, built straight into kvstore's value types with the
// encodings Redis would choose for them (given the keyspace's EncodingLimits).
//
// Every length is checked before it is used: nothing is allocated from an untrusted size unless
// the source still holds at least that many bytes, and malformed data gives Corruption naming what
// was expected. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "persist/sink.h"
#include "store/keyspace.h"
#include "store/value.h"

namespace kv::persist {

class ValueReader {
 public:
  ValueReader(Source& src, const store::EncodingLimits& limits) : src_(src), limits_(limits) {}

  Result<uint8_t> ReadByte();
  // A length; `encoded` (when given) is set for the special string encodings.
  Result<uint64_t> ReadLen(bool* encoded = nullptr);
  // A string in any RDB string encoding. The view is valid until the next read; integer and LZF
  // strings are decoded into `scratch`.
  Result<std::string_view> ReadString(std::string& scratch);
  Result<std::string_view> ReadRaw(size_t n) { return src_.Read(n); }

  // A value of RDB type `type`. A value kvstore has no type for (module values) is skipped: the
  // result is then ok with `*skipped` set and a message in `*why`.
  Result<store::Value> ReadObject(uint8_t type, bool* skipped, std::string* why);

  // Skips a module's opcode-framed data up to its EOF opcode (module values, MODULE_AUX).
  Status SkipModuleData();

  // Walks over a string or a whole value of RDB type `type` without building it (compressed
  // strings stay compressed, encoded blobs are not looked into): finding where an RDB stream
  // ends at little cost. Types kvstore cannot load are errors, as in ReadObject.
  Status SkipString();
  Status SkipObject(uint8_t type);

  uint64_t offset() const { return src_.offset(); }

 private:
  Result<double> ReadStringDouble();
  // An LZF string's compressed and original lengths (after its encoding byte), checked.
  Result<std::pair<uint64_t, uint64_t>> ReadLzfLengths();
  Result<store::Value> ReadList(uint8_t type);
  Result<store::Value> ReadSet(uint8_t type);
  Result<store::Value> ReadZSet(uint8_t type);
  Result<store::Value> ReadHash(uint8_t type);
  Result<store::Value> ReadStream(uint8_t type);
  Result<uint64_t> ReadMillis();  // rdbLoadMillisecondTime: 8 bytes, little-endian
  // Checks that `n` items of at least one byte each can still be in the source.
  Status CheckCount(uint64_t n, const char* what);

  Source& src_;
  const store::EncodingLimits& limits_;
  std::string scratch_a_, scratch_b_;
};

}  // namespace kv::persist
