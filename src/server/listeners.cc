// Listening: binding the TCP and Unix listeners at start and again on CONFIG SET port or
// bind, and accepting connections (maxclients, protected mode, the poll group that gets each).
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "common/logging.h"
#include "common/strutil.h"
#include "server/client.h"
#include "server/listener.h"
#include "server/process_params.h"
#include "server/server.h"

namespace kv::server {

namespace {

constexpr char kMaxClientsReached[] = "-ERR max number of clients reached\r\n";
constexpr char kProtectedModeDenied[] =
    "-DENIED kvstore is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. Set a password (requirepass), bind to a specific address, or disable "
    "protected mode (CONFIG SET protected-mode no).\r\n";

}  // namespace

Status Server::StartListeners() {
  // port 0 or an empty bind listens on no TCP port, as in Redis (the Unix socket alone, say);
  // an optional address ("-::1") that cannot be bound is skipped.
  port_ = static_cast<int>(config_->GetInt("port"));
  bound_ = config_->GetString("bind");
  auto addrs = SplitArgs(bound_).value_or(std::vector<std::string>{});
  int backlog = static_cast<int>(config_->GetInt("tcp-backlog"));
  auto add = [&](net::Fd fd, bool unix_socket) {
    auto l = std::make_unique<Listener>(*this, std::move(fd), unix_socket);
    Status s = groups_[0]->loop().AddFd(l->fd(), net::EventLoop::kReadable, l.get());
    if (s.ok()) listeners_.push_back(std::move(l));
    return s;
  };
  for (const auto& a : port_ != 0 ? addrs : std::vector<std::string>{}) {
    bool optional = !a.empty() && a[0] == '-';
    auto fd = net::ListenTcp(a, port_, backlog);
    if (!fd.ok()) {
      if (optional) continue;  // "-::1": skipped when IPv6 is unavailable
      return Status::IoError("Failed listening on port " + std::to_string(port_) + " (tcp), " +
                             fd.status().message());
    }
    MarkListeningSocket(fd->get(), *config_);
    if (Status s = add(std::move(*fd), false); !s.ok()) return s;
  }
  KV_TRY(StartTlsListeners(addrs, backlog));
  if (std::string path = config_->GetString("unixsocket"); !path.empty()) {
    // Kept as redis.conf writes it: octal digits.
    auto perm = static_cast<unsigned>(std::stoul(config_->GetString("unixsocketperm"), nullptr, 8));
    auto fd = net::ListenUnix(path, perm, backlog);
    if (!fd.ok()) return Status::IoError("Failed opening Unix socket: " + fd.status().message());
    if (Status s = add(std::move(*fd), true); !s.ok()) return s;
    unix_socket_path_ = path;
  }
  if (listeners_.empty()) return Status::IoError("Configured to not listen anywhere, exiting.");
  return Status::Ok();
}

Result<std::vector<net::Fd>> Server::ListenTcpOn(int port, const std::string& bind) {
  auto addrs = SplitArgs(bind).value_or(std::vector<std::string>{});
  std::vector<net::Fd> fds;
  for (const auto& a : port != 0 ? addrs : std::vector<std::string>{}) {
    auto fd = net::ListenTcp(a, port, static_cast<int>(config_->GetInt("tcp-backlog")));
    if (!fd.ok()) {
      if (!a.empty() && a[0] == '-') continue;  // optional, as at startup
      LOG_WARNING("Failed listening on port %d (tcp), %s", port, fd.status().message().c_str());
      return fd.status();
    }
    MarkListeningSocket(fd->get(), *config_);
    fds.push_back(std::move(*fd));
  }
  return fds;
}

Status Server::Rebind(int port, const std::string& bind) {
  // A new port is bound beside the old one, and a failure there changes nothing. New
  // addresses on the same port need the old sockets gone first; when the new ones cannot be
  // bound, the old addresses are taken again (as Redis' changeBindAddr).
  bool same_port = port == port_;
  if (same_port) {
    for (auto& l : listeners_) {
      if (!l->unix_socket() && !l->tls()) l->Release();  // tls-port's go below, if at all
    }
  }
  Status error;
  auto fds = ListenTcpOn(port, bind);
  if (!fds.ok()) {
    if (!same_port) return Status::IoError("Unable to listen on this port. Check server logs.");
    error = Status::IoError("Failed to bind to specified addresses.");
    fds = ListenTcpOn(port, bound_);
    if (!fds.ok()) {
      LOG_WARNING("Failed to restore the old listening sockets.");
      fds = std::vector<net::Fd>{};
    }
  }
  port_ = port;
  bool rebind_tls = error.ok() && bind != bound_ && tls_port_ != 0;
  if (error.ok()) bound_ = bind;
  PostSwapListeners(std::move(*fds), /*tls=*/false);
  if (rebind_tls) {
    // New addresses: tls-port listens on them too (its port stays).
    for (auto& l : listeners_) {
      if (l->tls()) l->Release();
    }
    auto tls_fds = ListenTcpOn(tls_port_, bind);
    PostSwapListeners(tls_fds.ok() ? std::move(*tls_fds) : std::vector<net::Fd>{}, /*tls=*/true);
  }
  UpdateProcTitle();
  return error;
}

void Server::PostSwapListeners(std::vector<net::Fd> fds, bool tls) {
  // The swap happens on the listeners' loop, which may be accepting on the old ones now.
  auto shared = std::make_shared<std::vector<net::Fd>>(std::move(fds));
  net::EventLoop& loop = groups_[0]->loop();
  loop.Post([this, shared, tls, &loop] {
    WhenLocked(loop, [this, shared, tls] { SwapListeners(*shared, tls); });
  });
}

void Server::SwapListeners(std::vector<net::Fd>& fds, bool tls) {
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    if ((*it)->unix_socket() || (*it)->tls() != tls) {
      ++it;
      continue;
    }
    (*it)->Close();
    retired_listeners_.push_back(std::move(*it));
    it = listeners_.erase(it);
  }
  for (net::Fd& fd : fds) {
    auto l = std::make_unique<Listener>(*this, std::move(fd), false, tls);
    if (groups_[0]->loop().AddFd(l->fd(), net::EventLoop::kReadable, l.get()).ok()) {
      listeners_.push_back(std::move(l));
    }
  }
}

void Server::CloseListenersForExit() {
  // Release works from any thread; the listeners' loop may be accepting right now.
  for (auto& l : listeners_) l->Release();
  if (!unix_socket_path_.empty()) unlink(unix_socket_path_.c_str());
  unix_socket_path_.clear();
}

std::vector<std::pair<int, bool>> Server::ListenFds() const {
  // A busy script's accepts read plain bytes: TLS connections wait in their backlog.
  std::vector<std::pair<int, bool>> out;
  for (const auto& l : listeners_) {
    if (!l->tls()) out.emplace_back(l->fd(), l->unix_socket());
  }
  return out;
}

void Server::OnAccept(net::Fd fd, bool unix_socket, std::string input) {
  stats_.total_connections++;
  const char* reject = AcceptRefusal(fd.get(), unix_socket);
  if (reject) {
    stats_.rejected_connections++;
    [[maybe_unused]] ssize_t n = write(fd.get(), reject, strlen(reject));
    return;
  }
  Admit(fd.get(), unix_socket);
  size_t g = next_group_.fetch_add(1) % groups_.size();
  if (input.empty()) {
    groups_[g]->Adopt(std::move(fd), NextClientId());
  } else {
    groups_[g]->Adopt(std::move(fd), NextClientId(),
                      [input = std::move(input)](Client& c) { c.InjectInput(input); });
  }
}

void Server::OnAcceptTls(net::Fd fd) {
  stats_.total_connections++;
  std::shared_ptr<net::TlsContext> ctx = tls_context();
  std::unique_ptr<net::TlsConn> tls =
      ctx ? net::TlsConn::Accept(ctx, fd.get(), tls_auth_clients_.load()) : nullptr;
  const char* reject = AcceptRefusal(fd.get(), false);
  if (tls == nullptr || reject == kMaxClientsReached) {
    // No context, or maxclients: closed before the handshake, as a TLS peer cannot read
    // plain text.
    stats_.rejected_connections++;
    return;
  }
  if (reject) stats_.rejected_connections++;
  Admit(fd.get(), false);
  size_t g = next_group_.fetch_add(1) % groups_.size();
  // Adopt's callback is copyable: the connection travels in a shared holder.
  auto holder = std::make_shared<std::unique_ptr<net::TlsConn>>(std::move(tls));
  groups_[g]->Adopt(std::move(fd), NextClientId(),
                    [holder, reject = std::string(reject ? reject : "")](Client& c) {
                      c.SetTls(std::move(*holder), reject);
                    });
}

const char* Server::AcceptRefusal(int fd, bool unix_socket) {
  if (stats_.connected_clients.load() >= static_cast<uint64_t>(maxclients_.load())) {
    return kMaxClientsReached;
  }
  if (protected_mode_ && !auth_required_ && !unix_socket) {
    std::string peer = net::PeerName(fd);
    // As Redis 7.0: 127.0.0.1 and ::1 only (127.0.0.2 is refused too).
    bool loopback = peer.rfind("127.0.0.1:", 0) == 0 || peer.rfind("::1:", 0) == 0;
    if (!loopback) return kProtectedModeDenied;
  }
  return nullptr;
}

void Server::Admit(int fd, bool unix_socket) {
  stats_.connected_clients++;
  // tcp-keepalive, as Redis: a peer that vanished without closing is found (the replicas'
  // links among them).
  if (int64_t ka = tcp_keepalive_s_.load(); ka > 0 && !unix_socket) {
    net::SetKeepAlive(fd, static_cast<int>(ka));
  }
}

void Server::CloseListenersInChild() {
  for (auto& l : listeners_) close(l->fd());
}

}  // namespace kv::server
