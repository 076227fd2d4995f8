// Pieces both halves of the replica's link code use (replica/replica.cc and replica_load.cc:
// handshake and TCP transfer; replica_data.cc: the RDMA data link):
// blocking socket IO with a deadline, a loader Source over bytes that arrive in pieces, and
// small formatting helpers. Link thread only.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "common/status.h"
#include "net/tls.h"
#include "persist/sink.h"

namespace kv::repl {

// Blocking IO with a deadline on the link's non-blocking socket; through `tls` when the link
// has one (tls-replication).
class LinkIo {
 public:
  LinkIo(int fd, int timeout_ms, net::TlsConn* tls = nullptr)
      : fd_(fd), timeout_ms_(timeout_ms), tls_(tls) {}

  Status WriteAll(std::string_view data);
  // Reads what is available (at most `cap` bytes), waiting up to the timeout for something.
  Result<size_t> ReadSome(char* buf, size_t cap);
  // A line without its CRLF; bytes after it stay in pending().
  Result<std::string> ReadLine();
  std::string& pending() { return pending_; }
  int fd() const { return fd_; }

 private:
  Status Wait(short events);
  int fd_;
  int timeout_ms_;
  net::TlsConn* tls_;
  std::string pending_;
};

// Reads a full resync's bulk header, "$<len>" or "$EOF:<40-byte mark>", after any keepalive
// newlines: *total is the length (-1 for $EOF:), *mark the end mark (empty for $<len>).
Status ReadSnapshotHeader(LinkIo& io, int64_t* total, std::string* mark);

// A loader Source over bytes that arrive in pieces (a socket, a data link): Read hands out views
// into one buffer, compacted only when it must grow; views stay valid until the next Read.
// Subclasses append at least one more piece to buf_ in Fill.
class BufferedSource : public persist::Source {
 public:
  Result<std::string_view> Read(size_t n) override;
  uint64_t offset() const override { return offset_; }
  // What was read past the snapshot (the start of the stream).
  std::string Rest() const { return buf_.substr(pos_); }

 protected:
  virtual Status Fill(size_t missing) = 0;
  std::string buf_;

 private:
  size_t pos_ = 0;
  uint64_t offset_ = 0;
};

// Sends a keepalive newline to a replica waiting for its snapshot (Redis' replicas count their
// repl-timeout from the last byte read, and skip newlines before the payload). Never blocks: a
// full socket already has bytes for the replica to read.
void SendKeepalive(int fd);
// The same over the link's TLS session where it has one.
void SendKeepalive(int fd, net::TlsConn* tls);

// A command as RESP, for the handshake.
std::string ReplCommand(std::initializer_list<std::string_view> argv);
// "12.3 MB", for progress lines.
std::string HumanMB(int64_t bytes);

}  // namespace kv::repl
