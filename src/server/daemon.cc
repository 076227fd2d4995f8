#include "server/daemon.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "common/logging.h"

namespace kv::server {

std::string DisableTransparentHugePages() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(f, mode);
  if (mode.find("[always]") == std::string::npos) return "";
  if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
    return std::string(
               "WARNING: transparent huge pages are enabled (always) and could not be "
               "turned off for this process: ") +
           strerror(errno) +
           ". Snapshots will copy more memory; run 'echo madvise > "
           "/sys/kernel/mm/transparent_hugepage/enabled' as root.";
  }
  return "Transparent huge pages turned off for this process (disable-thp yes; the kernel's "
         "setting is always)";
}

Status Daemonize() {
  pid_t pid = fork();
  if (pid < 0) return Status::FromErrno("fork", errno);
  if (pid > 0) _exit(0);  // the parent: its caller (a shell, an init script) goes on
  setsid();
  int fd = open("/dev/null", O_RDWR);
  if (fd >= 0) {
    dup2(fd, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    if (fd > STDERR_FILENO) close(fd);
  }
  return Status::Ok();
}

namespace {

Result<std::string> NotifySystemd() {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || *path == 0) {
    return Status::Invalid("systemd supervision requested, but NOTIFY_SOCKET not found");
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = strlen(path);
  if (len >= sizeof(addr.sun_path)) return Status::Invalid("NOTIFY_SOCKET is too long");
  memcpy(addr.sun_path, path, len);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = 0;  // abstract namespace
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno("socket", errno);
  const char msg[] = "STATUS=Ready to accept connections\nREADY=1\n";
  ssize_t n = sendto(fd, msg, sizeof(msg) - 1, 0, reinterpret_cast<sockaddr*>(&addr),
                     static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  int err = errno;
  close(fd);
  if (n < 0) return Status::FromErrno("sending to NOTIFY_SOCKET", err);
  return std::string("Supervised by systemd. Please make sure you set appropriate values for "
                     "TimeoutStartSec and TimeoutStopSec in your service unit.");
}

Result<std::string> NotifyUpstart() {
  if (std::getenv("UPSTART_JOB") == nullptr) {
    return Status::Invalid("upstart supervision requested, but UPSTART_JOB not found");
  }
  unsetenv("UPSTART_JOB");
  raise(SIGSTOP);  // upstart's "expect stop": it resumes us and knows we are ready
  return std::string("Supervised by upstart, will stop to signal readiness.");
}

}  // namespace

Result<std::string> NotifySupervisor(const std::string& mode) {
  if (mode == "systemd") return NotifySystemd();
  if (mode == "upstart") return NotifyUpstart();
  if (mode == "auto") {
    if (std::getenv("NOTIFY_SOCKET")) return NotifySystemd();
    if (std::getenv("UPSTART_JOB")) return NotifyUpstart();
  }
  return std::string();
}

PidFile::PidFile(std::string path) : path_(std::move(path)) {
  FILE* f = fopen(path_.c_str(), "w");
  if (f == nullptr) {
    LOG_WARNING("Failed to write PID file: %s", strerror(errno));
    return;
  }
  fprintf(f, "%d\n", static_cast<int>(getpid()));
  fclose(f);
  written_ = true;
}

PidFile::~PidFile() {
  if (written_) unlink(path_.c_str());
}

}  // namespace kv::server
