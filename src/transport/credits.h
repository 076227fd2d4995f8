// Credit-based flow control over a ring of equal slots, as two pure state machines (one per end
// of a link) that validate everything the peer says. No I/O here: the channels feed them.
//
// Invariants (checked by credits_test.cc):
//  * The sender holds a credit for a slot from the grant until it posts a write into it; it
//    regains it only from a credit message for a slot whose chunk it described. So it never
//    writes into a slot holding unconsumed data.
//  * The receiver accepts a chunk only for a slot it has granted and not yet seen filled, with
//    0 < length <= slot size, and exposes chunks in ring order: it never exposes bytes outside
//    the ring or out of order.
//  * Each slot is in exactly one state; the counts always add up to the number of slots.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "common/status.h"

namespace kv::transport {

// A chunk is posted, then written, then described to the receiver, then credited back. On
// fabric links the write carries its own description (immediate data), so the sender moves a
// posted chunk through kWritten to kDescribed at once; the states stay separate for senders
// whose description is a message of its own.
class SenderCredits {
 public:
  enum class SlotState : uint8_t {
    kFree,       // credit held: the sender may write into this slot
    kWriting,    // write posted, not complete
    kWritten,    // write delivered, descriptor not sent yet
    kDescribed,  // descriptor sent: waiting for the credit to come back
  };

  // All `slots` credits are granted at setup (the receiver's hello says how many).
  SenderCredits(uint32_t slots, uint32_t slot_size, uint64_t start_offset);

  // Takes a credit for the next chunk; nullopt when none is held.
  std::optional<uint16_t> Acquire();
  // Records a write of `len` stream bytes into `slot` (after Acquire) at the current offset.
  void OnWritePosted(uint16_t slot, uint32_t len);
  void OnWriteDone(uint16_t slot);
  // The oldest written, undescribed chunk, if its predecessors are described (descriptors go
  // out in stream order).
  struct Chunk {
    uint16_t slot;
    uint32_t length;
    uint64_t offset;
  };
  std::optional<Chunk> NextToDescribe() const;
  void OnDescribed(uint16_t slot);
  // A credit message from the peer for `count` slots: the run ending at `slot` in ring order
  // (0 and 1 mean `slot` alone). Rejects unknown slots, runs longer than the ring, slots not
  // awaiting a credit (double or never-granted credits) and acknowledged offsets that go
  // backwards, fall before the returned chunk's end or beyond what was described. All or
  // nothing: a rejected run frees no slot.
  Status OnCredit(uint16_t slot, uint64_t acked_offset, uint32_t count = 1);

  uint64_t posted_offset() const { return posted_offset_; }
  uint64_t described_offset() const { return described_offset_; }
  uint64_t acked_offset() const { return acked_offset_; }
  uint32_t free_credits() const { return static_cast<uint32_t>(free_.size()); }
  uint32_t slots() const { return static_cast<uint32_t>(state_.size()); }
  uint32_t slot_size() const { return slot_size_; }
  size_t CountIn(SlotState s) const;
  bool Idle() const { return free_credits() == slots(); }

 private:
  struct InFlight {
    uint16_t slot;
    uint32_t length;
    uint64_t offset;
  };
  uint32_t slot_size_;
  std::vector<SlotState> state_;
  std::vector<uint64_t> slot_end_;  // stream offset after the chunk in each slot
  std::deque<uint16_t> free_;       // credits held, in grant order
  std::deque<InFlight> order_;      // posted but undescribed chunks, in stream order
  uint64_t posted_offset_;
  uint64_t described_offset_;
  uint64_t acked_offset_;
};

class ReceiverSlots {
 public:
  enum class SlotState : uint8_t {
    kGranted,  // the sender holds the credit; it may write here
    kArrived,  // written, but an earlier slot in ring order has not arrived yet
    kFilled,   // in the stream: data waits for the consumer
  };

  ReceiverSlots(uint32_t slots, uint32_t slot_size, uint64_t start_offset);

  // A chunk written into `slot` (from the write's immediate data). The sender fills slots in
  // ring order (0, 1, ..., n-1, 0, ...), which is also the order credits come back in, so each
  // chunk's stream offset follows from its predecessors; a chunk that arrives before its
  // predecessor waits for it. Rejects unknown slots, slots the sender holds no credit for and
  // lengths outside (0, slot size].
  Status OnChunk(uint16_t slot, uint32_t length);
  // The end-of-stream marker. It travels apart from the writes, so it may arrive before the
  // last chunks: the stream ends once everything up to `offset` has arrived. Rejects an offset
  // before what already arrived, and (later) chunks that would run past it.
  Status OnFin(uint64_t offset);

  struct Ready {
    uint16_t slot;
    uint32_t begin;  // first unconsumed byte within the slot
    uint32_t end;    // bytes of stream data in the slot
  };
  // The oldest filled slot, if any.
  std::optional<Ready> Front() const;
  // Consumes n bytes from the front slot (n <= end - begin). Returns the slot when it became
  // free (its credit must go back to the sender).
  std::optional<uint16_t> Consume(uint32_t n);

  uint64_t consumed_offset() const { return consumed_offset_; }
  uint64_t expected_offset() const { return expected_offset_; }
  bool fin() const { return fin_; }
  bool eof() const { return fin_ && ready_.empty(); }
  uint32_t slots() const { return static_cast<uint32_t>(state_.size()); }
  uint32_t slot_size() const { return slot_size_; }
  size_t filled() const { return ready_.size(); }

 private:
  struct Filled {
    uint16_t slot;
    uint32_t begin, end;
  };
  // Moves arrived chunks that are next in ring order into the stream.
  Status Sequence();

  uint32_t slot_size_;
  std::vector<SlotState> state_;
  std::vector<uint32_t> length_;  // of the chunk in each arrived slot
  std::deque<Filled> ready_;
  uint16_t next_slot_ = 0;  // the slot the next stream chunk comes in
  uint64_t consumed_offset_;
  uint64_t expected_offset_;
  std::optional<uint64_t> fin_offset_;
  bool fin_ = false;  // everything up to fin_offset_ arrived
};

}  // namespace kv::transport
