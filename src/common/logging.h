// Process-wide logging in Redis' format: "pid:R dd Mon yyyy hh:mm:ss.mmm * message".
// Thread-safe; any thread may log. Levels follow Redis' `loglevel` names.
#pragma once

#include <cstdarg>
#include <string>

namespace kv {

enum class LogLevel { kDebug = 0, kVerbose = 1, kNotice = 2, kWarning = 3 };

// Configures the sink: an empty path means stdout. Returns false if the file cannot be opened.
bool SetLogFile(const std::string& path);
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// The role character in each line: 'M' primary, 'S' replica, 'C' child.
void SetLogRole(char role);
// syslog-enabled: from now on every line (not a crash handler's) also goes to syslog under
// `ident` and `facility` (LOG_USER, LOG_LOCAL0...), at the priority Redis maps each level to
// (debug, info, notice, warning). The connection is opened at once (Redis' openlog flags).
void EnableSyslog(const std::string& ident, int facility);
// The facility a syslog-facility name stands for ("user", "local0".."local7"), or -1.
int SyslogFacility(const std::string& name);

void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Writes text to the sink as it is, without the line prefix (the start-up logo, a crash
// report's markers).
void LogRaw(const std::string& text);
// The sink's file descriptor for a crash report written from a signal handler (which must not
// wait for the lock a crashed thread may hold).
int LogFdForCrash();
// A warning line written straight to that descriptor, without the lock.
void LogFromHandler(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace kv

#define KV_LOG(level, ...)                                     \
  do {                                                         \
    if (static_cast<int>(level) >= static_cast<int>(::kv::GetLogLevel())) \
      ::kv::Log(level, __VA_ARGS__);                           \
  } while (0)
#define LOG_DEBUG(...) KV_LOG(::kv::LogLevel::kDebug, __VA_ARGS__)
#define LOG_VERBOSE(...) KV_LOG(::kv::LogLevel::kVerbose, __VA_ARGS__)
#define LOG_NOTICE(...) KV_LOG(::kv::LogLevel::kNotice, __VA_ARGS__)
#define LOG_WARNING(...) KV_LOG(::kv::LogLevel::kWarning, __VA_ARGS__)
