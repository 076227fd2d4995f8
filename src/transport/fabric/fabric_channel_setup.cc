// Fabric channel setup: blobs, opening the fabric, registering memory, connecting, teardown.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <random>

#include "common/clock.h"
#include "common/logging.h"
#include "transport/fabric/fabric_channel.h"

namespace kv::transport::fabric {

namespace {

constexpr uint64_t kMaxSlots = kMaxImmSlots;
constexpr uint64_t kMaxSlotSize = 64ull << 20;

uint64_t NewLinkId() {
  std::random_device rd;
  return (uint64_t{rd()} << 32 | rd()) | 1;  // never 0
}

// Without adaptation the chunk is fixed at max_chunk (min = max).
ChunkSizer::Config SizerConfig(const ChannelOptions& o) {
  ChunkSizer::Config c;
  c.max = o.max_chunk;
  c.min = o.adaptive ? std::min(o.min_chunk, o.max_chunk) : o.max_chunk;
  return c;
}

Result<Blob> DecodePeer(std::string_view text, const char* want_role) {
  auto b = Blob::Decode(text);
  if (!b.ok()) return b.status();
  auto transport = b->Get("transport");
  auto role = b->Get("role");
  if (!transport.ok() || *transport != "fabric") {
    return Status::Invalid("peer is not a fabric channel endpoint");
  }
  if (!role.ok() || *role != want_role) return Status::Invalid("peer has the wrong role");
  return b;
}

}  // namespace

bool PeerGone(int pid, Status* why) {
  if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) return false;
  *why = Status::Closed("shm peer process " + std::to_string(pid) + " is gone");
  return true;
}

namespace {
// Providers that make progress with socket calls (tcp, tcp;ofi_rxm, sockets, udp;ofi_rxd):
// each poll of theirs is a system call, so their links sleep rather than spin.
bool PollsAreSystemCalls(const std::string& provider) {
  for (const char* p : {"tcp", "sockets", "udp"}) {
    if (provider.starts_with(p)) return true;
  }
  return false;
}

// The peer's pid on shm (0 elsewhere or when absent).
int PeerPid(const Blob& b, const std::string& provider) {
  if (provider != "shm") return 0;
  auto pid = b.GetU64("pid");
  return pid.ok() && *pid < (1u << 31) ? static_cast<int>(*pid) : 0;
}
}  // namespace

FabricOptions ToFabricOptions(const ChannelOptions& o) {
  FabricOptions f;
  f.provider = o.provider;
  f.bind_addr = o.bind_addr;
  f.cq_size = std::max<size_t>(256, 4 * (o.credits + 8));
  return f;
}

// ---- sender ----

FabricSender::FabricSender(const ChannelOptions& opts)
    : StreamSender(opts), sizer_(SizerConfig(opts)) {}

FabricSender::~FabricSender() {
  if (ctx_) ctx_->CloseEndpoints();
}

Result<std::string> FabricSender::LocalBlob() {
  if (!ctx_) {
    auto ctx = FabricContext::Open(ToFabricOptions(opts_), /*passive=*/false);
    if (!ctx.ok()) return Fail(ctx.status());
    ctx_ = std::move(*ctx);
  }
  auto addr = ctx_->LocalAddress();
  if (!addr.ok()) return Fail(addr.status());
  Blob b;
  b.Set("transport", "fabric");
  b.Set("role", "sender");
  PutPeerAddress(b, *addr);
  b.SetU64("pid", static_cast<uint64_t>(getpid()));
  if (opts_.doorbell) b.SetU64("rings", 1);  // rings the receiver's doorbell, if it names one
  b.SetU64("credit_runs", 1);                // takes one credit for a run of slots
  return b.Encode();
}

Status FabricSender::Connect(std::string_view peer_blob) {
  if (!ctx_) {
    if (auto b = LocalBlob(); !b.ok()) return b.status();
  }
  auto b = DecodePeer(peer_blob, "receiver");
  if (!b.ok()) return Fail(b.status());
  auto addr = GetPeerAddress(*b);
  auto id = b->GetU64("link_id");
  auto base = b->GetU64("ring_base");
  auto key = b->GetU64("ring_key");
  auto slot_size = b->GetU64("slot_size");
  auto stride = b->GetU64("slot_stride");
  auto slots = b->GetU64("slots");
  auto offset = b->GetU64("offset");
  for (const Status* s : {&addr.status(), &id.status(), &base.status(), &key.status(),
                          &slot_size.status(), &stride.status(), &slots.status(),
                          &offset.status()}) {
    if (!s->ok()) return Fail(*s);
  }
  if (*slots == 0 || *slots > kMaxSlots || *slot_size == 0 || *slot_size > kMaxSlotSize ||
      *stride < *slot_size || *stride > kMaxSlotSize) {
    return Fail(Status::Corruption("receiver announced an impossible ring geometry"));
  }
  if (auto name = b->Get("doorbell"); name.ok() && opts_.doorbell) {
    auto bell = DoorbellRinger::Connect(*name);
    if (!bell.ok()) return Fail(bell.status());
    doorbell_.emplace(std::move(*bell));
  }
  link_id_ = *id;
  peer_pid_ = PeerPid(*b, addr->provider);
  ring_base_ = *base;
  ring_key_ = *key;
  ring_stride_ = *stride;
  start_offset_ = *offset;

  auto staging = RegisteredSlots::Create(*ctx_, *slot_size, *slots, FI_WRITE);
  if (!staging.ok()) return Fail(staging.status());
  staging_ = std::move(*staging);
  if (Status s = control_.Init(ctx_.get(), link_id_, *slots + 4, *slots + 4); !s.ok()) {
    return Fail(s);
  }
  write_ctx_.resize(*slots);
  write_pending_.assign(*slots, false);
  write_src_.assign(*slots, {});
  for (size_t i = 0; i < write_ctx_.size(); ++i) {
    write_ctx_[i].kind = OpContext::Kind::kWrite;
    write_ctx_[i].index = static_cast<uint16_t>(i);
  }
  credits_.emplace(static_cast<uint32_t>(*slots), static_cast<uint32_t>(*slot_size),
                   start_offset_);
  Status s = ctx_->Connect(*addr, link_id_, opts_.connect_timeout_ms,
                           [this](fid_ep* ep, bool data) {
                             return control_.PostAllRecvs(ep, data);
                           });
  if (!s.ok()) return Fail(s);
  connected_ = true;
  last_event_ms_ = MonoMs();
  if (PollsAreSystemCalls(ctx_->provider())) UseSleepingPolls();
  LOG_VERBOSE("transport: fabric sender connected over %s, %llu slots of %llu bytes, from %llu",
              ctx_->provider().c_str(), static_cast<unsigned long long>(*slots),
              static_cast<unsigned long long>(*slot_size),
              static_cast<unsigned long long>(start_offset_));
  return Status::Ok();
}

namespace {
// Tells the peer, best effort, that this end is closing (an RDM peer sees no disconnect).
// Never when the shm peer is gone: its locks in shared memory may be held forever.
// "fabric/<provider>": the one opened, or the one configured before that.
std::string LinkName(const FabricContext* ctx, const std::string& configured) {
  return "fabric/" + (ctx ? ctx->provider() : configured);
}

void SayClosing(ControlPlane& control, bool connected, int peer_pid) {
  Status why;
  if (!connected || PeerGone(peer_pid, &why)) return;
  control.Queue({MsgType::kError, 0, 0, static_cast<uint32_t>(Code::kClosed), 0, 0});
  (void)control.Flush();
}
}  // namespace

void FabricSender::Close() {
  if (status_.ok()) {
    Fail(Status::Closed("link closed locally"));
    SayClosing(control_, credits_.has_value() && connected_, peer_pid_);
    Ring();
  }
  if (ctx_) ctx_->Shutdown();
}

std::string FabricSender::Describe() const { return LinkName(ctx_.get(), opts_.provider); }

void FabricSender::WaitFds(std::vector<pollfd>* out) const {
  if (ctx_) ctx_->AppendWaitFds(out);
}

bool FabricSender::ArmWait() { return control_.ArmWait(); }

// ---- receiver ----

FabricReceiver::FabricReceiver(const ChannelOptions& opts, uint64_t resume_offset)
    : StreamReceiver(opts), resume_offset_(resume_offset) {}

FabricReceiver::~FabricReceiver() {
  if (ctx_) ctx_->CloseEndpoints();
}

Status FabricReceiver::Open() {
  auto ctx = FabricContext::Open(ToFabricOptions(opts_), /*passive=*/true);
  if (!ctx.ok()) return ctx.status();
  ctx_ = std::move(*ctx);
  uint32_t slots = std::max<uint32_t>(1, std::min<uint32_t>(opts_.credits, kMaxSlots));
  // The ring is the only memory a peer may access, and only to write.
  auto ring = RegisteredSlots::Create(*ctx_, opts_.max_chunk, slots, FI_REMOTE_WRITE);
  if (!ring.ok()) return ring.status();
  ring_ = std::move(*ring);
  link_id_ = NewLinkId();
  if (Status s = control_.Init(ctx_.get(), link_id_, slots + 4, slots + 4, slots); !s.ok()) {
    return s;
  }
  slots_.emplace(slots, opts_.max_chunk, resume_offset_);
  if (ctx_->wait_fd() < 0 && opts_.doorbell) {
    // Without a doorbell the link polls on a timer, as it must with a sender that rings none.
    if (auto bell = DoorbellListener::Open(); bell.ok()) {
      doorbell_.emplace(std::move(*bell));
    } else {
      LOG_WARNING("transport: no doorbell for the %s receiver (%s); it polls instead",
                  ctx_->provider().c_str(), bell.status().message().c_str());
    }
  }
  return Status::Ok();
}

Result<std::string> FabricReceiver::LocalBlob() {
  if (!ctx_) {
    if (Status s = Open(); !s.ok()) return Fail(s);
  }
  auto addr = ctx_->LocalAddress();
  if (!addr.ok()) return Fail(addr.status());
  Blob b;
  b.Set("transport", "fabric");
  b.Set("role", "receiver");
  PutPeerAddress(b, *addr);
  b.SetU64("pid", static_cast<uint64_t>(getpid()));
  b.SetU64("link_id", link_id_);
  b.SetU64("ring_base", ctx_->RemoteBase(ring_.base()));
  b.SetU64("ring_key", ring_.key());
  b.SetU64("slot_size", ring_.slot_size());
  b.SetU64("slot_stride", ring_.stride());
  b.SetU64("slots", ring_.count());
  b.SetU64("offset", resume_offset_);
  if (doorbell_) b.Set("doorbell", doorbell_->name());
  return b.Encode();
}

Status FabricReceiver::Connect(std::string_view peer_blob) {
  if (!ctx_) {
    if (auto b = LocalBlob(); !b.ok()) return b.status();
  }
  auto b = DecodePeer(peer_blob, "sender");
  if (!b.ok()) return Fail(b.status());
  auto addr = GetPeerAddress(*b);
  if (!addr.ok()) return Fail(addr.status());
  peer_pid_ = PeerPid(*b, addr->provider);
  if (!b->GetU64("rings").ok()) doorbell_.reset();
  credit_runs_ = b->GetU64("credit_runs").ok();
  Status s = ctx_->Accept(*addr, link_id_, opts_.connect_timeout_ms,
                          [this](fid_ep* ep, bool data) {
                            return control_.PostAllRecvs(ep, data);
                          });
  if (!s.ok()) return Fail(s);
  connected_ = true;
  if (PollsAreSystemCalls(ctx_->provider())) UseSleepingPolls();
  LOG_VERBOSE("transport: fabric receiver connected over %s", ctx_->provider().c_str());
  return Status::Ok();
}

void FabricReceiver::Close() {
  if (status_.ok()) {
    Fail(Status::Closed("link closed locally"));
    SayClosing(control_, slots_.has_value() && connected_, peer_pid_);
  }
  if (ctx_) ctx_->Shutdown();
}

std::string FabricReceiver::Describe() const { return LinkName(ctx_.get(), opts_.provider); }

void FabricReceiver::WaitFds(std::vector<pollfd>* out) const {
  if (ctx_) ctx_->AppendWaitFds(out);
  if (doorbell_) out->push_back({doorbell_->fd(), POLLIN, 0});
}

bool FabricReceiver::ArmWait() {
  // A ring read here may stand for a write the last Progress() did not see yet, and a credit the
  // provider refused is retried only by a poll (no ring would come for it): poll again.
  if (doorbell_) return !doorbell_->Drain() && !control_.Retrying();
  return control_.ArmWait();
}

}  // namespace kv::transport::fabric
