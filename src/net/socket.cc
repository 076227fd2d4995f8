#include "net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kv::net {

void Fd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Status SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return Status::FromErrno("fcntl", errno);
  return Status::Ok();
}

void SetNoDelay(int fd, bool on) {
  int v = on ? 1 : 0;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v));
}

void SetKeepAlive(int fd, int interval_s) {
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  if (interval_s > 0) {
    int idle = interval_s, intvl = std::max(1, interval_s / 3), cnt = 3;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
  }
}

Result<Fd> ListenTcp(const std::string& addr, int port, int backlog) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  std::string host = addr;
  if (!host.empty() && host[0] == '-') host = host.substr(1);  // "-::1": optional address
  // As Redis: "*" is every IPv4 address, "::*" every IPv6 address.
  if (host == "*" || host.empty()) host = "0.0.0.0";
  if (host == "::*") host = "::";
  std::string port_s = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), port_s.c_str(), &hints, &res);
  if (rc != 0) return Status::Invalid("invalid bind address '" + addr + "': " + gai_strerror(rc));
  Status last = Status::IoError("no address");
  for (addrinfo* p = res; p; p = p->ai_next) {
    Fd fd(socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol));
    if (!fd.valid()) {
      last = Status::FromErrno("socket", errno);
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (p->ai_family == AF_INET6) setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd.get(), p->ai_addr, p->ai_addrlen) != 0 || listen(fd.get(), backlog) != 0) {
      last = Status::FromErrno("bind " + host + ":" + port_s, errno);
      continue;
    }
    Status s = SetNonBlocking(fd.get());
    if (!s.ok()) {
      last = s;
      continue;
    }
    freeaddrinfo(res);
    return fd;
  }
  freeaddrinfo(res);
  return last;
}

namespace {
Result<sockaddr_un> UnixAddr(const std::string& path) {
  sockaddr_un sa{};
  if (path.empty() || path.size() >= sizeof(sa.sun_path)) {
    return Status::Invalid("invalid Unix socket path '" + path + "'");
  }
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, path.data(), path.size());
  return sa;
}
}  // namespace

Result<Fd> ListenUnix(const std::string& path, unsigned perm, int backlog) {
  auto sa = UnixAddr(path);
  if (!sa.ok()) return sa.status();
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Status::FromErrno("socket", errno);
  unlink(path.c_str());  // a socket file left by an earlier run (as Redis, whatever it is)
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&*sa), sizeof(*sa)) != 0) {
    return Status::FromErrno("bind " + path, errno);
  }
  if (perm != 0 && chmod(path.c_str(), perm) != 0) return Status::FromErrno("chmod " + path, errno);
  if (listen(fd.get(), backlog) != 0) return Status::FromErrno("listen " + path, errno);
  return fd;
}

Result<Fd> ConnectUnix(const std::string& path, int timeout_ms) {
  auto sa = UnixAddr(path);
  if (!sa.ok()) return sa.status();
  // A Unix connect completes or fails at once, unless the backlog is full (EAGAIN): retried.
  for (int waited = 0;; waited += 10) {
    Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return Status::FromErrno("socket", errno);
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&*sa), sizeof(*sa)) == 0) return fd;
    if (errno != EAGAIN || waited >= timeout_ms) return Status::FromErrno("connect " + path, errno);
    poll(nullptr, 0, 10);
  }
}

namespace {
// Binds `fd` (of `family`) to source_addr, any port.
Status BindSource(int fd, int family, const std::string& source_addr) {
  addrinfo hints{}, *src = nullptr;
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  int rc = getaddrinfo(source_addr.c_str(), nullptr, &hints, &src);
  if (rc != 0)
    return Status::Invalid("invalid source address '" + source_addr + "': " + gai_strerror(rc));
  Status s = bind(fd, src->ai_addr, src->ai_addrlen) == 0
                 ? Status::Ok()
                 : Status::FromErrno("bind " + source_addr, errno);
  freeaddrinfo(src);
  return s;
}
}  // namespace

Result<Fd> ConnectTcpStart(const std::string& ip, int port, const std::string& source_addr) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  std::string port_s = std::to_string(port);
  int rc = getaddrinfo(ip.c_str(), port_s.c_str(), &hints, &res);
  if (rc != 0) return Status::Invalid("bad address '" + ip + "': " + gai_strerror(rc));
  Fd fd(socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, res->ai_protocol));
  Status s = Status::Ok();
  if (!fd.valid()) {
    s = Status::FromErrno("socket", errno);
  } else if (!source_addr.empty()) {
    s = BindSource(fd.get(), res->ai_family, source_addr);
  }
  if (s.ok() && connect(fd.get(), res->ai_addr, res->ai_addrlen) != 0 && errno != EINPROGRESS) {
    s = Status::FromErrno("connect", errno);
  }
  freeaddrinfo(res);
  if (!s.ok()) return s;
  return fd;
}

Result<Fd> ConnectTcp(const std::string& host, int port, int timeout_ms,
                      const std::string& source_addr) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string port_s = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), port_s.c_str(), &hints, &res);
  if (rc != 0) return Status::Invalid("cannot resolve '" + host + "': " + gai_strerror(rc));
  Status last = Status::IoError("no address");
  for (addrinfo* p = res; p; p = p->ai_next) {
    Fd fd(socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, p->ai_protocol));
    if (!fd.valid()) continue;
    if (!source_addr.empty()) {
      if (Status b = BindSource(fd.get(), p->ai_family, source_addr); !b.ok()) {
        last = b;
        continue;
      }
    }
    if (connect(fd.get(), p->ai_addr, p->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = Status::FromErrno("connect", errno);
      continue;
    }
    pollfd pfd{fd.get(), POLLOUT, 0};
    if (poll(&pfd, 1, timeout_ms) != 1) {
      last = Status::IoError("connect timeout");
      continue;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      last = Status::FromErrno("connect", err);
      continue;
    }
    freeaddrinfo(res);
    return fd;
  }
  freeaddrinfo(res);
  return last;
}

Result<Fd> AcceptTcp(int listen_fd) {
  int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR)
      return Status(Code::kAgain, "no pending connection");
    // What accept(2) says to treat as a retry: that connection's own failure (a peer that reset
    // before it was accepted, a network error pending on it). The next one may be fine.
    if (err == ECONNABORTED || err == EPROTO || err == EPERM || err == ENETDOWN ||
        err == ENOPROTOOPT || err == EHOSTDOWN || err == ENONET || err == EHOSTUNREACH ||
        err == EOPNOTSUPP || err == ENETUNREACH)
      return Status(Code::kClosed, std::string("accept: ") + strerror(err));
    return Status::FromErrno("accept", err);
  }
  return Fd(fd);
}

namespace {
std::string FormatAddr(const sockaddr_storage& ss) {
  char ip[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
    port = ntohs(a->sin6_port);
  } else if (ss.ss_family == AF_UNIX) {
    return std::string(reinterpret_cast<const sockaddr_un*>(&ss)->sun_path) + ":0";
  }
  return std::string(ip) + ":" + std::to_string(port);
}
}  // namespace

bool IsUnixSocket(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  return getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 && ss.ss_family == AF_UNIX;
}

std::string PeerName(int fd) {
  // A Unix peer has no name of its own: Redis lists it under the server's socket path.
  if (IsUnixSocket(fd)) return SockName(fd);
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?:0";
  return FormatAddr(ss);
}

std::string SockName(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?:0";
  return FormatAddr(ss);
}

std::string LocalIp(int fd) {
  std::string n = SockName(fd);
  return n.substr(0, n.rfind(':'));
}

int LocalPort(int fd) {
  std::string n = SockName(fd);
  return std::stoi(n.substr(n.rfind(':') + 1));
}

}  // namespace kv::net
