#include "common/logging.h"

#include <pthread.h>
#include <sys/time.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
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
std::atomic<bool> g_syslog{false};
std::string g_syslog_ident;  // openlog keeps the pointer: it must outlive the process' logging

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

void EnableSyslog(const std::string& ident, int facility) {
  g_syslog_ident = ident;
  openlog(g_syslog_ident.c_str(), LOG_PID | LOG_NDELAY | LOG_NOWAIT, facility);
  g_syslog = true;
}

int SyslogFacility(const std::string& name) {
  static const struct {
    const char* name;
    int facility;
  } kFacilities[] = {{"user", LOG_USER},     {"local0", LOG_LOCAL0}, {"local1", LOG_LOCAL1},
                     {"local2", LOG_LOCAL2}, {"local3", LOG_LOCAL3}, {"local4", LOG_LOCAL4},
                     {"local5", LOG_LOCAL5}, {"local6", LOG_LOCAL6}, {"local7", LOG_LOCAL7}};
  for (const auto& f : kFacilities) {
    if (name == f.name) return f.facility;
  }
  return -1;
}

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }
void SetLogRole(char role) { g_role = role; }

namespace {
// "pid:R dd Mon yyyy hh:mm:ss.mmm * message\n" into buf (truncated to n).
int FormatLine(char* buf, size_t n, LogLevel level, const char* msg) {
  static const char kMarks[] = ".-*#";
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm tm_now;
  localtime_r(&tv.tv_sec, &tm_now);
  char ts[64];
  size_t len = strftime(ts, sizeof(ts), "%d %b %Y %H:%M:%S.", &tm_now);
  snprintf(ts + len, sizeof(ts) - len, "%03d", static_cast<int>(tv.tv_usec / 1000));
  int w = snprintf(buf, n, "%d:%c %s %c %s\n", static_cast<int>(getpid()), g_role.load(), ts,
                   kMarks[static_cast<int>(level)], msg);
  return std::min(w, static_cast<int>(n) - 1);
}
}  // namespace

void Log(LogLevel level, const char* fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  char line[4096 + 128];
  int n = FormatLine(line, sizeof(line), level, msg);
  std::lock_guard lock(g_mu);
  FILE* out = g_out ? g_out : stdout;
  fwrite(line, 1, static_cast<size_t>(n), out);
  fflush(out);
  if (g_syslog) {
    static const int kPriorities[] = {LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING};
    syslog(kPriorities[static_cast<int>(level)], "%s", msg);
  }
}

void LogFromHandler(const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  char line[1024 + 128];
  int n = FormatLine(line, sizeof(line), LogLevel::kWarning, msg);
  int fd = LogFdForCrash();
  if (write(fd, line, static_cast<size_t>(n)) < 0) return;
}

void LogRaw(const std::string& text) {
  std::lock_guard lock(g_mu);
  FILE* out = g_out ? g_out : stdout;
  fwrite(text.data(), 1, text.size(), out);
  fflush(out);
  if (g_syslog) syslog(LOG_NOTICE, "%s", text.c_str());
}

int LogFdForCrash() {
  FILE* out = g_out ? g_out : stdout;  // every line is flushed once written
  return fileno(out);
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
