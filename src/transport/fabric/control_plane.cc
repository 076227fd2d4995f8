#include "transport/fabric/control_plane.h"

#include <cstring>

#include "common/clock.h"

namespace kv::transport::fabric {

Status ControlPlane::Init(FabricContext* ctx, uint64_t link_id, uint32_t recvs, uint32_t sends,
                          uint32_t remote_writes) {
  ctx_ = ctx;
  link_id_ = link_id;
  if (ctx->rx_cq_data()) {
    data_recv_ctx_.resize(remote_writes);
    for (uint32_t i = 0; i < remote_writes; ++i) {
      data_recv_ctx_[i].kind = OpContext::Kind::kDataRecv;
      data_recv_ctx_[i].index = static_cast<uint16_t>(i);
    }
  }
  auto bufs = RegisteredSlots::Create(*ctx, kBufSize, recvs + sends, FI_SEND | FI_RECV);
  if (!bufs.ok()) return bufs.status();
  bufs_ = std::move(*bufs);
  recv_ctx_.resize(recvs);
  send_ctx_.resize(sends);
  for (uint32_t i = 0; i < recvs; ++i) {
    recv_ctx_[i].kind = OpContext::Kind::kRecv;
    recv_ctx_[i].index = static_cast<uint16_t>(i);
  }
  for (uint32_t i = 0; i < sends; ++i) {
    send_ctx_[i].kind = OpContext::Kind::kSend;
    send_ctx_[i].index = static_cast<uint16_t>(i);
    free_sends_.push_back(static_cast<uint16_t>(sends - 1 - i));
  }
  return Status::Ok();
}

Status ControlPlane::PostRecv(uint16_t i) {
  ssize_t r = fi_recv(ctx_->ctrl_ep(), bufs_.slot(i), kBufSize, bufs_.desc(), FI_ADDR_UNSPEC,
                      &recv_ctx_[i]);
  if (r == -FI_EAGAIN) {
    unposted_.push_back(i);  // reposted by the next Flush()
    return Status::Ok();
  }
  if (r) return FiError("fi_recv", static_cast<int>(r));
  return Status::Ok();
}

Status ControlPlane::PostDataRecv(uint16_t i) {
  ssize_t r = fi_recv(data_ep_, nullptr, 0, nullptr, FI_ADDR_UNSPEC, &data_recv_ctx_[i]);
  if (r) return FiError("fi_recv(data)", static_cast<int>(r));
  return Status::Ok();
}

Status ControlPlane::PostAllRecvs(fid_ep* ep, bool data) {
  if (data) {
    data_ep_ = ep;
    for (uint16_t i = 0; i < data_recv_ctx_.size(); ++i) {
      if (Status s = PostDataRecv(i); !s.ok()) return s;
    }
    return Status::Ok();
  }
  for (uint16_t i = 0; i < recv_ctx_.size(); ++i) {
    ssize_t r = fi_recv(ep, bufs_.slot(i), kBufSize, bufs_.desc(), FI_ADDR_UNSPEC, &recv_ctx_[i]);
    if (r) return FiError("fi_recv", static_cast<int>(r));
  }
  return Status::Ok();
}

void ControlPlane::Queue(ControlMsg m) {
  m.link_id = link_id_;
  queue_.push_back(m);
}

Status ControlPlane::Flush() {
  while (!unposted_.empty()) {
    uint16_t i = unposted_.back();
    unposted_.pop_back();
    if (Status s = PostRecv(i); !s.ok()) return s;
    if (!unposted_.empty() && unposted_.back() == i) break;  // still busy
  }
  // A credit the provider can inject needs no buffer of ours once posted, and makes no
  // completion: no completion queue entry (and, where the queue has a wait fd, no signal of
  // it) for each. FIN and ERROR keep their send completions (SendsIdle waits for them).
  bool inject = kControlMsgSize <= ctx_->inject_size();
  while (inject && !queue_.empty() && queue_.front().type == MsgType::kCredit) {
    uint8_t buf[kBufSize];
    EncodeControl(queue_.front(), buf);
    ssize_t r = fi_inject(ctx_->ctrl_ep(), buf, kControlMsgSize, ctx_->peer());
    if (r == -FI_EAGAIN) return Status::Ok();  // the provider is busy: retry on the next poll
    if (r) return FiError("fi_inject", static_cast<int>(r));
    queue_.pop_front();
  }
  while (!queue_.empty() && !free_sends_.empty()) {
    uint16_t i = free_sends_.back();
    uint8_t* buf = bufs_.slot(recv_ctx_.size() + i);
    EncodeControl(queue_.front(), buf);
    ssize_t r = fi_send(ctx_->ctrl_ep(), buf, kControlMsgSize, bufs_.desc(), ctx_->peer(),
                        &send_ctx_[i]);
    if (r == -FI_EAGAIN) return Status::Ok();  // the provider is busy: retry on the next poll
    if (r) return FiError("fi_send", static_cast<int>(r));
    free_sends_.pop_back();
    queue_.pop_front();
  }
  return Status::Ok();
}

Status ControlPlane::HandleCompletion(const fi_cq_data_entry& e, Handler& h) {
  auto* op = static_cast<OpContext*>(e.op_context);
  if (e.flags & FI_REMOTE_CQ_DATA) {
    // The peer's write landed in our memory. Where it consumed a posted receive on the data
    // endpoint (FI_RX_CQ_DATA), put that back first.
    if (op != nullptr && op->kind == OpContext::Kind::kDataRecv) {
      if (Status s = PostDataRecv(op->index); !s.ok()) return s;
    }
    return h.OnRemoteWrite(e.data);
  }
  if (op == nullptr) return Status::Internal("completion without a context");
  switch (op->kind) {
    case OpContext::Kind::kDataRecv:
      return Status::Corruption("peer sent a message on the data endpoint");
    case OpContext::Kind::kSend:
      free_sends_.push_back(op->index);
      return Status::Ok();
    case OpContext::Kind::kWrite:
      return h.OnWriteDone(op);
    case OpContext::Kind::kRecv: {
      auto msg = DecodeControl({bufs_.slot(op->index), e.len}, link_id_);
      if (!msg.ok()) return Status(Code::kCorruption, "peer sent " + msg.status().message());
      if (Status s = h.OnMessage(*msg); !s.ok()) return s;
      std::memset(bufs_.slot(op->index), 0, kBufSize);
      return PostRecv(op->index);
    }
  }
  return Status::Internal("unknown completion context");
}

Result<int> ControlPlane::Poll(uint32_t batch, Handler& h) {
  if (entries_.size() < batch) entries_.resize(batch);
  ssize_t n = fi_cq_read(ctx_->cq(), entries_.data(), batch);
  if (n == -FI_EAGAIN) n = 0;
  if (n == -FI_EAVAIL) return CqError(ctx_->cq(), "fabric");
  if (n < 0) return FiError("fi_cq_read", static_cast<int>(n));
  for (ssize_t i = 0; i < n; ++i) {
    if (Status s = HandleCompletion(entries_[i], h); !s.ok()) return s;
  }
  if (Status s = Flush(); !s.ok()) return s;
  return static_cast<int>(n);
}

bool ControlPlane::ArmWait() {
  // The EQ's fd is a wait set too: without fi_trywait on it, it stays readable forever.
  fid* fids[2] = {&ctx_->cq()->fid, nullptr};
  int n = 1;
  if (ctx_->eq() != nullptr && ctx_->eq_fd() >= 0) fids[n++] = &ctx_->eq()->fid;
  return fi_trywait(ctx_->fabric(), fids, n) == FI_SUCCESS;
}

}  // namespace kv::transport::fabric
