// The data-plane channel: one ordered, unbounded byte stream from a sender to a receiver, with
// offsets, acknowledgements and resumption. Two implementations behind one interface:
//  * "fabric": libfabric (verbs in production; tcp and shm here). The receiver owns a
//    registered ring of `credits` slots; the sender RDMA-writes chunks into slots it holds a
//    credit for and describes each chunk on the control endpoint; the receiver returns the
//    credit, with the offset it has consumed, once the consumer is done with the slot.
//  * "tcp": plain sockets, the fallback and the baseline, with the same API and the same
//    acknowledgements.
//
// Setup, through a control link the caller owns (e.g. the replication TCP connection):
//   receiver = CreateReceiver(opts, resume_offset);  sender = CreateSender(opts);
//   each: blob = LocalBlob(); send it to the peer; peer_blob = what the peer sent
//         (ExchangeBlobs() in wire.h does this over a connected socket);
//   both, concurrently: Connect(peer_blob)  (blocks up to connect_timeout_ms)
//   sender->start_offset() is where the receiver wants the stream to resume.
//
// After a failure (any non-OK Status from a call), the link is dead: destroy both ends, build
// new ones the same way with CreateReceiver(opts, receiver->consumed_offset()), and the sender
// resends from the new link's start_offset(). Keys and addresses of a dead link are never valid
// on a new one.
//
// Driving a link: from a blocking thread call Wait() in a loop; from an epoll loop watch the
// fds from WaitFds() (see loop_driver.h) and call Progress() when they fire and on a timer.
//
// Threading: each end is used by one thread at a time; nothing here is thread-safe.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "transport/poll_mode.h"

namespace kv::transport {

struct ChannelOptions {
  std::string transport = "fabric";  // "fabric" or "tcp"
  std::string provider = "auto";     // fabric provider: auto, verbs, tcp, shm, tcp;ofi_rxm, ...
  std::string bind_addr = "127.0.0.1";  // where listeners bind (fabric MSG, tcp)
  uint32_t credits = 4;                 // ring slots = initial credits
  uint32_t min_chunk = 128 * 1024;      // adaptive chunk bounds; the slot size is max_chunk
  uint32_t max_chunk = 1024 * 1024;
  bool adaptive = true;                 // false: always max_chunk
  uint32_t cq_batch = 32;               // completions drained per poll
  PollMode poll_mode = PollMode::kAuto;
  // Low-frequency poll beside the fd wait, in case an event's wake-up is lost; it doubles after
  // every kEconomySleepsPerBackoff empty sleeps, up to kMaxEconomyPollMs (or this value, if
  // larger), so an idle link wakes about 30 times a second instead of 100.
  int economy_poll_ms = 10;
  // Sleep between polls where there is no fd (shm), after an event; it doubles after every
  // kSleepsPerBackoff empty sleeps, up to kMaxTimedPollUs (or this value, if larger).
  int timed_poll_us = 500;
  int connect_timeout_ms = 10000;
  int stall_timeout_ms = 5000;          // sender: no progress while waiting on the peer
  // Fabric links without a completion fd (shm): the receiver sleeps on a doorbell its sender
  // rings (fabric/doorbell.h). false: a sender rings none and a receiver offers none (it polls).
  bool doorbell = true;
};

// Counters for benchmarks and INFO.
struct LinkStats {
  uint64_t chunks = 0;
  uint64_t bytes = 0;
  uint64_t polls = 0;
  uint64_t empty_polls = 0;
  uint64_t sleeps = 0;
  uint64_t mode_switches = 0;
  uint64_t credit_msgs = 0;  // credit messages received (fabric sender)
  uint32_t chunk_size = 0;
};

// Lets another thread cut a Link::Wait() short (new data to send, say) without waiting for
// its timeout: Notify() sets a flag the waiter checks between polls and, only while the waiter
// sleeps, makes an eventfd readable that it sleeps on beside the link's fds.
class WaitInterrupt {
 public:
  WaitInterrupt();
  ~WaitInterrupt();
  WaitInterrupt(const WaitInterrupt&) = delete;
  WaitInterrupt& operator=(const WaitInterrupt&) = delete;

  // Any thread.
  void Notify();
  // The waiter: true (and cleared) when Notify() was called since the last Take().
  bool Take();
  // The waiter, around a sleep on fd(): BeginSleep() returns false when a notification is
  // already pending (then do not sleep).
  bool BeginSleep();
  void EndSleep();
  int fd() const { return fd_; }

 private:
  std::atomic<bool> pending_{false};
  std::atomic<bool> sleeping_{false};
  int fd_;
};

class Link {
 public:
  static constexpr int kStreamTimedPollUs = 50;
  static constexpr int kMaxTimedPollUs = 1000;
  static constexpr uint64_t kSleepsPerBackoff = 64;
  static constexpr int kMaxEconomyPollMs = 80;
  static constexpr uint64_t kEconomySleepsPerBackoff = 8;

  virtual ~Link() = default;

  // The setup blob to hand to the peer.
  virtual Result<std::string> LocalBlob() = 0;
  // Completes setup with the peer's blob; blocks up to connect_timeout_ms.
  virtual Status Connect(std::string_view peer_blob) = 0;

  // Nonblocking: reaps up to cq_batch completions, handles control messages, sends what is
  // queued. Returns the number of events handled, or the link's error once it has failed.
  virtual Result<int> Progress() = 0;
  // Blocks until Progress() handled at least one event or timeout_ms passed, spinning or
  // sleeping as the poll mode says; returns 0 early when `interrupt` is notified. Returns like
  // Progress(). `unlocked_asleep` (held by the caller, guarding the link) is released while
  // the thread sleeps, so that another thread may write to the link meanwhile.
  Result<int> Wait(int timeout_ms, WaitInterrupt* interrupt = nullptr,
                   std::mutex* unlocked_asleep = nullptr);
  // The fds that become readable when Progress() may have work (CQ and EQ fds, or the
  // socket), appended to `out`. None on providers without a CQ fd: poll on a timer there.
  virtual void WaitFds(std::vector<pollfd>* out) const = 0;

  // Call right before sleeping on WaitFds(): false when events are already pending (then do not
  // sleep, call Progress() again). Wraps fi_trywait on fabric links.
  virtual bool ArmWait() { return true; }

  // Changes how Wait() waits from now on (a bulk transfer done, a latency-bound stream next).
  void set_poll_mode(PollMode mode);
  PollMode poll_mode() const { return opts_.poll_mode; }
  // For a stream of small, latency-bound messages, `auto` becomes `economy`: spinning steals the
  // cores the peers need (the replication latency tails on two cores were 10x worse, and on
  // shm one run in three settled into a slow pattern). Where the link has no fd to sleep on,
  // the timed poll becomes kStreamTimedPollUs (it backs off while idle). Explicit modes are
  // kept.
  void UseStreamPollMode();
  // Where a poll is a system call (sockets: the tcp channel, libfabric's tcp provider), a
  // spinning thread buys nothing that sleeping on the fd does not and takes the cores the peers
  // need: `auto` sleeps on the link's fds, as `economy` does, from setup on. Explicit modes,
  // and links without fds, are kept.
  void UseSleepingPolls();

  // The first error the link hit (OK while healthy).
  const Status& status() const { return status_; }
  // Tears the link down; the peer sees an error or a disconnect.
  virtual void Close() = 0;
  const LinkStats& stats() const { return stats_; }
  // "fabric/tcp", "fabric/shm", "tcp", ...
  virtual std::string Describe() const = 0;

 protected:
  explicit Link(const ChannelOptions& opts);
  // Records the first error and returns it.
  Status Fail(Status s);
  // The current timed-poll period (see ChannelOptions::timed_poll_us).
  int64_t TimedPollUs() const;
  // The current low-frequency poll beside the fd wait (see ChannelOptions::economy_poll_ms).
  int64_t EconomyPollUs() const;

  ChannelOptions opts_;
  Status status_;
  LinkStats stats_;

 private:
  PollModeController poll_ctl_;
  uint64_t empty_sleeps_ = 0;  // sleeps since the last event
};

// A read-only region (a mapped snapshot file) a sender writes from without copying it through
// its staging buffers: registered once with RegisterSource(), written from any number of times,
// destroyed only once WritesInFlight() is false.
class SourceRegion {
 public:
  explicit SourceRegion(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  virtual ~SourceRegion() = default;
  std::span<const uint8_t> bytes() const { return bytes_; }
  // True when writes go straight from this memory (registered with the provider); false when
  // they are copied through staging buffers (the socket channel, or memory the provider could
  // not register).
  virtual bool zero_copy() const { return false; }

 private:
  std::span<const uint8_t> bytes_;
};

class StreamSender : public Link {
 public:
  // Writable space for the next chunk (up to the current chunk size); empty without a credit.
  virtual std::span<uint8_t> Reserve() = 0;
  // Sends the first n bytes of the span Reserve() returned (0 < n <= its size).
  virtual Status Commit(size_t n) = 0;
  // Copies as much of `data` as credits allow into chunks and sends them; returns bytes taken.
  Result<size_t> Write(std::span<const uint8_t> data);
  // Ends the stream after everything committed. Further Commit()s fail.
  virtual Status Finish() = 0;

  // Registers `bytes` (which must stay valid and unchanged while the region lives) as a source
  // for WriteFrom(). Fabric links register it with the provider for reads by the NIC, or, where
  // the provider refuses the memory (verbs pins pages, and the kernel refuses to pin a
  // read-only MAP_SHARED file mapping), copy it through staging buffers; the socket channel has
  // nothing to register.
  virtual Result<std::unique_ptr<SourceRegion>> RegisterSource(std::span<const uint8_t> bytes) {
    return std::make_unique<SourceRegion>(bytes);
  }
  // Like Write(), for a `part` of `region`, but each chunk is written straight from the
  // region's memory where the link can (fabric); the socket channel copies as Write() does.
  virtual Result<size_t> WriteFrom(const SourceRegion& region, std::span<const uint8_t> part) {
    (void)region;
    return Write(part);
  }
  // True while a write posted from a source region (or a staging buffer) has not completed
  // locally: the region must outlive them.
  virtual bool WritesInFlight() const { return false; }

  // Offset of the first byte this link carries (the receiver's resume point).
  virtual uint64_t start_offset() const = 0;
  // Offset after the last committed byte.
  virtual uint64_t committed_offset() const = 0;
  // Offset up to which the receiver has consumed, as it last told us.
  virtual uint64_t acked_offset() const = 0;
  // True when everything committed (and the end marker, after Finish) was acknowledged.
  virtual bool Drained() const = 0;

 protected:
  using Link::Link;
};

class StreamReceiver : public Link {
 public:
  // The next contiguous received bytes, at consumed_offset(); empty when none have arrived.
  virtual std::span<const uint8_t> Peek() = 0;
  // Releases the first n bytes of Peek() (n <= its size).
  virtual Status Consume(size_t n) = 0;
  // Copies up to out.size() bytes and consumes them; returns the count.
  size_t Read(std::span<uint8_t> out);
  // The sender finished and everything was consumed.
  virtual bool eof() const = 0;
  virtual uint64_t consumed_offset() const = 0;

 protected:
  using Link::Link;
};

// Loads the fabric library's providers now: libfabric probes every provider and reads kernel
// state on its first fi_getinfo (~85 ms on the development VM), which would otherwise fall on
// the first link's setup, in the middle of a replication handshake. Any thread, idempotent;
// concurrent and later calls return once it is done.
void PrepareFabric();

Result<std::unique_ptr<StreamSender>> CreateSender(const ChannelOptions& opts);
// `resume_offset`: the stream offset the receiver wants next (0 for a new stream).
Result<std::unique_ptr<StreamReceiver>> CreateReceiver(const ChannelOptions& opts,
                                                       uint64_t resume_offset);

// Blocking helpers for threads and tests: send all of `data` (waiting for credits), and drain
// until everything is acknowledged (after Finish). Fail with the link's error or on timeout.
Status SendAll(StreamSender& s, std::span<const uint8_t> data, int timeout_ms);
Status FinishAndDrain(StreamSender& s, int timeout_ms);

}  // namespace kv::transport
