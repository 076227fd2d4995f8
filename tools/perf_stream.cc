// kvstore-perf: the full channel (stream) over fabric or sockets, and raw socket baselines.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>

#include "common/clock.h"
#include "net/socket.h"
#include "perf_raw.h"

namespace kv::perf {

using transport::Blob;
using transport::ExchangeBlobs;

namespace {
// With KV_PERF_DEBUG set: how each end polled (on stderr).
void DebugStats(const char* who, const transport::LinkStats& s) {
  std::fprintf(stderr, "%s: chunks %llu polls %llu empty %llu sleeps %llu mode switches %llu\n",
               who, (unsigned long long)s.chunks, (unsigned long long)s.polls,
               (unsigned long long)s.empty_polls, (unsigned long long)s.sleeps,
               (unsigned long long)s.mode_switches);
}
}  // namespace

Status StreamServer(const PerfOptions& o, int control_fd) {
  auto r = transport::CreateReceiver(ChannelOptionsFor(o), 0);
  if (!r.ok()) return r.status();
  transport::StreamReceiver& rx = **r;
  auto mine = rx.LocalBlob();
  if (!mine.ok()) return mine.status();
  auto peer = ExchangeBlobs(control_fd, *mine, 30000);
  if (!peer.ok()) return peer.status();
  if (Status s = rx.Connect(*peer); !s.ok()) return s;
  double cpu0 = CpuSeconds();
  // Consume everything (the bytes are not read: this measures the transport, like
  // ib_write_bw), then keep the link progressing until the client reports.
  while (!rx.eof()) {
    auto in = rx.Peek();
    if (!in.empty()) {
      if (Status s = rx.Consume(in.size()); !s.ok()) return s;
      continue;
    }
    auto w = rx.Wait(10);
    if (!w.ok()) return w.status();
  }
  while (!ControlReadable(control_fd)) {
    auto w = rx.Wait(10);
    if (!w.ok()) break;
  }
  if (std::getenv("KV_PERF_DEBUG")) DebugStats("receiver", rx.stats());
  return ServerReport(control_fd, CpuSeconds() - cpu0);
}

Result<RunResult> StreamClient(const PerfOptions& o, int control_fd) {
  auto s = transport::CreateSender(ChannelOptionsFor(o));
  if (!s.ok()) return s.status();
  transport::StreamSender& tx = **s;
  auto mine = tx.LocalBlob();
  if (!mine.ok()) return mine.status();
  auto peer = ExchangeBlobs(control_fd, *mine, 30000);
  if (!peer.ok()) return peer.status();
  if (Status st = tx.Connect(*peer); !st.ok()) return st;

  RunResult res;
  Latencies lat;  // commit -> acknowledged by the consumer, per chunk
  std::deque<std::pair<uint64_t, int64_t>> pending;
  auto reap = [&] {
    int64_t now = MonoUs();
    while (!pending.empty() && pending.front().first <= tx.acked_offset()) {
      lat.Add(static_cast<double>(now - pending.front().second));
      pending.pop_front();
    }
  };
  Progress prog(o.progress, "stream", o.size);
  double cpu0 = CpuSeconds();
  int64_t t0 = MonoUs();
  while (tx.committed_offset() < o.size) {
    auto room = tx.Reserve();
    if (room.empty()) {
      auto w = tx.Wait(10);
      if (!w.ok()) return w.status();
      reap();
      prog.Update(tx.acked_offset());
      continue;
    }
    // The staging slot is sent as it is: the channel's cost without a producer's memcpy.
    size_t n = std::min<uint64_t>(room.size(), o.size - tx.committed_offset());
    if (Status st = tx.Commit(n); !st.ok()) return st;
    pending.push_back({tx.committed_offset(), MonoUs()});
  }
  if (Status st = tx.Finish(); !st.ok()) return st;
  while (!tx.Drained()) {
    auto w = tx.Wait(10);
    if (!w.ok()) return w.status();
    reap();
  }
  res.seconds = (MonoUs() - t0) / 1e6;
  res.client_cpu = CpuSeconds() - cpu0;
  prog.Finish();
  if (std::getenv("KV_PERF_DEBUG")) DebugStats("sender", tx.stats());
  res.bytes = o.size;
  res.iters = tx.stats().chunks;
  res.final_chunk = res.iters ? static_cast<uint32_t>(o.size / res.iters) : 0;
  res.p50_us = lat.Percentile(50);
  res.p99_us = lat.Percentile(99);
  auto srv = ClientCollect(control_fd);
  if (!srv.ok()) return srv.status();
  res.server_cpu = *srv;
  return res;
}

namespace {

Status ReadFull(int fd, uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return Status::Closed("socket closed");
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::Ok();
}

Status WriteFull(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r <= 0) return Status::Closed("socket closed");
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::Ok();
}

Result<net::Fd> Blocking(net::Fd fd) {
  int flags = fcntl(fd.get(), F_GETFL);
  fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  net::SetNoDelay(fd.get());
  return fd;
}

}  // namespace

Status SocketServer(const PerfOptions& o, int control_fd) {
  if (o.test == "read_bw") return Status::Invalid("read_bw needs a fabric (one-sided reads)");
  auto l = net::ListenTcp("127.0.0.1", 0, 1);
  if (!l.ok()) return l.status();
  Blob mine;
  mine.SetU64("port", net::LocalPort(l->get()));
  auto peer = ExchangeBlobs(control_fd, mine.Encode(), 30000);
  if (!peer.ok()) return peer.status();
  pollfd p{l->get(), POLLIN, 0};
  if (::poll(&p, 1, 30000) != 1) return Status::Closed("no data connection");
  auto a = net::AcceptTcp(l->get());
  if (!a.ok()) return a.status();
  auto fd = Blocking(std::move(*a));
  double cpu0 = CpuSeconds();
  std::vector<uint8_t> buf(std::max<uint32_t>(o.chunk, o.msg));
  if (o.test == "send_lat") {
    for (uint64_t i = 0; i < o.iters; ++i) {
      if (Status s = ReadFull(fd->get(), buf.data(), o.msg); !s.ok()) return s;
      if (Status s = WriteFull(fd->get(), buf.data(), o.msg); !s.ok()) return s;
    }
  } else {
    uint64_t got = 0;
    while (got < o.size) {
      ssize_t r = ::recv(fd->get(), buf.data(), buf.size(), 0);
      if (r <= 0) return Status::Closed("socket closed");
      got += static_cast<uint64_t>(r);
    }
  }
  return ServerReport(control_fd, CpuSeconds() - cpu0);
}

Result<RunResult> SocketClient(const PerfOptions& o, int control_fd) {
  if (o.test == "read_bw") return Status::Invalid("read_bw needs a fabric (one-sided reads)");
  auto peer = ExchangeBlobs(control_fd, "client=1\n", 30000);
  if (!peer.ok()) return peer.status();
  auto b = Blob::Decode(*peer);
  if (!b.ok()) return b.status();
  auto port = b->GetU64("port");
  if (!port.ok()) return port.status();
  auto c = net::ConnectTcp("127.0.0.1", static_cast<int>(*port), 10000);
  if (!c.ok()) return c.status();
  auto fd = Blocking(std::move(*c));
  std::vector<uint8_t> buf(std::max<uint32_t>(o.chunk, o.msg), 0x5a);
  RunResult res;
  Latencies lat;
  double cpu0 = CpuSeconds();
  int64_t t0 = MonoUs();
  if (o.test == "send_lat") {
    for (uint64_t i = 0; i < o.iters; ++i) {
      int64_t start = MonoUs();
      if (Status s = WriteFull(fd->get(), buf.data(), o.msg); !s.ok()) return s;
      if (Status s = ReadFull(fd->get(), buf.data(), o.msg); !s.ok()) return s;
      lat.Add((MonoUs() - start) / 2.0);
    }
    res.bytes = o.iters * o.msg;
    res.iters = o.iters;
  } else {
    Progress prog(o.progress, o.test, o.size);
    uint64_t sent = 0;
    while (sent < o.size) {
      size_t n = std::min<uint64_t>(o.chunk, o.size - sent);
      int64_t start = MonoUs();
      if (Status s = WriteFull(fd->get(), buf.data(), n); !s.ok()) return s;
      lat.Add(static_cast<double>(MonoUs() - start));
      sent += n;
      ++res.iters;
      prog.Update(sent);
    }
    prog.Finish();
    res.bytes = o.size;
  }
  auto srv = ClientCollect(control_fd);  // returns once the server has read everything
  if (!srv.ok()) return srv.status();
  res.seconds = (MonoUs() - t0) / 1e6;
  res.client_cpu = CpuSeconds() - cpu0;
  res.server_cpu = *srv;
  res.p50_us = lat.Percentile(50);
  res.p99_us = lat.Percentile(99);
  return res;
}

}  // namespace kv::perf
