#include "transport/test_util.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "common/clock.h"
#include "net/socket.h"
#include "transport/test_providers.h"
#include "transport/wire.h"

namespace kv::transport::test {

namespace {
// A watchdog for every transport test process: a hang (a provider spinning on a lock, a lost
// completion) ends the process with SIGALRM instead of holding up the whole suite. The
// emulated Soft-RoCE guest, some twenty times slower, sets its own (KV_TEST_WATCHDOG_S).
const int kWatchdog = [] {
  const char* env = std::getenv("KV_TEST_WATCHDOG_S");
  alarm(env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 120);
  return 0;
}();
}  // namespace

ChannelOptions OptionsFor(const std::string& config) {
  ChannelOptions o;
  if (config.rfind("fabric/", 0) == 0) {
    o.transport = "fabric";
    o.provider = config.substr(7);
    if (const char* addr = std::getenv("KV_TEST_RDMA_ADDR"); addr != nullptr && *addr != 0) {
      o.bind_addr = addr;
    }
  } else {
    o.transport = config;
  }
  o.connect_timeout_ms = 10000;
  o.stall_timeout_ms = 10000;
  return o;
}

Result<LinkPair> MakePair(const ChannelOptions& opts, uint64_t resume) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return Status::FromErrno("socketpair", errno);
  net::Fd a(sv[0]), b(sv[1]);
  auto s = CreateSender(opts);
  if (!s.ok()) return s.status();
  auto r = CreateReceiver(opts, resume);
  if (!r.ok()) return r.status();
  auto sb = (*s)->LocalBlob();
  if (!sb.ok()) return sb.status();
  auto rb = (*r)->LocalBlob();
  if (!rb.ok()) return rb.status();

  Result<std::string> peer_of_receiver = Status::Internal("not run");
  Status receiver_connect;
  std::thread t([&] {
    peer_of_receiver = ExchangeBlobs(b.get(), *rb, 10000);
    if (peer_of_receiver.ok()) receiver_connect = (*r)->Connect(*peer_of_receiver);
  });
  auto peer_of_sender = ExchangeBlobs(a.get(), *sb, 10000);
  Status sender_connect =
      peer_of_sender.ok() ? (*s)->Connect(*peer_of_sender) : peer_of_sender.status();
  t.join();
  if (!peer_of_receiver.ok()) return peer_of_receiver.status();
  if (!sender_connect.ok()) return sender_connect;
  if (!receiver_connect.ok()) return receiver_connect;
  return LinkPair{std::move(*s), std::move(*r)};
}

std::vector<std::string> Configs(std::vector<std::string> base) {
  bool rdm = false;
  for (const std::string& c : base) {
    rdm |= c == "fabric/shm" || c.find(";ofi_rxm") != std::string::npos;
  }
  if (rdm) return WithVerbs(std::move(base), {"fabric/verbs", "fabric/verbs;ofi_rxm"});
  return WithVerbs(std::move(base), {"fabric/verbs"});
}

std::vector<uint8_t> RandomBytes(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937_64 rng(seed);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x = rng();
    std::memcpy(&v[i], &x, 8);
  }
  for (; i < n; ++i) v[i] = static_cast<uint8_t>(rng());
  return v;
}

void Checksum::Update(std::span<const uint8_t> d) {
  uint64_t h = h_;
  for (uint8_t c : d) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h_ = h;
}

uint64_t ChecksumOf(std::span<const uint8_t> d) {
  Checksum c;
  c.Update(d);
  return c.value();
}

Status ReceiveAll(StreamReceiver& r, Checksum* sum, int timeout_ms, size_t piece, int slow_us) {
  int64_t deadline = MonoMs() + timeout_ms;
  while (!r.eof()) {
    std::span<const uint8_t> in = r.Peek();
    if (!in.empty()) {
      size_t n = std::min(in.size(), piece);
      sum->Update(in.first(n));
      if (Status s = r.Consume(n); !s.ok()) return s;
      if (slow_us > 0) ::usleep(slow_us);
      continue;
    }
    if (MonoMs() > deadline) return Status::Closed("receive timed out");
    auto w = r.Wait(100);
    if (!w.ok()) return w.status();
  }
  // Keep the link progressing briefly so the last acknowledgement goes out.
  for (int i = 0; i < 3; ++i) (void)r.Wait(1);
  return Status::Ok();
}

Status SendAndDrain(StreamSender& s, std::span<const uint8_t> data, int timeout_ms) {
  if (Status st = SendAll(s, data, timeout_ms); !st.ok()) return st;
  return FinishAndDrain(s, timeout_ms);
}

BackgroundReceiver::BackgroundReceiver(StreamReceiver& r, Checksum* sum, int timeout_ms,
                                       size_t piece, int slow_us)
    : thread_([this, &r, sum, timeout_ms, piece, slow_us] {
        status_ = ReceiveAll(r, sum, timeout_ms, piece, slow_us);
        while (!done_ && status_.ok()) (void)r.Wait(10);
      }) {}

Status BackgroundReceiver::Finish() {
  done_ = true;
  if (thread_.joinable()) thread_.join();
  return status_;
}

Status Transfer(LinkPair& pair, std::span<const uint8_t> data, int timeout_ms, size_t piece,
                int slow_us) {
  Checksum got;
  BackgroundReceiver rx(*pair.receiver, &got, timeout_ms, piece, slow_us);
  Status ss = SendAndDrain(*pair.sender, data, timeout_ms);
  Status rs = rx.Finish();
  if (!ss.ok()) return Status(ss.code(), "sending: " + ss.message());
  if (!rs.ok()) return Status(rs.code(), "receiving: " + rs.message());
  if (got.value() != ChecksumOf(data)) return Status::Corruption("the bytes arrived changed");
  return Status::Ok();
}

}  // namespace kv::transport::test
