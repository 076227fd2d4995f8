#include "cluster/bus_wire.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace kv::cluster {

namespace {

// Header fields at the offsets of Redis 7.0's clusterMsg (whose own static_asserts pin the same
// numbers, so that nodes of different versions understand each other).
constexpr size_t kOffSig = 0;            // "RCmb"
constexpr size_t kOffTotlen = 4;         // u32
constexpr size_t kOffVer = 8;            // u16
constexpr size_t kOffPort = 10;          // u16
constexpr size_t kOffType = 12;          // u16
constexpr size_t kOffCount = 14;         // u16: gossip entries
constexpr size_t kOffCurrentEpoch = 16;  // u64
constexpr size_t kOffConfigEpoch = 24;   // u64
constexpr size_t kOffOffset = 32;        // u64
constexpr size_t kOffSender = 40;        // name
constexpr size_t kOffMyslots = 80;       // slot bitmap
constexpr size_t kOffReplicaof = 2128;   // name
constexpr size_t kOffMyip = 2168;        // IP field
constexpr size_t kOffExtensions = 2214;  // u16
constexpr size_t kOffUnused = 2216;      // 30 bytes Redis reserves, left zero
constexpr size_t kOffPport = 2246;       // u16
constexpr size_t kOffCport = 2248;       // u16
constexpr size_t kOffFlags = 2250;       // u16
constexpr size_t kOffState = 2252;       // u8
constexpr size_t kOffMflags = 2253;      // u8[3]
static_assert(kOffMyslots == kOffSender + kNameLen);
static_assert(kOffReplicaof == kOffMyslots + kClusterSlots / 8);
static_assert(kOffMyip == kOffReplicaof + kNameLen);
static_assert(kOffExtensions == kOffMyip + kIpFieldLen);
static_assert(kOffPport == kOffUnused + 30);
static_assert(kOffMflags + 3 == kBusHeaderLen);

// A gossip entry's fields, from the entry's start.
constexpr size_t kGossipName = 0;
constexpr size_t kGossipPingSent = 40;      // u32 seconds
constexpr size_t kGossipPongReceived = 44;  // u32 seconds
constexpr size_t kGossipIp = 48;            // IP field
constexpr size_t kGossipPort = 94;          // u16
constexpr size_t kGossipCport = 96;         // u16
constexpr size_t kGossipFlags = 98;         // u16
constexpr size_t kGossipPport = 100;        // u16, then 2 unused bytes
static_assert(kGossipPort == kGossipIp + kIpFieldLen);
static_assert(kGossipPport + 4 == kGossipEntryLen);

// Bodies, from the end of the header.
constexpr size_t kUpdateName = 8;
constexpr size_t kUpdateSlots = kUpdateName + kNameLen;
static_assert(kUpdateSlots + kClusterSlots / 8 == kUpdateBodyLen);
constexpr size_t kModuleLen = 8;
constexpr size_t kModuleType = 12;
static_assert(kModuleType + 1 == kModuleFixedLen);

using Bytes = const uint8_t*;

void PutBe16(std::string& b, size_t at, uint16_t v) {
  b[at] = static_cast<char>(v >> 8);
  b[at + 1] = static_cast<char>(v);
}
void PutBe32(std::string& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b[at + i] = static_cast<char>(v >> (24 - 8 * i));
}
void PutBe64(std::string& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; i++) b[at + i] = static_cast<char>(v >> (56 - 8 * i));
}
// The first `field_len` bytes of `s` at `at`; the rest of the field stays zero.
void PutField(std::string& b, size_t at, std::string_view s, size_t field_len) {
  size_t n = std::min(s.size(), field_len);
  if (n > 0) std::memcpy(b.data() + at, s.data(), n);
}
// Leaves the last byte of the field zero, as Redis does, so a reader may treat it as a C string.
void PutIp(std::string& b, size_t at, std::string_view ip) { PutField(b, at, ip, kIpFieldLen - 1); }
void PutSlots(std::string& b, size_t at, const SlotBitmap& slots) {
  for (size_t byte = 0; byte < kClusterSlots / 8; byte++) {
    uint8_t v = 0;
    for (size_t bit = 0; bit < 8; bit++) {
      if (slots[byte * 8 + bit]) v |= static_cast<uint8_t>(1u << bit);
    }
    b[at + byte] = static_cast<char>(v);
  }
}

uint16_t Be16(Bytes p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t Be32(Bytes p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
uint64_t Be64(Bytes p) { return uint64_t{Be32(p)} << 32 | Be32(p + 4); }
// The bytes before the first NUL among the first `max`.
std::string CString(Bytes p, size_t max) {
  const void* nul = std::memchr(p, 0, max);
  size_t len = nul ? static_cast<size_t>(static_cast<Bytes>(nul) - p) : max;
  return std::string(reinterpret_cast<const char*>(p), len);
}
std::string Name(Bytes p) { return std::string(reinterpret_cast<const char*>(p), kNameLen); }
// Up to the first NUL among the first 45 bytes: Redis ends the string at the 46th whatever it
// holds.
std::string Ip(Bytes p) { return CString(p, kIpFieldLen - 1); }
SlotBitmap Slots(Bytes p) {
  SlotBitmap slots;
  for (size_t byte = 0; byte < kClusterSlots / 8; byte++) {
    for (size_t bit = 0; bit < 8; bit++) {
      if (p[byte] >> bit & 1) slots.set(byte * 8 + bit);
    }
  }
  return slots;
}

bool CarriesGossip(MsgType t) {
  return t == MsgType::kPing || t == MsgType::kPong || t == MsgType::kMeet;
}

size_t Align8(size_t n) { return (n + 7) / 8 * 8; }

// The hostname extension's length: its header, then the name and a NUL padded to 8 bytes.
size_t HostnameExtLen(std::string_view hostname) {
  return kPingExtHeaderLen + Align8(hostname.size() + 1);
}

size_t BodyLen(const BusMessage& m) {
  switch (m.hdr.type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      return m.gossip.size() * kGossipEntryLen +
             (m.hostname.empty() ? 0 : HostnameExtLen(m.hostname));
    case MsgType::kFail:
      return kNameLen;
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      return kPublishFixedLen + m.publish.channel.size() + m.publish.message.size();
    case MsgType::kUpdate:
      return kUpdateBodyLen;
    case MsgType::kModule:
      return kModuleFixedLen + m.module.payload.size();
    case MsgType::kFailoverAuthRequest:
    case MsgType::kFailoverAuthAck:
    case MsgType::kMfStart:
      return 0;
  }
  return 0;
}

void PutHeader(std::string& b, const BusMessage& m) {
  const BusHeader& h = m.hdr;
  uint16_t count = 0, extensions = 0;
  uint8_t mflags0 = h.mflags[0];
  if (CarriesGossip(h.type)) {
    count = static_cast<uint16_t>(m.gossip.size());
    if (!m.hostname.empty()) {
      extensions = 1;
      mflags0 |= kMsgFlag0ExtData;
    }
  }
  PutField(b, kOffSig, "RCmb", 4);
  PutBe32(b, kOffTotlen, static_cast<uint32_t>(b.size()));
  PutBe16(b, kOffVer, kBusProtoVersion);
  PutBe16(b, kOffPort, static_cast<uint16_t>(h.port));
  PutBe16(b, kOffType, static_cast<uint16_t>(h.type));
  PutBe16(b, kOffCount, count);
  PutBe64(b, kOffCurrentEpoch, h.current_epoch);
  PutBe64(b, kOffConfigEpoch, h.config_epoch);
  PutBe64(b, kOffOffset, h.offset);
  PutField(b, kOffSender, h.sender, kNameLen);
  PutSlots(b, kOffMyslots, h.myslots);
  PutField(b, kOffReplicaof, h.replicaof, kNameLen);
  PutIp(b, kOffMyip, h.myip);
  PutBe16(b, kOffExtensions, extensions);
  PutBe16(b, kOffPport, static_cast<uint16_t>(h.pport));
  PutBe16(b, kOffCport, static_cast<uint16_t>(h.cport));
  PutBe16(b, kOffFlags, h.flags);
  b[kOffState] = static_cast<char>(h.state);
  b[kOffMflags] = static_cast<char>(mflags0);
  b[kOffMflags + 1] = static_cast<char>(h.mflags[1]);
  b[kOffMflags + 2] = static_cast<char>(h.mflags[2]);
}

void PutGossip(std::string& b, size_t at, const GossipEntry& g) {
  PutField(b, at + kGossipName, g.name, kNameLen);
  PutBe32(b, at + kGossipPingSent, g.ping_sent_s);
  PutBe32(b, at + kGossipPongReceived, g.pong_received_s);
  PutIp(b, at + kGossipIp, g.ip);
  PutBe16(b, at + kGossipPort, static_cast<uint16_t>(g.port));
  PutBe16(b, at + kGossipCport, static_cast<uint16_t>(g.cport));
  PutBe16(b, at + kGossipFlags, g.flags);
  PutBe16(b, at + kGossipPport, static_cast<uint16_t>(g.pport));
}

void PutBody(std::string& b, const BusMessage& m) {
  size_t at = kBusHeaderLen;
  switch (m.hdr.type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      for (const GossipEntry& g : m.gossip) {
        PutGossip(b, at, g);
        at += kGossipEntryLen;
      }
      if (!m.hostname.empty()) {
        PutBe32(b, at, static_cast<uint32_t>(HostnameExtLen(m.hostname)));
        PutBe16(b, at + 4, kPingExtHostname);
        PutField(b, at + kPingExtHeaderLen, m.hostname, m.hostname.size());
      }
      break;
    case MsgType::kFail:
      PutField(b, at, m.fail_about, kNameLen);
      break;
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      PutBe32(b, at, static_cast<uint32_t>(m.publish.channel.size()));
      PutBe32(b, at + 4, static_cast<uint32_t>(m.publish.message.size()));
      at += kPublishFixedLen;
      PutField(b, at, m.publish.channel, m.publish.channel.size());
      PutField(b, at + m.publish.channel.size(), m.publish.message, m.publish.message.size());
      break;
    case MsgType::kUpdate:
      PutBe64(b, at, m.update.config_epoch);
      PutField(b, at + kUpdateName, m.update.name, kNameLen);
      PutSlots(b, at + kUpdateSlots, m.update.slots);
      break;
    case MsgType::kModule:
      std::memcpy(b.data() + at, &m.module.module_id, 8);  // unconverted, as Redis sends it
      PutBe32(b, at + kModuleLen, static_cast<uint32_t>(m.module.payload.size()));
      b[at + kModuleType] = static_cast<char>(m.module.type);
      PutField(b, at + kModuleFixedLen, m.module.payload, m.module.payload.size());
      break;
    case MsgType::kFailoverAuthRequest:
    case MsgType::kFailoverAuthAck:
    case MsgType::kMfStart:
      break;
  }
}

std::string Num(uint64_t n) { return std::to_string(n); }

// Redis' own check: a message's length must be exactly what its content implies.
Status ExpectLen(MsgType type, uint64_t expected, size_t totlen) {
  if (expected == totlen) return Status::Ok();
  return Status::Corruption(std::string(MsgTypeName(type)) + " message of " + Num(totlen) +
                            " bytes, expected " + Num(expected));
}

BusHeader ReadHeader(Bytes p) {
  BusHeader h;
  h.type = static_cast<MsgType>(Be16(p + kOffType));
  h.port = Be16(p + kOffPort);
  h.current_epoch = Be64(p + kOffCurrentEpoch);
  h.config_epoch = Be64(p + kOffConfigEpoch);
  h.offset = Be64(p + kOffOffset);
  h.sender = Name(p + kOffSender);
  h.myslots = Slots(p + kOffMyslots);
  static const uint8_t kNoName[kNameLen] = {};
  if (std::memcmp(p + kOffReplicaof, kNoName, kNameLen) != 0) h.replicaof = Name(p + kOffReplicaof);
  h.myip = Ip(p + kOffMyip);
  h.pport = Be16(p + kOffPport);
  h.cport = Be16(p + kOffCport);
  h.flags = Be16(p + kOffFlags);
  h.state = p[kOffState];
  h.mflags = {p[kOffMflags], p[kOffMflags + 1], p[kOffMflags + 2]};
  return h;
}

GossipEntry ReadGossip(Bytes p) {
  GossipEntry g;
  g.name = Name(p + kGossipName);
  g.ping_sent_s = Be32(p + kGossipPingSent);
  g.pong_received_s = Be32(p + kGossipPongReceived);
  g.ip = Ip(p + kGossipIp);
  g.port = Be16(p + kGossipPort);
  g.cport = Be16(p + kGossipCport);
  g.flags = Be16(p + kGossipFlags);
  g.pport = Be16(p + kGossipPport);
  return g;
}

// The extensions after the gossip section start at `at`. Redis reads them only when the header
// says they are there (kMsgFlag0ExtData), and skips the types it does not know.
Result<size_t> ReadPingExtensions(Bytes p, size_t totlen, size_t at, BusMessage* m) {
  const char* type = MsgTypeName(m->hdr.type);
  uint16_t n = Be16(p + kOffExtensions);
  for (uint16_t i = 0; i < n; i++) {
    std::string which = std::string(type) + " extension " + Num(i) + " of " + Num(n);
    if (totlen - at < kPingExtHeaderLen) {
      return Status::Corruption(which + " starts " + Num(totlen - at) + " bytes from the end");
    }
    uint32_t len = Be32(p + at);
    if (len < kPingExtHeaderLen) {
      return Status::Corruption(which + " is " + Num(len) + " bytes, less than its header");
    }
    if (len % 8 != 0) return Status::Corruption(which + " is " + Num(len) + " bytes, unpadded");
    if (len > totlen - at) {
      return Status::Corruption(which + " is " + Num(len) + " bytes, " + Num(totlen - at) +
                                " are left");
    }
    if (Be16(p + at + 4) == kPingExtHostname) {
      m->hostname = CString(p + at + kPingExtHeaderLen, len - kPingExtHeaderLen);
    }
    at += len;
  }
  return at;
}

Status ReadPingBody(Bytes p, size_t totlen, BusMessage* m) {
  uint16_t count = Be16(p + kOffCount);
  uint64_t at = kBusHeaderLen + uint64_t{count} * kGossipEntryLen;
  if (at > totlen) {
    return Status::Corruption(std::string(MsgTypeName(m->hdr.type)) + " with " + Num(count) +
                              " gossip entries in " + Num(totlen) + " bytes");
  }
  m->gossip.reserve(count);
  for (size_t i = 0; i < count; i++) {
    m->gossip.push_back(ReadGossip(p + kBusHeaderLen + i * kGossipEntryLen));
  }
  if (m->hdr.mflags[0] & kMsgFlag0ExtData) {
    KV_TRY_ASSIGN(end, ReadPingExtensions(p, totlen, at, m));
    at = end;
  }
  return ExpectLen(m->hdr.type, at, totlen);
}

Status ReadPublishBody(Bytes p, size_t totlen, BusMessage* m) {
  const MsgType type = m->hdr.type;
  if (totlen < kBusHeaderLen + kPublishFixedLen) {
    return ExpectLen(type, kBusHeaderLen + kPublishFixedLen, totlen);
  }
  Bytes body = p + kBusHeaderLen;
  uint64_t channel_len = Be32(body), message_len = Be32(body + 4);
  KV_TRY(ExpectLen(type, kBusHeaderLen + kPublishFixedLen + channel_len + message_len, totlen));
  const char* data = reinterpret_cast<const char*>(body + kPublishFixedLen);
  m->publish.channel.assign(data, channel_len);
  m->publish.message.assign(data + channel_len, message_len);
  return Status::Ok();
}

Status ReadModuleBody(Bytes p, size_t totlen, BusMessage* m) {
  if (totlen < kBusHeaderLen + kModuleFixedLen) {
    return ExpectLen(MsgType::kModule, kBusHeaderLen + kModuleFixedLen, totlen);
  }
  Bytes body = p + kBusHeaderLen;
  uint64_t len = Be32(body + kModuleLen);
  KV_TRY(ExpectLen(MsgType::kModule, kBusHeaderLen + kModuleFixedLen + len, totlen));
  std::memcpy(&m->module.module_id, body, 8);
  m->module.type = body[kModuleType];
  m->module.payload.assign(reinterpret_cast<const char*>(body + kModuleFixedLen), len);
  return Status::Ok();
}

Status ReadBody(Bytes p, size_t totlen, BusMessage* m) {
  Bytes body = p + kBusHeaderLen;
  switch (m->hdr.type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      return ReadPingBody(p, totlen, m);
    case MsgType::kFail:
      KV_TRY(ExpectLen(MsgType::kFail, kBusHeaderLen + kNameLen, totlen));
      m->fail_about = Name(body);
      return Status::Ok();
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      return ReadPublishBody(p, totlen, m);
    case MsgType::kUpdate:
      KV_TRY(ExpectLen(MsgType::kUpdate, kBusHeaderLen + kUpdateBodyLen, totlen));
      m->update.config_epoch = Be64(body);
      m->update.name = Name(body + kUpdateName);
      m->update.slots = Slots(body + kUpdateSlots);
      return Status::Ok();
    case MsgType::kModule:
      return ReadModuleBody(p, totlen, m);
    case MsgType::kFailoverAuthRequest:
    case MsgType::kFailoverAuthAck:
    case MsgType::kMfStart:
      return ExpectLen(m->hdr.type, kBusHeaderLen, totlen);
  }
  return Status::Corruption("unknown message type");  // Decode checked the type already
}

}  // namespace

const char* MsgTypeName(MsgType type) {
  switch (type) {
    case MsgType::kPing:
      return "ping";
    case MsgType::kPong:
      return "pong";
    case MsgType::kMeet:
      return "meet";
    case MsgType::kFail:
      return "fail";
    case MsgType::kPublish:
      return "publish";
    case MsgType::kFailoverAuthRequest:
      return "auth-req";
    case MsgType::kFailoverAuthAck:
      return "auth-ack";
    case MsgType::kUpdate:
      return "update";
    case MsgType::kMfStart:
      return "mfstart";
    case MsgType::kModule:
      return "module";
    case MsgType::kPublishShard:
      return "publishshard";
  }
  return "unknown";
}

std::string Encode(const BusMessage& msg) {
  const size_t totlen = kBusHeaderLen + BodyLen(msg);
  assert(totlen <= kMaxBusMessageLen);
  assert(!CarriesGossip(msg.hdr.type) || msg.gossip.size() <= UINT16_MAX);
  std::string out(totlen, '\0');
  PutHeader(out, msg);
  PutBody(out, msg);
  return out;
}

Result<uint32_t> MessageLength(std::string_view first8) {
  if (first8.size() < 8) {
    return Status::Corruption("bus message of " + Num(first8.size()) + " bytes, shorter than 8");
  }
  if (first8.substr(kOffSig, 4) != "RCmb") return Status::Corruption("bad bus message signature");
  uint32_t totlen = Be32(reinterpret_cast<Bytes>(first8.data()) + kOffTotlen);
  if (totlen < kBusHeaderLen || totlen > kMaxBusMessageLen) {
    return Status::Corruption("bus message length " + Num(totlen) + " outside [" +
                              Num(kBusHeaderLen) + ", " + Num(kMaxBusMessageLen) + "]");
  }
  return totlen;
}

Result<BusMessage> Decode(std::string_view bytes) {
  KV_TRY_ASSIGN(totlen, MessageLength(bytes));
  if (totlen != bytes.size()) {
    return Status::Corruption("bus message totlen " + Num(totlen) + " but " + Num(bytes.size()) +
                              " bytes");
  }
  Bytes p = reinterpret_cast<Bytes>(bytes.data());
  uint16_t ver = Be16(p + kOffVer);
  if (ver != kBusProtoVersion) {
    return Status::Corruption("bus protocol version " + Num(ver) + ", expected " +
                              Num(kBusProtoVersion));
  }
  uint16_t type = Be16(p + kOffType);
  if (type >= kMsgTypeCount) return Status::Corruption("unknown bus message type " + Num(type));
  BusMessage m;
  m.hdr = ReadHeader(p);
  KV_TRY(ReadBody(p, totlen, &m));
  return m;
}

}  // namespace kv::cluster
