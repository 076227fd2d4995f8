#include "repl/datalink/link_io.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "common/strutil.h"
#include "repl/feed.h"

namespace kv::repl {

Status LinkIo::WriteAll(std::string_view data) {
  while (!data.empty()) {
    ssize_t n =
        tls_ ? tls_->Write(data.data(), data.size()) : ::write(fd_, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      if (tls_ && !tls_->error().empty()) return Status::IoError("TLS write: " + tls_->error());
      return Status::FromErrno("write", errno);
    }
    KV_TRY(Wait(tls_ && tls_->write_wants_read() ? POLLIN : POLLOUT));
  }
  return Status::Ok();
}

Result<size_t> LinkIo::ReadSome(char* buf, size_t cap) {
  while (true) {
    ssize_t n = tls_ ? tls_->Read(buf, cap) : ::read(fd_, buf, cap);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return Status::Closed("connection closed by the primary");
    if (errno != EAGAIN && errno != EINTR) {
      if (tls_ && !tls_->error().empty()) return Status::IoError("TLS read: " + tls_->error());
      return Status::FromErrno("read", errno);
    }
    KV_TRY(Wait(tls_ && tls_->read_wants_write() ? POLLOUT : POLLIN));
  }
}

Result<std::string> LinkIo::ReadLine() {
  while (true) {
    size_t eol = pending_.find('\n');
    if (eol != std::string::npos) {
      std::string line = pending_.substr(0, eol);
      pending_.erase(0, eol + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (pending_.size() > 64 * 1024) return Status::Corruption("protocol line too long");
    char buf[4096];
    KV_TRY_ASSIGN(n, ReadSome(buf, sizeof(buf)));
    pending_.append(buf, n);
  }
}

Status LinkIo::Wait(short events) {
  pollfd pfd{fd_, events, 0};
  int r = poll(&pfd, 1, timeout_ms_);
  if (r == 0) return Status::TimedOut("timeout talking to the primary");
  if (r < 0 && errno != EINTR) return Status::FromErrno("poll", errno);
  if (r > 0 && (pfd.revents & (POLLERR | POLLNVAL))) return Status::Closed("link error");
  return Status::Ok();
}

Status ReadSnapshotHeader(LinkIo& io, int64_t* total, std::string* mark) {
  std::string header;
  while (header.empty()) {
    KV_TRY_ASSIGN(line, io.ReadLine());
    header = line;
  }
  if (header[0] != '$') return Status::Corruption("bad snapshot header: " + header.substr(0, 64));
  *total = -1;
  mark->clear();
  if (header.rfind("$EOF:", 0) == 0) {
    *mark = header.substr(5);
    if (mark->size() != 40) return Status::Corruption("bad $EOF: mark");
    return Status::Ok();
  }
  auto n = ParseInt64(std::string_view(header).substr(1));
  if (!n || *n < 0) return Status::Corruption("bad snapshot length: " + header.substr(0, 64));
  *total = *n;
  return Status::Ok();
}

Result<std::string_view> BufferedSource::Read(size_t n) {
  if (buf_.size() - pos_ < n) {
    buf_.erase(0, pos_);
    pos_ = 0;
    while (buf_.size() < n) KV_TRY(Fill(n - buf_.size()));
  }
  std::string_view v(buf_.data() + pos_, n);
  pos_ += n;
  offset_ += n;
  return v;
}

void SendKeepalive(int fd) {
  [[maybe_unused]] ssize_t n = ::send(fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void SendKeepalive(int fd, net::TlsConn* tls) {
  if (tls == nullptr) {
    SendKeepalive(fd);
    return;
  }
  [[maybe_unused]] ssize_t n = tls->Write("\n", 1);  // the socket is non-blocking
}

std::string ReplCommand(std::initializer_list<std::string_view> argv) {
  std::string out;
  std::vector<std::string_view> v(argv);
  repl::Feed::EncodeCommand(v, &out);
  return out;
}

std::string HumanMB(int64_t n) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f MB", static_cast<double>(n) / 1e6);
  return buf;
}

}  // namespace kv::repl
