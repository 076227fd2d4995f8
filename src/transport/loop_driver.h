// Drives a Link from a net::EventLoop, for code that lives on an epoll loop (replication):
// the link's CQ/EQ fds (or socket) are watched for readability, a timer polls at a low
// frequency (or every timed_poll_us where the provider has no fd, e.g. shm), and while the link
// is busy — or always, in performance mode — the driver re-posts itself to keep polling without
// sleeping. After each round it calls the owner's callback, which can Reserve/Commit or
// Peek/Consume and check link.status().
//
// Threading: loop thread only. The driver must be destroyed (or Stop()ped) before the link.
#pragma once

#include <functional>
#include <vector>

#include "net/event_loop.h"
#include "transport/channel.h"

namespace kv::transport {

class LoopDriver : public net::FdHandler {
 public:
  using Callback = std::function<void(Link& link, int events)>;

  LoopDriver(net::EventLoop* loop, Link* link, PollMode mode, int timer_ms, Callback cb);
  ~LoopDriver() override;
  LoopDriver(const LoopDriver&) = delete;
  LoopDriver& operator=(const LoopDriver&) = delete;

  Status Start();
  void Stop();
  void OnEvents(uint32_t events) override;
  // Rounds run so far (tests look at how the driver was woken).
  uint64_t rounds() const { return rounds_; }

 private:
  void Round();
  void SchedulePost();

  net::EventLoop* loop_;
  Link* link_;
  PollMode mode_;
  int timer_ms_;
  Callback cb_;
  std::vector<int> fds_;
  net::EventLoop::TimerId timer_ = 0;
  bool running_ = false;
  bool post_pending_ = false;
  int idle_rounds_ = 0;
  uint64_t rounds_ = 0;
  // Guards posted closures against a destroyed driver.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace kv::transport
