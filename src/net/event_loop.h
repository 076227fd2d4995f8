// A small epoll reactor: fd readiness callbacks, timers, and tasks posted from other threads.
//
// Threading: one loop per thread. Post() and Stop() may be called from any thread; everything
// else only from the loop's own thread (after Run() started, or before it on the creating thread).
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "net/epoll_poller.h"

namespace kv::net {

// Receives readiness events for one fd. Owned by whoever registered it.
class FdHandler {
 public:
  virtual ~FdHandler() = default;
  virtual void OnEvents(uint32_t events) = 0;
};

class EventLoop {
 public:
  static constexpr uint32_t kReadable = EPOLLIN;
  static constexpr uint32_t kWritable = EPOLLOUT;

  // A timer callback returns the delay in ms until it runs again, or a negative value to stop.
  using TimerFn = std::function<int64_t()>;
  using TimerId = uint64_t;

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  Status AddFd(int fd, uint32_t events, FdHandler* handler);
  Status ModifyFd(int fd, uint32_t events, FdHandler* handler);
  // After RemoveFd returns, the handler receives no more events, even ones already collected
  // in the current batch, so it may be destroyed right away.
  void RemoveFd(int fd, FdHandler* handler);

  TimerId AddTimer(int64_t delay_ms, TimerFn fn);
  void CancelTimer(TimerId id);

  // Runs fn on the loop thread soon: from another thread, the loop wakes for it; from the loop
  // thread, it runs once the current round's events and timers are done. Thread-safe.
  void Post(std::function<void()> fn);
  // Runs the loop until Stop(). The calling thread becomes the loop thread.
  void Run();
  // Asks the loop to return from Run(). Thread-safe.
  void Stop();
  // True on the thread inside this loop's Run().
  bool InLoopThread() const { return running_here_ == this; }
  // Monotonic ms read once per loop iteration (after each wait): cheap, coarse timestamps.
  int64_t now_ms() const { return now_ms_; }
  // After a round that handled events, poll without sleeping for up to `us` microseconds
  // (yielding the CPU between polls) before the loop blocks in epoll_wait; 0 (the default)
  // turns it off. A sleep and its wake-up cost more than a short poll when requests come
  // back-to-back. After four empty polls in a row the loop polls one busy round in sixteen,
  // until a poll finds events again. Thread-safe.
  void SetBusyPollUs(int us) { busy_poll_us_.store(us, std::memory_order_relaxed); }
  // Polls that found events (requests, or tasks posted from other threads), and those that
  // ran out (tests, INFO).
  uint64_t busy_poll_hits() const { return busy_poll_hits_.load(std::memory_order_relaxed); }
  uint64_t busy_poll_misses() const { return busy_poll_misses_.load(std::memory_order_relaxed); }

 private:
  struct Timer {
    TimerId id;
    TimerFn fn;
  };
  class Waker;

  int NextTimeoutMs() const;
  // How long the wait for events may last: until the next timer, or not at all when tasks
  // are posted.
  int WaitTimeoutMs() const;
  // The events of this round: a busy poll first, where wanted, then a wait.
  std::span<epoll_event> WaitForEvents(bool last_round_busy);
  void RunTimers();
  void RunPosted();

  EpollPoller poller_;
  int wake_fd_ = -1;  // eventfd; readable when tasks are posted
  std::unique_ptr<Waker> waker_;
  std::atomic<bool> stop_{false};
  int64_t now_ms_ = 0;
  static thread_local const EventLoop* running_here_;  // the loop whose Run() this thread is in

  std::multimap<int64_t, Timer> timers_;             // by due time (monotonic ms)
  std::unordered_map<TimerId, int64_t> timer_due_;   // for cancellation
  TimerId next_timer_id_ = 1;

  std::atomic<int> busy_poll_us_{0};
  std::atomic<uint64_t> busy_poll_hits_{0}, busy_poll_misses_{0};
  unsigned busy_poll_failures_ = 0;  // busy polls in a row that found nothing

  std::span<epoll_event> batch_;  // events being dispatched; RemoveFd scrubs them
  size_t batch_pos_ = 0;

  std::mutex post_mu_;
  std::vector<std::function<void()>> posted_;  // guarded by post_mu_
  bool wake_pending_ = false;                  // guarded by post_mu_: the eventfd was written
  std::atomic<bool> has_posted_{false};        // posted_ is not empty (set under post_mu_)
};

}  // namespace kv::net
