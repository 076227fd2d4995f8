// In-process tests of APPEND and SETRANGE on growing strings: values that cross the inline (8),
// embstr (44) and 1 MB (Redis' SDS_MAX_PREALLOC) sizes keep the exact bytes, length and encoding
// Redis 7.0 gives, while the buffer underneath grows with spare room (Value::GrowRaw).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/command_test_util.h"

namespace kv::cmd {
namespace {

constexpr size_t kMb = size_t{1} << 20;

std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

// `n` bytes that differ from position to position (so a misplaced copy shows).
std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

class StringGrowthTest : public ::testing::Test {
 protected:
  std::string Encoding(const std::string& key) { return r.Run({"object", "encoding", key}); }
  // Compares the key with `model`: length, both ends, the bytes around 1 MB, and all of it.
  void ExpectValue(const std::string& key, const std::string& model) {
    ASSERT_EQ(r.Run({"strlen", key}), Int(static_cast<int64_t>(model.size())));
    for (size_t at : {size_t{0}, kMb - 3, model.size() - std::min<size_t>(model.size(), 5)}) {
      if (at >= model.size()) continue;
      EXPECT_EQ(r.Run({"getrange", key, std::to_string(at), std::to_string(at + 5)}),
                Bulk(model.substr(at, 6)))
          << "at " << at;
    }
    EXPECT_TRUE(r.Run({"get", key}) == Bulk(model)) << "GET differs, length " << model.size();
  }
  CommandRunner r;
};

TEST_F(StringGrowthTest, AppendsAcrossOneMegabyteKeepEveryByte) {
  std::string model;
  uint32_t seed = 1;
  // Chunks of uneven sizes, so lengths land just under, on and past 1 MB and 2 MB.
  for (size_t chunk : {size_t{5}, size_t{40}, size_t{300000}, kMb - 300045 - 1, size_t{1},
                       size_t{1}, size_t{777777}, kMb, size_t{0}, size_t{3}}) {
    std::string tail = Pattern(chunk, seed++);
    model += tail;
    ASSERT_EQ(r.Run({"append", "k", tail}), Int(static_cast<int64_t>(model.size())));
    ExpectValue("k", model);
  }
  EXPECT_EQ(Encoding("k"), Bulk("raw"));
}

TEST_F(StringGrowthTest, AppendToIntegersAndEmptyAppends) {
  EXPECT_EQ(r.Run({"append", "n", "123"}), Int(3));  // a new key is stored as SET stores it
  EXPECT_EQ(Encoding("n"), Bulk("int"));
  EXPECT_EQ(r.Run({"append", "n", "45"}), Int(5));
  EXPECT_EQ(r.Run({"get", "n"}), Bulk("12345"));
  EXPECT_EQ(Encoding("n"), Bulk("raw"));

  r.Run({"set", "min", "-9223372036854775808"});
  ASSERT_EQ(Encoding("min"), Bulk("int"));
  std::string tail(kMb, '7');
  EXPECT_EQ(r.Run({"append", "min", tail}), Int(20 + static_cast<int64_t>(kMb)));
  ExpectValue("min", "-9223372036854775808" + tail);

  // An empty tail changes no bytes but still makes the value raw, as in Redis.
  r.Run({"set", "seven", "7"});
  EXPECT_EQ(r.Run({"append", "seven", ""}), Int(1));
  EXPECT_EQ(r.Run({"get", "seven"}), Bulk("7"));
  EXPECT_EQ(Encoding("seven"), Bulk("raw"));
  // ... and creates an empty string when the key is missing.
  EXPECT_EQ(r.Run({"append", "new", ""}), Int(0));
  EXPECT_EQ(r.Run({"exists", "new"}), Int(1));
  EXPECT_EQ(Encoding("new"), Bulk("embstr"));
}

TEST_F(StringGrowthTest, SetRangeZeroPadsAcrossEverySize) {
  // A new key: exactly offset + length bytes, zeros before the patch.
  EXPECT_EQ(r.Run({"setrange", "a", "3", "ab"}), Int(5));
  EXPECT_EQ(r.Run({"get", "a"}), Bulk(std::string("\0\0\0ab", 5)));
  EXPECT_EQ(Encoding("a"), Bulk("raw"));
  std::string model("\0\0\0ab", 5);
  // Growing the same key past 8, 44, 1 MB and 2 MB, and writing inside it.
  for (size_t offset : {size_t{8}, size_t{44}, size_t{20}, kMb - 1, kMb + 5, 2 * kMb, size_t{1}}) {
    std::string patch = Pattern(1 + offset % 13, static_cast<uint32_t>(offset));
    if (model.size() < offset + patch.size()) model.resize(offset + patch.size(), '\0');
    model.replace(offset, patch.size(), patch);
    ASSERT_EQ(r.Run({"setrange", "a", std::to_string(offset), patch}),
              Int(static_cast<int64_t>(model.size())));
    ExpectValue("a", model);
  }
  // Inside an integer: the text is patched and the value becomes raw.
  r.Run({"set", "i", "12345"});
  EXPECT_EQ(r.Run({"setrange", "i", "1", "x"}), Int(5));
  EXPECT_EQ(r.Run({"get", "i"}), Bulk("1x345"));
  EXPECT_EQ(Encoding("i"), Bulk("raw"));
  // Past the end of an integer.
  r.Run({"set", "j", "-1"});
  EXPECT_EQ(r.Run({"setrange", "j", "4", "z"}), Int(5));
  EXPECT_EQ(r.Run({"get", "j"}), Bulk(std::string("-1\0\0z", 5)));
  // A new key of exactly 1 MB, then an append one past it.
  EXPECT_EQ(r.Run({"setrange", "m", std::to_string(kMb - 1), "x"}), Int(kMb));
  EXPECT_EQ(r.Run({"append", "m", "y"}), Int(kMb + 1));
  ExpectValue("m", std::string(kMb - 1, '\0') + "xy");
}

TEST_F(StringGrowthTest, GrowthKeepsTtlAndLimits) {
  r.Run({"set", "t", "v", "px", "100000000"});
  r.Run({"append", "t", std::string(kMb, 'x')});
  r.Run({"setrange", "t", std::to_string(2 * kMb), "y"});
  std::string pttl = r.Run({"pttl", "t"});
  EXPECT_GT(std::stoll(pttl.substr(1)), 0) << pttl;
  r.hooks.max_bulk_len = 2 * kMb + 1;
  EXPECT_EQ(r.Run({"strlen", "t"}), Int(2 * kMb + 1));
  EXPECT_EQ(r.Run({"append", "t", "z"}).substr(0, 4), "-ERR");
  EXPECT_EQ(r.Run({"setrange", "t", std::to_string(2 * kMb + 1), "z"}).substr(0, 4), "-ERR");
  EXPECT_EQ(r.Run({"strlen", "t"}), Int(2 * kMb + 1));
}

// With proto-max-bulk-len at 2^63-1 (Redis accepts it, and then aborts on the allocation), the
// most a value holds (4294967295 bytes) still bounds every command that grows a string to a
// length the client chose; the value is left as it was (SETBIT 2^63-1 used to write far past
// a 1-byte buffer whose 32-bit length had wrapped).
TEST_F(StringGrowthTest, GrowthPastTheValueMaximumIsRefused) {
  r.hooks.max_bulk_len = INT64_MAX;
  const std::string kOffset = "-ERR bit offset is not an integer or out of range\r\n";
  const std::string kTooLong = "-ERR string exceeds maximum allowed size (4294967295 bytes)\r\n";
  r.Run({"set", "ex", "hello"});
  for (const char* key : {"new", "ex"}) {
    EXPECT_EQ(r.Run({"setbit", key, "9223372036854775807", "1"}), kOffset);
    EXPECT_EQ(r.Run({"setbit", key, "34359738360", "1"}), kOffset);  // byte 4294967295
    EXPECT_EQ(r.Run({"bitfield", key, "set", "u8", "9223372036854775807", "1"}), kOffset);
    EXPECT_EQ(r.Run({"bitfield", key, "incrby", "i64", "34359738304", "1"}), kOffset);
    EXPECT_EQ(r.Run({"setrange", key, "4294967295", "x"}), kTooLong);
    EXPECT_EQ(r.Run({"setrange", key, "9223372036854775000", "x"}), kTooLong);
    // offset + length past 2^63 - 1: Redis' own check answers first.
    EXPECT_EQ(r.Run({"setrange", key, "9223372036854775807", "x"}),
              "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
  }
  EXPECT_EQ(r.Run({"exists", "new"}), Int(0));
  EXPECT_EQ(r.Run({"get", "ex"}), Bulk("hello"));
  EXPECT_EQ(r.Run({"getbit", "ex", "9223372036854775807"}), Int(0));  // reads need no room
  EXPECT_EQ(r.Run({"setrange", "ex", "9223372036854775807", ""}), Int(5));
}

// Memory the allocator refuses is an error reply, and the key is left as it was: checked in a
// child process whose address space is capped at 1 GiB, so that 2 GB cannot be had. (Not under
// AddressSanitizer, whose shadow memory needs the address space.)
#if !defined(__SANITIZE_ADDRESS__)
// The child's side: true when each growth the capped allocator cannot serve is refused.
bool GrowWithoutMemory() {
  CommandRunner c;
  c.hooks.max_bulk_len = INT64_MAX;
  c.Run({"set", "ex", "hello"});
  rlimit cap{size_t{1} << 30, size_t{1} << 30};
  if (setrlimit(RLIMIT_AS, &cap) != 0) return false;
  const std::string kOom = "-OOM out of memory for this command\r\n";
  return c.Run({"setrange", "new", "2147483000", "x"}) == kOom &&
         c.Run({"setrange", "ex", "2147483000", "x"}) == kOom &&
         c.Run({"setbit", "new", "17179860000", "1"}) == kOom &&
         c.Run({"bitfield", "ex", "set", "u8", "17179860000", "1"}) == kOom &&
         c.Run({"exists", "new"}) == Int(0) && c.Run({"get", "ex"}) == Bulk("hello") &&
         c.Run({"append", "ex", "!"}) == Int(6);
}

TEST(StringGrowthDeathTest, MemoryTheAllocatorRefusesIsAnErrorReply) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(GrowWithoutMemory() ? 0 : 1), ::testing::ExitedWithCode(0), "");
}
#endif

// Random APPENDs and SETRANGEs against a std::string model, growing the string past 2 MB.
TEST_F(StringGrowthTest, RandomAppendsAndSetRangesMatchAModel) {
  std::mt19937 rng(7);
  std::string model;
  for (int step = 0; step < 300; step++) {
    size_t n = rng() % 4 == 0 ? rng() % 120000 : rng() % 70;
    std::string bytes = Pattern(n, rng());
    if (rng() % 2) {
      model += bytes;
      ASSERT_EQ(r.Run({"append", "k", bytes}), Int(static_cast<int64_t>(model.size())));
    } else {
      size_t offset = rng() % (model.size() + 40000);
      if (!bytes.empty()) {
        if (model.size() < offset + n) model.resize(offset + n, '\0');
        model.replace(offset, n, bytes);
      }
      ASSERT_EQ(r.Run({"setrange", "k", std::to_string(offset), bytes}),
                Int(static_cast<int64_t>(model.size())))
          << "step " << step;
    }
    if (step % 50 == 49) ExpectValue("k", model);
  }
  ExpectValue("k", model);
}

}  // namespace
}  // namespace kv::cmd
