#include "transport/channel.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"
#include "transport/fabric/fabric_channel.h"
#include "transport/tcp/tcp_channel.h"

namespace kv::transport {

namespace {
PollModeController::Config ControllerConfig(const ChannelOptions& o) {
  PollModeController::Config c;
  c.mode = o.poll_mode;
  return c;
}
}  // namespace

Link::Link(const ChannelOptions& opts) : opts_(opts), poll_ctl_(ControllerConfig(opts)) {}

void Link::set_poll_mode(PollMode mode) {
  opts_.poll_mode = mode;
  poll_ctl_ = PollModeController(ControllerConfig(opts_));
}

void Link::UseStreamPollMode() {
  if (opts_.poll_mode != PollMode::kAuto) return;
  std::vector<pollfd> fds;
  WaitFds(&fds);
  if (fds.empty()) opts_.timed_poll_us = std::min(opts_.timed_poll_us, kStreamTimedPollUs);
  set_poll_mode(PollMode::kEconomy);
}

void Link::UseSleepingPolls() {
  if (opts_.poll_mode != PollMode::kAuto) return;
  std::vector<pollfd> fds;
  WaitFds(&fds);
  if (!fds.empty()) set_poll_mode(PollMode::kEconomy);  // without fds, a timed poll: keep auto
}

int64_t Link::TimedPollUs() const {
  int64_t cap = std::max<int64_t>(opts_.timed_poll_us, kMaxTimedPollUs);
  int shift = static_cast<int>(std::min<uint64_t>(empty_sleeps_ / kSleepsPerBackoff, 5));
  return std::min(cap, int64_t{opts_.timed_poll_us} << shift);
}

int64_t Link::EconomyPollUs() const {
  int64_t base = int64_t{opts_.economy_poll_ms} * 1000;
  int64_t cap = std::max<int64_t>(base, int64_t{kMaxEconomyPollMs} * 1000);
  int shift = static_cast<int>(std::min<uint64_t>(empty_sleeps_ / kEconomySleepsPerBackoff, 4));
  return std::min(cap, base << shift);
}

Status Link::Fail(Status s) {
  if (status_.ok() && !s.ok()) {
    status_ = s;
    LOG_VERBOSE("transport: link failed: %s", s.ToString().c_str());
  }
  return status_;
}

WaitInterrupt::WaitInterrupt() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

WaitInterrupt::~WaitInterrupt() {
  if (fd_ >= 0) close(fd_);
}

void WaitInterrupt::Notify() {
  if (pending_.exchange(true)) return;  // already pending: the waiter will see it
  if (sleeping_.load() && fd_ >= 0) {
    uint64_t one = 1;
    (void)!write(fd_, &one, sizeof one);
  }
}

bool WaitInterrupt::Take() {
  if (!pending_.load(std::memory_order_relaxed)) return false;
  pending_.store(false);
  return true;
}

bool WaitInterrupt::BeginSleep() {
  sleeping_.store(true);
  // Notify() sets pending_ before it reads sleeping_, and we set sleeping_ before reading
  // pending_: one of the two sees the other.
  if (pending_.load()) {
    sleeping_.store(false);
    return false;
  }
  return true;
}

void WaitInterrupt::EndSleep() {
  sleeping_.store(false);
  uint64_t n;
  if (fd_ >= 0) (void)!read(fd_, &n, sizeof n);
}

Result<int> Link::Wait(int timeout_ms, WaitInterrupt* interrupt, std::mutex* unlocked_asleep) {
  int64_t deadline = MonoUs() + int64_t{timeout_ms} * 1000;
  std::vector<pollfd> fds;
  bool woke = false;  // this poll follows a sleep
  for (;;) {
    auto r = Progress();
    if (!r.ok()) return r;
    int64_t now = MonoUs();
    ++stats_.polls;
    poll_ctl_.OnPoll(*r, now, woke);
    woke = false;
    stats_.mode_switches = poll_ctl_.switches();
    if (*r > 0) {
      empty_sleeps_ = 0;
      return r;
    }
    ++stats_.empty_polls;
    if (now >= deadline) return 0;
    if (interrupt && interrupt->Take()) return 0;
    if (poll_ctl_.spinning()) {
      // Spin, but let a runnable peer on the same core go first (on a 2-core machine both ends
      // and the provider's progress share the cores: FABRIC.md pitfall 5).
      sched_yield();
      continue;
    }
    // Sleep: on the CQ/EQ fds when there are some (fi_trywait first, so nothing already
    // queued is slept through), else a short timed poll; and on the interrupt's fd.
    ++stats_.sleeps;
    int64_t left_us = deadline - now;
    fds.clear();
    WaitFds(&fds);
    woke = true;
    int64_t sleep_us;
    if (fds.empty()) {
      sleep_us = std::min<int64_t>(left_us, TimedPollUs());
      ++empty_sleeps_;
    } else {
      if (!ArmWait()) continue;
      sleep_us = std::min<int64_t>(left_us, EconomyPollUs());
      ++empty_sleeps_;
    }
    if (interrupt) {
      if (!interrupt->BeginSleep()) continue;
      fds.push_back({interrupt->fd(), POLLIN, 0});
    }
    if (unlocked_asleep) unlocked_asleep->unlock();
    if (fds.empty()) {
      ::usleep(static_cast<useconds_t>(sleep_us));
    } else {
      timespec ts{sleep_us / 1000000, (sleep_us % 1000000) * 1000};
      ::ppoll(fds.data(), fds.size(), &ts, nullptr);
    }
    if (unlocked_asleep) unlocked_asleep->lock();
    if (interrupt) interrupt->EndSleep();
  }
}

Result<size_t> StreamSender::Write(std::span<const uint8_t> data) {
  size_t taken = 0;
  while (taken < data.size()) {
    std::span<uint8_t> room = Reserve();
    if (room.empty()) break;
    size_t n = std::min(room.size(), data.size() - taken);
    std::memcpy(room.data(), data.data() + taken, n);
    if (Status s = Commit(n); !s.ok()) return s;
    taken += n;
  }
  if (!status().ok()) return status();
  return taken;
}

size_t StreamReceiver::Read(std::span<uint8_t> out) {
  size_t got = 0;
  while (got < out.size()) {
    std::span<const uint8_t> in = Peek();
    if (in.empty()) break;
    size_t n = std::min(in.size(), out.size() - got);
    std::memcpy(out.data() + got, in.data(), n);
    if (!Consume(n).ok()) break;
    got += n;
  }
  return got;
}

void PrepareFabric() { fabric::LoadProviders(); }

Result<std::unique_ptr<StreamSender>> CreateSender(const ChannelOptions& opts) {
  if (opts.credits == 0 || opts.max_chunk == 0) return Status::Invalid("credits and chunk > 0");
  if (opts.transport == "fabric") {
    return std::unique_ptr<StreamSender>(new fabric::FabricSender(opts));
  }
  if (opts.transport == "tcp") return std::unique_ptr<StreamSender>(new tcp::TcpSender(opts));
  return Status::Invalid("unknown transport '" + opts.transport + "' (fabric, tcp)");
}

Result<std::unique_ptr<StreamReceiver>> CreateReceiver(const ChannelOptions& opts,
                                                       uint64_t resume_offset) {
  if (opts.credits == 0 || opts.max_chunk == 0) return Status::Invalid("credits and chunk > 0");
  if (opts.transport == "fabric") {
    return std::unique_ptr<StreamReceiver>(new fabric::FabricReceiver(opts, resume_offset));
  }
  if (opts.transport == "tcp") {
    return std::unique_ptr<StreamReceiver>(new tcp::TcpReceiver(opts, resume_offset));
  }
  return Status::Invalid("unknown transport '" + opts.transport + "' (fabric, tcp)");
}

Status SendAll(StreamSender& s, std::span<const uint8_t> data, int timeout_ms) {
  int64_t deadline = MonoMs() + timeout_ms;
  size_t done = 0;
  while (done < data.size()) {
    auto w = s.Write(data.subspan(done));
    if (!w.ok()) return w.status();
    done += *w;
    if (done == data.size()) break;
    int64_t left = deadline - MonoMs();
    if (left <= 0) return Status::Closed("SendAll timed out");
    auto r = s.Wait(static_cast<int>(std::min<int64_t>(left, 100)));
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

Status FinishAndDrain(StreamSender& s, int timeout_ms) {
  int64_t deadline = MonoMs() + timeout_ms;
  if (Status st = s.Finish(); !st.ok()) return st;
  while (!s.Drained()) {
    int64_t left = deadline - MonoMs();
    if (left <= 0) return Status::Closed("drain timed out");
    auto r = s.Wait(static_cast<int>(std::min<int64_t>(left, 100)));
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

}  // namespace kv::transport
