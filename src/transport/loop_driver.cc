#include "transport/loop_driver.h"

namespace kv::transport {

namespace {
// Auto mode keeps re-posting while rounds find work, and for this many empty rounds after.
constexpr int kSpinRounds = 64;
}  // namespace

LoopDriver::LoopDriver(net::EventLoop* loop, Link* link, PollMode mode, int timer_ms, Callback cb)
    : loop_(loop), link_(link), mode_(mode), timer_ms_(timer_ms), cb_(std::move(cb)) {}

LoopDriver::~LoopDriver() {
  Stop();
  *alive_ = false;
}

Status LoopDriver::Start() {
  std::vector<pollfd> fds;
  link_->WaitFds(&fds);
  for (const pollfd& p : fds) {
    if (Status s = loop_->AddFd(p.fd, net::EventLoop::kReadable, this); !s.ok()) return s;
    fds_.push_back(p.fd);
  }
  running_ = true;
  int period = timer_ms_ > 0 ? timer_ms_ : 1;
  // Stop() during the timer's own run cannot cancel it (the loop re-arms it when it returns),
  // so the timer checks again after its round, and that this driver still exists before it.
  std::weak_ptr<bool> alive = alive_;
  timer_ = loop_->AddTimer(period, [this, period, alive]() -> int64_t {
    if (auto a = alive.lock(); !a || !*a || !running_) return -1;
    Round();
    return running_ ? period : -1;
  });
  SchedulePost();
  return Status::Ok();
}

void LoopDriver::Stop() {
  if (!running_) return;
  running_ = false;
  for (int fd : fds_) loop_->RemoveFd(fd, this);
  fds_.clear();
  loop_->CancelTimer(timer_);
}

void LoopDriver::OnEvents(uint32_t) { Round(); }

void LoopDriver::SchedulePost() {
  if (post_pending_ || !running_) return;
  post_pending_ = true;
  std::weak_ptr<bool> alive = alive_;
  loop_->Post([this, alive] {
    if (auto a = alive.lock(); !a || !*a) return;
    post_pending_ = false;
    Round();
  });
}

void LoopDriver::Round() {
  if (!running_) return;
  ++rounds_;
  auto r = link_->Progress();
  int events = r.ok() ? *r : 0;
  cb_(*link_, events);
  if (!running_ || !link_->status().ok()) return;
  idle_rounds_ = events > 0 ? 0 : idle_rounds_ + 1;
  bool spin = mode_ == PollMode::kPerformance ||
              (mode_ == PollMode::kAuto && idle_rounds_ < kSpinRounds);
  if (spin) {
    SchedulePost();
    return;
  }
  // Before going back to epoll, make sure nothing is already queued (fi_trywait); without fds
  // the timer is the only wake-up.
  if (!fds_.empty() && !link_->ArmWait()) SchedulePost();
}

}  // namespace kv::transport
