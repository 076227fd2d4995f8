// TCP and Unix sockets: an owning fd wrapper and the few calls the server needs.
#pragma once

#include <string>
#include <utility>

#include "common/status.h"

namespace kv::net {

// Owns a file descriptor; closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset();
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// Listens on addr:port ("*" or "" for any IPv4 address, "::" / "::1" for IPv6), non-blocking,
// SO_REUSEADDR. port 0 picks a free port.
Result<Fd> ListenTcp(const std::string& addr, int port, int backlog);
// Listens on a Unix socket at path (a file left there by an earlier run is removed first),
// non-blocking; perm, when not 0, is the file's mode (unixsocketperm).
Result<Fd> ListenUnix(const std::string& path, unsigned perm, int backlog);
// Connects (blocking, with a timeout) to the Unix socket at path.
Result<Fd> ConnectUnix(const std::string& path, int timeout_ms);
// Connects (blocking, with a timeout) to host:port; from source_addr when it is not empty (a
// local address the socket is bound to first, any port).
Result<Fd> ConnectTcp(const std::string& host, int port, int timeout_ms,
                      const std::string& source_addr = "");
// Starts a non-blocking connect to a numeric address ip:port (from source_addr when it is not
// empty): the socket is writable once it is done, and then SO_ERROR tells how it went.
Result<Fd> ConnectTcpStart(const std::string& ip, int port, const std::string& source_addr = "");
// Accepts one connection, non-blocking. kAgain when none is pending; kClosed when the pending
// connection failed on its own (others may follow); else a failure of the listener or of the
// process (out of file descriptors or memory).
Result<Fd> AcceptTcp(int listen_fd);

Status SetNonBlocking(int fd);
// TCP_NODELAY on (the default for clients) or off; failures are ignored (a Unix socket).
void SetNoDelay(int fd, bool on = true);
void SetKeepAlive(int fd, int interval_s);
// "ip:port" of the peer or of the local end; "path:0" on a Unix socket, as Redis lists them.
bool IsUnixSocket(int fd);
std::string PeerName(int fd);
std::string SockName(int fd);
int LocalPort(int fd);
// The local end's IP address alone ("10.0.0.2", "::1").
std::string LocalIp(int fd);

}  // namespace kv::net
