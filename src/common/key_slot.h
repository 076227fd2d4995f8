// Redis Cluster's hash slots: a key belongs to slot CRC16(key) mod 16384, where only the hash
// tag is hashed when the key has one (the bytes between the first '{' and the first '}' after
// it, when there is at least one byte between them), so that "{user1}.a" and "{user1}.b" share
// a slot. CRC16 is the XMODEM variant (polynomial 0x1021, initial value 0), as Redis' crc16.c.
#pragma once

#include <cstdint>
#include <string_view>

namespace kv {

inline constexpr int kClusterSlots = 16384;

uint16_t Crc16(std::string_view data);
// The slot of `key`, in [0, 16384).
int KeyHashSlot(std::string_view key);

}  // namespace kv
