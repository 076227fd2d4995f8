#include "transport/fabric/fabric_setup.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <random>

#include "common/clock.h"
#include "common/logging.h"

namespace kv::transport::fabric {

Result<std::vector<ProviderSpec>> ParseProvider(std::string_view config) {
  std::string c(config);
  if (c == "auto") return std::vector<ProviderSpec>{{"verbs", EpKind::kMsg}, {"tcp", EpKind::kMsg}};
  if (c == "verbs" || c == "tcp" || c == "sockets") {
    return std::vector<ProviderSpec>{{c, EpKind::kMsg}};
  }
  if (c == "shm") return std::vector<ProviderSpec>{{c, EpKind::kRdm}};
  constexpr std::string_view kRxm = ";ofi_rxm";
  if (c.size() > kRxm.size() && std::string_view(c).substr(c.size() - kRxm.size()) == kRxm) {
    return std::vector<ProviderSpec>{{c, EpKind::kRdm}};
  }
  return Status::Invalid("unknown fabric provider '" + c +
                         "' (auto, verbs, tcp, sockets, shm, <core>;ofi_rxm)");
}

namespace {

// The hints: messages and RMA, the verbs memory-registration modes offered (and the returned
// mr_mode obeyed), FI_CONTEXT/FI_CONTEXT2 accepted (every operation context here starts with
// an fi_context2), FI_RX_CQ_DATA accepted (writes with immediate data may consume a posted
// receive, as on verbs: the control plane then keeps receives posted for them). FI_MR_ENDPOINT is not offered: the receive ring is registered before the MSG
// endpoints exist, and none of verbs/tcp/shm needs it.
InfoPtr MakeHints(const ProviderSpec& spec, bool ordered) {
  InfoPtr hints(FiDupinfo(nullptr));
  if (!hints) std::abort();
  hints->caps = FI_MSG | FI_RMA;
  hints->mode = FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA;
  hints->ep_attr->type = spec.kind == EpKind::kMsg ? FI_EP_MSG : FI_EP_RDM;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  if (ordered) {
    // Credits must arrive in the order they were sent.
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
  }
  hints->fabric_attr->prov_name = strdup(spec.name.c_str());
  return hints;
}

Result<InfoPtr> GetInfo(const ProviderSpec& spec, const FabricOptions& opts) {
  const char* node = spec.name == "shm" ? nullptr : opts.bind_addr.c_str();
  uint64_t flags = node != nullptr ? FI_SOURCE : 0;
  int ret = -FI_ENODATA;
  for (bool ordered : {true, false}) {
    InfoPtr hints = MakeHints(spec, ordered);
    fi_info* info = nullptr;
    ret = FiGetinfo(kFiVersion, node, nullptr, flags, hints.get(), &info);
    if (ret == 0 && info != nullptr) {
      if (!ordered && spec.kind == EpKind::kRdm) {
        LOG_WARNING("transport: provider %s does not promise send-after-send order",
                    spec.name.c_str());
      }
      return InfoPtr(info);
    }
  }
  return FiError("FiGetinfo(" + spec.name + ")", ret);
}

}  // namespace

void LoadProviders() {
  static std::once_flag once;
  std::call_once(once, [] {
    // libfabric's registration cache (verbs) registers every region with full access, local
    // and remote write included, whatever access the caller asked for: a sender's staging
    // slots would be remotely writable and a read-only snapshot mapping could not be
    // registered at all (EFAULT). A link registers its regions once at setup, so the cache
    // saves nothing; it is switched off before the library reads its settings.
    setenv("FI_MR_CACHE_MAX_COUNT", "0", 1);
    int64_t start = MonoMs();
    // Any query initializes the library; shm's is the cheapest to answer.
    InfoPtr hints = MakeHints({"shm", EpKind::kRdm}, false);
    fi_info* info = nullptr;
    if (FiGetinfo(kFiVersion, nullptr, nullptr, 0, hints.get(), &info) == 0) FiFreeinfo(info);
    LOG_DEBUG("transport: fabric providers loaded in %lld ms",
              static_cast<long long>(MonoMs() - start));
  });
}

Result<std::unique_ptr<FabricContext>> FabricContext::Open(const FabricOptions& opts,
                                                           bool passive) {
  LoadProviders();  // first: it sets up the library's environment
  auto specs = ParseProvider(opts.provider);
  if (!specs.ok()) return specs.status();
  std::string errors;
  for (const ProviderSpec& spec : *specs) {
    std::unique_ptr<FabricContext> ctx(new FabricContext());
    Status s = ctx->OpenWith(spec, opts, passive);
    if (s.ok()) return ctx;
    if (!errors.empty()) errors += "; ";
    errors += s.message();
  }
  return Status::IoError("no usable fabric provider for '" + opts.provider + "': " + errors);
}

FabricContext::~FabricContext() { CloseEndpoints(); }

namespace {

// libfabric's shm provider names each endpoint's region /dev/shm/<pid>:<n>:<n> and unlinks it
// when the endpoint closes; a process that is killed leaves its regions behind. They hold
// memory, and a later process that gets the same pid cannot open an endpoint (fi_enable:
// EBUSY). Once per process, before its first shm endpoint, this removes the regions named
// after this pid (none of them can be this process's yet) and those of processes that no
// longer exist (left alone while younger than a minute, in case the pid was just reused).
void RemoveStaleShmRegions() {
  static std::once_flag once;
  std::call_once(once, [] {
    DIR* dir = opendir("/dev/shm");
    if (!dir) return;
    pid_t self = getpid();
    time_t now = time(nullptr);
    int removed = 0;
    while (dirent* d = readdir(dir)) {
      unsigned long pid = 0;
      unsigned a = 0, b = 0;
      char tail = 0;
      if (sscanf(d->d_name, "%lu:%u:%u%c", &pid, &a, &b, &tail) != 3 || pid == 0) continue;
      std::string path = std::string("/dev/shm/") + d->d_name;
      bool stale = static_cast<pid_t>(pid) == self;
      if (!stale && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
        struct stat st;
        stale = stat(path.c_str(), &st) == 0 && now - st.st_mtime > 60;
      }
      if (stale && unlink(path.c_str()) == 0) removed++;
    }
    closedir(dir);
    if (removed > 0) {
      LOG_NOTICE("Removed %d shared-memory region(s) of fabric endpoints left by processes that "
                 "no longer run", removed);
    }
  });
}

}  // namespace

Status FabricContext::OpenWith(const ProviderSpec& spec, const FabricOptions& opts, bool passive) {
  kind_ = spec.kind;
  if (spec.name == "shm") RemoveStaleShmRegions();
  auto info = GetInfo(spec, opts);
  if (!info.ok()) return info.status();
  info_ = std::move(*info);
  if (info_->domain_attr->cq_data_size < 4) {
    // Chunks are described by the write's 32-bit immediate data (wire.h).
    return Status::IoError("provider " + spec.name + " cannot carry remote CQ data (" +
                           std::to_string(info_->domain_attr->cq_data_size) + " bytes)");
  }
  provider_ = spec.name;
  mr_mode_ = info_->domain_attr->mr_mode;
  next_key_ = std::random_device{}() & 0xffff;

  fid_fabric* fab = nullptr;
  int ret = FiFabric(info_->fabric_attr, &fab, nullptr);
  if (ret) return FiError("fi_fabric", ret);
  fabric_.reset(fab);
  fid_domain* dom = nullptr;
  ret = fi_domain(fabric_.get(), info_.get(), &dom, nullptr);
  if (ret) return FiError("fi_domain", ret);
  domain_.reset(dom);
  if (Status s = OpenCq(opts); !s.ok()) return s;

  if (kind_ == EpKind::kMsg) {
    fi_eq_attr eq_attr{};
    eq_attr.size = 64;
    eq_attr.wait_obj = FI_WAIT_FD;
    fid_eq* eq = nullptr;
    ret = fi_eq_open(fabric_.get(), &eq_attr, &eq, nullptr);
    if (ret) {
      eq_attr.wait_obj = FI_WAIT_UNSPEC;
      ret = fi_eq_open(fabric_.get(), &eq_attr, &eq, nullptr);
    } else if (fi_control(&eq->fid, FI_GETWAIT, &eq_fd_) != 0) {
      eq_fd_ = -1;
    }
    if (ret) return FiError("fi_eq_open", ret);
    eq_.reset(eq);
    if (passive) {
      fid_pep* pep = nullptr;
      ret = fi_passive_ep(fabric_.get(), info_.get(), &pep, nullptr);
      if (ret) return FiError("fi_passive_ep", ret);
      pep_.reset(pep);
      if ((ret = fi_pep_bind(pep_.get(), &eq_->fid, 0))) return FiError("fi_pep_bind", ret);
      if ((ret = fi_listen(pep_.get()))) return FiError("fi_listen", ret);
    }
    return Status::Ok();
  }

  fi_av_attr av_attr{};
  av_attr.type = FI_AV_UNSPEC;
  av_attr.count = 4;
  fid_av* av = nullptr;
  ret = fi_av_open(domain_.get(), &av_attr, &av, nullptr);
  if (ret) return FiError("fi_av_open", ret);
  av_.reset(av);
  for (EpPtr* slot : {&ctrl_ep_, &data_ep_}) {
    auto ep = MakeEndpoint(info_.get());
    if (!ep.ok()) return ep.status();
    *slot = std::move(*ep);
  }
  return Status::Ok();
}

Status FabricContext::OpenCq(const FabricOptions& opts) {
  fi_cq_attr attr{};
  attr.size = opts.cq_size;
  attr.format = FI_CQ_FORMAT_DATA;
  attr.wait_obj = opts.want_wait_fd ? FI_WAIT_FD : FI_WAIT_NONE;
  fid_cq* cq = nullptr;
  int ret = fi_cq_open(domain_.get(), &attr, &cq, nullptr);
  if (ret && attr.wait_obj == FI_WAIT_FD) {
    // shm (and some others) have no CQ fd: progress is driven by timed polling instead.
    attr.wait_obj = FI_WAIT_NONE;
    ret = fi_cq_open(domain_.get(), &attr, &cq, nullptr);
  }
  if (ret) return FiError("fi_cq_open", ret);
  cq_.reset(cq);
  wait_fd_ = -1;
  if (attr.wait_obj == FI_WAIT_FD && fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) != 0) {
    wait_fd_ = -1;
  }
  return Status::Ok();
}

Result<EpPtr> FabricContext::MakeEndpoint(const fi_info* info) {
  fid_ep* raw = nullptr;
  int ret = fi_endpoint(domain_.get(), const_cast<fi_info*>(info), &raw, nullptr);
  if (ret) return FiError("fi_endpoint", ret);
  EpPtr ep(raw);
  if ((ret = fi_ep_bind(ep.get(), &cq_->fid, FI_TRANSMIT | FI_RECV))) {
    return FiError("fi_ep_bind(cq)", ret);
  }
  if (eq_ && (ret = fi_ep_bind(ep.get(), &eq_->fid, 0))) return FiError("fi_ep_bind(eq)", ret);
  if (av_ && (ret = fi_ep_bind(ep.get(), &av_->fid, 0))) return FiError("fi_ep_bind(av)", ret);
  if ((ret = fi_enable(ep.get()))) return FiError("fi_enable", ret);
  return ep;
}

Result<PeerAddress> FabricContext::LocalAddress() const {
  PeerAddress a;
  a.kind = kind_;
  a.provider = provider_;
  a.addr_format = info_->addr_format;
  auto name = [](fid_t fid, std::string* out) -> Status {
    char buf[256];
    size_t len = sizeof(buf);
    int ret = fi_getname(fid, buf, &len);
    if (ret) return FiError("fi_getname", ret);
    out->assign(buf, len);
    return Status::Ok();
  };
  if (pep_) KV_TRY(name(&pep_->fid, &a.bytes));
  if (kind_ == EpKind::kRdm && ctrl_ep_ && data_ep_) {
    KV_TRY(name(&ctrl_ep_->fid, &a.bytes));
    KV_TRY(name(&data_ep_->fid, &a.data_bytes));
  }
  return a;
}

Result<MrPtr> FabricContext::Register(void* buf, size_t len, uint64_t access) {
  fid_mr* mr = nullptr;
  uint64_t key = (mr_mode_ & FI_MR_PROV_KEY) ? 0 : next_key_++;
  int ret = fi_mr_reg(domain_.get(), buf, len, access, 0, key, 0, &mr, nullptr);
  if (ret) return FiError("fi_mr_reg", ret);
  return MrPtr(mr);
}

void* FabricContext::Desc(fid_mr* mr) const { return mr ? fi_mr_desc(mr) : nullptr; }

uint64_t FabricContext::RemoteBase(const void* buf) const {
  return (mr_mode_ & FI_MR_VIRT_ADDR) ? reinterpret_cast<uint64_t>(buf) : 0;
}

void FabricContext::Shutdown() {
  if (kind_ != EpKind::kMsg || !connected_) return;
  connected_ = false;
  if (ctrl_ep_) fi_shutdown(ctrl_ep_.get(), 0);
  if (data_ep_) fi_shutdown(data_ep_.get(), 0);
}

void FabricContext::CloseEndpoints() {
  Shutdown();
  data_ep_.reset();
  ctrl_ep_.reset();
  pep_.reset();
}

void PutPeerAddress(Blob& b, const PeerAddress& a) {
  b.Set("provider", a.provider);
  b.Set("ep", a.kind == EpKind::kMsg ? "msg" : "rdm");
  b.SetU64("addr_format", a.addr_format);
  b.SetBytes("addr", a.bytes);
  if (a.kind == EpKind::kRdm) b.SetBytes("data_addr", a.data_bytes);
}

Result<PeerAddress> GetPeerAddress(const Blob& b) {
  PeerAddress a;
  auto prov = b.Get("provider");
  auto ep = b.Get("ep");
  auto fmt = b.GetU64("addr_format");
  auto bytes = b.GetBytes("addr");
  for (const Status* s : {&prov.status(), &ep.status(), &fmt.status(), &bytes.status()}) {
    if (!s->ok()) return *s;
  }
  if (*ep != "msg" && *ep != "rdm") return Status::Corruption("setup blob: bad endpoint type");
  a.provider = *prov;
  a.kind = *ep == "msg" ? EpKind::kMsg : EpKind::kRdm;
  a.addr_format = static_cast<uint32_t>(*fmt);
  a.bytes = *bytes;
  if (a.kind == EpKind::kRdm) {
    auto data = b.GetBytes("data_addr");
    if (!data.ok()) return data.status();
    a.data_bytes = *data;
  }
  return a;
}

ssize_t FabricContext::PostWrite(const void* src, size_t len, void* desc, uint64_t remote_addr,
                                 uint64_t key, void* context, uint64_t flags,
                                 uint64_t data) const {
  iovec iov{const_cast<void*>(src), len};
  fi_rma_iov rma{remote_addr, len, key};
  fi_msg_rma msg{};
  msg.msg_iov = &iov;
  msg.desc = &desc;
  msg.iov_count = 1;
  msg.addr = data_peer_;
  msg.rma_iov = &rma;
  msg.rma_iov_count = 1;
  msg.context = context;
  msg.data = data;
  return fi_writemsg(data_ep_.get(), &msg, flags);
}

}  // namespace kv::transport::fabric
