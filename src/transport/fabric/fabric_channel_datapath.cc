// Fabric channel datapath: chunk writes with immediate data, credits, completion polling.
#include <algorithm>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"
#include "transport/fabric/fabric_channel.h"

namespace kv::transport::fabric {

namespace {
// How often (at most) an idle poll also reads the event queue for disconnects.
constexpr int64_t kEqCheckMs = 1;
// How often (at most) the sender rings the receiver's doorbell while writes are in flight: a
// provider may move a write in steps that need the receiver's progress (shm's segmented
// copies when it cannot copy across processes directly).
constexpr int64_t kInFlightRingUs = 200;

Status RemoteError(const ControlMsg& m) {
  return Status::Closed("peer closed the link with error code " + std::to_string(m.code));
}
}  // namespace

// ---- sender ----

uint32_t FabricSender::ChunkLimit() const {
  return std::min({sizer_.chunk(), credits_->slot_size(), kMaxImmLength});
}

std::span<uint8_t> FabricSender::Reserve() {
  if (!status_.ok() || !credits_ || finishing_) return {};
  auto slot = credits_->Acquire();
  // The credit can come back before our own completion of the slot's last write (the
  // receiver consumed it already): the staging buffer is ours again only after that.
  if (!slot || write_pending_[*slot]) return {};
  return {staging_.slot(*slot), ChunkLimit()};
}

Status FabricSender::Commit(size_t n) {
  if (!status_.ok()) return status_;
  if (!credits_ || finishing_) return Status::Invalid("Commit after Finish or before Connect");
  auto slot = credits_->Acquire();
  if (!slot || write_pending_[*slot] || n == 0 || n > ChunkLimit()) {
    return Status::Invalid("Commit without a reservation");
  }
  return CommitFrom(*slot, staging_.slot(*slot), staging_.desc(), n);
}

Status FabricSender::CommitFrom(uint16_t slot, const uint8_t* src, void* desc, size_t n) {
  if (Status why; PeerGone(peer_pid_, &why)) return Fail(why);
  credits_->OnWritePosted(slot, static_cast<uint32_t>(n));
  OpContext& op = write_ctx_[slot];
  op.len = static_cast<uint32_t>(n);
  write_src_[slot] = {src, desc};
  ++stats_.chunks;
  stats_.bytes += n;
  stats_.chunk_size = ChunkLimit();
  if (!unposted_.empty()) {
    unposted_.push_back(slot);  // keep the provider's order equal to stream order
    return Status::Ok();
  }
  if (Status s = PostWrite(slot); !s.ok()) return Fail(s);
  return Status::Ok();
}

namespace {
// A region registered with the provider (mr set: written straight from its memory) or refused
// by it (mr null: copied through staging buffers).
class FabricSourceRegion : public SourceRegion {
 public:
  FabricSourceRegion(std::span<const uint8_t> bytes, MrPtr mr, void* desc)
      : SourceRegion(bytes), mr_(std::move(mr)), desc_(desc) {}
  void* desc() const { return desc_; }
  bool zero_copy() const override { return mr_ != nullptr; }

 private:
  MrPtr mr_;
  void* desc_;
};
}  // namespace

Result<std::unique_ptr<SourceRegion>> FabricSender::RegisterSource(
    std::span<const uint8_t> bytes) {
  if (!ctx_) return Status::Invalid("RegisterSource before Connect");
  // Local reads only (FI_WRITE: the source of our writes); nothing remote may touch it.
  // libfabric 1.17's verbs provider turns FI_WRITE into IBV_ACCESS_LOCAL_WRITE, which the
  // kernel refuses for memory this process cannot write (a snapshot file mapped read-only:
  // fi_mr_reg fails with EFAULT); such a region is registered with FI_SEND instead, which verbs
  // maps to local read access, all the source of a write needs.
  auto* base = const_cast<uint8_t*>(bytes.data());
  auto mr = ctx_->Register(base, bytes.size(), FI_WRITE);
  if (!mr.ok()) {
    auto read_only = ctx_->Register(base, bytes.size(), FI_SEND);
    if (!read_only.ok()) {
      // verbs pins the pages, and the kernel will not pin some memory at all (a read-only
      // MAP_SHARED file mapping: EFAULT whatever the access): copy it instead.
      LOG_WARNING(
          "transport: %s cannot register a %zu-byte source region (%s): writing it "
          "through staging buffers",
          ctx_->provider().c_str(), bytes.size(), mr.status().message().c_str());
      return std::unique_ptr<SourceRegion>(new FabricSourceRegion(bytes, nullptr, nullptr));
    }
    mr = std::move(read_only);
  }
  void* desc = ctx_->Desc(mr->get());
  return std::unique_ptr<SourceRegion>(new FabricSourceRegion(bytes, std::move(*mr), desc));
}

Result<size_t> FabricSender::WriteFrom(const SourceRegion& region, std::span<const uint8_t> part) {
  const auto* fr = dynamic_cast<const FabricSourceRegion*>(&region);
  if (fr == nullptr || part.data() < region.bytes().data() ||
      part.data() + part.size() > region.bytes().data() + region.bytes().size()) {
    return Status::Invalid("WriteFrom outside a region this link registered");
  }
  if (!status_.ok()) return status_;
  if (!credits_ || finishing_) return Status::Invalid("WriteFrom after Finish or before Connect");
  if (!fr->zero_copy()) return Write(part);
  size_t taken = 0;
  while (taken < part.size()) {
    auto slot = credits_->Acquire();
    if (!slot || write_pending_[*slot]) break;
    size_t n = std::min<size_t>(ChunkLimit(), part.size() - taken);
    if (Status s = CommitFrom(*slot, part.data() + taken, fr->desc(), n); !s.ok()) return s;
    taken += n;
  }
  return taken;
}

bool FabricSender::WritesInFlight() const {
  for (bool p : write_pending_) {
    if (p) return true;
  }
  return !unposted_.empty();
}

Status FabricSender::PostWrite(uint16_t slot) {
  OpContext& op = write_ctx_[slot];
  op.posted_us = MonoUs();
  // The immediate data describes the chunk; the receiver's completion for it follows the data.
  ssize_t r = ctx_->PostWrite(write_src_[slot].src, op.len, write_src_[slot].desc,
                              ring_base_ + slot * ring_stride_, ring_key_, &op,
                              FI_REMOTE_CQ_DATA | FI_COMPLETION, EncodeChunkImm(slot, op.len));
  if (r == -FI_EAGAIN) {
    unposted_.insert(unposted_.begin(), slot);
    return Status::Ok();
  }
  if (r) return FiError("fi_writemsg", static_cast<int>(r));
  // Posted is described: the receiver may consume the chunk and return its credit before our
  // local completion arrives.
  write_pending_[slot] = true;
  Ring();
  credits_->OnWriteDone(slot);
  if (auto c = credits_->NextToDescribe(); c && c->slot == slot) {
    credits_->OnDescribed(slot);
  } else {
    return Status::Internal("fabric sender posted a write out of stream order");
  }
  return Status::Ok();
}

Status FabricSender::OnWriteDone(OpContext* op) {
  int64_t now = MonoUs();
  sizer_.OnCompletion(op->len, now - op->posted_us, now);
  write_pending_[op->index] = false;
  return Status::Ok();
}

Status FabricSender::OnRemoteWrite(uint64_t) {
  return Status::Corruption("receiver wrote into the sender's memory");
}

Status FabricSender::OnMessage(const ControlMsg& m) {
  switch (m.type) {
    case MsgType::kCredit:
      ++stats_.credit_msgs;
      return credits_->OnCredit(m.slot, m.offset, m.length);
    case MsgType::kError:
      return RemoteError(m);
    default:
      return Status::Corruption(std::string("receiver sent a ") + MsgTypeName(m.type) +
                                " message");
  }
}

// Posts writes the provider refused earlier, in order, and sends the end marker once every
// write before it is posted.
Status FabricSender::Advance() {
  while (!unposted_.empty()) {
    uint16_t slot = unposted_.front();
    unposted_.erase(unposted_.begin());
    if (Status s = PostWrite(slot); !s.ok()) return s;
    if (!unposted_.empty() && unposted_.front() == slot) break;  // still EAGAIN
  }
  if (finishing_ && !fin_queued_ && unposted_.empty() &&
      credits_->described_offset() == credits_->posted_offset()) {
    control_.Queue({MsgType::kFin, 0, 0, 0, credits_->posted_offset(), 0});
    fin_queued_ = true;
    Status s = control_.Flush();
    Ring();
    return s;
  }
  return control_.Flush();
}

void FabricSender::Ring(bool in_flight) {
  if (!doorbell_ || (in_flight && !WritesInFlight())) return;
  int64_t now = MonoUs();
  if (in_flight && now - last_ring_us_ < kInFlightRingUs) return;
  doorbell_->Ring();
  last_ring_us_ = now;
}

Result<int> FabricSender::Progress() {
  if (!status_.ok()) return status_;
  if (!credits_) return Fail(Status::Invalid("Progress before Connect"));
  if (Status why; PeerGone(peer_pid_, &why)) return Fail(why);
  auto n = control_.Poll(opts_.cq_batch, *this);
  if (!n.ok()) {
    sizer_.OnError(MonoUs());
    if (n.status().code() == Code::kCorruption) {
      control_.Queue({MsgType::kError, 0, 0, static_cast<uint32_t>(n.status().code()), 0, 0});
      (void)control_.Flush();
    }
    return Fail(n.status());
  }
  if (Status s = Advance(); !s.ok()) return Fail(s);
  Ring(/*in_flight=*/true);
  int64_t now = MonoMs();
  if (*n > 0) {
    last_event_ms_ = now;
    return *n;
  }
  if (now - last_eq_check_ms_ >= kEqCheckMs) {
    last_eq_check_ms_ = now;
    if (Status s = ctx_->CheckEvents(); !s.ok()) return Fail(s);
  }
  // Stalled peer: something is outstanding (a write, a chunk's credit, the end marker)
  // and nothing has happened for stall_timeout_ms.
  bool waiting = !credits_->Idle() || !control_.SendsIdle();
  if (waiting && now - last_event_ms_ > opts_.stall_timeout_ms) {
    return Fail(Status::Closed("fabric peer stalled: no completion or credit for " +
                               std::to_string(now - last_event_ms_) + " ms"));
  }
  if (!waiting) last_event_ms_ = now;
  return 0;
}

Status FabricSender::Finish() {
  if (!status_.ok()) return status_;
  finishing_ = true;
  if (Status s = Advance(); !s.ok()) return Fail(s);
  return Status::Ok();
}

uint64_t FabricSender::committed_offset() const {
  return credits_ ? credits_->posted_offset() : start_offset_;
}

uint64_t FabricSender::acked_offset() const {
  return credits_ ? credits_->acked_offset() : start_offset_;
}

bool FabricSender::Drained() const {
  return credits_ && fin_queued_ && control_.SendsIdle() &&
         credits_->acked_offset() == credits_->posted_offset();
}

// ---- receiver ----

Status FabricReceiver::OnWriteDone(OpContext*) {
  return Status::Internal("receiver got a write completion");
}

Status FabricReceiver::OnRemoteWrite(uint64_t imm) {
  uint16_t slot;
  uint32_t length;
  if (!DecodeChunkImm(imm, &slot, &length)) {
    return Status::Corruption("write carries malformed immediate data " + std::to_string(imm));
  }
  return slots_->OnChunk(slot, length);
}

Status FabricReceiver::OnMessage(const ControlMsg& m) {
  switch (m.type) {
    case MsgType::kFin:
      return slots_->OnFin(m.offset);
    case MsgType::kError:
      return RemoteError(m);
    default:
      return Status::Corruption(std::string("sender sent a ") + MsgTypeName(m.type) + " message");
  }
}

Result<int> FabricReceiver::Progress() {
  if (!status_.ok()) return status_;
  if (!slots_) return Fail(Status::Invalid("Progress before Connect"));
  if (Status why; PeerGone(peer_pid_, &why)) return Fail(why);
  auto n = control_.Poll(opts_.cq_batch, *this);
  if (!n.ok()) {
    if (n.status().code() == Code::kCorruption) {
      // Tell the sender why before closing (best effort; the link is dead either way).
      control_.Queue({MsgType::kError, 0, 0, static_cast<uint32_t>(n.status().code()), 0, 0});
      (void)control_.Flush();
    }
    return Fail(n.status());
  }
  if (*n == 0) {
    int64_t now = MonoMs();
    if (now - last_eq_check_ms_ >= kEqCheckMs) {
      last_eq_check_ms_ = now;
      if (Status s = ctx_->CheckEvents(); !s.ok() && !slots_->eof()) return Fail(s);
    }
  }
  return *n;
}

std::span<const uint8_t> FabricReceiver::Peek() {
  if (!status_.ok() || !slots_) return {};
  auto f = slots_->Front();
  if (!f) return {};
  return {ring_.slot(f->slot) + f->begin, f->end - f->begin};
}

Status FabricReceiver::Consume(size_t n) {
  if (!status_.ok()) return status_;
  if (Status why; PeerGone(peer_pid_, &why)) return Fail(why);
  while (n > 0) {
    auto f = slots_->Front();
    if (!f) return Status::Invalid("Consume beyond the received bytes");
    uint32_t take = static_cast<uint32_t>(std::min<size_t>(n, f->end - f->begin));
    n -= take;
    if (auto freed = slots_->Consume(take)) {
      if (credit_runs_) {
        run_last_ = *freed;
        ++run_count_;
      } else {
        control_.Queue({MsgType::kCredit, *freed, 0, 0, slots_->consumed_offset(), 0});
      }
    }
  }
  // One message for the slots freed in a row: sent once nothing more is ready (the consumer
  // is about to wait, and the sender may be waiting for these), or when half the ring waits
  // in it.
  if (run_count_ > 0 && (!slots_->Front() || run_count_ * 2 >= slots_->slots())) {
    control_.Queue({MsgType::kCredit, run_last_, run_count_, 0, slots_->consumed_offset(), 0});
    run_count_ = 0;
  }
  if (Status s = control_.Flush(); !s.ok()) return Fail(s);
  return Status::Ok();
}

uint64_t FabricReceiver::consumed_offset() const {
  return slots_ ? slots_->consumed_offset() : resume_offset_;
}

}  // namespace kv::transport::fabric
