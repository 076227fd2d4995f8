// The server's listening sockets (private to server/): each accepts connections on one address
// and deals them out to the poll groups. They live on the first poll group's loop.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include "common/logging.h"
#include "net/event_loop.h"
#include "net/socket.h"
#include "server/poll_group.h"
#include "server/server.h"

namespace kv::server {

// Accepts connections on one address and deals them out to the poll groups.
class Server::Listener : public net::FdHandler {
 public:
  Listener(Server& s, net::Fd fd, bool unix_socket, bool tls = false)
      : server_(s), fd_(std::move(fd)), unix_(unix_socket), tls_(tls) {}
  int fd() const { return fd_.get(); }
  bool unix_socket() const { return unix_; }
  bool tls() const { return tls_; }
  void OnEvents(uint32_t) override {
    for (int i = 0; i < 64; i++) {  // bounded, so one busy listener cannot starve the loop
      auto r = net::AcceptTcp(fd_.get());
      if (r.ok()) {
        if (tls_) {
          server_.OnAcceptTls(std::move(*r));
        } else {
          server_.OnAccept(std::move(*r), unix_);
        }
        continue;
      }
      Code code = r.status().code();
      if (code == Code::kAgain) return;
      // One connection that failed before it was accepted: on to the next (CVE-2025-48367: a
      // client that makes accepts fail must not keep others from being accepted).
      if (code == Code::kClosed) continue;
      // Out of descriptors or memory: the listener stays readable, and accepting again at once
      // would spin the poll group that serves clients. Pause this listener for a while.
      LOG_WARNING("Accepting client connection: %s", r.status().message().c_str());
      Pause();
      return;
    }
  }

 private:
  static constexpr int64_t kPauseMs = 100;

  // The timer may outlive nothing: Stop() joins the loops before the listeners go, and a
  // listener closed by a rebind is kept (retired_listeners_) until then.
  void Pause() {
    net::EventLoop& loop = server_.groups_[0]->loop();  // the listeners' loop (StartListeners)
    loop.ModifyFd(fd_.get(), 0, this);
    loop.AddTimer(kPauseMs, [this, &loop]() -> int64_t {
      if (fd_.valid()) loop.ModifyFd(fd_.get(), net::EventLoop::kReadable, this);
      return -1;
    });
  }

 public:
  // Stops listening (CONFIG SET port or bind): on the listeners' loop.
  void Close() {
    server_.groups_[0]->loop().RemoveFd(fd_.get(), this);
    fd_.Reset();
  }
  // Lets go of the address at once, from any thread (CONFIG SET bind keeps the port): the
  // socket is replaced by an unbound one under the same descriptor, so the listeners' loop,
  // which may be accepting on it right now, never sees the number reused; Close ends it there.
  void Release() {
    server_.groups_[0]->loop().RemoveFd(fd_.get(), this);
    net::Fd dummy(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (dummy.valid()) ::dup2(dummy.get(), fd_.get());
  }

 private:
  Server& server_;
  net::Fd fd_;
  bool unix_;
  bool tls_;
};

}  // namespace kv::server
