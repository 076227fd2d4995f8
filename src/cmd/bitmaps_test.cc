// In-process tests of the bitmap commands against results Redis 7.0 documents and gives (the
// differential test compares random ones with redis-server).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cmd/command_test_util.h"

namespace kv::cmd {
namespace {

std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
std::string Err(std::string_view msg) { return "-ERR " + std::string(msg) + "\r\n"; }

TEST(Bitmaps, SetBitGrowsAndReturnsTheOldBit) {
  CommandRunner r;
  EXPECT_EQ(r.Run({"setbit", "k", "7", "1"}), Int(0));
  EXPECT_EQ(r.Run({"setbit", "k", "7", "0"}), Int(1));
  EXPECT_EQ(r.Run({"get", "k"}), Bulk(std::string(1, '\0')));
  EXPECT_EQ(r.Run({"setbit", "k", "17", "1"}), Int(0));  // grows to three bytes
  EXPECT_EQ(r.Run({"get", "k"}), Bulk(std::string("\0\0\x40", 3)));
  EXPECT_EQ(r.Run({"getbit", "k", "17"}), Int(1));
  EXPECT_EQ(r.Run({"getbit", "k", "1000"}), Int(0));
  EXPECT_EQ(r.Run({"object", "encoding", "k"}), Bulk("raw"));
  EXPECT_EQ(r.Run({"setbit", "k", "-1", "1"}), Err("bit offset is not an integer or out of range"));
  EXPECT_EQ(r.Run({"setbit", "k", "4294967296", "1"}),
            Err("bit offset is not an integer or out of range"));
  EXPECT_EQ(r.Run({"setbit", "k", "1", "2"}), Err("bit is not an integer or out of range"));
  r.Run({"rpush", "l", "a"});
  EXPECT_EQ(r.Run({"setbit", "l", "1", "1"}).substr(0, 10), "-WRONGTYPE");
}

TEST(Bitmaps, BitCountWithByteAndBitRanges) {
  CommandRunner r;
  r.Run({"set", "mykey", "foobar"});
  EXPECT_EQ(r.Run({"bitcount", "mykey"}), Int(26));
  EXPECT_EQ(r.Run({"bitcount", "mykey", "0", "0"}), Int(4));
  EXPECT_EQ(r.Run({"bitcount", "mykey", "1", "1"}), Int(6));
  EXPECT_EQ(r.Run({"bitcount", "mykey", "1", "1", "BYTE"}), Int(6));
  EXPECT_EQ(r.Run({"bitcount", "mykey", "5", "30", "BIT"}), Int(17));
  EXPECT_EQ(r.Run({"bitcount", "mykey", "-2", "-1"}), Int(7));
  EXPECT_EQ(r.Run({"bitcount", "mykey", "0"}), Err("syntax error"));
  EXPECT_EQ(r.Run({"bitcount", "nokey"}), Int(0));
}

TEST(Bitmaps, BitPosFindsSetAndClearBits) {
  CommandRunner r;
  r.Run({"set", "mykey", std::string("\xff\xf0\x00", 3)});
  EXPECT_EQ(r.Run({"bitpos", "mykey", "0"}), Int(12));
  r.Run({"set", "mykey", std::string("\x00\xff\xf0", 3)});
  EXPECT_EQ(r.Run({"bitpos", "mykey", "1", "0"}), Int(8));
  EXPECT_EQ(r.Run({"bitpos", "mykey", "1", "2"}), Int(16));
  EXPECT_EQ(r.Run({"bitpos", "mykey", "1", "2", "-1", "BYTE"}), Int(16));
  EXPECT_EQ(r.Run({"bitpos", "mykey", "1", "7", "15", "BIT"}), Int(8));
  r.Run({"set", "mykey", std::string("\x00\x00\x00", 3)});
  EXPECT_EQ(r.Run({"bitpos", "mykey", "1"}), Int(-1));
  EXPECT_EQ(r.Run({"bitpos", "mykey", "1", "7", "-3", "BIT"}), Int(-1));
  // All ones: a clear bit is after the string unless the range is explicit.
  r.Run({"set", "ones", std::string("\xff\xff", 2)});
  EXPECT_EQ(r.Run({"bitpos", "ones", "0"}), Int(16));
  EXPECT_EQ(r.Run({"bitpos", "ones", "0", "0", "-1"}), Int(-1));
  EXPECT_EQ(r.Run({"bitpos", "nokey", "0"}), Int(0));
  EXPECT_EQ(r.Run({"bitpos", "nokey", "1"}), Int(-1));
  EXPECT_EQ(r.Run({"bitpos", "mykey", "2"}), Err("The bit argument must be 1 or 0."));
}

TEST(Bitmaps, BitOpCombinesAndDeletesOnEmptyResult) {
  CommandRunner r;
  r.Run({"set", "key1", "foobar"});
  r.Run({"set", "key2", "abcdef"});
  EXPECT_EQ(r.Run({"bitop", "AND", "dest", "key1", "key2"}), Int(6));
  EXPECT_EQ(r.Run({"get", "dest"}), Bulk("`bc`ab"));
  EXPECT_EQ(r.Run({"bitop", "not", "dest", "key1"}), Int(6));
  EXPECT_EQ(r.Run({"bitop", "XOR", "dest", "key1", "nokey"}), Int(6));
  EXPECT_EQ(r.Run({"get", "dest"}), Bulk("foobar"));
  EXPECT_EQ(r.Run({"bitop", "OR", "dest", "nokey", "nokey2"}), Int(0));
  EXPECT_EQ(r.Run({"exists", "dest"}), Int(0));
  EXPECT_EQ(r.Run({"bitop", "NOT", "dest", "key1", "key2"}),
            Err("BITOP NOT must be called with a single source key."));
  EXPECT_EQ(r.Run({"bitop", "NAND", "dest", "key1"}), Err("syntax error"));
}

TEST(Bitmaps, BitFieldTypesOverflowAndReadOnlyVariant) {
  CommandRunner r;
  EXPECT_EQ(r.Run({"bitfield", "mykey", "INCRBY", "i5", "100", "1", "GET", "u4", "0"}),
            "*2\r\n:1\r\n:0\r\n");
  EXPECT_EQ(r.Run({"bitfield", "mystring", "SET", "i8", "#0", "100", "SET", "i8", "#1", "200"}),
            "*2\r\n:0\r\n:0\r\n");
  EXPECT_EQ(r.Run({"bitfield", "mystring", "GET", "i8", "#1"}), "*1\r\n:-56\r\n");
  // u2 at 102 incremented by 1 under WRAP, SAT and FAIL, four times.
  std::vector<std::string> replies;
  for (int i = 0; i < 4; i++) {
    replies.push_back(
        r.Run({"bitfield", "c", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2",
               "102", "1", "OVERFLOW", "FAIL", "INCRBY", "u2", "104", "1"}));
  }
  EXPECT_EQ(replies[0], "*3\r\n:1\r\n:1\r\n:1\r\n");
  EXPECT_EQ(replies[2], "*3\r\n:3\r\n:3\r\n:3\r\n");
  EXPECT_EQ(replies[3], "*3\r\n:0\r\n:3\r\n$-1\r\n");
  EXPECT_EQ(r.Run({"bitfield", "k", "GET", "u64", "0"}),
            Err("Invalid bitfield type. Use something like i16 u8. Note that u64 is not "
                "supported but i64 is."));
  EXPECT_EQ(r.Run({"bitfield", "k", "OVERFLOW", "NOPE"}), Err("Invalid OVERFLOW type specified"));
  EXPECT_EQ(r.Run({"bitfield_ro", "k", "SET", "u8", "0", "1"}),
            Err("BITFIELD_RO only supports the GET subcommand"));
  EXPECT_EQ(r.Run({"bitfield_ro", "mystring", "GET", "u8", "0"}), "*1\r\n:100\r\n");
  EXPECT_EQ(r.Run({"exists", "k"}), Int(0));
}

}  // namespace
}  // namespace kv::cmd
