#include "transport/fabric/doorbell.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>

namespace kv::transport::fabric {

namespace {
constexpr std::string_view kPrefix = "kvstore-doorbell-";
constexpr size_t kMaxName = 64;

// The abstract-namespace address for `name` (a leading NUL, no terminator).
socklen_t AbstractAddress(std::string_view name, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path + 1, name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

bool ValidName(std::string_view name) {
  if (name.size() <= kPrefix.size() || name.size() > kMaxName || !name.starts_with(kPrefix)) {
    return false;
  }
  for (char c : name.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return false;
  }
  return true;
}
}  // namespace

Result<DoorbellListener> DoorbellListener::Open() {
  net::Fd fd(socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status::FromErrno("doorbell socket", errno);
  std::random_device rd;
  for (int attempt = 0; attempt < 8; attempt++) {
    char name[kMaxName];
    snprintf(name, sizeof name, "%.*s%x-%08x%08x", static_cast<int>(kPrefix.size()),
             kPrefix.data(), static_cast<unsigned>(getpid()), rd(), rd());
    sockaddr_un addr;
    socklen_t len = AbstractAddress(name, &addr);
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0) {
      return DoorbellListener(std::move(fd), name);
    }
    if (errno != EADDRINUSE) break;
  }
  return Status::FromErrno("doorbell bind", errno);
}

bool DoorbellListener::Drain() {
  // One call takes up to kBatch rings (a datagram each; only their arrival counts): the usual
  // single ring costs one system call, not a second one that finds the socket empty.
  constexpr int kBatch = 16;
  char bytes[kBatch];
  iovec iov[kBatch];
  mmsghdr msgs[kBatch];
  for (int i = 0; i < kBatch; i++) {
    iov[i] = {&bytes[i], 1};
    msgs[i] = {};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  bool rang = false;
  for (;;) {
    int n = recvmmsg(fd_.get(), msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) return rang;
    rang = true;
    if (n < kBatch) return true;  // the socket is empty
  }
}

Result<DoorbellRinger> DoorbellRinger::Connect(std::string_view name) {
  if (!ValidName(name)) return Status::Corruption("receiver named an invalid doorbell");
  net::Fd fd(socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status::FromErrno("doorbell socket", errno);
  sockaddr_un addr;
  socklen_t len = AbstractAddress(name, &addr);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return Status::Closed("cannot reach the receiver's doorbell: " +
                          Status::FromErrno("doorbell connect", errno).message());
  }
  return DoorbellRinger(std::move(fd));
}

void DoorbellRinger::Ring() {
  char one = 1;
  (void)!send(fd_.get(), &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

}  // namespace kv::transport::fabric
