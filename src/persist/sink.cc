#include "persist/sink.h"

#include "persist/crc64.h"

#include <cerrno>
#include <unistd.h>

namespace kv::persist {

Status FdSink::Write(const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = ::write(fd_, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("write", errno);
    }
    p += n;
    len -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
    unsynced_ += static_cast<uint64_t>(n);
  }
  if (autosync_ != 0 && unsynced_ >= autosync_) {
    int rc = sync_ ? sync_(fd_) : ::fdatasync(fd_);
    if (rc != 0) return Status::FromErrno("fdatasync", errno);
    unsynced_ = 0;
    syncs_++;
  }
  return Status::Ok();
}

Result<std::string_view> CrcSource::Read(size_t n) {
  auto r = inner_.Read(n);
  if (r.ok()) crc_ = Crc64(crc_, r->data(), r->size());
  return r;
}

}  // namespace kv::persist
