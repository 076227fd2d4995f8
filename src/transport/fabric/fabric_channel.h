// The libfabric channel. Setup (blobs, opening, registration, connecting) is in
// fabric_channel_setup.cc; the per-chunk path (writes with immediate data, credits) in
// fabric_channel_datapath.cc.
//
// Per link:
//  * receiver: a passive/RDM FabricContext, the ring (credits x max_chunk bytes, the only
//    FI_REMOTE_WRITE memory), control buffers; ReceiverSlots validates the chunks the sender writes.
//  * sender: an active/RDM FabricContext, staging slots (one per credit, FI_WRITE), control
//    buffers; SenderCredits validates the receiver's credits. Each chunk is one fi_writemsg
//    into the granted slot carrying remote CQ data (slot and length, wire.h): the receiver's
//    completion for it appears only once the data has landed, so no separate descriptor (and
//    no delivery-complete round trip, FABRIC.md pitfall 2) is needed. Slots are written in ring
//    order; the receiver derives each chunk's offset from that order.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/channel.h"
#include "transport/chunk_sizer.h"
#include "transport/credits.h"
#include "transport/fabric/buffer_pool.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/doorbell.h"
#include "transport/fabric/fabric_setup.h"

namespace kv::transport::fabric {

FabricOptions ToFabricOptions(const ChannelOptions& o);

// shm keeps its queues, and spin locks, in shared memory: a peer process killed while holding
// one of our locks makes our next fi_cq_read spin forever (seen with libfabric 1.17). So on shm
// each end publishes its pid, and before every call into the provider a link checks that the
// peer still exists; once it is gone the link fails without touching the provider again.
// Returns true (and the reason) when the shm peer `pid` no longer exists.
bool PeerGone(int pid, Status* why);

class FabricSender final : public StreamSender, private ControlPlane::Handler {
 public:
  explicit FabricSender(const ChannelOptions& opts);
  ~FabricSender() override;

  Result<std::string> LocalBlob() override;
  Status Connect(std::string_view peer_blob) override;
  Result<int> Progress() override;
  bool ArmWait() override;
  void WaitFds(std::vector<pollfd>* out) const override;
  void Close() override;
  std::string Describe() const override;

  std::span<uint8_t> Reserve() override;
  Status Commit(size_t n) override;
  Status Finish() override;
  Result<std::unique_ptr<SourceRegion>> RegisterSource(std::span<const uint8_t> bytes) override;
  Result<size_t> WriteFrom(const SourceRegion& region, std::span<const uint8_t> part) override;
  bool WritesInFlight() const override;
  uint64_t start_offset() const override { return start_offset_; }
  uint64_t committed_offset() const override;
  uint64_t acked_offset() const override;
  bool Drained() const override;

  // For tests: the credit state machine (after Connect).
  const SenderCredits* credits() const { return credits_ ? &*credits_ : nullptr; }

 private:
  Status OnMessage(const ControlMsg& m) override;
  Status OnWriteDone(OpContext* op) override;
  Status OnRemoteWrite(uint64_t imm) override;
  // Posts chunk `n` bytes from `src` (staging or a source region, with its descriptor).
  Status CommitFrom(uint16_t slot, const uint8_t* src, void* desc, size_t n);
  Status PostWrite(uint16_t slot);
  Status Advance();
  uint32_t ChunkLimit() const;
  // Rings the receiver's doorbell (when it has one) now, or (`in_flight`) at most every
  // kInFlightRingUs while writes are in flight.
  void Ring(bool in_flight = false);

  std::unique_ptr<FabricContext> ctx_;  // first: released last
  RegisteredSlots staging_;
  ControlPlane control_;
  std::optional<SenderCredits> credits_;
  ChunkSizer sizer_;
  std::vector<OpContext> write_ctx_;
  std::vector<bool> write_pending_;  // the slot's write context still owned by the provider
  struct WriteSource {
    const uint8_t* src = nullptr;
    void* desc = nullptr;
  };
  std::vector<WriteSource> write_src_;  // where each slot's chunk is written from
  std::vector<uint16_t> unposted_;  // writes the provider refused with FI_EAGAIN, in order
  uint64_t link_id_ = 0;
  uint64_t ring_base_ = 0, ring_key_ = 0, ring_stride_ = 0;
  uint64_t start_offset_ = 0;
  bool finishing_ = false, fin_queued_ = false;
  int64_t last_event_ms_ = 0;
  int64_t last_eq_check_ms_ = 0;
  int peer_pid_ = 0;  // shm only: see PeerGone()
  bool connected_ = false;
  std::optional<DoorbellRinger> doorbell_;  // the receiver's, when it named one (doorbell.h)
  int64_t last_ring_us_ = 0;
};

class FabricReceiver final : public StreamReceiver, private ControlPlane::Handler {
 public:
  FabricReceiver(const ChannelOptions& opts, uint64_t resume_offset);
  ~FabricReceiver() override;

  Result<std::string> LocalBlob() override;
  Status Connect(std::string_view peer_blob) override;
  Result<int> Progress() override;
  bool ArmWait() override;
  void WaitFds(std::vector<pollfd>* out) const override;
  void Close() override;
  std::string Describe() const override;

  std::span<const uint8_t> Peek() override;
  Status Consume(size_t n) override;
  bool eof() const override { return slots_ && slots_->eof(); }
  uint64_t consumed_offset() const override;

  // For tests: the ring and its slot state machine.
  const ReceiverSlots* slots() const { return slots_ ? &*slots_ : nullptr; }
  std::span<const uint8_t> ring_memory() const { return {ring_.base(), ring_.bytes()}; }

 private:
  Status OnMessage(const ControlMsg& m) override;
  Status OnWriteDone(OpContext* op) override;
  Status OnRemoteWrite(uint64_t imm) override;
  Status Open();

  std::unique_ptr<FabricContext> ctx_;
  RegisteredSlots ring_;
  ControlPlane control_;
  std::optional<ReceiverSlots> slots_;
  uint64_t link_id_ = 0;
  uint64_t resume_offset_;
  int64_t last_eq_check_ms_ = 0;
  int peer_pid_ = 0;  // shm only: see PeerGone()
  bool connected_ = false;
  // Without a completion fd (shm): what the link sleeps on, if the sender rings it.
  std::optional<DoorbellListener> doorbell_;
  // The sender takes a run of slots in one credit ("credit_runs" in its blob): the run freed
  // so far and not yet sent.
  bool credit_runs_ = false;
  uint16_t run_last_ = 0;
  uint32_t run_count_ = 0;
};

}  // namespace kv::transport::fabric
