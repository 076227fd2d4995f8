// kvstore-perf: transport micro-benchmarks in the style of perftest (ib_write_bw, ib_send_lat).
// The server waits for clients on a TCP control port; each client run sends its parameters,
// both ends set up the link through the control connection, the client drives the test and
// prints one table row per run (bandwidth, latency percentiles, CPU seconds of each side).
#include <poll.h>
#include <signal.h>

#include <cstdio>

#include "common/logging.h"
#include "net/socket.h"
#include "perf_common.h"
#include "perf_raw.h"

namespace kv::perf {
namespace {

Status ServeOne(int control_fd) {
  auto params = transport::ExchangeBlobs(control_fd, "ok=1\n", 30000);
  if (!params.ok()) return params.status();
  auto blob = transport::Blob::Decode(*params);
  if (!blob.ok()) return blob.status();
  auto o = FromBlob(*blob);
  if (!o.ok()) return o.status();
  if (o->test == "stream") return StreamServer(*o, control_fd);
  if (o->transport == "tcp") return SocketServer(*o, control_fd);
  return RawServer(*o, control_fd);
}

int RunServer(const PerfOptions& o) {
  auto l = net::ListenTcp("*", o.port, 16);
  if (!l.ok()) {
    std::fprintf(stderr, "kvstore-perf: %s\n", l.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr, "kvstore-perf: server listening on port %d\n", net::LocalPort(l->get()));
  for (;;) {
    pollfd p{l->get(), POLLIN, 0};
    if (::poll(&p, 1, -1) != 1) continue;
    auto c = net::AcceptTcp(l->get());
    if (!c.ok()) continue;
    Status s = ServeOne(c->get());
    if (!s.ok()) std::fprintf(stderr, "kvstore-perf: run failed: %s\n", s.ToString().c_str());
    if (o.once) return s.ok() ? 0 : 1;
  }
}

Result<RunResult> RunClientOnce(const PerfOptions& o) {
  auto c = net::ConnectTcp(o.host, o.port, 10000);
  if (!c.ok()) return c.status();
  auto ok = transport::ExchangeBlobs(c->get(), ToBlob(o).Encode(), 30000);
  if (!ok.ok()) return ok.status();
  if (o.test == "stream") return StreamClient(o, c->get());
  if (o.transport == "tcp") return SocketClient(o, c->get());
  return RawClient(o, c->get());
}

int RunClient(const PerfOptions& o) {
  PrintHeader();
  for (int i = 0; i < o.runs; ++i) {
    auto r = RunClientOnce(o);
    if (!r.ok()) {
      std::fprintf(stderr, "kvstore-perf: %s\n", r.status().ToString().c_str());
      return 1;
    }
    PrintRow(o, *r);
  }
  return 0;
}

}  // namespace
}  // namespace kv::perf

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  kv::SetLogLevel(kv::LogLevel::kWarning);
  auto o = kv::perf::ParseArgs(argc, argv);
  if (!o.ok()) {
    std::fprintf(stderr, "kvstore-perf: %s\n%s", o.status().message().c_str(),
                 kv::perf::Usage().c_str());
    return 2;
  }
  return o->server ? kv::perf::RunServer(*o) : kv::perf::RunClient(*o);
}
