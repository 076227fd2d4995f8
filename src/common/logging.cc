#include "common/logging.h"

#include <pthread.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

#include "common/status.h"

namespace kv {
namespace {

std::mutex g_mu;
FILE* g_out = nullptr;  // guarded by g_mu; nullptr means stdout
std::atomic<int> g_level{static_cast<int>(LogLevel::kNotice)};
std::atomic<char> g_role{'M'};

// A forked child (a background save) must not inherit the log lock held by another thread.
const bool g_fork_handlers = [] {
  pthread_atfork([] { g_mu.lock(); }, [] { g_mu.unlock(); }, [] { g_mu.unlock(); });
  return true;
}();

}  // namespace

bool SetLogFile(const std::string& path) {
  std::lock_guard lock(g_mu);
  if (g_out && g_out != stdout) fclose(g_out);
  g_out = nullptr;
  if (path.empty()) return true;
  g_out = fopen(path.c_str(), "a");
  return g_out != nullptr;
}

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }
void SetLogRole(char role) { g_role = role; }

void Log(LogLevel level, const char* fmt, ...) {
  static const char kMarks[] = ".-*#";
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);

  timeval tv;
  gettimeofday(&tv, nullptr);
  tm tm_now;
  localtime_r(&tv.tv_sec, &tm_now);
  char ts[64];
  size_t n = strftime(ts, sizeof(ts), "%d %b %Y %H:%M:%S.", &tm_now);
  snprintf(ts + n, sizeof(ts) - n, "%03d", static_cast<int>(tv.tv_usec / 1000));

  std::lock_guard lock(g_mu);
  FILE* out = g_out ? g_out : stdout;
  fprintf(out, "%d:%c %s %c %s\n", static_cast<int>(getpid()), g_role.load(), ts,
          kMarks[static_cast<int>(level)], msg);
  fflush(out);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return msg_;
}

Status Status::FromErrno(const std::string& what, int err) {
  char buf[128];
  const char* s = strerror_r(err, buf, sizeof(buf));
  return Status(Code::kIoError, what + ": " + s);
}

}  // namespace kv
