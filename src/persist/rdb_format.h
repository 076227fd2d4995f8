// Constants of the Redis RDB format (version 10, Redis 7.0) and of the compact encodings that
// RDB files embed. The numbers are the file format: never renumber.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace kv::persist {

constexpr int kRdbVersion = 10;

// Value types (the byte before a key).
enum RdbType : uint8_t {
  kRdbString = 0,
  kRdbList = 1,
  kRdbSet = 2,
  kRdbZSet = 3,       // scores as strings (old)
  kRdbHash = 4,
  kRdbZSet2 = 5,      // scores as binary doubles
  kRdbModule = 6,     // pre-GA module values: not loadable
  kRdbModule2 = 7,
  kRdbHashZipmap = 9,
  kRdbListZiplist = 10,
  kRdbSetIntset = 11,
  kRdbZSetZiplist = 12,
  kRdbHashZiplist = 13,
  kRdbListQuicklist = 14,
  kRdbStreamListpacks = 15,
  kRdbHashListpack = 16,
  kRdbZSetListpack = 17,
  kRdbListQuicklist2 = 18,
  kRdbStreamListpacks2 = 19,
  kRdbSetListpack = 20,
  kRdbStreamListpacks3 = 21,
};

// Opcodes that are not value types.
enum RdbOpcode : uint8_t {
  kOpFunction2 = 245,
  kOpFunctionPreGa = 246,
  kOpModuleAux = 247,
  kOpIdle = 248,
  kOpFreq = 249,
  kOpAux = 250,
  kOpResizeDb = 251,
  kOpExpireTimeMs = 252,
  kOpExpireTime = 253,
  kOpSelectDb = 254,
  kOpEof = 255,
};

// Length encoding: the top two bits of the first byte.
constexpr uint8_t kLen6Bit = 0;
constexpr uint8_t kLen14Bit = 1;
constexpr uint8_t kLenEncoded = 3;  // a special string encoding follows in the low 6 bits
constexpr uint8_t kLen32Bit = 0x80;
constexpr uint8_t kLen64Bit = 0x81;

// Special string encodings (low 6 bits after kLenEncoded).
constexpr uint8_t kEncInt8 = 0;
constexpr uint8_t kEncInt16 = 1;
constexpr uint8_t kEncInt32 = 2;
constexpr uint8_t kEncLzf = 3;

// Quicklist-2 node containers.
constexpr uint64_t kQuicklistPlain = 1;
constexpr uint64_t kQuicklistPacked = 2;

// Module value opcodes (inside kRdbModule2 values and kOpModuleAux).
constexpr uint64_t kModuleOpEof = 0;
constexpr uint64_t kModuleOpSint = 1;
constexpr uint64_t kModuleOpUint = 2;
constexpr uint64_t kModuleOpFloat = 3;
constexpr uint64_t kModuleOpDouble = 4;
constexpr uint64_t kModuleOpString = 5;

// rdb-key-save-delay and key-load-delay (Redis' debugDelay): sleeps `us` microseconds after a
// key; a negative -N sleeps 1 us after one key in N on average. Makes a save or a load slow on
// purpose, for tests.
inline void DebugKeyDelay(int us) {
  if (us < 0) us = random() % -static_cast<int64_t>(us) == 0 ? 1 : 0;
  if (us > 0) usleep(static_cast<useconds_t>(us));
}

}  // namespace kv::persist
