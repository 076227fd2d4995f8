// The epoll backend of the event loop: a thin owner of one epoll instance.
// Not thread-safe: used only by the loop's own thread (epoll_ctl itself is thread-safe, but the
// loop keeps its bookkeeping on one thread).
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace kv::net {

class EpollPoller {
 public:
  EpollPoller();
  ~EpollPoller();
  EpollPoller(const EpollPoller&) = delete;
  EpollPoller& operator=(const EpollPoller&) = delete;

  bool valid() const { return epfd_ >= 0; }
  Status Add(int fd, uint32_t events, void* ptr);
  Status Modify(int fd, uint32_t events, void* ptr);
  void Remove(int fd);
  // Waits up to timeout_ms (-1: forever) and returns the ready events.
  std::span<epoll_event> Wait(int timeout_ms);

 private:
  int epfd_;
  std::vector<epoll_event> events_;
  std::vector<epoll_event> spare_;
};

}  // namespace kv::net
