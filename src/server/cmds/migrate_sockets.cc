#include "server/cmds/migrate_sockets.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iterator>

#include "common/clock.h"
#include "common/hash.h"

namespace kv::server {
namespace {

constexpr size_t kWriteChunk = 64 * 1024;

std::string CacheName(std::string_view host, std::string_view port) {
  std::string name(host);
  name += ':';
  name += port;
  return name;
}

// Redis' anetTcpNonBlockConnect: the first address whose non-blocking connect() succeeds or is
// in progress; an invalid Fd when none. The port is read as C's atoi reads it.
net::Fd StartConnect(std::string_view host, std::string_view port) {
  std::string host_z(host), port_z = std::to_string(std::atoi(std::string(port).c_str()));
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host_z.c_str(), port_z.c_str(), &hints, &res) != 0) return net::Fd();
  net::Fd out;
  for (addrinfo* p = res; p && !out.valid(); p = p->ai_next) {
    net::Fd fd(socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, p->ai_protocol));
    if (!fd.valid()) continue;
    if (connect(fd.get(), p->ai_addr, p->ai_addrlen) == 0 || errno == EINPROGRESS) {
      out = std::move(fd);
    }
  }
  freeaddrinfo(res);
  return out;
}

}  // namespace

bool MigrateSockets::Conn::WaitFor(short events, int64_t timeout_ms, int* err) {
  pollfd pfd{fd_.get(), events, 0};
  int64_t deadline = MonoMs() + timeout_ms;
  for (;;) {
    int64_t left = deadline - MonoMs();
    if (left <= 0) {
      *err = ETIMEDOUT;
      return false;
    }
    int r = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, INT_MAX)));
    if (r > 0) return true;  // ready, or an error the next call reports
    if (r < 0 && errno != EINTR) {
      *err = errno;
      return false;
    }
  }
}

bool MigrateSockets::Conn::Write(std::string_view data, int64_t timeout_ms, int* err) {
  for (size_t pos = 0; pos < data.size();) {
    std::string_view chunk = data.substr(pos, kWriteChunk);
    int64_t deadline = MonoMs() + timeout_ms;
    size_t done = 0;
    while (done < chunk.size()) {
      ssize_t n = tls_ ? tls_->Write(chunk.data() + done, chunk.size() - done)
                       : send(fd_.get(), chunk.data() + done, chunk.size() - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        *err = errno;
        return false;
      }
      short wait = tls_ && tls_->write_wants_read() ? POLLIN : POLLOUT;
      if (!WaitFor(wait, deadline - MonoMs(), err)) return false;
    }
    pos += chunk.size();
  }
  return true;
}

bool MigrateSockets::Conn::ReadLine(int64_t timeout_ms, std::string* line, int* err) {
  for (;;) {
    size_t nl = in_.find('\n');
    if (nl != std::string::npos) {
      size_t end = nl > 0 && in_[nl - 1] == '\r' ? nl - 1 : nl;
      line->assign(in_, 0, end);
      in_.erase(0, nl + 1);
      return true;
    }
    char buf[4096];
    ssize_t n = tls_ ? tls_->Read(buf, sizeof(buf)) : read(fd_.get(), buf, sizeof(buf));
    if (n > 0) {
      in_.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      *err = ECONNRESET;  // the target closed the connection
      return false;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      *err = errno;
      return false;
    } else if (!WaitFor(tls_ && tls_->read_wants_write() ? POLLOUT : POLLIN, timeout_ms, err)) {
      return false;
    }
  }
}

MigrateSockets::Conn* MigrateSockets::Get(std::string_view host, std::string_view port,
                                          int64_t timeout_ms, int64_t now_s,
                                          std::shared_ptr<net::TlsContext> tls) {
  std::string name = CacheName(host, port);
  if (auto it = conns_.find(name); it != conns_.end()) {
    it->second->last_use_s = now_s;
    return it->second.get();
  }
  if (conns_.size() >= kMaxItems) {
    conns_.erase(std::next(conns_.begin(), static_cast<long>(RandomBelow(conns_.size()))));
  }
  net::Fd fd = StartConnect(host, port);
  if (!fd.valid()) return nullptr;
  // Redis waits for the connection up to the timeout but does not look at the outcome.
  pollfd pfd{fd.get(), POLLOUT, 0};
  (void)poll(&pfd, 1, static_cast<int>(std::min<int64_t>(timeout_ms, INT_MAX)));
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::unique_ptr<net::TlsConn> session;
  if (tls) {
    auto connected = net::TlsConn::ConnectUntil(std::move(tls), fd.get(), MonoMs() + timeout_ms);
    if (!connected.ok()) return nullptr;
    session = std::move(*connected);
  }
  auto conn = std::make_unique<Conn>(std::move(fd), std::move(session));
  conn->last_use_s = now_s;
  Conn* out = conn.get();
  conns_.emplace(std::move(name), std::move(conn));
  return out;
}

void MigrateSockets::Close(std::string_view host, std::string_view port) {
  if (auto it = conns_.find(CacheName(host, port)); it != conns_.end()) conns_.erase(it);
}

void MigrateSockets::CloseIdle(int64_t now_s) {
  std::erase_if(conns_, [&](const auto& e) { return now_s - e.second->last_use_s > kIdleSeconds; });
}

}  // namespace kv::server
