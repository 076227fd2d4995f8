#include "net/event_loop.h"

#include <sys/eventfd.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <climits>

#include "common/clock.h"
#include "common/logging.h"

namespace kv::net {

class EventLoop::Waker : public FdHandler {
 public:
  explicit Waker(EventLoop* loop) : loop_(loop) {}
  void OnEvents(uint32_t) override {
    uint64_t v;
    while (read(loop_->wake_fd_, &v, sizeof(v)) > 0) {
    }
    loop_->RunPosted();
  }

 private:
  EventLoop* loop_;
};

thread_local const EventLoop* EventLoop::running_here_ = nullptr;

EventLoop::EventLoop() : now_ms_(MonoMs()) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  waker_ = std::make_unique<Waker>(this);
  if (!poller_.valid() || wake_fd_ < 0 || !AddFd(wake_fd_, kReadable, waker_.get()).ok()) {
    LOG_WARNING("event loop: cannot create epoll/eventfd");
    abort();
  }
}

EventLoop::~EventLoop() {
  if (wake_fd_ >= 0) close(wake_fd_);
}

Status EventLoop::AddFd(int fd, uint32_t events, FdHandler* handler) {
  return poller_.Add(fd, events, handler);
}

Status EventLoop::ModifyFd(int fd, uint32_t events, FdHandler* handler) {
  return poller_.Modify(fd, events, handler);
}

void EventLoop::RemoveFd(int fd, FdHandler* handler) {
  poller_.Remove(fd);
  for (size_t i = batch_pos_; i < batch_.size(); i++) {
    if (batch_[i].data.ptr == handler) batch_[i].data.ptr = nullptr;
  }
}

EventLoop::TimerId EventLoop::AddTimer(int64_t delay_ms, TimerFn fn) {
  TimerId id = next_timer_id_++;
  int64_t due = MonoMs() + delay_ms;
  timers_.emplace(due, Timer{id, std::move(fn)});
  timer_due_[id] = due;
  return id;
}

void EventLoop::CancelTimer(TimerId id) {
  auto it = timer_due_.find(id);
  if (it == timer_due_.end()) return;
  auto range = timers_.equal_range(it->second);
  for (auto t = range.first; t != range.second; ++t) {
    if (t->second.id == id) {
      timers_.erase(t);
      break;
    }
  }
  timer_due_.erase(it);
}

void EventLoop::Post(std::function<void()> fn) {
  // The loop's own thread needs no wake-up: Run() takes posted tasks before it waits again.
  bool own = InLoopThread();
  bool need_wake;
  {
    std::lock_guard lock(post_mu_);
    posted_.push_back(std::move(fn));
    has_posted_.store(true, std::memory_order_relaxed);
    need_wake = !own && !wake_pending_;
    if (need_wake) wake_pending_ = true;
  }
  if (need_wake) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }
}

void EventLoop::RunPosted() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(post_mu_);
    tasks.swap(posted_);
    has_posted_.store(false, std::memory_order_relaxed);
    wake_pending_ = false;
  }
  for (auto& t : tasks) t();
}

void EventLoop::Stop() {
  stop_ = true;
  Post([] {});
}

int EventLoop::NextTimeoutMs() const {
  if (timers_.empty()) return -1;
  int64_t wait = timers_.begin()->first - MonoMs();
  if (wait < 0) return 0;
  return wait > INT_MAX ? INT_MAX : static_cast<int>(wait);
}

void EventLoop::RunTimers() {
  int64_t now = MonoMs();
  while (!timers_.empty() && timers_.begin()->first <= now) {
    auto node = timers_.extract(timers_.begin());
    Timer t = std::move(node.mapped());
    timer_due_.erase(t.id);
    int64_t again = t.fn();
    if (again >= 0) {
      int64_t due = MonoMs() + again;
      timer_due_[t.id] = due;
      timers_.emplace(due, std::move(t));
    }
  }
}

int EventLoop::WaitTimeoutMs() const {
  // Tasks this thread posted run at the end of this round; the wait only looks for events.
  return has_posted_.load(std::memory_order_relaxed) ? 0 : NextTimeoutMs();
}

std::span<epoll_event> EventLoop::WaitForEvents(bool last_round_busy) {
  int timeout_ms = WaitTimeoutMs();
  int64_t poll_us = busy_poll_us_.load(std::memory_order_relaxed);
  // After kBusyPollStreak polls in a row came up empty, one busy round in kBusyPollRetry polls:
  // a loop whose requests come further apart than the poll lasts sleeps almost as it would
  // without.
  constexpr unsigned kBusyPollStreak = 4, kBusyPollRetry = 16;
  bool poll = poll_us > 0 && timeout_ms != 0 && last_round_busy &&
              (busy_poll_failures_ < kBusyPollStreak ||
               (busy_poll_failures_ - kBusyPollStreak + 1) % kBusyPollRetry == 0);
  if (poll) {
    if (timeout_ms > 0) poll_us = std::min<int64_t>(poll_us, int64_t{timeout_ms} * 1000);
    int64_t deadline = MonoUs() + poll_us;
    do {
      std::span<epoll_event> ready = poller_.Wait(0);
      if (!ready.empty()) {
        busy_poll_failures_ = 0;
        busy_poll_hits_.fetch_add(1, std::memory_order_relaxed);
        return ready;
      }
      // Let a thread that shares this CPU (a client on the same machine) run meanwhile.
      sched_yield();
    } while (MonoUs() < deadline);
    busy_poll_failures_++;
    busy_poll_misses_.fetch_add(1, std::memory_order_relaxed);
    timeout_ms = WaitTimeoutMs();  // the poll took some of the time to the next timer
  } else if (last_round_busy && busy_poll_failures_ >= kBusyPollStreak) {
    busy_poll_failures_++;
  }
  return poller_.Wait(timeout_ms);
}

void EventLoop::Run() {
  running_here_ = this;
  bool busy = false;
  while (!stop_) {
    batch_ = WaitForEvents(busy);
    busy = !batch_.empty();
    now_ms_ = MonoMs();
    for (batch_pos_ = 0; batch_pos_ < batch_.size(); batch_pos_++) {
      epoll_event ev = batch_[batch_pos_];
      if (ev.data.ptr) static_cast<FdHandler*>(ev.data.ptr)->OnEvents(ev.events);
    }
    batch_ = {};
    batch_pos_ = 0;
    RunTimers();
    if (has_posted_.load(std::memory_order_relaxed)) RunPosted();
  }
  RunPosted();
  running_here_ = nullptr;
}

}  // namespace kv::net
