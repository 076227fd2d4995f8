// Helpers for the transport tests: connected link pairs over real endpoints (two threads, a
// socketpair as the control link), reproducible random data, and a streaming checksum.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "transport/channel.h"
#include "transport/test_providers.h"

namespace kv::transport::test {

struct LinkPair {
  std::unique_ptr<StreamSender> sender;
  std::unique_ptr<StreamReceiver> receiver;
};

// Options for one of the configurations the tests run over: "fabric/tcp", "fabric/shm",
// "fabric/tcp;ofi_rxm", "tcp", and in the Soft-RoCE guest "fabric/verbs" and
// "fabric/verbs;ofi_rxm". Fabric listeners bind to KV_TEST_RDMA_ADDR where it is set (the
// guest's RDMA address), else to loopback.
ChannelOptions OptionsFor(const std::string& config);

// The configurations a parameterized test runs over: `base`, plus, when KV_TEST_VERBS is set
// (tests/softroce/ sets it in the guest), "fabric/verbs" (FI_EP_MSG, the production path) and,
// where `base` has an FI_EP_RDM configuration, "fabric/verbs;ofi_rxm".
std::vector<std::string> Configs(std::vector<std::string> base);

// Builds both ends and connects them (the receiver resumes at `resume`), exchanging blobs over a
// socketpair and running the two Connect()s on two threads.
Result<LinkPair> MakePair(const ChannelOptions& opts, uint64_t resume = 0);

std::vector<uint8_t> RandomBytes(size_t n, uint64_t seed);

// FNV-1a, 64 bits, incremental: Update in any split gives the same value.
class Checksum {
 public:
  void Update(std::span<const uint8_t> d);
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 1469598103934665603ull;
};
uint64_t ChecksumOf(std::span<const uint8_t> d);

// Receives until end of stream (or error/timeout), feeding every byte to `sum`; `slow_us`
// sleeps between consumed pieces of at most `piece` bytes (a slow consumer). Returns the
// link's status, or kClosed on timeout.
Status ReceiveAll(StreamReceiver& r, Checksum* sum, int timeout_ms, size_t piece = SIZE_MAX,
                  int slow_us = 0);

// Sends data, finishes and waits until everything is acknowledged.
Status SendAndDrain(StreamSender& s, std::span<const uint8_t> data, int timeout_ms);

// Streams `data` over the pair (SendAndDrain, with a BackgroundReceiver): OK when both ends
// finished and the bytes arrived intact; else which end failed, or Corruption.
Status Transfer(LinkPair& pair, std::span<const uint8_t> data, int timeout_ms,
                size_t piece = SIZE_MAX, int slow_us = 0);

// ReceiveAll on a thread, which then keeps the link progressing until Finish(): a sender
// draining its link needs the receiver's credits and progress.
class BackgroundReceiver {
 public:
  BackgroundReceiver(StreamReceiver& r, Checksum* sum, int timeout_ms, size_t piece = SIZE_MAX,
                     int slow_us = 0);
  ~BackgroundReceiver() { (void)Finish(); }
  BackgroundReceiver(const BackgroundReceiver&) = delete;
  BackgroundReceiver& operator=(const BackgroundReceiver&) = delete;
  // Stops the thread; returns what ReceiveAll returned (or the link's later error).
  Status Finish();

 private:
  std::atomic<bool> done_{false};
  Status status_;
  std::thread thread_;
};

}  // namespace kv::transport::test
