// A small blocking RESP client for tests: sends commands over a real socket and reads replies,
// both parsed (Reply) and as the exact bytes the server sent (for differential comparisons).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/socket.h"
#include "net/tls.h"

namespace kv::test {

struct Reply {
  char type = 0;            // RESP type byte: + - : $ * _ % ~ , # = > (
  std::string str;          // simple/bulk/error/verbatim/double text
  int64_t integer = 0;
  bool is_null = false;     // $-1, *-1 or _
  std::vector<Reply> elems; // arrays, maps (flattened k,v), sets, pushes
  std::string raw;          // the reply's bytes on the wire

  bool is_error() const { return type == '-'; }
  // A compact human-readable rendering for test failure messages.
  std::string Debug() const;
};

class RespClient {
 public:
  // Connects to 127.0.0.1:port; aborts the test process on failure (tests need the server).
  explicit RespClient(int port, int timeout_ms = 10000);
  // Connects to the Unix socket at path; aborts likewise.
  explicit RespClient(const std::string& unix_path, int timeout_ms = 10000);
  // Connects over TLS with `ctx` (net::TlsContext::CreateClientOnly); nullptr, and the reason
  // in `*error`, when the connection or its handshake fails.
  static std::unique_ptr<RespClient> ConnectTls(int port, std::shared_ptr<net::TlsContext> ctx,
                                                std::string* error, int timeout_ms = 10000);

  // Sends one command as a multibulk request and reads its reply.
  Reply Call(const std::vector<std::string>& args);
  // Convenience: Call(...).raw
  std::string Raw(const std::vector<std::string>& args) { return Call(args).raw; }
  // Sends bytes as they are (inline commands, malformed input, pipelines).
  void SendRaw(const std::string& bytes);
  void Send(const std::vector<std::string>& args);
  // Reads the next reply. A reply with type 0 means the connection closed or timed out.
  Reply Read();
  // Reads the next reply as a replica does, skipping the keepalive newlines a primary sends
  // before +FULLRESYNC while the snapshot waits for a child.
  Reply ReadSkippingNewlines();
  // True once the peer has closed the connection (reads EOF within timeout_ms). What arrived
  // meanwhile (and was not read yet) is appended to `received` when given, else dropped.
  bool WaitClosed(int timeout_ms, std::string* received = nullptr);
  int fd() const { return fd_.get(); }
  const net::TlsConn* tls() const { return tls_.get(); }

  static std::string Encode(const std::vector<std::string>& args);

 private:
  RespClient() = default;
  bool Fill();  // reads more bytes into buf_; false on EOF/timeout
  // One read of the socket (through TLS where there is one) within timeout_ms_: bytes read,
  // 0 at EOF, -1 on a timeout or error.
  ssize_t ReadSome(char* buf, size_t n, int timeout_ms);
  bool ReadLine(std::string* line);
  bool ReadN(size_t n, std::string* out);
  bool ParseOne(Reply* r);
  bool ParseBody(Reply* r);

  net::Fd fd_;
  std::unique_ptr<net::TlsConn> tls_;
  std::string buf_;
  size_t pos_ = 0;
  int timeout_ms_ = 10000;
  std::string raw_;  // bytes consumed by the reply being parsed
};

}  // namespace kv::test
