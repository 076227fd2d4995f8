#include "tests/support/resp_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/clock.h"

namespace kv::test {

RespClient::RespClient(int port, int timeout_ms) : timeout_ms_(timeout_ms) {
  auto fd = net::ConnectTcp("127.0.0.1", port, timeout_ms);
  if (!fd.ok()) {
    fprintf(stderr, "RespClient: cannot connect to port %d: %s\n", port,
            fd.status().message().c_str());
    abort();
  }
  fd_ = std::move(*fd);
  net::SetNoDelay(fd_.get());
}

RespClient::RespClient(const std::string& unix_path, int timeout_ms) : timeout_ms_(timeout_ms) {
  auto fd = net::ConnectUnix(unix_path, timeout_ms);
  if (!fd.ok()) {
    fprintf(stderr, "RespClient: cannot connect to %s: %s\n", unix_path.c_str(),
            fd.status().message().c_str());
    abort();
  }
  fd_ = std::move(*fd);
}

std::unique_ptr<RespClient> RespClient::ConnectTls(int port, std::shared_ptr<net::TlsContext> ctx,
                                                   std::string* error, int timeout_ms) {
  auto fd = net::ConnectTcp("127.0.0.1", port, timeout_ms);
  if (!fd.ok()) {
    *error = fd.status().message();
    return nullptr;
  }
  std::unique_ptr<RespClient> c(new RespClient());
  c->timeout_ms_ = timeout_ms;
  c->fd_ = std::move(*fd);
  net::SetNoDelay(c->fd_.get());
  c->tls_ = net::TlsConn::Connect(std::move(ctx), c->fd_.get());
  Status s = c->tls_->HandshakeUntil(MonoMs() + timeout_ms);
  if (!s.ok()) {
    *error = s.message();
    return nullptr;
  }
  return c;
}

ssize_t RespClient::ReadSome(char* buf, size_t n, int timeout_ms) {
  if (tls_) {
    auto r = tls_->ReadUntil(buf, n, MonoMs() + timeout_ms);
    if (r.ok()) return static_cast<ssize_t>(*r);
    return r.status().code() == Code::kClosed ? 0 : -1;
  }
  pollfd p{fd_.get(), POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return -1;
  return read(fd_.get(), buf, n);
}

std::string RespClient::Encode(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out += a;
    out += "\r\n";
  }
  return out;
}

void RespClient::SendRaw(const std::string& bytes) {
  if (tls_) {
    (void)tls_->WriteAllUntil(bytes.data(), bytes.size(), MonoMs() + timeout_ms_);
    return;  // a failure shows in the following Read
  }
  size_t off = 0;
  while (off < bytes.size()) {
    // MSG_NOSIGNAL: a server that died must fail this test, not kill the test binary with
    // SIGPIPE (its servers would outlive it, holding ctest's output pipe open).
    ssize_t n = send(fd_.get(), bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) {
        pollfd p{fd_.get(), POLLOUT, 0};
        poll(&p, 1, timeout_ms_);
        continue;
      }
      return;  // peer gone: the following Read reports it
    }
    off += static_cast<size_t>(n);
  }
}

void RespClient::Send(const std::vector<std::string>& args) { SendRaw(Encode(args)); }

Reply RespClient::Call(const std::vector<std::string>& args) {
  Send(args);
  return Read();
}

bool RespClient::Fill() {
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  }
  char tmp[65536];
  ssize_t n = ReadSome(tmp, sizeof(tmp), timeout_ms_);
  if (n <= 0) return false;
  buf_.append(tmp, static_cast<size_t>(n));
  return true;
}

bool RespClient::ReadLine(std::string* line) {
  while (true) {
    size_t nl = buf_.find("\r\n", pos_);
    if (nl != std::string::npos) {
      line->assign(buf_, pos_, nl - pos_);
      raw_.append(buf_, pos_, nl - pos_ + 2);
      pos_ = nl + 2;
      return true;
    }
    if (!Fill()) return false;
  }
}

bool RespClient::ReadN(size_t n, std::string* out) {
  while (buf_.size() - pos_ < n + 2) {
    if (!Fill()) return false;
  }
  out->assign(buf_, pos_, n);
  raw_.append(buf_, pos_, n + 2);
  pos_ += n + 2;
  return true;
}

bool RespClient::ParseOne(Reply* r) {
  size_t start = raw_.size();
  bool ok = ParseBody(r);
  if (ok) r->raw = raw_.substr(start);  // nested elements keep their own bytes too
  return ok;
}

bool RespClient::ParseBody(Reply* r) {
  std::string line;
  if (!ReadLine(&line) || line.empty()) return false;
  r->type = line[0];
  std::string rest = line.substr(1);
  switch (r->type) {
    case '+': case '-': case ',': case '(': r->str = rest; return true;
    case ':': r->integer = std::stoll(rest); return true;
    case '#': r->integer = rest == "t"; r->str = rest; return true;
    case '_': r->is_null = true; return true;
    case '$': case '=': {
      long long n = std::stoll(rest);
      if (n < 0) {
        r->is_null = true;
        return true;
      }
      return ReadN(static_cast<size_t>(n), &r->str);
    }
    case '*': case '~': case '>': case '%': {
      long long n = std::stoll(rest);
      if (n < 0) {
        r->is_null = true;
        return true;
      }
      if (r->type == '%') n *= 2;
      for (long long i = 0; i < n; i++) {
        Reply e;
        if (!ParseOne(&e)) return false;
        r->elems.push_back(std::move(e));
      }
      return true;
    }
    default: return false;
  }
}

Reply RespClient::Read() {
  raw_.clear();
  Reply r;
  if (!ParseOne(&r)) return Reply{};
  return r;
}

Reply RespClient::ReadSkippingNewlines() {
  while (true) {
    if (pos_ == buf_.size() && !Fill()) return Reply{};
    if (buf_[pos_] != '\n') return Read();
    pos_++;
  }
}

bool RespClient::WaitClosed(int timeout_ms, std::string* received) {
  int saved = timeout_ms_;
  timeout_ms_ = timeout_ms;
  bool closed = false;
  if (received) {  // what was read ahead but not parsed comes first
    received->append(buf_, pos_);
    buf_.clear();
    pos_ = 0;
  }
  while (true) {
    char tmp[65536];
    if (tls_) {
      auto r = tls_->ReadUntil(tmp, sizeof(tmp), MonoMs() + timeout_ms);
      if (!r.ok()) {
        closed = r.status().code() != Code::kTimedOut;  // the end, or the connection broken
        break;
      }
      if (received) received->append(tmp, *r);
      continue;
    }
    pollfd p{fd_.get(), POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t n = read(fd_.get(), tmp, sizeof(tmp));
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      closed = true;
      break;
    }
    if (received) received->append(tmp, static_cast<size_t>(n));
  }
  timeout_ms_ = saved;
  return closed;
}

std::string Reply::Debug() const {
  switch (type) {
    case 0: return "<no reply>";
    case ':': return std::to_string(integer);
    case '_': return "(nil)";
    case '*': case '~': case '>': case '%': {
      if (is_null) return "(nil array)";
      std::string s = "[";
      for (size_t i = 0; i < elems.size(); i++) s += (i ? ", " : "") + elems[i].Debug();
      return s + "]";
    }
    default:
      if (is_null) return "(nil)";
      return std::string(1, type) + str;
  }
}

}  // namespace kv::test
