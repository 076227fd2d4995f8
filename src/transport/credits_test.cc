#include "transport/credits.h"

#include <gtest/gtest.h>

#include <random>

namespace kv::transport {
namespace {

using SS = SenderCredits::SlotState;

TEST(TransportSenderCredits, FullCycleReturnsEveryCredit) {
  SenderCredits c(4, 1000, 0);
  for (int i = 0; i < 4; ++i) {
    auto s = c.Acquire();
    ASSERT_TRUE(s);
    c.OnWritePosted(*s, 1000);
  }
  EXPECT_FALSE(c.Acquire());
  EXPECT_FALSE(c.NextToDescribe());
  c.OnWriteDone(1);  // out of order completion: slot 0 must still be described first
  EXPECT_FALSE(c.NextToDescribe());
  c.OnWriteDone(0);
  auto d = c.NextToDescribe();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->slot, 0);
  EXPECT_EQ(d->offset, 0u);
  c.OnDescribed(0);
  d = c.NextToDescribe();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->slot, 1);
  EXPECT_EQ(d->offset, 1000u);
  c.OnDescribed(1);
  EXPECT_TRUE(c.OnCredit(0, 1000).ok());
  EXPECT_EQ(c.acked_offset(), 1000u);
  EXPECT_EQ(c.free_credits(), 1u);
  EXPECT_TRUE(c.OnCredit(1, 2000).ok());
  EXPECT_EQ(c.CountIn(SS::kFree), 2u);
  EXPECT_EQ(c.CountIn(SS::kWriting), 2u);
}

TEST(TransportSenderCredits, RejectsHostileCredits) {
  SenderCredits c(2, 100, 500);
  auto s = c.Acquire();
  c.OnWritePosted(*s, 100);
  c.OnWriteDone(*s);
  // Never-granted: slot still writing/written, not described.
  EXPECT_FALSE(c.OnCredit(*s, 600).ok());
  c.OnDescribed(*s);
  EXPECT_FALSE(c.OnCredit(7, 600).ok());         // unknown slot
  EXPECT_FALSE(c.OnCredit(1, 600).ok());         // slot 1 was never handed over
  EXPECT_FALSE(c.OnCredit(*s, 599).ok());        // before the chunk's end
  EXPECT_FALSE(c.OnCredit(*s, 601).ok());        // beyond what was described
  EXPECT_TRUE(c.OnCredit(*s, 600).ok());
  EXPECT_FALSE(c.OnCredit(*s, 600).ok());        // double credit
  EXPECT_EQ(c.free_credits(), 2u);
}

TEST(TransportReceiverSlots, AcceptsInOrderAndReturnsSlots) {
  ReceiverSlots r(2, 100, 1000);
  EXPECT_TRUE(r.OnChunk(1, 60, 1000).ok());
  EXPECT_TRUE(r.OnChunk(0, 100, 1060).ok());
  auto f = r.Front();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->slot, 1);
  EXPECT_FALSE(r.Consume(30));
  EXPECT_EQ(r.Consume(30), std::optional<uint16_t>(1));
  EXPECT_EQ(r.consumed_offset(), 1060u);
  EXPECT_TRUE(r.OnFin(1160).ok());
  EXPECT_FALSE(r.eof());
  EXPECT_EQ(r.Consume(100), std::optional<uint16_t>(0));
  EXPECT_TRUE(r.eof());
}

TEST(TransportReceiverSlots, RejectsHostileDescriptors) {
  ReceiverSlots r(2, 100, 0);
  EXPECT_FALSE(r.OnChunk(2, 10, 0).ok());      // unknown slot
  EXPECT_FALSE(r.OnChunk(65535, 10, 0).ok());  // unknown slot
  EXPECT_FALSE(r.OnChunk(0, 0, 0).ok());       // empty
  EXPECT_FALSE(r.OnChunk(0, 101, 0).ok());     // longer than the slot
  EXPECT_FALSE(r.OnChunk(0, 10, 5).ok());      // out of order
  EXPECT_TRUE(r.OnChunk(0, 10, 0).ok());
  EXPECT_FALSE(r.OnChunk(0, 10, 10).ok());     // slot not granted (unconsumed)
  EXPECT_FALSE(r.OnFin(5).ok());               // end at the wrong offset
  EXPECT_TRUE(r.OnFin(10).ok());
  EXPECT_FALSE(r.OnFin(10).ok());              // twice
  EXPECT_FALSE(r.OnChunk(1, 10, 10).ok());     // after the end
  EXPECT_EQ(r.filled(), 1u);
}

// Random interleavings of a well-behaved pair: the sender never holds a credit for a slot the
// receiver still has filled, and offsets always agree.
TEST(TransportCredits, RandomInterleavingKeepsInvariants) {
  std::mt19937 rng(1);
  const uint32_t kSlots = 4, kSize = 64;
  SenderCredits s(kSlots, kSize, 0);
  ReceiverSlots r(kSlots, kSize, 0);
  std::vector<uint16_t> in_flight_descs;  // "network" from sender to receiver
  std::vector<std::pair<uint16_t, uint64_t>> credits;  // and back
  for (int step = 0; step < 20000; ++step) {
    switch (rng() % 5) {
      case 0:
        if (auto slot = s.Acquire()) {
          ASSERT_EQ(r.slots(), kSlots);
          s.OnWritePosted(*slot, 1 + rng() % kSize);
          s.OnWriteDone(*slot);
        }
        break;
      case 1:
        if (auto c = s.NextToDescribe()) {
          ASSERT_TRUE(r.OnChunk(c->slot, c->length, c->offset).ok());
          s.OnDescribed(c->slot);
        }
        break;
      case 2:
        if (auto f = r.Front()) {
          uint32_t n = 1 + rng() % (f->end - f->begin);
          if (auto freed = r.Consume(n)) credits.push_back({*freed, r.consumed_offset()});
        }
        break;
      case 3:
        if (!credits.empty()) {
          ASSERT_TRUE(s.OnCredit(credits.front().first, credits.front().second).ok());
          credits.erase(credits.begin());
        }
        break;
      default:
        break;
    }
    ASSERT_LE(s.posted_offset() - s.acked_offset(), uint64_t{kSlots} * kSize);
    ASSERT_EQ(s.CountIn(SS::kFree) + s.CountIn(SS::kWriting) + s.CountIn(SS::kWritten) +
                  s.CountIn(SS::kDescribed),
              kSlots);
    ASSERT_LE(r.filled() + s.free_credits(), kSlots);
  }
}

}  // namespace
}  // namespace kv::transport
