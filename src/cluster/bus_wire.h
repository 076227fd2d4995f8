// The cluster bus's messages, byte for byte as Redis 7.0 writes them (protocol version 1): a
// 2256-byte header that starts with "RCmb" and the message's total length, then a body that
// depends on the type. Multi-byte integers are big-endian, names are 40 raw bytes, IP addresses
// are 46-byte NUL-padded fields, and a slot bitmap has slot s at bit s % 8 of byte s / 8.
//
// A reader on a bus connection buffers 8 bytes, asks MessageLength how long the message is, then
// buffers that many and calls Decode. An error from MessageLength means the stream cannot be
// framed any more (close the connection, as Redis does); an error from Decode concerns that one
// message (log it and drop it, as Redis does, and keep the connection).
//
// Plain functions on plain data, safe to call from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/node_info.h"
#include "common/status.h"

namespace kv::cluster {

inline constexpr uint16_t kBusProtoVersion = 1;  // CLUSTER_PROTO_VER
inline constexpr size_t kIpFieldLen = 46;        // NET_IP_STR_LEN: 45 characters and a NUL

// Sizes on the wire. The header is every message's fixed part (CLUSTERMSG_MIN_LEN); the others
// are the bodies that follow it.
inline constexpr size_t kBusHeaderLen = 2256;
inline constexpr size_t kGossipEntryLen = 104;  // one node in a PING, PONG or MEET
inline constexpr size_t kPingExtHeaderLen = 8;  // length u32, type u16, unused u16
inline constexpr size_t kPublishFixedLen = 8;   // channel_len u32, message_len u32
inline constexpr size_t kUpdateBodyLen = 8 + kNameLen + kClusterSlots / 8;  // 2096
inline constexpr size_t kModuleFixedLen = 13;  // module_id u64, len u32, type u8

// The longest message MessageLength accepts. Redis sets no bound below 4 GiB; the largest
// message it sends in practice is a PUBLISH carrying a client's channel and message, each up to
// proto-max-bulk-len (512 MiB by default), so that plus the header is the bound.
inline constexpr uint32_t kMaxBusMessageLen =
    static_cast<uint32_t>(kBusHeaderLen + kPublishFixedLen) + (1u << 30);

enum class MsgType : uint16_t {
  kPing = 0,
  kPong = 1,  // the reply to a PING or MEET, in the same format
  kMeet = 2,  // a PING that makes the receiver add the sender
  kFail = 3,  // the named node is failing
  kPublish = 4,
  kFailoverAuthRequest = 5,  // a replica asks the primaries for their vote
  kFailoverAuthAck = 6,      // a primary's vote
  kUpdate = 7,               // the named node's slots and config epoch
  kMfStart = 8,              // a replica asks its primary to pause for a manual failover
  kModule = 9,
  kPublishShard = 10,
};
inline constexpr uint16_t kMsgTypeCount = 11;

// Redis' name for a type, as its logs and CLUSTER INFO write it ("ping", "auth-req", ...).
const char* MsgTypeName(MsgType type);

// Bits of the header's mflags[0].
enum MsgFlag0 : uint8_t {
  kMsgFlag0Paused = 1 << 0,    // a primary paused for a manual failover
  kMsgFlag0ForceAck = 1 << 1,  // vote for this FAILOVER_AUTH_REQUEST even if the primary is up
  kMsgFlag0ExtData = 1 << 2,   // PING extensions follow the gossip section
};

// PING extension types. Redis 7.0 sends only the hostname; later versions send others, which a
// receiver skips.
inline constexpr uint16_t kPingExtHostname = 0;

// One node in the gossip section of a PING, PONG or MEET.
struct GossipEntry {
  std::string name;              // kNameLen bytes
  uint32_t ping_sent_s = 0;      // seconds (Unix time) of the PING now unanswered, 0 when none
  uint32_t pong_received_s = 0;  // seconds (Unix time) of the last PONG
  std::string ip;                // at most 45 characters
  int port = 0, cport = 0, pport = 0;  // 16 bits each on the wire
  uint16_t flags = 0;                  // NodeFlag bits
  bool operator==(const GossipEntry&) const = default;
};

// The header every message has. The gossip count and the extension count are not here: Encode
// writes them from the message's gossip entries and extensions.
struct BusHeader {
  MsgType type = MsgType::kPing;
  int port = 0;  // the client port (the TLS one where tls-cluster is on)
  uint64_t current_epoch = 0;
  uint64_t config_epoch = 0;  // the sender's, or its primary's when it is a replica
  uint64_t offset = 0;        // the replication offset
  std::string sender;         // kNameLen bytes
  SlotBitmap myslots;         // the sender's slots, or its primary's when it is a replica
  std::string replicaof;      // the primary's name; "" (all zero on the wire) for a primary
  std::string myip;           // "" (all zero) lets the receiver take the connection's address
  int pport = 0;              // the plain-text client port where `port` is the TLS one
  int cport = 0;              // the cluster bus port
  uint16_t flags = 0;         // NodeFlag bits of the sender
  uint8_t state = 0;          // the cluster's state as the sender sees it: 0 ok, 1 fail
  std::array<uint8_t, 3> mflags = {0, 0, 0};  // MsgFlag0 bits in mflags[0]
  bool operator==(const BusHeader&) const = default;
};

struct PublishBody {
  std::string channel, message;
  bool operator==(const PublishBody&) const = default;
};

struct UpdateBody {
  uint64_t config_epoch = 0;
  std::string name;  // the node whose slots these are, kNameLen bytes
  SlotBitmap slots;
  bool operator==(const UpdateBody&) const = default;
};

struct ModuleBody {
  // The sending module's id. Redis copies it to the wire without converting it, so it travels
  // in the sender's byte order; it is kept here as those 8 bytes read in this machine's order,
  // which matches what a Redis node on the same architecture computes.
  uint64_t module_id = 0;
  uint8_t type = 0;
  std::string payload;
  bool operator==(const ModuleBody&) const = default;
};

// A whole message. Only the body that hdr.type names is written or read; the others stay empty.
struct BusMessage {
  BusHeader hdr;
  // PING, PONG, MEET.
  std::vector<GossipEntry> gossip;
  std::string hostname;  // the hostname extension, sent when not empty; never holds a NUL
  // FAIL: the failing node's name.
  std::string fail_about;
  PublishBody publish;  // PUBLISH, PUBLISHSHARD
  UpdateBody update;    // UPDATE
  ModuleBody module;    // MODULE
  bool operator==(const BusMessage&) const = default;
};

// The message's bytes, totlen, gossip count and extensions computed from its content. Names
// shorter than kNameLen are padded with zeros and longer ones cut; IPs are cut to 45
// characters, ports to 16 bits. Encoding a message that does not fit (over 65535 gossip
// entries, a body over kMaxBusMessageLen) is a bug of the caller's (asserted).
std::string Encode(const BusMessage& msg);

// From a message's first 8 bytes (more are ignored): its total length, after checking the
// "RCmb" signature and that the length is at least kBusHeaderLen and at most kMaxBusMessageLen.
Result<uint32_t> MessageLength(std::string_view first8);

// One whole message (`bytes` is exactly totlen long). Checks what Redis 7.0 checks before it
// acts on a message (signature, version, and the exact length each type implies: the gossip
// count, each extension's length, the publish and module lengths) plus what Redis leaves to
// chance: that every length read stays within the message, that each extension is at least its
// own header long and 8-byte aligned, and that the type is one Redis 7.0 knows. Reads nothing
// outside `bytes`. Extensions of unknown types are skipped; a name or IP field is read up to its
// first NUL (IPs) or whole (names).
Result<BusMessage> Decode(std::string_view bytes);

}  // namespace kv::cluster
