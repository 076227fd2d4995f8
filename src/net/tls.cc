#include "net/tls.h"

#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/strutil.h"

namespace kv::net {

namespace {

constexpr int kTlsV1 = 1, kTlsV1_1 = 2, kTlsV1_2 = 4, kTlsV1_3 = 8;

// The oldest error OpenSSL queued (as Redis reports it), and the queue emptied.
std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

Result<int> ParseProtocols(const std::string& text) {
  if (text.empty()) return kTlsV1_2 | kTlsV1_3;
  int protocols = 0;
  for (const std::string& t : SplitArgs(text).value_or(std::vector<std::string>{text})) {
    if (EqualsIgnoreCase(t, "tlsv1")) {
      protocols |= kTlsV1;
    } else if (EqualsIgnoreCase(t, "tlsv1.1")) {
      protocols |= kTlsV1_1;
    } else if (EqualsIgnoreCase(t, "tlsv1.2")) {
      protocols |= kTlsV1_2;
    } else if (EqualsIgnoreCase(t, "tlsv1.3")) {
      protocols |= kTlsV1_3;
    } else {
      return Status::Invalid(
          "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' "
          "and 'TLSv1.3'.");
    }
  }
  return protocols;
}

int PasswordCallback(char* buf, int size, int /*rwflag*/, void* userdata) {
  const auto* pass = static_cast<const std::string*>(userdata);
  if (pass == nullptr || pass->empty() || pass->size() > static_cast<size_t>(size)) return -1;
  memcpy(buf, pass->data(), pass->size());
  return static_cast<int>(pass->size());
}

// What both contexts share (Redis' createSSLContext): protocols, the certificate and key, the
// CA, the ciphers.
Result<SSL_CTX*> BaseContext(const TlsOptions& o, int protocols, bool client,
                             const std::string* pass) {
  const std::string& cert = client ? o.client_cert_file : o.cert_file;
  const std::string& key = client ? o.client_key_file : o.key_file;
  SSL_CTX* ctx = SSL_CTX_new(TLS_method());
  if (ctx == nullptr) return Status::Invalid("Failed to create a TLS context: " + OpenSslError());
  auto fail = [&](std::string why) -> Result<SSL_CTX*> {
    SSL_CTX_free(ctx);
    return Status::Invalid(std::move(why));
  };
  SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION |
                               SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS | SSL_OP_IGNORE_UNEXPECTED_EOF);
  if (!(protocols & kTlsV1)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1);
  if (!(protocols & kTlsV1_1)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_1);
  if (!(protocols & kTlsV1_2)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_2);
  if (!(protocols & kTlsV1_3)) SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_3);
  // TLSv1 and 1.1 need the lower security level OpenSSL 3 no longer grants by default.
  if (protocols & (kTlsV1 | kTlsV1_1)) SSL_CTX_set_security_level(ctx, 0);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_default_passwd_cb(ctx, PasswordCallback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, const_cast<std::string*>(pass));
  if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) <= 0) {
    return fail("Failed to load certificate: " + cert + ": " + OpenSslError());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) <= 0) {
    return fail("Failed to load private key: " + key + ": " + OpenSslError());
  }
  if ((!o.ca_cert_file.empty() || !o.ca_cert_dir.empty()) &&
      SSL_CTX_load_verify_locations(ctx, o.ca_cert_file.empty() ? nullptr : o.ca_cert_file.c_str(),
                                    o.ca_cert_dir.empty() ? nullptr : o.ca_cert_dir.c_str()) <= 0) {
    return fail("Failed to configure CA certificate(s) file/directory: " + OpenSslError());
  }
  if (!o.ciphers.empty() && !SSL_CTX_set_cipher_list(ctx, o.ciphers.c_str())) {
    ERR_clear_error();
    return fail("Failed to configure ciphers: " + o.ciphers);
  }
  if (!o.ciphersuites.empty() && !SSL_CTX_set_ciphersuites(ctx, o.ciphersuites.c_str())) {
    ERR_clear_error();
    return fail("Failed to configure ciphersuites: " + o.ciphersuites);
  }
  return ctx;
}

Status LoadDhParams(SSL_CTX* ctx, const std::string& file) {
  FILE* f = fopen(file.c_str(), "r");
  if (f == nullptr) return Status::Invalid("Failed to load " + file + ": " + strerror(errno));
  EVP_PKEY* pkey = nullptr;
  OSSL_DECODER_CTX* dctx = OSSL_DECODER_CTX_new_for_pkey(
      &pkey, "PEM", nullptr, "DH", OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS, nullptr, nullptr);
  bool read = dctx != nullptr && OSSL_DECODER_from_fp(dctx, f);
  OSSL_DECODER_CTX_free(dctx);
  fclose(f);
  if (!read) {
    ERR_clear_error();
    return Status::Invalid(file + ": failed to read DH params.");
  }
  if (SSL_CTX_set0_tmp_dh_pkey(ctx, pkey) <= 0) {
    EVP_PKEY_free(pkey);
    return Status::Invalid("Failed to load DH params file: " + file + ": " + OpenSslError());
  }
  return Status::Ok();
}

}  // namespace

TlsContext::~TlsContext() {
  SSL_CTX_free(server_);
  SSL_CTX_free(client_);
}

Result<std::shared_ptr<TlsContext>> TlsContext::Create(const TlsOptions& o) {
  if (o.cert_file.empty()) return Status::Invalid("No tls-cert-file configured!");
  if (o.key_file.empty()) return Status::Invalid("No tls-key-file configured!");
  if (o.needs_ca && o.ca_cert_file.empty() && o.ca_cert_dir.empty()) {
    return Status::Invalid(
        "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
        "tls-replication or tls-auth-clients are enabled!");
  }
  KV_TRY_ASSIGN(protocols, ParseProtocols(o.protocols));
  // The key passphrases only serve while the keys load, below.
  KV_TRY_ASSIGN(server, BaseContext(o, protocols, false, &o.key_file_pass));
  std::shared_ptr<TlsContext> ctx(new TlsContext());
  ctx->server_ = server;
  if (o.session_caching) {
    SSL_CTX_set_session_cache_mode(server, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(server, o.session_cache_size);
    SSL_CTX_set_timeout(server, o.session_cache_timeout);
    SSL_CTX_set_session_id_context(server, reinterpret_cast<const unsigned char*>("redis"), 5);
  } else {
    // No tickets either: a session no one can resume is never handed out. (Redis issues
    // tickets here, and a client that offers one back fails its handshake with an internal
    // error, the session id context being unset.)
    SSL_CTX_set_session_cache_mode(server, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(server, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(server, 0);
  }
  // OpenSSL 3 refuses client-initiated renegotiation unless allowed (Redis turns it off).
  SSL_CTX_set_options(server, SSL_OP_SINGLE_DH_USE);
  if (o.prefer_server_ciphers) SSL_CTX_set_options(server, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (!o.dh_params_file.empty()) {
    KV_TRY(LoadDhParams(server, o.dh_params_file));
  } else {
    SSL_CTX_set_dh_auto(server, 1);
  }
  if (!o.client_cert_file.empty() && !o.client_key_file.empty()) {
    KV_TRY_ASSIGN(client, BaseContext(o, protocols, true, &o.client_key_file_pass));
    ctx->client_ = client;
  }
  return ctx;
}

Result<std::shared_ptr<TlsContext>> TlsContext::CreateClientOnly(const std::string& ca_file,
                                                                 const std::string& cert_file,
                                                                 const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::Invalid("Failed to create a TLS context: " + OpenSslError());
  std::shared_ptr<TlsContext> out(new TlsContext());
  out->server_ = ctx;
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (ca_file.empty()) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr) <= 0) {
      return Status::Invalid("Failed to load CA file: " + ca_file + ": " + OpenSslError());
    }
  }
  if (!cert_file.empty() && SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) <= 0) {
    return Status::Invalid("Failed to load certificate: " + cert_file + ": " + OpenSslError());
  }
  if (!key_file.empty() &&
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) <= 0) {
    return Status::Invalid("Failed to load private key: " + key_file + ": " + OpenSslError());
  }
  return out;
}

TlsConn::~TlsConn() { SSL_free(ssl_); }

std::unique_ptr<TlsConn> TlsConn::Accept(std::shared_ptr<TlsContext> ctx, int fd,
                                         TlsClientAuth auth) {
  SSL* ssl = SSL_new(ctx->server());
  if (ssl == nullptr) return nullptr;
  switch (auth) {
    case TlsClientAuth::kNo:
      SSL_set_verify(ssl, SSL_VERIFY_NONE, nullptr);
      break;
    case TlsClientAuth::kOptional:
      SSL_set_verify(ssl, SSL_VERIFY_PEER, nullptr);
      break;
    case TlsClientAuth::kYes:
      SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  SSL_set_fd(ssl, fd);
  SSL_set_accept_state(ssl);
  return std::unique_ptr<TlsConn>(new TlsConn(std::move(ctx), ssl, fd));
}

std::unique_ptr<TlsConn> TlsConn::Connect(std::shared_ptr<TlsContext> ctx, int fd) {
  SSL* ssl = SSL_new(ctx->client());
  if (ssl == nullptr) return nullptr;
  SSL_set_fd(ssl, fd);
  SSL_set_connect_state(ssl);
  return std::unique_ptr<TlsConn>(new TlsConn(std::move(ctx), ssl, fd));
}

Result<std::unique_ptr<TlsConn>> TlsConn::ConnectUntil(std::shared_ptr<TlsContext> ctx, int fd,
                                                       int64_t deadline_ms) {
  std::unique_ptr<TlsConn> conn = Connect(std::move(ctx), fd);
  if (!conn) return Status::IoError("cannot start a TLS session");
  KV_TRY(conn->HandshakeUntil(deadline_ms));
  return conn;
}

ssize_t TlsConn::Fail(int ret, bool reading) {
  int err = SSL_get_error(ssl_, ret);
  switch (err) {
    case SSL_ERROR_WANT_READ:
      if (!reading) write_wants_read_ = true;
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_WANT_WRITE:
      if (reading) read_wants_write_ = true;
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:
      return 0;  // the peer's close_notify, or its close (SSL_OP_IGNORE_UNEXPECTED_EOF)
    case SSL_ERROR_SYSCALL:
      if (errno == 0) errno = EPIPE;
      error_ = strerror(errno);
      ERR_clear_error();
      return -1;
    default:
      error_ = OpenSslError();
      errno = EIO;
      return -1;
  }
}

TlsConn::Step TlsConn::Handshake() {
  if (established_) return Step::kDone;
  ERR_clear_error();
  int ret = SSL_do_handshake(ssl_);
  if (ret == 1) {
    established_ = true;
    return Step::kDone;
  }
  int err = SSL_get_error(ssl_, ret);
  if (err == SSL_ERROR_WANT_READ) return Step::kWantRead;
  if (err == SSL_ERROR_WANT_WRITE) return Step::kWantWrite;
  if (err == SSL_ERROR_SYSCALL || err == SSL_ERROR_ZERO_RETURN) {
    error_ = errno != 0 && err == SSL_ERROR_SYSCALL ? strerror(errno) : "Connection closed";
    ERR_clear_error();
  } else {
    error_ = OpenSslError();
  }
  return Step::kFailed;
}

bool TlsConn::Established(bool reading) {
  if (established_) return true;
  Step s = Handshake();
  if (s == Step::kDone) return true;
  if (s == Step::kFailed) {
    errno = EIO;
    return false;
  }
  // The handshake waits for the other direction than the call's own: say so.
  if (reading) read_wants_write_ = s == Step::kWantWrite;
  if (!reading) write_wants_read_ = s == Step::kWantRead;
  errno = EAGAIN;
  return false;
}

ssize_t TlsConn::Read(void* buf, size_t n) {
  read_wants_write_ = false;
  if (!Established(true)) return -1;
  ERR_clear_error();
  int ret = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(n, 1 << 30)));
  return ret > 0 ? ret : Fail(ret, true);
}

ssize_t TlsConn::Write(const void* buf, size_t n) {
  write_wants_read_ = false;
  if (!Established(false)) return -1;
  if (n == 0) return 0;
  ERR_clear_error();
  int ret = SSL_write(ssl_, buf, static_cast<int>(std::min<size_t>(n, 1 << 30)));
  return ret > 0 ? ret : Fail(ret, false);
}

std::string TlsConn::PeerSubject() const {
  X509* cert = SSL_get1_peer_certificate(ssl_);
  if (cert == nullptr) return "";
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  X509_free(cert);
  return buf;
}

std::string TlsConn::Version() const { return SSL_get_version(ssl_); }

bool TlsConn::HasPending() const { return SSL_has_pending(ssl_) == 1; }

Status TlsConn::Wait(bool for_write, int64_t deadline_ms) {
  int64_t left = deadline_ms - MonoMs();
  if (left <= 0) return Status(Code::kTimedOut, "Timeout on the TLS connection");
  pollfd p{fd_, static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
  int r = poll(&p, 1, static_cast<int>(left));
  if (r == 0) return Status(Code::kTimedOut, "Timeout on the TLS connection");
  if (r < 0 && errno != EINTR) return Status::FromErrno("poll", errno);
  return Status::Ok();
}

Status TlsConn::HandshakeUntil(int64_t deadline_ms) {
  for (;;) {
    Step s = Handshake();
    if (s == Step::kDone) return Status::Ok();
    if (s == Step::kFailed) return Status::IoError("TLS handshake failed: " + error_);
    KV_TRY(Wait(s == Step::kWantWrite, deadline_ms));
  }
}

Result<size_t> TlsConn::ReadUntil(void* buf, size_t n, int64_t deadline_ms) {
  for (;;) {
    ssize_t r = Read(buf, n);
    if (r > 0) return static_cast<size_t>(r);
    if (r == 0) return Status(Code::kClosed, "Connection closed by the peer");
    if (errno != EAGAIN && errno != EINTR) {
      return Status::IoError(error_.empty() ? strerror(errno) : error_);
    }
    KV_TRY(Wait(read_wants_write_, deadline_ms));
  }
}

Status TlsConn::WriteAllUntil(const void* buf, size_t n, int64_t deadline_ms) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t w = Write(p, n);
    if (w > 0) {
      p += w;
      n -= static_cast<size_t>(w);
      continue;
    }
    if (errno != EAGAIN && errno != EINTR) {
      return Status::IoError(error_.empty() ? strerror(errno) : error_);
    }
    KV_TRY(Wait(!write_wants_read_, deadline_ms));
  }
  return Status::Ok();
}

}  // namespace kv::net
