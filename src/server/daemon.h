// Running as a daemon, as redis-server does with `daemonize yes` and `pidfile`.
// Main thread, at startup, before any other thread exists.
#pragma once

#include <string>

#include "common/status.h"

namespace kv::server {

// The pid file of a daemonized server that names none, as Redis writes /var/run/redis.pid.
inline constexpr const char* kDefaultPidFile = "/var/run/kvstore.pid";

// Forks: the parent exits with status 0 at once; the child, in a new session, goes on with its
// standard input, output and error on /dev/null. Fails only when the fork does.
Status Daemonize();

// `supervised`, once the server accepts connections, as Redis does: systemd gets READY=1 on
// $NOTIFY_SOCKET, upstart a SIGSTOP; auto picks by the environment (NOTIFY_SOCKET, UPSTART_JOB);
// no does nothing. Returns what it did, for the log, or an error when it could not.
Result<std::string> NotifySupervisor(const std::string& mode);

// disable-thp yes, as Redis: where the kernel gives every mapping transparent huge pages
// ("always"), they are turned off for this process, since a snapshot child's copy-on-write
// would copy 2 MB for a one-byte write. (The data plane's buffers then go without them too;
// under "madvise" they still get them.) Returns what it did, for the log; empty when nothing.
std::string DisableTransparentHugePages();

// Writes this process's pid to `path` and removes the file when destroyed (a clean shutdown).
// A file that cannot be written is logged and otherwise ignored, as in Redis.
class PidFile {
 public:
  explicit PidFile(std::string path);
  ~PidFile();
  PidFile(const PidFile&) = delete;
  PidFile& operator=(const PidFile&) = delete;

 private:
  std::string path_;
  bool written_ = false;
};

}  // namespace kv::server
