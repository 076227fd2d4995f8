// The control endpoint's datapath, shared by both ends of a fabric link: registered buffers for
// fixed-size control messages, receives kept posted, a queue of outgoing messages, and the one
// completion queue (control and data endpoints both report to it) drained in batches.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "common/status.h"
#include "transport/fabric/buffer_pool.h"
#include "transport/fabric/fabric_setup.h"
#include "transport/wire.h"

namespace kv::transport::fabric {

// What a completion refers to. FI_CONTEXT/FI_CONTEXT2 mode: the provider owns the leading
// fi_context2 while the operation is outstanding, so it must come first.
struct OpContext {
  fi_context2 fi;
  enum class Kind : uint8_t { kRecv, kSend, kWrite, kDataRecv } kind = Kind::kRecv;
  uint16_t index = 0;
  uint32_t len = 0;
  int64_t posted_us = 0;
};

class ControlPlane {
 public:
  // Receives control messages, completions of our writes and the peer's writes into our
  // memory (their immediate data) during Poll().
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual Status OnMessage(const ControlMsg& m) = 0;
    virtual Status OnWriteDone(OpContext* op) = 0;
    virtual Status OnRemoteWrite(uint64_t imm) = 0;
  };

  // Registers `recvs` receive and `sends` send buffers of 64 bytes (a peer's oversized message
  // fails with a truncation error instead of overrunning anything). `remote_writes`: how many
  // writes with immediate data the peer may have outstanding, for providers where each
  // consumes a posted receive (FabricContext::rx_cq_data()).
  Status Init(FabricContext* ctx, uint64_t link_id, uint32_t recvs, uint32_t sends,
              uint32_t remote_writes = 0);
  // FabricContext::EpReady: posts every receive buffer on the control endpoint, and on the
  // data endpoint the receives writes with immediate data need (called before the connection
  // completes).
  Status PostAllRecvs(fid_ep* ep, bool data);
  // Queues a message (stamped with the link id); Flush() sends as many as buffers allow.
  void Queue(ControlMsg m);
  Status Flush();
  // Reads up to `batch` completions and dispatches them. Returns how many were handled.
  Result<int> Poll(uint32_t batch, Handler& h);
  // fi_trywait on the CQ (and EQ): false when completions are already waiting.
  bool ArmWait();
  bool SendsIdle() const { return queue_.empty() && free_sends_.size() == send_ctx_.size(); }
  // Messages or receives the provider refused for now (EAGAIN): the next poll retries them.
  bool Retrying() const { return !queue_.empty() || !unposted_.empty(); }

 private:
  static constexpr size_t kBufSize = 64;
  Status PostRecv(uint16_t i);
  Status PostDataRecv(uint16_t i);
  Status HandleCompletion(const fi_cq_data_entry& e, Handler& h);

  FabricContext* ctx_ = nullptr;
  uint64_t link_id_ = 0;
  RegisteredSlots bufs_;  // recvs first, then sends
  std::vector<OpContext> recv_ctx_, send_ctx_;
  std::vector<OpContext> data_recv_ctx_;  // zero-length receives on the MSG data endpoint
  fid_ep* data_ep_ = nullptr;
  std::vector<uint16_t> free_sends_;
  std::vector<uint16_t> unposted_;  // receive buffers the provider had no room for yet
  std::deque<ControlMsg> queue_;
  std::vector<fi_cq_data_entry> entries_;
};

}  // namespace kv::transport::fabric
