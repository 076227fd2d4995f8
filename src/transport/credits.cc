#include "transport/credits.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace kv::transport {

SenderCredits::SenderCredits(uint32_t slots, uint32_t slot_size, uint64_t start_offset)
    : slot_size_(slot_size),
      state_(slots, SlotState::kFree),
      slot_end_(slots, start_offset),
      posted_offset_(start_offset),
      described_offset_(start_offset),
      acked_offset_(start_offset) {
  for (uint32_t i = 0; i < slots; ++i) free_.push_back(static_cast<uint16_t>(i));
}

std::optional<uint16_t> SenderCredits::Acquire() {
  if (free_.empty()) return std::nullopt;
  return free_.front();
}

void SenderCredits::OnWritePosted(uint16_t slot, uint32_t len) {
  assert(!free_.empty() && free_.front() == slot && len > 0 && len <= slot_size_);
  free_.pop_front();
  state_[slot] = SlotState::kWriting;
  order_.push_back({slot, len, posted_offset_});
  posted_offset_ += len;
  slot_end_[slot] = posted_offset_;
}

void SenderCredits::OnWriteDone(uint16_t slot) {
  assert(state_[slot] == SlotState::kWriting);
  state_[slot] = SlotState::kWritten;
}

std::optional<SenderCredits::Chunk> SenderCredits::NextToDescribe() const {
  if (order_.empty() || state_[order_.front().slot] != SlotState::kWritten) return std::nullopt;
  const InFlight& f = order_.front();
  return Chunk{f.slot, f.length, f.offset};
}

void SenderCredits::OnDescribed(uint16_t slot) {
  assert(!order_.empty() && order_.front().slot == slot);
  described_offset_ = order_.front().offset + order_.front().length;
  order_.pop_front();
  state_[slot] = SlotState::kDescribed;
}

Status SenderCredits::OnCredit(uint16_t slot, uint64_t acked, uint32_t count) {
  const size_t n = state_.size();
  if (slot >= n) {
    return Status::Corruption("credit for unknown slot " + std::to_string(slot));
  }
  count = std::max<uint32_t>(count, 1);
  if (count > n) {
    return Status::Corruption("credit for " + std::to_string(count) + " slots, more than the " +
                              std::to_string(n) + " of the ring");
  }
  const size_t first = (slot + n - (count - 1)) % n;
  for (uint32_t i = 0; i < count; i++) {
    size_t s = (first + i) % n;
    if (state_[s] != SlotState::kDescribed) {
      return Status::Corruption("credit for slot " + std::to_string(s) +
                                " that was never handed to the receiver (double credit?)");
    }
  }
  if (acked < acked_offset_ || acked < slot_end_[slot] || acked > described_offset_) {
    return Status::Corruption("credit acknowledges offset " + std::to_string(acked) +
                              " outside [" + std::to_string(slot_end_[slot]) + ", " +
                              std::to_string(described_offset_) + "]");
  }
  acked_offset_ = acked;
  for (uint32_t i = 0; i < count; i++) {
    auto s = static_cast<uint16_t>((first + i) % n);
    state_[s] = SlotState::kFree;
    free_.push_back(s);
  }
  return Status::Ok();
}

size_t SenderCredits::CountIn(SlotState s) const {
  size_t n = 0;
  for (SlotState x : state_) n += x == s;
  return n;
}

ReceiverSlots::ReceiverSlots(uint32_t slots, uint32_t slot_size, uint64_t start_offset)
    : slot_size_(slot_size),
      state_(slots, SlotState::kGranted),
      length_(slots, 0),
      consumed_offset_(start_offset),
      expected_offset_(start_offset) {}

Status ReceiverSlots::OnChunk(uint16_t slot, uint32_t length) {
  if (fin_) return Status::Corruption("chunk after end of stream");
  if (slot >= state_.size()) {
    return Status::Corruption("chunk names unknown slot " + std::to_string(slot));
  }
  if (state_[slot] != SlotState::kGranted) {
    return Status::Corruption("chunk in slot " + std::to_string(slot) +
                              " whose credit the sender does not hold");
  }
  if (length == 0 || length > slot_size_) {
    return Status::Corruption("chunk length " + std::to_string(length) + " outside (0, " +
                              std::to_string(slot_size_) + "]");
  }
  state_[slot] = SlotState::kArrived;
  length_[slot] = length;
  return Sequence();
}

Status ReceiverSlots::Sequence() {
  while (state_[next_slot_] == SlotState::kArrived) {
    uint32_t len = length_[next_slot_];
    if (fin_offset_ && expected_offset_ + len > *fin_offset_) {
      return Status::Corruption("chunk runs past the end of stream at " +
                                std::to_string(*fin_offset_));
    }
    state_[next_slot_] = SlotState::kFilled;
    ready_.push_back({next_slot_, 0, len});
    expected_offset_ += len;
    next_slot_ = static_cast<uint16_t>((next_slot_ + 1) % state_.size());
  }
  if (fin_offset_ && expected_offset_ == *fin_offset_) fin_ = true;
  return Status::Ok();
}

Status ReceiverSlots::OnFin(uint64_t offset) {
  if (fin_offset_) return Status::Corruption("second end of stream");
  if (offset < expected_offset_) {
    return Status::Corruption("end of stream at " + std::to_string(offset) + ", before " +
                              std::to_string(expected_offset_) + " bytes already received");
  }
  fin_offset_ = offset;
  return Sequence();
}

std::optional<ReceiverSlots::Ready> ReceiverSlots::Front() const {
  if (ready_.empty()) return std::nullopt;
  const Filled& f = ready_.front();
  return Ready{f.slot, f.begin, f.end};
}

std::optional<uint16_t> ReceiverSlots::Consume(uint32_t n) {
  assert(!ready_.empty());
  Filled& f = ready_.front();
  assert(n <= f.end - f.begin);
  f.begin += n;
  consumed_offset_ += n;
  if (f.begin < f.end) return std::nullopt;
  uint16_t slot = f.slot;
  ready_.pop_front();
  state_[slot] = SlotState::kGranted;
  return slot;
}

}  // namespace kv::transport
