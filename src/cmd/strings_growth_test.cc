// In-process tests of APPEND and SETRANGE on growing strings: values that cross the inline (8),
// embstr (44) and 1 MB (Redis' SDS_MAX_PREALLOC) sizes keep the exact bytes, length and encoding
// Redis 7.0 gives, while the buffer underneath grows with spare room (Value::GrowRaw).
#include <gtest/gtest.h>

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
