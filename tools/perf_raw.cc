// kvstore-perf raw fabric tests: write_bw, read_bw, send_bw, send_lat.
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <random>

#include "common/clock.h"
#include "perf_raw.h"
#include "transport/fabric/buffer_pool.h"
#include "transport/fabric/fabric_setup.h"
#include "transport/poll_mode.h"

namespace kv::perf {

using transport::Blob;
using transport::ExchangeBlobs;
using namespace transport::fabric;

namespace {

struct Op {
  fi_context2 fi;  // first: FI_CONTEXT/FI_CONTEXT2
  uint32_t index = 0;
  bool recv = false;
  int64_t posted_us = 0;
};

// Waits for completions according to the poll mode: spin, or fi_trywait + poll on the CQ fd
// (a short sleep without fd). Returns the number read into `e`, or an error.
class CqWaiter {
 public:
  CqWaiter(FabricContext* ctx, transport::PollMode mode)
      : ctx_(ctx), ctl_(transport::PollModeController::Config{mode, 3, 2000}) {}

  Result<int> Read(fi_cq_data_entry* e, int max, int extra_fd = -1) {
    for (;;) {
      ssize_t n = fi_cq_read(ctx_->cq(), e, max);
      if (n == -FI_EAVAIL) return CqError(ctx_->cq(), "perf");
      if (n < 0 && n != -FI_EAGAIN) return FiError("fi_cq_read", static_cast<int>(n));
      int got = n > 0 ? static_cast<int>(n) : 0;
      ctl_.OnPoll(got, MonoUs());
      if (got > 0) return got;
      if (ctl_.spinning()) {
        sched_yield();  // as the channel does: share the cores with a runnable peer
        return 0;
      }
      if (ctx_->wait_fd() < 0) {
        ::usleep(50);
        return 0;
      }
      fid* f = &ctx_->cq()->fid;
      if (fi_trywait(ctx_->fabric(), &f, 1) != FI_SUCCESS) continue;
      pollfd p[2] = {{ctx_->wait_fd(), POLLIN, 0}, {extra_fd, POLLIN, 0}};
      ::poll(p, extra_fd >= 0 ? 2 : 1, 10);
      return 0;
    }
  }

 private:
  FabricContext* ctx_;
  transport::PollModeController ctl_;
};

FabricOptions FabricOpts(const PerfOptions& o) {
  FabricOptions f;
  f.provider = o.provider;
  f.cq_size = std::max<size_t>(1024, o.window * 4);
  return f;
}

// Posts receive i on `ep` (the control endpoint; during setup it is not yet ctx.ctrl_ep()).
Status PostRecv(FabricContext& ctx, fid_ep* ep, RegisteredSlots& bufs, std::vector<Op>& ops,
                uint32_t i, size_t len) {
  ssize_t r;
  while ((r = fi_recv(ep, bufs.slot(i), len, bufs.desc(), FI_ADDR_UNSPEC,
                      &ops[i])) == -FI_EAGAIN) {
    fi_cq_read(ctx.cq(), nullptr, 0);
  }
  return r ? FiError("fi_recv", static_cast<int>(r)) : Status::Ok();
}

}  // namespace

bool ControlReadable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

Status ServerReport(int control_fd, double cpu_seconds) {
  Blob b;
  b.Set("cpu", std::to_string(cpu_seconds));
  auto r = ExchangeBlobs(control_fd, b.Encode(), 30000);
  return r.ok() ? Status::Ok() : r.status();
}

Result<double> ClientCollect(int control_fd) {
  auto r = ExchangeBlobs(control_fd, "done=1\n", 30000);
  if (!r.ok()) return r.status();
  auto b = Blob::Decode(*r);
  if (!b.ok()) return b.status();
  auto cpu = b->Get("cpu");
  if (!cpu.ok()) return cpu.status();
  return std::atof(cpu->c_str());
}

Status RawServer(const PerfOptions& o, int control_fd) {
  auto ctx = FabricContext::Open(FabricOpts(o), true);
  if (!ctx.ok()) return ctx.status();
  FabricContext& c = **ctx;
  bool sends = o.test == "send_bw" || o.test == "send_lat";
  size_t len = o.test == "send_lat" ? o.msg : o.chunk;
  uint32_t count = o.test == "send_lat" ? 2 : (sends ? 2 * o.window : o.window);
  uint64_t access = sends ? (FI_SEND | FI_RECV) : (FI_REMOTE_WRITE | FI_REMOTE_READ);
  auto bufs = RegisteredSlots::Create(c, len, count, access);
  if (!bufs.ok()) return bufs.status();
  std::vector<Op> ops(count);
  for (uint32_t i = 0; i < count; ++i) ops[i].index = i;
  uint64_t link_id = std::random_device{}() | 1;

  auto addr = c.LocalAddress();
  if (!addr.ok()) return addr.status();
  Blob mine;
  PutPeerAddress(mine, *addr);
  mine.SetU64("link_id", link_id);
  mine.SetU64("base", c.RemoteBase(bufs->base()));
  mine.SetU64("key", bufs->key());
  mine.SetU64("stride", bufs->stride());
  auto peer_text = ExchangeBlobs(control_fd, mine.Encode(), 30000);
  if (!peer_text.ok()) return peer_text.status();
  auto peer_blob = Blob::Decode(*peer_text);
  if (!peer_blob.ok()) return peer_blob.status();
  auto peer = GetPeerAddress(*peer_blob);
  if (!peer.ok()) return peer.status();
  uint32_t recvs = o.test == "send_lat" ? 1 : (sends ? count : 0);
  Status s = c.Accept(*peer, link_id, 30000, [&](fid_ep* ep, bool data) {
    if (data) return Status::Ok();  // receives go on the control endpoint
    for (uint32_t i = 0; i < recvs; ++i) {
      ops[i].recv = true;
      if (Status st = PostRecv(c, ep, *bufs, ops, i, len); !st.ok()) return st;
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;

  // Drive progress (FABRIC.md pitfall 1) and serve receives until the client reports.
  double cpu0 = CpuSeconds();
  CqWaiter waiter(&c, o.poll_mode);
  std::vector<fi_cq_data_entry> e(32);
  int64_t last_check = 0;
  for (;;) {
    auto n = waiter.Read(e.data(), 32, control_fd);
    if (!n.ok()) return n.status();
    for (int i = 0; i < *n; ++i) {
      Op* op = static_cast<Op*>(e[i].op_context);
      if (!op->recv) continue;  // a send_lat reply went out
      if (Status st = PostRecv(c, c.ctrl_ep(), *bufs, ops, op->index, len); !st.ok()) return st;
      if (o.test == "send_lat") {
        ssize_t r;
        while ((r = fi_send(c.ctrl_ep(), bufs->slot(1), len, bufs->desc(), c.peer(), &ops[1])) ==
               -FI_EAGAIN) {
          fi_cq_read(c.cq(), nullptr, 0);
        }
        if (r) return FiError("fi_send", static_cast<int>(r));
      }
    }
    int64_t now = MonoUs();
    if (now - last_check > 1000) {
      last_check = now;
      if (ControlReadable(control_fd)) break;
    }
  }
  return ServerReport(control_fd, CpuSeconds() - cpu0);
}

namespace {

// write_bw / read_bw / send_bw: `window` operations in flight until size bytes moved.
Status RunBandwidth(const PerfOptions& o, FabricContext& c, RegisteredSlots& local,
                    const Blob& server, RunResult* res) {
  auto base = server.GetU64("base"), key = server.GetU64("key"), stride = server.GetU64("stride");
  if (!base.ok() || !key.ok() || !stride.ok()) return Status::Corruption("bad server blob");
  uint64_t iters = (o.size + o.chunk - 1) / o.chunk;
  std::vector<Op> ops(o.window);
  std::vector<uint32_t> free;
  for (uint32_t i = 0; i < o.window; ++i) {
    ops[i].index = i;
    free.push_back(i);
  }
  Latencies lat;
  Progress prog(o.progress, o.test, o.size);
  CqWaiter waiter(&c, o.poll_mode);
  std::vector<fi_cq_data_entry> e(32);
  uint64_t posted = 0, done = 0, bytes_posted = 0;
  uint64_t flags = FI_COMPLETION | (o.delivery_complete ? FI_DELIVERY_COMPLETE : 0);
  int64_t t0 = MonoUs();
  while (done < iters) {
    while (posted < iters && !free.empty()) {
      uint32_t i = free.back();
      size_t len = std::min<uint64_t>(o.chunk, o.size - bytes_posted);
      iovec iov{local.slot(i), len};
      void* desc = local.desc();
      fi_rma_iov rma{*base + i * *stride, len, *key};
      ssize_t r;
      ops[i].posted_us = MonoUs();
      if (o.test == "send_bw") {
        fi_msg m{&iov, &desc, 1, c.peer(), &ops[i], 0};
        r = fi_sendmsg(c.ctrl_ep(), &m, FI_COMPLETION);
      } else {
        fi_msg_rma m{};
        m.msg_iov = &iov;
        m.desc = &desc;
        m.iov_count = 1;
        m.addr = c.data_peer();
        m.rma_iov = &rma;
        m.rma_iov_count = 1;
        m.context = &ops[i];
        r = o.test == "write_bw" ? fi_writemsg(c.data_ep(), &m, flags)
                                 : fi_readmsg(c.data_ep(), &m, FI_COMPLETION);
      }
      if (r == -FI_EAGAIN) break;
      if (r) return FiError("post", static_cast<int>(r));
      free.pop_back();
      ++posted;
      bytes_posted += len;
    }
    auto n = waiter.Read(e.data(), 32);
    if (!n.ok()) return n.status();
    int64_t now = MonoUs();
    for (int k = 0; k < *n; ++k) {
      Op* op = static_cast<Op*>(e[k].op_context);
      lat.Add(static_cast<double>(now - op->posted_us));
      free.push_back(op->index);
      ++done;
    }
    prog.Update(std::min<uint64_t>(done * o.chunk, o.size));
  }
  res->seconds = (MonoUs() - t0) / 1e6;
  prog.Finish();
  res->bytes = o.size;
  res->iters = iters;
  res->p50_us = lat.Percentile(50);
  res->p99_us = lat.Percentile(99);
  return Status::Ok();
}

// send_lat: ping-pong of o.msg bytes, o.iters times; one-way latency = round trip / 2.
Status RunLatency(const PerfOptions& o, FabricContext& c, RegisteredSlots& local,
                  std::vector<Op>& ops, RunResult* res) {
  Latencies lat;
  CqWaiter waiter(&c, o.poll_mode);
  std::vector<fi_cq_data_entry> e(8);
  int64_t t0 = MonoUs();
  for (uint64_t i = 0; i < o.iters; ++i) {
    int64_t start = MonoUs();
    ssize_t r;
    while ((r = fi_send(c.ctrl_ep(), local.slot(1), o.msg, local.desc(), c.peer(), &ops[1])) ==
           -FI_EAGAIN) {
      fi_cq_read(c.cq(), nullptr, 0);
    }
    if (r) return FiError("fi_send", static_cast<int>(r));
    bool got = false;
    while (!got) {
      auto n = waiter.Read(e.data(), 8);
      if (!n.ok()) return n.status();
      for (int k = 0; k < *n; ++k) {
        Op* op = static_cast<Op*>(e[k].op_context);
        if (op->recv) got = true;
      }
    }
    lat.Add((MonoUs() - start) / 2.0);
    if (Status s = PostRecv(c, c.ctrl_ep(), local, ops, 0, o.msg); !s.ok()) return s;
  }
  res->seconds = (MonoUs() - t0) / 1e6;
  res->bytes = o.iters * o.msg;
  res->iters = o.iters;
  res->p50_us = lat.Percentile(50);
  res->p99_us = lat.Percentile(99);
  return Status::Ok();
}

}  // namespace

Result<RunResult> RawClient(const PerfOptions& o, int control_fd) {
  auto ctx = FabricContext::Open(FabricOpts(o), false);
  if (!ctx.ok()) return ctx.status();
  FabricContext& c = **ctx;
  bool lat = o.test == "send_lat";
  auto local = RegisteredSlots::Create(c, lat ? o.msg : o.chunk, lat ? 2 : o.window,
                                       FI_WRITE | FI_READ | FI_SEND | FI_RECV);
  if (!local.ok()) return local.status();
  // Something recognisable in the source buffers.
  for (size_t i = 0; i < local->count(); ++i) memset(local->slot(i), 0x5a, local->slot_size());
  std::vector<Op> ops(2);
  ops[0].recv = true;
  ops[1].index = 1;

  auto addr = c.LocalAddress();
  if (!addr.ok()) return addr.status();
  Blob mine;
  PutPeerAddress(mine, *addr);
  auto server_text = ExchangeBlobs(control_fd, mine.Encode(), 30000);
  if (!server_text.ok()) return server_text.status();
  auto server = Blob::Decode(*server_text);
  if (!server.ok()) return server.status();
  auto peer = GetPeerAddress(*server);
  auto link_id = server->GetU64("link_id");
  if (!peer.ok() || !link_id.ok()) return Status::Corruption("bad server blob");
  Status s = c.Connect(*peer, *link_id, 30000, [&](fid_ep* ep, bool data) {
    return lat && !data ? PostRecv(c, ep, *local, ops, 0, o.msg) : Status::Ok();
  });
  if (!s.ok()) return s;

  RunResult res;
  double cpu0 = CpuSeconds();
  s = lat ? RunLatency(o, c, *local, ops, &res) : RunBandwidth(o, c, *local, *server, &res);
  res.client_cpu = CpuSeconds() - cpu0;
  if (!s.ok()) return s;
  auto srv = ClientCollect(control_fd);
  if (!srv.ok()) return srv.status();
  res.server_cpu = *srv;
  return res;
}

}  // namespace kv::perf
