// Connection establishment: the MSG connection state machine on the event queue (the rdma_cm
// analogue) and RDM address-vector insertion.
#include <cstdlib>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"
#include "transport/fabric/fabric_setup.h"

namespace kv::transport::fabric {

namespace {

// The connection parameter an active side presents: 'K','V', endpoint role, 0, link id (LE).
constexpr size_t kParamSize = 12;
constexpr char kCtrlRole = 'C';
constexpr char kDataRole = 'D';

std::string MakeParam(char role, uint64_t link_id) {
  std::string p(kParamSize, '\0');
  p[0] = 'K';
  p[1] = 'V';
  p[2] = role;
  std::memcpy(&p[4], &link_id, 8);
  return p;
}

// Returns the role byte of a valid parameter for `link_id`, or 0.
char ParseParam(std::string_view p, uint64_t link_id) {
  if (p.size() < kParamSize || p[0] != 'K' || p[1] != 'V') return 0;
  uint64_t id;
  std::memcpy(&id, p.data() + 4, 8);
  if (id != link_id || (p[2] != kCtrlRole && p[2] != kDataRole)) return 0;
  return p[2];
}

Status EqError(fid_eq* eq, const std::string& what) {
  fi_eq_err_entry e{};
  ssize_t r = fi_eq_readerr(eq, &e, 0);
  if (r < 0) return FiError(what + ": fi_eq_readerr", static_cast<int>(r));
  return FiError(what, -(e.err != 0 ? e.err : FI_EIO));
}

}  // namespace

Status FabricContext::InsertPeer(const PeerAddress& peer) {
  if (peer.kind != kind_ || peer.provider != provider_) {
    return Status::Invalid("peer uses provider '" + peer.provider + "', this side '" + provider_ +
                           "'");
  }
  if (kind_ == EpKind::kMsg) return Status::Ok();
  if (peer.bytes.empty() || peer.data_bytes.empty()) {
    return Status::Invalid("peer sent an empty fabric address");
  }
  for (auto [bytes, out] : {std::pair{&peer.bytes, &peer_}, std::pair{&peer.data_bytes, &data_peer_}}) {
    fi_addr_t addr = FI_ADDR_UNSPEC;
    int n = fi_av_insert(av_.get(), bytes->data(), 1, &addr, 0, nullptr);
    if (n != 1) return FiError("fi_av_insert", n < 0 ? n : -FI_EINVAL);
    *out = addr;
  }
  return Status::Ok();
}

Status FabricContext::ReadyRdm(const EpReady& ready) {
  KV_TRY(ready(ctrl_ep_.get(), false));
  return ready(data_ep_.get(), true);
}

Status FabricContext::Accept(const PeerAddress& peer, uint64_t link_id, int timeout_ms,
                             const EpReady& ready) {
  if (Status s = InsertPeer(peer); !s.ok()) return s;
  if (kind_ == EpKind::kRdm) return ReadyRdm(ready);
  if (!pep_) return Status::Internal("Accept on a context that is not listening");
  return AwaitConnected(link_id, MonoMs() + timeout_ms, ready);
}

Status FabricContext::Connect(const PeerAddress& peer, uint64_t link_id, int timeout_ms,
                              const EpReady& ready) {
  if (Status s = InsertPeer(peer); !s.ok()) return s;
  if (kind_ == EpKind::kRdm) return ReadyRdm(ready);
  if (peer.bytes.empty()) return Status::Invalid("peer sent an empty listener address");
  if (peer.addr_format != info_->addr_format) return Status::Invalid("address format mismatch");
  // An active endpoint is opened for its destination: verbs creates the endpoint's rdma_cm id
  // (address and route resolution) from the info's addresses, and refuses one without a
  // destination (fi_endpoint: EINVAL); the tcp provider takes either.
  InfoPtr active(FiDupinfo(info_.get()));
  if (!active) return Status::IoError("fi_dupinfo failed");
  free(active->dest_addr);
  active->dest_addr = malloc(peer.bytes.size());
  if (active->dest_addr == nullptr) return Status::IoError("out of memory");
  std::memcpy(active->dest_addr, peer.bytes.data(), peer.bytes.size());
  active->dest_addrlen = peer.bytes.size();
  for (char role : {kCtrlRole, kDataRole}) {
    auto ep = MakeEndpoint(active.get());
    if (!ep.ok()) return ep.status();
    if (Status s = ready(ep->get(), role == kDataRole); !s.ok()) return s;
    std::string param = MakeParam(role, link_id);
    int ret = fi_connect(ep->get(), peer.bytes.data(), param.data(), param.size());
    if (ret) return FiError("fi_connect", ret);
    (role == kCtrlRole ? ctrl_ep_ : data_ep_) = std::move(*ep);
  }
  return AwaitConnected(link_id, MonoMs() + timeout_ms, ready);
}

Status FabricContext::OnConnReq(fi_info* info, std::string_view param, uint64_t link_id,
                                const EpReady& ready) {
  char role = ParseParam(param, link_id);
  EpPtr& slot = role == kCtrlRole ? ctrl_ep_ : data_ep_;
  if (role == 0 || slot) {
    LOG_WARNING("transport: rejecting a fabric connection request with a bad parameter");
    fi_reject(pep_.get(), info->handle, nullptr, 0);
    return Status::Ok();
  }
  auto ep = MakeEndpoint(info);
  if (!ep.ok()) return ep.status();
  if (Status s = ready(ep->get(), role == kDataRole); !s.ok()) return s;
  int ret = fi_accept(ep->get(), nullptr, 0);
  if (ret) return FiError("fi_accept", ret);
  slot = std::move(*ep);
  return Status::Ok();
}

Status FabricContext::AwaitConnected(uint64_t link_id, int64_t deadline_ms, const EpReady& ready) {
  bool ctrl_up = false, data_up = false;
  // An fi_eq_cm_entry followed by room for the connection parameter.
  alignas(fi_eq_cm_entry) char buf[sizeof(fi_eq_cm_entry) + 64];
  while (!ctrl_up || !data_up) {
    int64_t left = deadline_ms - MonoMs();
    if (left <= 0) return Status::Closed("fabric connection timed out");
    uint32_t event = 0;
    ssize_t n = fi_eq_sread(eq_.get(), &event, buf, sizeof(buf), static_cast<int>(left), 0);
    if (n == -FI_EAGAIN || n == -FI_ETIMEDOUT) continue;
    if (n == -FI_EAVAIL) return EqError(eq_.get(), "fabric connection");
    if (n < 0) return FiError("fi_eq_sread", static_cast<int>(n));
    auto* entry = reinterpret_cast<fi_eq_cm_entry*>(buf);
    if (event == FI_CONNREQ) {
      InfoPtr info(entry->info);  // the event hands us ownership
      std::string_view param(reinterpret_cast<const char*>(entry->data),
                             static_cast<size_t>(n) - sizeof(fi_eq_cm_entry));
      if (Status s = OnConnReq(info.get(), param, link_id, ready); !s.ok()) return s;
    } else if (event == FI_CONNECTED) {
      if (ctrl_ep_ && entry->fid == &ctrl_ep_->fid) ctrl_up = true;
      if (data_ep_ && entry->fid == &data_ep_->fid) data_up = true;
    } else if (event == FI_SHUTDOWN) {
      return Status::Closed("fabric peer disconnected during setup");
    }
  }
  connected_ = true;
  return Status::Ok();
}

Status FabricContext::CheckEvents() {
  if (!eq_) return Status::Ok();
  alignas(fi_eq_cm_entry) char buf[sizeof(fi_eq_cm_entry) + 64];
  uint32_t event = 0;
  ssize_t n = fi_eq_read(eq_.get(), &event, buf, sizeof(buf), 0);
  if (n == -FI_EAGAIN) return Status::Ok();
  if (n == -FI_EAVAIL) return EqError(eq_.get(), "fabric connection");
  if (n < 0) return FiError("fi_eq_read", static_cast<int>(n));
  if (event == FI_SHUTDOWN) {
    connected_ = false;
    return Status::Closed("fabric peer disconnected");
  }
  if (event == FI_CONNREQ) {
    // A late or stray request after setup: refuse it.
    auto* entry = reinterpret_cast<fi_eq_cm_entry*>(buf);
    InfoPtr info(entry->info);
    if (pep_) fi_reject(pep_.get(), info->handle, nullptr, 0);
  }
  return Status::Ok();
}

}  // namespace kv::transport::fabric
