// What the two ends of a link say to each other.
//
// 1. Setup blobs, carried by the caller's control link (e.g. the replication TCP connection,
//    after authentication): text lines "key=value\n", binary values hex-encoded. See LinkHello.
// 2. Control messages on the link's control endpoint (fabric) or socket (tcp): fixed 32 bytes,
//    little-endian, see ControlMsg. Anything else (other size, bad magic, unknown type, wrong
//    link id) is a protocol error that closes the link.
// docs/transport.md has the full description.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kv::transport {

inline constexpr uint32_t kControlMagic = 0x314d544b;  // "KTM1" little-endian
inline constexpr size_t kControlMsgSize = 32;

enum class MsgType : uint16_t {
  kCredit = 1,  // receiver -> sender: slot `slot` is free again; `offset` = bytes consumed;
                // fabric: `length` > 1 frees that many slots, the run ending at `slot`
  kChunk = 2,   // sender -> receiver (socket channel): `length` stream bytes from `offset`
                // follow (fabric links describe chunks in the write's immediate data instead)
  kFin = 3,     // sender -> receiver: the stream ends at `offset`
  kError = 4,   // either way: the sender of this message is closing the link; `code` says why
};

// Layout: magic u32 | type u16 | slot u16 | length u32 | code u32 | offset u64 | link_id u64.
struct ControlMsg {
  MsgType type = MsgType::kCredit;
  uint16_t slot = 0;
  uint32_t length = 0;
  uint32_t code = 0;
  uint64_t offset = 0;
  uint64_t link_id = 0;
};

void EncodeControl(const ControlMsg& m, uint8_t* out);  // writes kControlMsgSize bytes
// Rejects wrong sizes, bad magic, unknown types and messages of another link.
Result<ControlMsg> DecodeControl(std::span<const uint8_t> bytes, uint64_t link_id);
const char* MsgTypeName(MsgType t);

// Fabric chunks: each chunk is one RDMA write into a ring slot carrying 32 bits of remote CQ
// data (the verbs immediate; every provider here carries at least 4 bytes) that name the slot
// and the length: slot << 22 | length. Slots are used in ring order, so the stream offset is
// implicit.
inline constexpr uint32_t kImmLengthBits = 22;
inline constexpr uint32_t kMaxImmLength = (1u << kImmLengthBits) - 1;  // 4 MiB - 1
inline constexpr uint32_t kMaxImmSlots = 1u << (32 - kImmLengthBits);  // 1024
inline uint64_t EncodeChunkImm(uint16_t slot, uint32_t length) {
  return uint64_t{slot} << kImmLengthBits | length;
}
// False when the value has bits beyond the 32 the format uses.
inline bool DecodeChunkImm(uint64_t imm, uint16_t* slot, uint32_t* length) {
  if (imm >> 32) return false;
  *slot = static_cast<uint16_t>(imm >> kImmLengthBits);
  *length = static_cast<uint32_t>(imm & kMaxImmLength);
  return true;
}

// A setup blob: an ordered map of fields with typed accessors that report missing or malformed
// fields as kCorruption.
class Blob {
 public:
  void Set(const std::string& key, std::string value) { fields_[key] = std::move(value); }
  void SetU64(const std::string& key, uint64_t v) { fields_[key] = std::to_string(v); }
  void SetBytes(const std::string& key, std::string_view bytes);  // hex-encoded
  void Erase(const std::string& key) { fields_.erase(key); }
  std::string Encode() const;
  static Result<Blob> Decode(std::string_view text);

  Result<std::string> Get(const std::string& key) const;
  Result<uint64_t> GetU64(const std::string& key) const;
  Result<std::string> GetBytes(const std::string& key) const;

 private:
  std::map<std::string, std::string> fields_;
};

// Exchanges setup blobs over a connected stream socket (the control link): writes ours with a
// 4-byte length prefix, reads the peer's. Symmetric: both ends call it. Blocks up to
// timeout_ms; blobs over 64 KiB are refused.
Result<std::string> ExchangeBlobs(int fd, std::string_view mine, int timeout_ms);

}  // namespace kv::transport
