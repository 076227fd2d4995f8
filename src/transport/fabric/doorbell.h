// A wake-up for a receiver whose provider gives it no fd to sleep on (shm): without one it can
// only poll on a timer, and each chunk then waits for the next poll and a thread hand-off.
//
// The receiver binds a Unix datagram socket in the abstract namespace and names it in its blob
// ("doorbell"); a sender that rings doorbells says so in its blob ("rings"), and only then
// does the receiver sleep on the socket. The sender rings (one byte, never blocking) after it
// posts writes or control messages, and while writes are in flight, so that protocol steps a
// provider runs across both ends' progress reach the receiver too. A lost or coalesced ring
// costs a later wake-up only: the receiver keeps a slow timer beside the fd. Anyone on the host
// may ring; a ring carries nothing but a wake-up.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "net/socket.h"

namespace kv::transport::fabric {

class DoorbellListener {
 public:
  // Binds a fresh abstract name, kvstore-doorbell-<pid>-<random>.
  static Result<DoorbellListener> Open();

  const std::string& name() const { return name_; }
  int fd() const { return fd_.get(); }
  // Reads every pending ring: true when there was one.
  bool Drain();

 private:
  DoorbellListener(net::Fd fd, std::string name) : fd_(std::move(fd)), name_(std::move(name)) {}
  net::Fd fd_;
  std::string name_;
};

class DoorbellRinger {
 public:
  // A name from a receiver's blob: refused unless it is one DoorbellListener makes.
  static Result<DoorbellRinger> Connect(std::string_view name);

  // Best effort: a full socket already holds rings, a vanished one is the link's failure to
  // find.
  void Ring();

 private:
  explicit DoorbellRinger(net::Fd fd) : fd_(std::move(fd)) {}
  net::Fd fd_;
};

}  // namespace kv::transport::fabric
