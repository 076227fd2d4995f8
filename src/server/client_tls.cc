// A client's socket IO, plain or through TLS (net/tls.h): the handshake runs in the poll
// group on the connection's events, never blocking the loop; then every read and write goes
// through OpenSSL, and what OpenSSL asks for (the socket writable for a read, readable for a
// write) is waited for like any other event.
#include <unistd.h>

#include <cerrno>

#include "common/logging.h"
#include "server/client.h"
#include "server/poll_group.h"
#include "server/server.h"

namespace kv::server {

void Client::SetTls(std::unique_ptr<net::TlsConn> tls, std::string reject) {
  tls_ = std::move(tls);
  tls_reject_ = std::move(reject);
  tls_handshaking_.store(!tls_->established(), std::memory_order_relaxed);
}

ssize_t Client::SockRead(void* buf, size_t n) {
  if (!tls_) return ::read(fd_.get(), buf, n);
  return tls_->Read(buf, n);
}

ssize_t Client::SockWrite(const void* buf, size_t n) {
  if (!tls_) return ::write(fd_.get(), buf, n);
  return tls_->Write(buf, n);
}

bool Client::TlsReady() {
  if (!tls_ || tls_->established()) return true;
  net::TlsConn::Step step = tls_->Handshake();
  tls_handshake_wants_write_ = step == net::TlsConn::Step::kWantWrite;
  if (step == net::TlsConn::Step::kFailed) {
    // Redis' line for a failed TLS accept.
    LOG_WARNING("Error accepting a client connection: %s (addr=%s laddr=%s)", tls_->error().c_str(),
                peer_.c_str(), local_.c_str());
    Close("TLS handshake failed");
    return false;
  }
  if (step != net::TlsConn::Step::kDone) {
    UpdateInterest();
    return false;
  }
  tls_handshaking_.store(false, std::memory_order_relaxed);
  last_interaction_ms_.store(group_.loop().now_ms(), std::memory_order_relaxed);
  if (!tls_reject_.empty()) {
    // Refused (protected mode): the reason goes over TLS, then the connection.
    [[maybe_unused]] ssize_t n = tls_->Write(tls_reject_.data(), tls_reject_.size());
    Close("refused after the TLS handshake");
    return false;
  }
  UpdateInterest();
  return true;
}

namespace {

// The relay's pipe, polled on the client's loop.
class RelayReader : public net::FdHandler {
 public:
  explicit RelayReader(Client& c) : c_(c) {}
  void OnEvents(uint32_t) override { c_.RelayRead(); }

 private:
  Client& c_;
};

// Output the relay lets wait before it stops reading the pipe (the child then waits).
constexpr size_t kRelayHighWater = 1 << 20;

}  // namespace

void Client::RelayFrom(net::Fd fd) {
  std::lock_guard lock(push_mu_);
  relay_pending_ = std::move(fd);
  SchedulePushedLocked();
}

void Client::UpdateRelay() {
  bool want = out_.size() - out_sent_ < kRelayHighWater;
  if (!relay_registered_) {
    if (!relay_reader_) relay_reader_ = std::make_unique<RelayReader>(*this);
    Status s = group_.loop().AddFd(relay_.get(), want ? net::EventLoop::kReadable : 0,
                                   relay_reader_.get());
    if (!s.ok()) {
      Close("cannot poll the snapshot's pipe: " + s.message());
      return;
    }
    relay_registered_ = true;
    relay_reading_ = want;
    return;
  }
  if (want == relay_reading_) return;
  group_.loop().ModifyFd(relay_.get(), want ? net::EventLoop::kReadable : 0, relay_reader_.get());
  relay_reading_ = want;
}

void Client::StopRelay() {
  // The reader stays (it may be the caller); a later relay registers it again.
  if (relay_registered_) group_.loop().RemoveFd(relay_.get(), relay_reader_.get());
  relay_registered_ = false;
  relay_.Reset();
  relay_reading_ = false;
}

void Client::RelayRead() {
  if (closed_ || !relay_.valid()) return;
  char buf[64 * 1024];
  while (out_.size() - out_sent_ < kRelayHighWater) {
    ssize_t n = ::read(relay_.get(), buf, sizeof(buf));
    if (n > 0) {
      out_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
    // The child is done (or gone: the primary learns which when it reaps it).
    StopRelay();
    break;
  }
  if (Flush()) UpdateInterest();
}

}  // namespace kv::server
