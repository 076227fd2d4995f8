// A client's socket IO, plain or through TLS (net/tls.h): the handshake runs in the poll
// group on the connection's events, never blocking the loop; then every read and write goes
// through OpenSSL, and what OpenSSL asks for (the socket writable for a read, readable for a
// write) is waited for like any other event.
#include <unistd.h>

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

}  // namespace kv::server
