// Unit tests of string values' growth (Value::GrowRaw, ZeroedRaw): the bytes and encoding Redis'
// APPEND and SETRANGE produce, and growth that is amortized as Redis' sds grows (capacity
// doubling below 1 MB, +1 MB above), counted in reallocations rather than timed.
#include "store/value.h"

#include <gtest/gtest.h>

#include <string>

namespace kv::store {
namespace {

constexpr size_t kMb = size_t{1} << 20;

TEST(StringGrowth, CapacityDoublesBelowOneMegabyteAndAddsOneAbove) {
  EXPECT_EQ(GrownStringCapacity(1), 2u);
  EXPECT_EQ(GrownStringCapacity(100), 200u);
  EXPECT_EQ(GrownStringCapacity(kMb - 1), 2 * kMb - 2);
  EXPECT_EQ(GrownStringCapacity(kMb), 2 * kMb);
  EXPECT_EQ(GrownStringCapacity(5 * kMb + 3), 6 * kMb + 3);
}

// Byte-by-byte appends up to 3 MB: with doubling the buffer is replaced ~20 times below 1 MB and
// twice more above; growing to the exact length would replace it three million times.
TEST(StringGrowth, AppendsReallocateLogarithmicallyOften) {
  Value v = Value::String("x");
  std::string model = "x";
  size_t reallocations = 0;
  size_t cap = v.StrCapacity();
  const size_t target = 3 * kMb;
  while (model.size() < target) {
    char c = static_cast<char>('a' + model.size() % 26);
    char* p = v.GrowRaw(model.size() + 1);
    p[model.size()] = c;
    model.push_back(c);
    ASSERT_GE(v.StrCapacity(), v.StrLen());
    if (v.StrCapacity() != cap) {
      reallocations++;
      cap = v.StrCapacity();
      // Never more spare room than Redis gives (1 MB), beyond the allocator's rounding.
      ASSERT_LE(cap, GrownStringCapacity(model.size()) + 4096) << model.size();
    }
  }
  EXPECT_LE(reallocations, 26u);
  EXPECT_EQ(v.StrLen(), target);
  EXPECT_EQ(v.ToString(), model);
  EXPECT_EQ(v.str_encoding(), StrEnc::kRaw);
  // The spare room is counted by MEMORY USAGE (as Redis counts an sds' free space).
  EXPECT_GE(v.MemoryUsage(), sizeof(Value) + v.StrCapacity());
}

TEST(StringGrowth, GrowingZeroPadsAndMakesTheStringRaw) {
  Value i = Value::String("-12");
  ASSERT_TRUE(i.is_int());
  i.GrowRaw(5);
  EXPECT_EQ(i.ToString(), std::string("-12\0\0", 5));
  EXPECT_EQ(i.str_encoding(), StrEnc::kRaw);

  Value same = Value::String("12345");  // not longer: only the encoding changes
  same.GrowRaw(3);
  EXPECT_EQ(same.ToString(), "12345");
  EXPECT_EQ(same.str_encoding(), StrEnc::kRaw);

  // Across the inline limit (8 bytes) and the embstr limit (44).
  Value s = Value::String("abcdefgh");
  ASSERT_EQ(s.str_encoding(), StrEnc::kEmbstr);
  s.GrowRaw(8);
  EXPECT_EQ(s.ToString(), "abcdefgh");
  s.GrowRaw(9);
  EXPECT_EQ(s.ToString(), std::string("abcdefgh\0", 9));
  s.GrowRaw(50)[49] = 'z';
  EXPECT_EQ(s.ToString(), std::string("abcdefgh") + std::string(41, '\0') + "z");
  EXPECT_EQ(s.StrLen(), 50u);
  EXPECT_STREQ(s.EncodingName(), "raw");

  // A copy is sized to the bytes, with the same encoding.
  Value copy = s.Clone();
  EXPECT_EQ(copy.ToString(), s.ToString());
  EXPECT_EQ(copy.str_encoding(), StrEnc::kRaw);
  Value moved = std::move(s);
  EXPECT_EQ(moved.ToString(), copy.ToString());
}

TEST(StringGrowth, ZeroedRawIsExactAndZero) {
  for (size_t len : {size_t{0}, size_t{1}, size_t{8}, size_t{9}, kMb, kMb + 1}) {
    Value v = *Value::ZeroedRaw(len);
    EXPECT_EQ(v.StrLen(), len);
    EXPECT_EQ(v.ToString(), std::string(len, '\0'));
    EXPECT_EQ(v.str_encoding(), StrEnc::kRaw);
    EXPECT_LE(v.StrCapacity(), std::max<size_t>(len, Value::kInlineMax) + 4096);
  }
}

// A length past what a Value holds is refused before anything is allocated, and the string is
// left as it was (the commands answer an error instead of wrapping the 32-bit length).
TEST(StringGrowth, PastTheMaximumLengthIsRefused) {
  EXPECT_FALSE(Value::ZeroedRaw(Value::kMaxStrLen + 1).has_value());
  EXPECT_FALSE(Value::ZeroedRaw(SIZE_MAX).has_value());
  Value s = Value::String("hello", /*raw=*/true);
  EXPECT_EQ(s.GrowRaw(Value::kMaxStrLen + 1), nullptr);
  EXPECT_EQ(s.GrowRaw(SIZE_MAX), nullptr);
  EXPECT_EQ(s.ToString(), "hello");
  Value i = Value::Int(12);
  EXPECT_EQ(i.GrowRaw(size_t{1} << 60), nullptr);
  EXPECT_TRUE(i.is_int());
  EXPECT_EQ(i.ToString(), "12");
}

}  // namespace
}  // namespace kv::store
