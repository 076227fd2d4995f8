// Random bus messages for the codec's tests and its fuzz replay: well-formed ones of every type
// (gossip, hostnames, publish and module payloads of varied lengths), and mutations of their
// bytes aimed at the fields Decode checks (lengths, counts, the type, extension headers).
#pragma once

#include <cstdint>
#include <iterator>
#include <random>
#include <string>

#include "cluster/bus_wire.h"

namespace kv::cluster::test_util {

inline uint32_t Below(std::mt19937& rng, uint32_t n) { return rng() % n; }

inline std::string RandomHexName(std::mt19937& rng) {
  static const char kHex[] = "0123456789abcdef";
  std::string s(kNameLen, '0');
  for (char& c : s) c = kHex[Below(rng, 16)];
  return s;
}

inline std::string RandomBytes(std::mt19937& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// Printable, no NUL (IPs and hostnames are C strings on the wire), up to `max` long.
inline std::string RandomText(std::mt19937& rng, size_t max) {
  std::string s(Below(rng, static_cast<uint32_t>(max) + 1), 'a');
  for (char& c : s) c = static_cast<char>('!' + Below(rng, 94));
  return s;
}

inline SlotBitmap RandomSlots(std::mt19937& rng) {
  SlotBitmap slots;
  switch (Below(rng, 3)) {
    case 0:
      break;
    case 1:  // a range, as slots are usually assigned
      for (uint32_t s = Below(rng, kClusterSlots), n = Below(rng, 6000); s < kClusterSlots && n;
           s++, n--) {
        slots.set(s);
      }
      break;
    default:
      for (int i = 0; i < 64; i++) slots.set(Below(rng, kClusterSlots));
  }
  return slots;
}

inline uint64_t RandomU64(std::mt19937& rng) { return uint64_t{rng()} << 32 | rng(); }

// A message that Encode then Decode gives back unchanged.
inline BusMessage RandomBusMessage(std::mt19937& rng, MsgType type) {
  BusMessage m;
  BusHeader& h = m.hdr;
  h.type = type;
  h.port = static_cast<int>(Below(rng, 65536));
  h.current_epoch = Below(rng, 2) ? Below(rng, 100) : RandomU64(rng);
  h.config_epoch = Below(rng, 100);
  h.offset = RandomU64(rng);
  h.sender = RandomHexName(rng);
  h.myslots = RandomSlots(rng);
  if (Below(rng, 2)) h.replicaof = RandomHexName(rng);
  if (Below(rng, 2)) h.myip = Below(rng, 2) ? "127.0.0.1" : RandomText(rng, 45);
  h.pport = static_cast<int>(Below(rng, 65536));
  h.cport = static_cast<int>(Below(rng, 65536));
  h.flags = static_cast<uint16_t>(rng());
  h.state = static_cast<uint8_t>(Below(rng, 2));
  h.mflags = {static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()),
              static_cast<uint8_t>(rng())};
  switch (type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet: {
      size_t n = Below(rng, 4) == 0 ? 0 : Below(rng, 12);
      for (size_t i = 0; i < n; i++) {
        GossipEntry g;
        g.name = RandomHexName(rng);
        g.ping_sent_s = Below(rng, 2) ? 0 : rng();
        g.pong_received_s = rng();
        g.ip = Below(rng, 2) ? "10.0.0." + std::to_string(i) : RandomText(rng, 45);
        g.port = static_cast<int>(Below(rng, 65536));
        g.cport = static_cast<int>(Below(rng, 65536));
        g.pport = static_cast<int>(Below(rng, 65536));
        g.flags = static_cast<uint16_t>(rng());
        m.gossip.push_back(g);
      }
      if (Below(rng, 2)) m.hostname = RandomText(rng, 1 + Below(rng, 64));
      // Decode reports the flag as it found it, and Encode sets it where a hostname goes out.
      if (!m.hostname.empty()) h.mflags[0] |= kMsgFlag0ExtData;
      break;
    }
    case MsgType::kFail:
      m.fail_about = RandomHexName(rng);
      break;
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      m.publish.channel = RandomBytes(rng, Below(rng, 40));
      m.publish.message = RandomBytes(rng, Below(rng, 4) ? Below(rng, 100) : Below(rng, 5000));
      break;
    case MsgType::kUpdate:
      m.update.config_epoch = RandomU64(rng);
      m.update.name = RandomHexName(rng);
      m.update.slots = RandomSlots(rng);
      break;
    case MsgType::kModule:
      m.module.module_id = RandomU64(rng);
      m.module.type = static_cast<uint8_t>(rng());
      m.module.payload = RandomBytes(rng, Below(rng, 300));
      break;
    case MsgType::kFailoverAuthRequest:
    case MsgType::kFailoverAuthAck:
    case MsgType::kMfStart:
      break;
  }
  return m;
}

inline BusMessage RandomBusMessage(std::mt19937& rng) {
  return RandomBusMessage(rng, static_cast<MsgType>(Below(rng, kMsgTypeCount)));
}

inline void PokeBe(std::string& b, size_t at, uint64_t v, int len) {
  for (int i = 0; i < len && at + i < b.size(); i++) {
    b[at + i] = static_cast<char>(v >> (8 * (len - 1 - i)));
  }
}

// The header says the message is as long as it is (after a mutation changed its length).
inline void FixTotlen(std::string& b) {
  if (b.size() >= 8) PokeBe(b, 4, b.size(), 4);
}

// One to three changes to an encoded message: bit flips, bytes and 16- or 32-bit values
// (small, boundary or random) at the fields lengths are read from, truncation, extension, or
// a forged extension; most keep totlen matching the length, so that Decode looks further in.
inline std::string MutateBusMessage(std::string b, std::mt19937& rng) {
  auto value = [&]() -> uint64_t {
    switch (Below(rng, 4)) {
      case 0:
        return Below(rng, 16);
      case 1:
        return 0xffffffffu - Below(rng, 16);
      case 2:
        return Below(rng, 8) * 8;
      default:
        return rng();
    }
  };
  // The first extension's place, where the count says it is.
  const size_t count = b.size() > 15 ? (uint8_t(b[14]) << 8 | uint8_t(b[15])) : 0;
  const size_t ext_at = kBusHeaderLen + count * kGossipEntryLen;
  const size_t fields[] = {
      4,      8,         12, 14, 2214, 2253, kBusHeaderLen, kBusHeaderLen + 4, kBusHeaderLen + 8,
      ext_at, ext_at + 4};
  for (uint32_t n = 1 + Below(rng, 3); n > 0; n--) {
    switch (Below(rng, 7)) {
      case 0:
        if (!b.empty()) b[Below(rng, b.size())] ^= static_cast<char>(1 << Below(rng, 8));
        break;
      case 1:
        if (!b.empty()) b[Below(rng, b.size())] = static_cast<char>(value());
        break;
      case 2:
        PokeBe(b, fields[Below(rng, std::size(fields))], value(), Below(rng, 2) ? 2 : 4);
        break;
      case 3:
        b.resize(Below(rng, b.size() + 1));
        break;
      case 4:
        b += RandomBytes(rng, Below(rng, 3) ? 8 * Below(rng, 4) : Below(rng, 64));
        break;
      case 5: {  // an extension header at the end: the count, flag and length must agree
        std::string ext(8 + 8 * Below(rng, 3), '\0');
        PokeBe(ext, 0, Below(rng, 2) ? ext.size() : value(), 4);
        PokeBe(ext, 4, Below(rng, 4), 2);
        if (b.size() > 2254) {
          b[2253] = static_cast<char>(b[2253] | kMsgFlag0ExtData);
          PokeBe(b, 2214, (uint8_t(b[2214]) << 8 | uint8_t(b[2215])) + 1, 2);
        }
        b += ext;
        break;
      }
      default:
        break;
    }
  }
  if (Below(rng, 8) != 0) FixTotlen(b);
  return b;
}

}  // namespace kv::cluster::test_util
