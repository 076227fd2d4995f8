// Fabric setup (not the datapath): provider selection, fi_getinfo hints, opening the fabric,
// domain, completion queue, event queue or address vector, endpoints, memory registration, and
// connection establishment. The datapath (posting and polling) lives with its users.
//
// Two endpoint types, one code path:
//  * FI_EP_MSG (`verbs`, `tcp`): the listening side opens a passive endpoint bound to
//    FabricOptions::bind_addr; the other side fi_connect()s twice (control endpoint, then data
//    endpoint) to the listener's address, which the caller carries over its control link.
//    Connection events come on an event queue.
//  * FI_EP_RDM (`shm`, `tcp;ofi_rxm`, `verbs;ofi_rxm`): each side opens a control and a data
//    endpoint and publishes both fi_getname() blobs; the peer inserts both into its address
//    vector and sends messages to the control address, writes to the data address.
//
// Threading: a FabricContext is used by one thread at a time (FI_THREAD_DOMAIN).
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "transport/fabric/fi_objects.h"
#include "transport/wire.h"

namespace kv::transport::fabric {

enum class EpKind { kMsg, kRdm };

struct ProviderSpec {
  std::string name;  // fi_info prov_name, e.g. "tcp", "shm", "tcp;ofi_rxm"
  EpKind kind;
};

// Parses a provider config string: "auto" (verbs, then tcp, both MSG), "verbs", "tcp",
// "sockets" (MSG), "shm", "<core>;ofi_rxm" (RDM). Returns the candidates in preference order.
Result<std::vector<ProviderSpec>> ParseProvider(std::string_view config);

// Makes libfabric initialize its providers (its first fi_getinfo), once per process, with its
// registration cache off (FI_MR_CACHE_MAX_COUNT=0: regions get exactly the access asked for).
// Open() calls it first.
void LoadProviders();

struct FabricOptions {
  std::string provider = "auto";
  // Address MSG listeners bind to (on verbs: the NIC's IP). Ignored by shm.
  std::string bind_addr = "127.0.0.1";
  size_t cq_size = 1024;
  // Ask for a completion queue with a file descriptor (FI_WAIT_FD). Providers that refuse it
  // (shm) get a CQ without one and wait_fd() returns -1: callers fall back to timed polling.
  bool want_wait_fd = true;
};

// An endpoint address as carried over the control link.
struct PeerAddress {
  EpKind kind = EpKind::kMsg;
  std::string provider;  // must match on both sides
  uint32_t addr_format = 0;
  std::string bytes;       // fi_getname() output: the MSG listener, or the RDM control endpoint
  std::string data_bytes;  // RDM: the data endpoint's fi_getname()
};

// The address fields of a setup blob: provider, ep (msg|rdm), addr_format, addr, data_addr.
void PutPeerAddress(Blob& b, const PeerAddress& a);
Result<PeerAddress> GetPeerAddress(const Blob& b);

// Everything one side of a link opens. Members are declared in creation order so destruction
// releases endpoints, then memory regions and queues, then the domain and the fabric.
class FabricContext {
 public:
  // Opens fabric, domain and CQ for the first provider candidate that works. `passive` (MSG
  // only) also opens a listening passive endpoint; on RDM it opens the one endpoint now.
  static Result<std::unique_ptr<FabricContext>> Open(const FabricOptions& opts, bool passive);
  ~FabricContext();
  FabricContext(const FabricContext&) = delete;
  FabricContext& operator=(const FabricContext&) = delete;

  // The address the peer needs: the passive endpoint's (MSG listener) or the RDM endpoint's.
  // Empty bytes for the MSG active side, which has nothing to publish.
  Result<PeerAddress> LocalAddress() const;

  // Called on each endpoint after it is enabled and before its connection completes, so that
  // receives are posted before the peer can send: `data` is false for the control endpoint
  // (on RDM, the one endpoint) and true for the MSG data endpoint.
  using EpReady = std::function<Status(fid_ep* ep, bool data)>;
  // MSG listener: accepts the control and the data connection, blocking up to timeout_ms.
  // Connection requests that do not carry `link_id` (a nonce the listener published on the
  // control link) are rejected. RDM: inserts `peer` into the address vector.
  Status Accept(const PeerAddress& peer, uint64_t link_id, int timeout_ms, const EpReady& ready);
  // MSG active side: connects both endpoints to `peer`, presenting `link_id`, blocking up to
  // timeout_ms. RDM: inserts `peer` into the address vector (calls `ready` first).
  Status Connect(const PeerAddress& peer, uint64_t link_id, int timeout_ms, const EpReady& ready);

  // Registers [buf, buf+len) with `access` (FI_SEND, FI_RECV, FI_WRITE, FI_READ,
  // FI_REMOTE_WRITE, FI_REMOTE_READ). The key is provider-chosen (FI_MR_PROV_KEY) or unique in
  // this domain; a new domain (a new link) never reuses a previous link's MR.
  Result<MrPtr> Register(void* buf, size_t len, uint64_t access);
  // The local descriptor to pass with a registered buffer (null when FI_MR_LOCAL is not required).
  void* Desc(fid_mr* mr) const;
  // The base "address" a peer uses for remote access into a region starting at `buf`: the
  // virtual address with FI_MR_VIRT_ADDR, else 0 (remote addresses are offsets).
  uint64_t RemoteBase(const void* buf) const;

  // Nonblocking check of the event queue (MSG): kClosed after FI_SHUTDOWN or an EQ error.
  Status CheckEvents();
  // Disconnects MSG endpoints (the peer sees FI_SHUTDOWN). Safe to call twice.
  void Shutdown();
  // Closes the endpoints (before the owner releases memory regions they may still reference).
  void CloseEndpoints();

  EpKind kind() const { return kind_; }
  const std::string& provider() const { return provider_; }
  uint64_t mr_mode() const { return mr_mode_; }
  fid_fabric* fabric() const { return fabric_.get(); }
  fid_domain* domain() const { return domain_.get(); }
  fid_cq* cq() const { return cq_.get(); }
  fid_eq* eq() const { return eq_.get(); }
  fid_ep* ctrl_ep() const { return ctrl_ep_.get(); }
  fid_ep* data_ep() const { return data_ep_.get(); }
  // Destination for sends (FI_ADDR_UNSPEC on MSG, the peer's control endpoint on RDM).
  fi_addr_t peer() const { return peer_; }
  // Destination for writes (FI_ADDR_UNSPEC on MSG, the peer's data endpoint on RDM).
  fi_addr_t data_peer() const { return data_peer_; }
  // The CQ's file descriptor, or -1 when the provider has none.
  int wait_fd() const { return wait_fd_; }
  // The EQ's file descriptor (MSG), or -1.
  int eq_fd() const { return eq_fd_; }
  // Posts one RDMA write of [src, src+len) (local descriptor `desc`) from the data endpoint to
  // `remote_addr` under `key` at the peer's data endpoint. With FI_REMOTE_CQ_DATA in `flags`,
  // `data` travels as the write's immediate data. Returns fi_writemsg's result.
  ssize_t PostWrite(const void* src, size_t len, void* desc, uint64_t remote_addr, uint64_t key,
                    void* context, uint64_t flags, uint64_t data = 0) const;
  // The fds a link sleeps on: the CQ's and, with it, the EQ's (none without a CQ fd: shm).
  void AppendWaitFds(std::vector<pollfd>* out) const {
    if (wait_fd_ < 0) return;
    out->push_back({wait_fd_, POLLIN, 0});
    if (eq_fd_ >= 0) out->push_back({eq_fd_, POLLIN, 0});
  }
  size_t max_msg_size() const { return info_->ep_attr->max_msg_size; }
  // Bytes of immediate data a write carries (4 on verbs, 8 on tcp and shm).
  size_t cq_data_size() const { return info_->domain_attr->cq_data_size; }
  // The largest message fi_inject takes (0: none).
  size_t inject_size() const { return info_->tx_attr ? info_->tx_attr->inject_size : 0; }
  // True when a write with immediate data consumes a receive posted at the target
  // (FI_RX_CQ_DATA: verbs); the software providers here do not need one.
  bool rx_cq_data() const { return (info_->mode & FI_RX_CQ_DATA) != 0; }

 private:
  FabricContext() = default;
  Status OpenWith(const ProviderSpec& spec, const FabricOptions& opts, bool passive);
  Status OpenCq(const FabricOptions& opts);
  Result<EpPtr> MakeEndpoint(const fi_info* info);
  Status InsertPeer(const PeerAddress& peer);
  // RDM: the endpoints exist from the start; `ready` runs on both before the peer may send.
  Status ReadyRdm(const EpReady& ready);
  // Runs the MSG connection state machine until both endpoints are connected.
  Status AwaitConnected(uint64_t link_id, int64_t deadline_ms, const EpReady& ready);
  Status OnConnReq(fi_info* info, std::string_view param, uint64_t link_id, const EpReady& ready);

  EpKind kind_ = EpKind::kMsg;
  std::string provider_;
  uint64_t mr_mode_ = 0;
  uint64_t next_key_ = 1;
  fi_addr_t peer_ = FI_ADDR_UNSPEC;
  fi_addr_t data_peer_ = FI_ADDR_UNSPEC;
  int wait_fd_ = -1;
  int eq_fd_ = -1;
  bool connected_ = false;

  InfoPtr info_;
  FabricPtr fabric_;
  DomainPtr domain_;
  EqPtr eq_;
  CqPtr cq_;
  AvPtr av_;
  PepPtr pep_;
  EpPtr ctrl_ep_;
  EpPtr data_ep_;
};

}  // namespace kv::transport::fabric
