// TLS for the server (net/tls.h does the OpenSSL part): the tls-* parameters as one group that
// builds a new context when any of them changes (CONFIG SET of a new certificate reaches the
// next connection, the live ones keep theirs), tls-auth-clients, and the listeners on tls-port.
#include <string>
#include <vector>

#include "common/logging.h"
#include "common/strutil.h"
#include "server/listener.h"
#include "server/process_params.h"
#include "server/server.h"

namespace kv::server {

void Server::WireTlsConfig(Config& c) {
  // The context is rebuilt once for any change of these.
  c.OnApplyGroup(
      {"tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-client-cert-file",
       "tls-client-key-file", "tls-client-key-file-pass", "tls-dh-params-file", "tls-ca-cert-file",
       "tls-ca-cert-dir", "tls-protocols", "tls-ciphers", "tls-ciphersuites",
       "tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size",
       "tls-session-cache-timeout", "tls-replication", "tls-cluster"},
      [this] { return ApplyTls(); });
  c.OnApply("tls-auth-clients", [this](const std::string& v) {
    tls_auth_clients_ = v == "no"         ? net::TlsClientAuth::kNo
                        : v == "optional" ? net::TlsClientAuth::kOptional
                                          : net::TlsClientAuth::kYes;
    return Status::Ok();
  });
  c.OnApply("tls-port", [this](const std::string& v) {
    if (!listening_) return Status::Ok();
    return RebindTls(static_cast<int>(ParseInt64(v).value_or(0)));
  });
}

net::TlsOptions Server::TlsOptionsFromConfig() const {
  const Config& c = *config_;
  net::TlsOptions o;
  o.cert_file = c.GetString("tls-cert-file");
  o.key_file = c.GetString("tls-key-file");
  o.key_file_pass = c.GetString("tls-key-file-pass");
  o.client_cert_file = c.GetString("tls-client-cert-file");
  o.client_key_file = c.GetString("tls-client-key-file");
  o.client_key_file_pass = c.GetString("tls-client-key-file-pass");
  o.ca_cert_file = c.GetString("tls-ca-cert-file");
  o.ca_cert_dir = c.GetString("tls-ca-cert-dir");
  o.dh_params_file = c.GetString("tls-dh-params-file");
  o.protocols = c.GetString("tls-protocols");
  o.ciphers = c.GetString("tls-ciphers");
  o.ciphersuites = c.GetString("tls-ciphersuites");
  o.prefer_server_ciphers = c.GetBool("tls-prefer-server-ciphers");
  o.session_caching = c.GetBool("tls-session-caching");
  o.session_cache_size = c.GetInt("tls-session-cache-size");
  o.session_cache_timeout = c.GetInt("tls-session-cache-timeout");
  o.needs_ca = c.GetString("tls-auth-clients") != "no" || c.GetBool("tls-replication") ||
               c.GetBool("tls-cluster");
  return o;
}

Status Server::ApplyTls() {
  // As Redis' tlsConfigure: only where TLS is used; a failure leaves the context as it was.
  bool used = config_->GetInt("tls-port") != 0 || config_->GetBool("tls-replication") ||
              config_->GetBool("tls-cluster");
  if (!used) return Status::Ok();
  auto ctx = net::TlsContext::Create(TlsOptionsFromConfig());
  if (!ctx.ok()) {
    LOG_WARNING("%s", ctx.status().message().c_str());
    return Status::Invalid(listening_ ? "Unable to update TLS configuration. Check server logs."
                                      : "Failed to configure TLS. Check logs for more info.");
  }
  std::lock_guard lock(tls_mu_);
  tls_ctx_ = std::move(*ctx);
  return Status::Ok();
}

Status Server::StartTlsListeners(const std::vector<std::string>& addrs, int backlog) {
  tls_port_ = static_cast<int>(config_->GetInt("tls-port"));
  if (tls_port_ == 0) return Status::Ok();
  for (const auto& a : addrs) {
    auto fd = net::ListenTcp(a, tls_port_, backlog);
    if (!fd.ok()) {
      if (!a.empty() && a[0] == '-') continue;
      return Status::IoError("Failed listening on port " + std::to_string(tls_port_) +
                             " (tls), aborting.");
    }
    MarkListeningSocket(fd->get(), *config_);
    auto l = std::make_unique<Listener>(*this, std::move(*fd), false, /*tls=*/true);
    KV_TRY(groups_[0]->loop().AddFd(l->fd(), net::EventLoop::kReadable, l.get()));
    listeners_.push_back(std::move(l));
  }
  return Status::Ok();
}

Status Server::RebindTls(int port) {
  // As Redis' applyTLSPort: a context first (TLS may have been unused until now), then the new
  // port bound beside the old one on bind's addresses; a failure changes nothing. 0 closes it.
  if (port == tls_port_) return Status::Ok();
  if (port != 0 && tls_context() == nullptr) KV_TRY(ApplyTls());
  auto fds = ListenTcpOn(port, bound_);
  if (!fds.ok()) return Status::IoError("Unable to listen on this port. Check server logs.");
  tls_port_ = port;
  PostSwapListeners(std::move(*fds), /*tls=*/true);
  UpdateProcTitle();
  return Status::Ok();
}

}  // namespace kv::server
