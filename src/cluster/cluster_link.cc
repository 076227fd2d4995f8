// The bus thread and its connections: the listener, the links to and from other nodes (TLS
// with tls-cluster), reading messages off them and writing what is sent, as Redis 7.0's
// clusterAcceptHandler, clusterLinkConnectHandler, clusterReadHandler and clusterWriteHandler.
// What each message does is cluster_bus.cc's.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cluster/cluster.h"
#include "cluster/cluster_types.h"
#include "common/clock.h"
#include "common/logging.h"

namespace kv::cluster {

struct Cluster::ListenHandler : net::FdHandler {
  ListenHandler(Cluster* c, int fd) : c(c), fd(fd) {}
  void OnEvents(uint32_t) override { c->OnAccept(fd); }
  Cluster* c;
  int fd;
};

struct Cluster::LinkHandler : net::FdHandler {
  LinkHandler(Cluster* c, Link* l) : c(c), l(l) {}
  void OnEvents(uint32_t events) override { c->OnLinkEvents(l, events); }
  Cluster* c;
  Link* l;
};

Status Cluster::Start() {
  auto fds = host_.ListenTcp(bus_port_);
  if (!fds.ok()) {
    return Status::IoError("Could not bind the cluster bus to port " + std::to_string(bus_port_) +
                           ": " + fds.status().ToString());
  }
  listen_fds_ = std::move(*fds);
  for (net::Fd& fd : listen_fds_) {
    auto h = std::make_unique<ListenHandler>(this, fd.get());
    Status s = loop_.AddFd(fd.get(), net::EventLoop::kReadable, h.get());
    if (!s.ok()) return s;
    listeners_.push_back(std::move(h));
  }
  loop_.AddTimer(100, [this] { return CronTick(); });
  thread_ = std::thread([this] { loop_.Run(); });
  return Status::Ok();
}

void Cluster::Stop() {
  if (!thread_.joinable()) return;
  loop_.Stop();
  thread_.join();
  {
    // A save a command left to the bus thread, which will not run it now.
    std::lock_guard lock(host_.mu());
    if (save_posted_) SaveConfigOrDie(false);
  }
  links_.clear();
  dead_links_.clear();
  listen_fds_.clear();
}

size_t Cluster::links_memory() const {
  size_t total = 0;
  for (const auto& [l, owned] : links_) {
    total += sizeof(Link) + l->rbuf.capacity() + l->wbuf.capacity();
  }
  return total;
}

void Cluster::PostToLoop(std::function<void()> fn) {
  loop_.Post([this, fn = std::move(fn)] {
    std::lock_guard lock(host_.mu());
    fn();
  });
}

void Cluster::OnAccept(int listen_fd) {
  std::lock_guard lock(host_.mu());
  for (int i = 0; i < 1000; i++) {
    auto fd = net::AcceptTcp(listen_fd);
    if (!fd.ok()) {
      if (fd.status().code() == Code::kAgain) break;
      if (fd.status().code() == Code::kClosed) continue;
      LOG_VERBOSE("Error accepting cluster node: %s", fd.status().ToString().c_str());
      break;
    }
    net::SetNoDelay(fd->get());
    std::unique_ptr<net::TlsConn> tls;
    if (host_.ConfigBool("tls-cluster")) {
      // As Redis: a node must present a certificate the CA accepts, whatever tls-auth-clients.
      std::shared_ptr<net::TlsContext> ctx = host_.TlsContext();
      if (ctx) tls = net::TlsConn::Accept(ctx, fd->get(), net::TlsClientAuth::kYes);
      if (!tls) {
        LOG_VERBOSE("Error creating an accepting connection for cluster node: no TLS context");
        continue;
      }
    }
    LOG_VERBOSE("Accepting cluster node connection from %s", net::PeerName(fd->get()).c_str());
    auto l = std::make_unique<Link>();
    l->cluster = this;
    l->fd = std::move(*fd);
    l->tls = std::move(tls);
    l->inbound = true;
    l->ctime = WallMs();
    l->handler = std::make_unique<LinkHandler>(this, l.get());
    l->events = net::EventLoop::kReadable;
    if (!loop_.AddFd(l->fd.get(), l->events, l->handler.get()).ok()) continue;
    Link* raw = l.get();
    links_[raw] = std::move(l);
  }
  AfterEvent();
}

void Cluster::ConnectLink(Node* n) {
  auto fd = net::ConnectTcpStart(n->ip, n->cport, host_.ConfigString("bind-source-addr"));
  if (!fd.ok()) {
    // Failure detection needs a PING in flight: count one as sent (Redis does the same).
    if (n->ping_sent == 0) n->ping_sent = WallMs();
    LOG_DEBUG("Unable to connect to Cluster Node [%s]:%d -> %s", n->ip.c_str(), n->cport,
              fd.status().ToString().c_str());
    return;
  }
  auto l = std::make_unique<Link>();
  l->cluster = this;
  l->fd = std::move(*fd);
  l->node = n;
  l->connecting = true;
  l->ctime = WallMs();
  l->handler = std::make_unique<LinkHandler>(this, l.get());
  l->events = net::EventLoop::kWritable;
  if (!loop_.AddFd(l->fd.get(), l->events, l->handler.get()).ok()) return;
  n->link = l.get();
  Link* raw = l.get();
  links_[raw] = std::move(l);
}

void Cluster::FreeLink(Link* l) {
  if (l->dead) return;
  l->dead = true;
  if (l->node) {
    if (l->node->link == l) l->node->link = nullptr;
    if (l->node->inbound_link == l) l->node->inbound_link = nullptr;
  }
  l->node = nullptr;
  auto it = links_.find(l);
  dead_links_.push_back(std::move(it->second));
  links_.erase(it);
  if (loop_.InLoopThread()) {
    loop_.RemoveFd(l->fd.get(), l->handler.get());
    l->events = 0;
  }
  if (!reap_posted_) {
    reap_posted_ = true;
    PostToLoop([this] { FreeDeadLinks(); });
  }
}

void Cluster::FreeDeadLinks() {
  reap_posted_ = false;
  for (auto& l : dead_links_) {
    if (l->events != 0) loop_.RemoveFd(l->fd.get(), l->handler.get());
  }
  dead_links_.clear();
}

void Cluster::OnLinkEvents(Link* l, uint32_t events) {
  std::lock_guard lock(host_.mu());
  if (l->dead) return;
  if (l->connecting) {
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(l->fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    Node* n = l->node;
    if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) {
      LOG_VERBOSE("Connection with Node %.40s at %s:%d failed: %s", n->name.c_str(), n->ip.c_str(),
                  n->cport, strerror(err ? err : ECONNREFUSED));
      FreeLink(l);
      AfterEvent();
      return;
    }
    l->connecting = false;
    net::SetNoDelay(l->fd.get());
    if (host_.ConfigBool("tls-cluster")) {
      // The handshake runs in the first reads and writes; the PING below waits for it.
      std::shared_ptr<net::TlsContext> ctx = host_.TlsContext();
      if (ctx) l->tls = net::TlsConn::Connect(ctx, l->fd.get());
      if (!l->tls) {
        LOG_VERBOSE("Connection with Node %.40s at %s:%d failed: no TLS context", n->name.c_str(),
                    n->ip.c_str(), n->cport);
        FreeLink(l);
        AfterEvent();
        return;
      }
    }
    l->events = net::EventLoop::kReadable;
    loop_.ModifyFd(l->fd.get(), l->events, l->handler.get());
    // A PING at once on a new link, so failure detection has one in flight; a MEET to a node
    // met with CLUSTER MEET. An earlier unanswered PING keeps its time.
    int64_t old_ping_sent = n->ping_sent;
    SendPing(l, (n->flags & kFlagMeet) ? MsgType::kMeet : MsgType::kPing);
    if (old_ping_sent) n->ping_sent = old_ping_sent;
    n->flags &= ~kFlagMeet;
    LOG_DEBUG("Connecting with Node %.40s at %s:%d", n->name.c_str(), n->ip.c_str(), n->cport);
    AfterEvent();
    return;
  }
  // TLS may need the other direction: a read that waits for the socket to take a handshake
  // record, a write that waits for one to arrive.
  bool readable = (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ||
                  (l->tls && (events & EPOLLOUT) && l->tls->read_wants_write());
  bool writable =
      (events & EPOLLOUT) || (l->tls && (events & EPOLLIN) && l->tls->write_wants_read());
  if (readable) ReadFromLink(l);
  if (!l->dead && writable) FlushLink(l);
  if (!l->dead && l->write_errno != 0) {
    LOG_DEBUG("I/O error writing to node link: %s", l->tls && !l->tls->error().empty()
                                                        ? l->tls->error().c_str()
                                                        : strerror(l->write_errno));
    FreeLink(l);
  }
  AfterEvent();
}

ssize_t Cluster::LinkRead(Link* l, char* buf, size_t n) {
  return l->tls ? l->tls->Read(buf, n) : read(l->fd.get(), buf, n);
}

ssize_t Cluster::LinkWrite(Link* l, const char* buf, size_t n) {
  return l->tls ? l->tls->Write(buf, n) : write(l->fd.get(), buf, n);
}

void Cluster::ReadFromLink(Link* l) {
  char buf[16384];
  while (!l->dead) {
    ssize_t n = LinkRead(l, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (l->tls) WatchLink(l);  // the handshake may wait for the socket to take its record
      return;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      LOG_DEBUG("I/O error reading from node link: %s", n == 0 ? "connection closed"
                                                        : l->tls && !l->tls->error().empty()
                                                            ? l->tls->error().c_str()
                                                            : strerror(errno));
      FreeLink(l);
      return;
    }
    l->rbuf.append(buf, static_cast<size_t>(n));
    size_t pos = 0;
    while (l->rbuf.size() - pos >= 8) {
      auto len = MessageLength(std::string_view(l->rbuf).substr(pos, 8));
      if (!len.ok()) {
        LOG_WARNING("Bad message length or signature received from Cluster bus.");
        FreeLink(l);
        return;
      }
      if (l->rbuf.size() - pos < *len) break;
      if (l->node) l->node->data_received = WallMs();
      if (!ProcessMessage(l, std::string_view(l->rbuf).substr(pos, *len))) return;
      pos += *len;
    }
    l->rbuf.erase(0, pos);
    if (l->rbuf.capacity() > (1 << 20) && l->rbuf.size() < 65536) l->rbuf.shrink_to_fit();
  }
}

void Cluster::Send(Link* l, const std::string& bytes, MsgType type) {
  if (!l || l->dead) return;
  l->wbuf.append(bytes);
  sent_[static_cast<int>(type)]++;
  if (loop_.InLoopThread()) {
    FlushLink(l);
    return;
  }
  unflushed_.push_back(l);
  if (!flush_posted_) {
    flush_posted_ = true;
    PostToLoop([this] {
      flush_posted_ = false;
      std::vector<Link*> links;
      links.swap(unflushed_);
      for (Link* l : links) {
        if (links_.count(l)) FlushLink(l);
      }
    });
  }
}

void Cluster::FlushLink(Link* l) {
  if (l->connecting || l->dead) return;
  while (l->wpos < l->wbuf.size()) {
    ssize_t n = LinkWrite(l, l->wbuf.data() + l->wpos, l->wbuf.size() - l->wpos);
    if (n > 0) {
      l->wpos += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // Failed: the link goes at its next event (a caller of Send may still use it), which
    // watching for writability brings at once.
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) l->write_errno = errno;
    break;
  }
  if (l->wpos == l->wbuf.size()) {
    l->wbuf.clear();
    l->wpos = 0;
    if (l->wbuf.capacity() > (1 << 20)) l->wbuf.shrink_to_fit();
  } else if (l->wpos > (1 << 20)) {
    l->wbuf.erase(0, l->wpos);
    l->wpos = 0;
  }
  WatchLink(l);
}

void Cluster::WatchLink(Link* l) {
  // Writable while output waits (unless TLS waits for input first), or while a TLS read waits
  // for the socket to take a record.
  bool out = (!l->wbuf.empty() && !(l->tls && l->tls->write_wants_read())) || l->write_errno != 0 ||
             (l->tls && l->tls->read_wants_write());
  uint32_t want = net::EventLoop::kReadable | (out ? net::EventLoop::kWritable : 0);
  if (want != l->events) {
    l->events = want;
    loop_.ModifyFd(l->fd.get(), want, l->handler.get());
  }
}

void Cluster::Broadcast(const std::string& bytes, MsgType type) {
  for (const auto& [name, n] : nodes_) {
    if (!n->link || (n->flags & (kFlagMyself | kFlagHandshake))) continue;
    Send(n->link, bytes, type);
  }
}

}  // namespace kv::cluster
