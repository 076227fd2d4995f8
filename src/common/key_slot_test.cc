#include "common/key_slot.h"

#include <gtest/gtest.h>

namespace kv {
namespace {

TEST(KeySlot, Crc16IsXmodem) {
  // The check value of CRC-16/XMODEM, and Redis' own test vector (crc16.c's comment).
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(Crc16(""), 0);
}

TEST(KeySlot, SlotsAsRedisClusterKeyslotAnswers) {
  // Values CLUSTER KEYSLOT gives on redis-server 7.0.
  EXPECT_EQ(KeyHashSlot("foo"), 12182);
  EXPECT_EQ(KeyHashSlot("bar"), 5061);
  EXPECT_EQ(KeyHashSlot("somekey"), 11058);
  EXPECT_EQ(KeyHashSlot(""), 0);
}

TEST(KeySlot, HashTagsHashOnlyTheTag) {
  EXPECT_EQ(KeyHashSlot("{user1000}.following"), KeyHashSlot("user1000"));
  EXPECT_EQ(KeyHashSlot("{user1000}.followers"), KeyHashSlot("{user1000}.following"));
  // The first '{' and the first '}' after it.
  EXPECT_EQ(KeyHashSlot("foo{bar}{zap}"), KeyHashSlot("bar"));
  EXPECT_EQ(KeyHashSlot("foo{{bar}}zap"), KeyHashSlot("{bar"));
  // An empty tag, or none closed: the whole key.
  EXPECT_EQ(KeyHashSlot("foo{}{bar}"), Crc16("foo{}{bar}") & 16383);
  EXPECT_EQ(KeyHashSlot("foo{bar"), Crc16("foo{bar") & 16383);
  EXPECT_EQ(KeyHashSlot("}{"), Crc16("}{") & 16383);
}

}  // namespace
}  // namespace kv
