// TLS over a socket with OpenSSL, the library Redis and its clients use: the contexts built
// from Redis 7.0's tls-* settings (TlsContext), and one connection (TlsConn) used either
// non-blocking from an event loop, as read(2)/write(2) are, or blocking with a deadline (the
// replication link's handshake).
//
// A context is immutable once built and shared: CONFIG SET builds a new one for the next
// connections while the live ones keep theirs. A TlsConn belongs to one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace kv::net {

// tls-auth-clients: whether a client must present a certificate the CA file or dir accepts.
enum class TlsClientAuth { kNo, kYes, kOptional };

struct TlsOptions {
  std::string cert_file, key_file, key_file_pass;
  // For the connections this server opens (replication); cert_file and key_file when empty.
  std::string client_cert_file, client_key_file, client_key_file_pass;
  std::string ca_cert_file, ca_cert_dir;
  std::string dh_params_file;
  std::string protocols;  // "TLSv1.2 TLSv1.3" (case-insensitive); empty: TLSv1.2 and TLSv1.3
  std::string ciphers, ciphersuites;
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  int64_t session_cache_size = 20 * 1024;
  int64_t session_cache_timeout = 300;
  // Whether some use needs the CA (tls-auth-clients not "no", tls-replication, tls-cluster).
  bool needs_ca = false;
};

class TlsContext {
 public:
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Builds the server context and, with client_cert_file and client_key_file, a client context
  // of its own. Fails, with the reason in Redis' words ("Failed to load certificate: <file>:
  // <OpenSSL error>"), on anything the options get wrong.
  static Result<std::shared_ptr<TlsContext>> Create(const TlsOptions& options);
  // A context for client connections alone (tools, tests): trusts `ca_file` (verification is
  // off when it is empty) and presents `cert_file` and `key_file` when given.
  static Result<std::shared_ptr<TlsContext>> CreateClientOnly(const std::string& ca_file,
                                                             const std::string& cert_file = "",
                                                             const std::string& key_file = "");

  SSL_CTX* server() const { return server_; }
  SSL_CTX* client() const { return client_ ? client_ : server_; }

 private:
  TlsContext() = default;
  SSL_CTX* server_ = nullptr;
  SSL_CTX* client_ = nullptr;
};

class TlsConn {
 public:
  ~TlsConn();
  TlsConn(const TlsConn&) = delete;
  TlsConn& operator=(const TlsConn&) = delete;

  // The server's end of an accepted connection: the handshake runs in the first calls to
  // Handshake (or Read/Write). The socket stays the caller's.
  static std::unique_ptr<TlsConn> Accept(std::shared_ptr<TlsContext> ctx, int fd,
                                         TlsClientAuth auth);
  // The client's end (replication): verifies the server's certificate against the CA.
  static std::unique_ptr<TlsConn> Connect(std::shared_ptr<TlsContext> ctx, int fd);
  // Connect, then the handshake waited for up to the deadline (a steady-clock time in ms).
  static Result<std::unique_ptr<TlsConn>> ConnectUntil(std::shared_ptr<TlsContext> ctx, int fd,
                                                       int64_t deadline_ms);

  enum class Step { kDone, kWantRead, kWantWrite, kFailed };
  // Advances the handshake without blocking. kFailed: error() says why.
  Step Handshake();
  bool established() const { return established_; }

  // As read(2) and write(2) on a non-blocking socket: bytes moved, 0 at the peer's close
  // (Read), or -1 with errno: EAGAIN when the socket must become readable or writable first
  // (read_wants_write / write_wants_read tell the unusual direction), another value (EIO for a
  // TLS failure, error() has it) when the connection is broken. A handshake not yet done is
  // advanced first.
  ssize_t Read(void* buf, size_t n);
  ssize_t Write(const void* buf, size_t n);
  bool read_wants_write() const { return read_wants_write_; }
  bool write_wants_read() const { return write_wants_read_; }
  // Whether OpenSSL holds input already taken from the socket (which the event loop would
  // never report): read again before waiting.
  bool HasPending() const;

  // Blocking variants for a socket in blocking mode or not: wait with poll(2) up to the
  // deadline (a steady-clock time in ms) for what OpenSSL needs. kTimeout at the deadline.
  Status HandshakeUntil(int64_t deadline_ms);
  Result<size_t> ReadUntil(void* buf, size_t n, int64_t deadline_ms);
  Status WriteAllUntil(const void* buf, size_t n, int64_t deadline_ms);

  const std::string& error() const { return error_; }
  int fd() const { return fd_; }
  // The peer certificate's subject ("/O=.../CN=..."; "" without one) and the protocol in use
  // ("TLSv1.3").
  std::string PeerSubject() const;
  std::string Version() const;

 private:
  TlsConn(std::shared_ptr<TlsContext> ctx, SSL* ssl, int fd)
      : ctx_(std::move(ctx)), ssl_(ssl), fd_(fd) {}
  // Finishes the handshake first where needed: false, with errno, while it cannot.
  bool Established(bool reading);
  // Maps an OpenSSL result <= 0 to errno (EAGAIN, EPIPE, EIO...) and records the error.
  ssize_t Fail(int ret, bool reading);
  Status Wait(bool for_write, int64_t deadline_ms);

  std::shared_ptr<TlsContext> ctx_;  // the SSL's context lives as long as the connection
  SSL* ssl_;
  int fd_;
  bool established_ = false;
  bool read_wants_write_ = false;
  bool write_wants_read_ = false;
  std::string error_;
};

}  // namespace kv::net
