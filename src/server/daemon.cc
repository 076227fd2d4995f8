#include "server/daemon.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/logging.h"

namespace kv::server {

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
