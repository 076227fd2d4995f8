#include "transport/credits.h"
#include "transport/wire.h"

#include <gtest/gtest.h>

#include <deque>
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

// Posts and describes a chunk of `len` bytes in the next slot.
uint16_t PostDescribed(SenderCredits& c, uint32_t len) {
  auto s = c.Acquire();
  EXPECT_TRUE(s);
  c.OnWritePosted(*s, len);
  c.OnWriteDone(*s);
  c.OnDescribed(*s);
  return *s;
}

TEST(TransportSenderCredits, ARunOfSlotsComesBackInOneCredit) {
  SenderCredits c(4, 100, 0);
  for (int i = 0; i < 3; i++) PostDescribed(c, 100);  // slots 0, 1, 2
  EXPECT_EQ(c.free_credits(), 1u);
  EXPECT_TRUE(c.OnCredit(2, 300, 3).ok());
  EXPECT_EQ(c.free_credits(), 4u);
  EXPECT_EQ(c.acked_offset(), 300u);
  // The ring wraps: slots 3, 0, 1 are posted next; a run of two ending at slot 0 frees 3 and 0.
  for (int i = 0; i < 3; i++) PostDescribed(c, 100);
  EXPECT_TRUE(c.OnCredit(0, 500, 2).ok());
  EXPECT_EQ(c.free_credits(), 3u);
  EXPECT_EQ(c.CountIn(SS::kDescribed), 1u);
  EXPECT_TRUE(c.OnCredit(1, 600, 1).ok());
  EXPECT_TRUE(c.Idle());
  // Writes go on in ring order: slot 2 is next.
  EXPECT_EQ(*c.Acquire(), 2);
}

TEST(TransportSenderCredits, RejectsHostileRunsWhole) {
  SenderCredits c(4, 100, 0);
  PostDescribed(c, 100);  // slot 0
  PostDescribed(c, 100);  // slot 1
  EXPECT_FALSE(c.OnCredit(1, 200, 5).ok());  // longer than the ring
  EXPECT_FALSE(c.OnCredit(1, 200, 3).ok());  // slot 3 was never handed over
  EXPECT_FALSE(c.OnCredit(2, 200, 2).ok());  // slot 2 was never handed over
  EXPECT_FALSE(c.OnCredit(1, 150, 2).ok());  // before the run's end
  EXPECT_EQ(c.free_credits(), 2u);           // nothing freed by a rejected run
  EXPECT_EQ(c.CountIn(SS::kDescribed), 2u);
  EXPECT_TRUE(c.OnCredit(1, 200, 2).ok());
  EXPECT_FALSE(c.OnCredit(1, 200, 2).ok());  // double credit
  EXPECT_EQ(c.free_credits(), 4u);
}

TEST(TransportReceiverSlots, ChunksEnterTheStreamInRingOrder) {
  ReceiverSlots r(2, 100, 1000);
  EXPECT_TRUE(r.OnChunk(1, 60).ok());  // early: slot 0 comes first in ring order
  EXPECT_FALSE(r.Front());
  EXPECT_EQ(r.expected_offset(), 1000u);
  EXPECT_TRUE(r.OnChunk(0, 100).ok());
  EXPECT_EQ(r.expected_offset(), 1160u);
  auto f = r.Front();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->slot, 0);
  EXPECT_EQ(f->end, 100u);
  EXPECT_FALSE(r.Consume(30));
  EXPECT_EQ(r.Consume(70), std::optional<uint16_t>(0));
  EXPECT_EQ(r.consumed_offset(), 1100u);
  EXPECT_EQ(r.Front()->slot, 1);
  EXPECT_TRUE(r.OnFin(1160).ok());
  EXPECT_FALSE(r.eof());
  EXPECT_EQ(r.Consume(60), std::optional<uint16_t>(1));
  EXPECT_TRUE(r.eof());
  // The ring wraps: slot 0 again.
  ReceiverSlots w(2, 100, 0);
  EXPECT_TRUE(w.OnChunk(0, 10).ok());
  EXPECT_TRUE(w.OnChunk(1, 20).ok());
  EXPECT_EQ(w.Consume(10), std::optional<uint16_t>(0));
  EXPECT_TRUE(w.OnChunk(0, 30).ok());
  EXPECT_EQ(w.Consume(20), std::optional<uint16_t>(1));
  EXPECT_EQ(w.Front()->slot, 0);
  EXPECT_EQ(w.Front()->end, 30u);
  EXPECT_EQ(w.expected_offset(), 60u);
}

TEST(TransportReceiverSlots, EndMarkerMayOvertakeTheLastChunks) {
  ReceiverSlots r(2, 100, 0);
  EXPECT_TRUE(r.OnFin(60).ok());
  EXPECT_FALSE(r.eof());
  EXPECT_TRUE(r.OnChunk(0, 30).ok());
  EXPECT_FALSE(r.fin());
  EXPECT_TRUE(r.OnChunk(1, 30).ok());
  EXPECT_TRUE(r.fin());
  EXPECT_EQ(r.Consume(30), std::optional<uint16_t>(0));
  EXPECT_EQ(r.Consume(30), std::optional<uint16_t>(1));
  EXPECT_TRUE(r.eof());

  ReceiverSlots past(2, 100, 0);
  EXPECT_TRUE(past.OnFin(50).ok());
  EXPECT_TRUE(past.OnChunk(0, 30).ok());
  Status s = past.OnChunk(1, 30);  // 60 > 50
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("past the end"), std::string::npos) << s.ToString();
}

TEST(TransportReceiverSlots, RejectsHostileChunks) {
  ReceiverSlots r(2, 100, 0);
  EXPECT_FALSE(r.OnChunk(2, 10).ok());      // unknown slot
  EXPECT_FALSE(r.OnChunk(65535, 10).ok());  // unknown slot
  EXPECT_FALSE(r.OnChunk(0, 0).ok());       // empty
  EXPECT_FALSE(r.OnChunk(0, 101).ok());     // longer than the slot
  EXPECT_TRUE(r.OnChunk(0, 10).ok());
  EXPECT_FALSE(r.OnChunk(0, 10).ok());      // slot not granted (unconsumed)
  EXPECT_FALSE(r.OnFin(5).ok());            // end before what already arrived
  EXPECT_TRUE(r.OnFin(10).ok());
  EXPECT_FALSE(r.OnFin(10).ok());           // twice
  EXPECT_FALSE(r.OnChunk(1, 10).ok());      // after the end
  EXPECT_EQ(r.filled(), 1u);
}

TEST(TransportChunkImm, RoundTripsAndRejectsWideValues) {
  uint16_t slot;
  uint32_t len;
  ASSERT_TRUE(DecodeChunkImm(EncodeChunkImm(1023, kMaxImmLength), &slot, &len));
  EXPECT_EQ(slot, 1023);
  EXPECT_EQ(len, kMaxImmLength);
  ASSERT_TRUE(DecodeChunkImm(EncodeChunkImm(0, 1), &slot, &len));
  EXPECT_EQ(slot, 0);
  EXPECT_EQ(len, 1u);
  EXPECT_FALSE(DecodeChunkImm(uint64_t{1} << 32, &slot, &len));
}

// Random interleavings of a well-behaved pair, with writes landing in any order: the sender
// never holds a credit for a slot the receiver still has filled, and the receiver's stream is
// exactly the sender's chunks in order.
TEST(TransportCredits, RandomInterleavingKeepsInvariants) {
  std::mt19937 rng(1);
  const uint32_t kSlots = 4, kSize = 64;
  SenderCredits s(kSlots, kSize, 0);
  ReceiverSlots r(kSlots, kSize, 0);
  std::vector<std::pair<uint16_t, uint32_t>> network;  // writes in flight, delivered in any order
  std::deque<std::pair<uint16_t, uint32_t>> sent;       // every chunk, in stream order
  std::vector<std::pair<uint16_t, uint64_t>> credits;  // and back
  for (int step = 0; step < 20000; ++step) {
    switch (rng() % 4) {
      case 0:
        if (auto slot = s.Acquire()) {
          ASSERT_EQ(r.slots(), kSlots);
          uint32_t len = 1 + rng() % kSize;
          s.OnWritePosted(*slot, len);
          s.OnWriteDone(*slot);
          s.OnDescribed(*slot);
          network.push_back({*slot, len});
          sent.push_back({*slot, len});
        }
        break;
      case 1:
        if (!network.empty()) {
          size_t i = rng() % network.size();
          ASSERT_TRUE(r.OnChunk(network[i].first, network[i].second).ok());
          network.erase(network.begin() + static_cast<std::ptrdiff_t>(i));
        }
        break;
      case 2:
        if (auto f = r.Front()) {
          if (f->begin == 0) {
            ASSERT_EQ(f->slot, sent.front().first);
            ASSERT_EQ(f->end, sent.front().second);
          }
          uint32_t n = 1 + rng() % (f->end - f->begin);
          if (auto freed = r.Consume(n)) {
            credits.push_back({*freed, r.consumed_offset()});
            sent.pop_front();
          }
        }
        break;
      default:
        if (!credits.empty()) {
          ASSERT_TRUE(s.OnCredit(credits.front().first, credits.front().second).ok());
          credits.erase(credits.begin());
        }
        break;
    }
    ASSERT_LE(s.posted_offset() - s.acked_offset(), uint64_t{kSlots} * kSize);
    ASSERT_EQ(s.CountIn(SS::kFree) + s.CountIn(SS::kWriting) + s.CountIn(SS::kWritten) +
                  s.CountIn(SS::kDescribed),
              kSlots);
    ASSERT_LE(r.filled() + s.free_credits(), kSlots);
  }
  EXPECT_GT(s.acked_offset(), 10000u);
}

}  // namespace
}  // namespace kv::transport
