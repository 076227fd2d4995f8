#include "repl/datalink/snapshot_sinks.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/clock.h"
#include "net/socket.h"

namespace kv::repl {

Status PollingSink::Write(const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::write(fd_, p, len);
    if (n > 0) {
      p += n;
      len -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return Status::FromErrno("write to replica", errno);
    pollfd pfd{fd_, POLLOUT, 0};
    int r = poll(&pfd, 1, timeout_ms_);
    if (r == 0) return Status::IoError("replica did not read for too long");
    if (r < 0 && errno != EINTR) return Status::FromErrno("poll", errno);
  }
  return Status::Ok();
}

// Sends a snapshot file as a bulk payload ("$<size>\r\n" and the bytes), with sendfile;
// `tick` between its steps, at least once a second while the replica does not read (the
// replicas waiting behind this one keep hearing their newlines).
Status SendFile(persist::Sink& sink, int fd, const std::string& path, int timeout_ms,
                const std::function<void()>& tick) {
  net::Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.valid()) return Status::FromErrno("open " + path, errno);
  struct stat sb;
  if (fstat(file.get(), &sb) != 0) return Status::FromErrno("fstat " + path, errno);
  std::string head = "$" + std::to_string(sb.st_size) + "\r\n";
  KV_TRY(sink.Write(head.data(), head.size()));
  off_t off = 0;
  int64_t stalled_since = MonoMs();
  while (off < sb.st_size) {
    tick();
    ssize_t n = sendfile(fd, file.get(), &off, static_cast<size_t>(sb.st_size - off));
    if (n > 0) {
      stalled_since = MonoMs();
      continue;
    }
    if (n == 0) return Status::IoError("snapshot file shrank while sending");
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return Status::FromErrno("sendfile", errno);
    if (MonoMs() - stalled_since >= timeout_ms) {
      return Status::IoError("replica did not read for too long");
    }
    pollfd pfd{fd, POLLOUT, 0};
    (void)poll(&pfd, 1, std::min(timeout_ms, 1000));
  }
  return Status::Ok();
}

}  // namespace kv::repl
