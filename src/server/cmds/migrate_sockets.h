// MIGRATE's connections to its target instances, as Redis' migrate socket cache: one blocking
// TCP connection per "host:port" (the two arguments as the command gave them), reused by later
// MIGRATEs to the same pair, closed by the cron once unused for more than kIdleSeconds, and at
// most kMaxItems of them (a new one drops a random one). INFO's migrate_cached_sockets counts
// them.
//
// Threads: every call is made with the keyspace lock held (MIGRATE runs under it, the cron
// takes it), so the cache needs no lock of its own. The IO blocks the calling thread for up to
// the command's timeout, as Redis blocks its main thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "net/socket.h"
#include "net/tls.h"

namespace kv::server {

class MigrateSockets {
 public:
  static constexpr int64_t kIdleSeconds = 10;
  static constexpr size_t kMaxItems = 64;

  // One cached connection. The IO calls fail with an errno value in *err: ETIMEDOUT when the
  // timeout passed (MIGRATE does not retry then), another value otherwise.
  class Conn {
   public:
    Conn(net::Fd fd, std::unique_ptr<net::TlsConn> tls)
        : fd_(std::move(fd)), tls_(std::move(tls)) {}
    // The db the target has selected for this connection; -1 when unknown (a new connection,
    // or after the target answered an error).
    int64_t last_dbid = -1;
    int64_t last_use_s = 0;  // wall-clock seconds of the last MIGRATE that used it

    // Writes all of `data`, waiting up to timeout_ms for each 64 KiB chunk to go out.
    bool Write(std::string_view data, int64_t timeout_ms, int* err);
    // Reads one reply line, without its CRLF, waiting up to timeout_ms for each read.
    bool ReadLine(int64_t timeout_ms, std::string* line, int* err);

   private:
    bool WaitFor(short events, int64_t timeout_ms, int* err);
    net::Fd fd_;
    std::unique_ptr<net::TlsConn> tls_;  // tls-cluster: the connection's TLS session
    std::string in_;  // bytes read past the last line returned
  };

  // The cached connection to host:port, or a new one (nullptr when the connection could not
  // be started: the host does not resolve, or every address refused at once). As Redis 7.0's
  // blocking connect, a connection still pending after timeout_ms, or one refused after it
  // began, is returned all the same: the first write finds it out.
  // With `tls` (tls-cluster yes, as Redis decides), the connection is TLS: a handshake that
  // fails within timeout_ms gives nullptr too.
  Conn* Get(std::string_view host, std::string_view port, int64_t timeout_ms, int64_t now_s,
            std::shared_ptr<net::TlsContext> tls = nullptr);
  // Drops the connection to host:port, if cached (after an IO error on it).
  void Close(std::string_view host, std::string_view port);
  // The cron: closes the connections unused for more than kIdleSeconds.
  void CloseIdle(int64_t now_s);
  size_t size() const { return conns_.size(); }

 private:
  std::map<std::string, std::unique_ptr<Conn>, std::less<>> conns_;
};

}  // namespace kv::server
