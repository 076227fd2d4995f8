#include "net/epoll_poller.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace kv::net {

EpollPoller::EpollPoller() : epfd_(epoll_create1(EPOLL_CLOEXEC)), events_(256) {}

EpollPoller::~EpollPoller() {
  if (epfd_ >= 0) close(epfd_);
}

Status EpollPoller::Add(int fd, uint32_t events, void* ptr) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = ptr;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) return Status::FromErrno("epoll_ctl add", errno);
  return Status::Ok();
}

Status EpollPoller::Modify(int fd, uint32_t events, void* ptr) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = ptr;
  if (epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) != 0) return Status::FromErrno("epoll_ctl mod", errno);
  return Status::Ok();
}

void EpollPoller::Remove(int fd) { epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr); }

std::span<epoll_event> EpollPoller::Wait(int timeout_ms) {
  int n = epoll_wait(epfd_, events_.data(), static_cast<int>(events_.size()), timeout_ms);
  if (n < 0) n = 0;  // EINTR: report nothing, the caller loops
  std::span<epoll_event> ready(events_.data(), static_cast<size_t>(n));
  if (static_cast<size_t>(n) == events_.size() && events_.size() < 8192) {
    // A full batch: grow for the next wait (the ready span stays valid until then).
    spare_.resize(events_.size() * 2);
    std::copy(ready.begin(), ready.end(), spare_.begin());
    events_.swap(spare_);
    ready = std::span<epoll_event>(events_.data(), static_cast<size_t>(n));
  }
  return ready;
}

}  // namespace kv::net
