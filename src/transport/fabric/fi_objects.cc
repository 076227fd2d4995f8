#include "transport/fabric/fi_objects.h"

#include <cstdlib>
#include <cerrno>
#include <cstring>

namespace kv::transport::fabric {

InfoPtr DupInfo(const fi_info* info) {
  fi_info* copy = FiDupinfo(info);
  if (copy == nullptr) std::abort();
  return InfoPtr(copy);
}

namespace {
bool IsDisconnect(int err) {
  return err == FI_ECONNRESET || err == FI_ECONNABORTED || err == FI_ENOTCONN ||
         err == FI_ECONNREFUSED || err == EPIPE || err == FI_ESHUTDOWN || err == FI_EHOSTUNREACH ||
         err == FI_ECANCELED;
}
}  // namespace

Status FiError(const std::string& what, int ret) {
  int err = ret < 0 ? -ret : ret;
  std::string msg = what + ": " + FiStrerror(err) + " (" + std::to_string(err) + ")";
  return Status(IsDisconnect(err) ? Code::kClosed : Code::kIoError, std::move(msg));
}

Status CqError(fid_cq* cq, const std::string& what) {
  fi_cq_err_entry e;
  std::memset(&e, 0, sizeof(e));
  ssize_t r = fi_cq_readerr(cq, &e, 0);
  if (r < 0) return FiError(what + ": fi_cq_readerr", static_cast<int>(r));
  char buf[256];
  const char* detail = fi_cq_strerror(cq, e.prov_errno, e.err_data, buf, sizeof(buf));
  int err = e.err != 0 ? e.err : FI_EIO;
  Status s = FiError(what + " completion error", -err);
  return Status(s.code(), s.message() + " [" + (detail ? detail : "") + "]");
}

}  // namespace kv::transport::fabric
