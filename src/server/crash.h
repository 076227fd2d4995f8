// Crash reports, panics and the start-up banner, in the form tools written for redis-server
// read from its log: "crashed by signal", the bug report's START and END markers, "Guru
// Meditation" for a panic, and the logo's "PID: N" line that test harnesses wait for.
#pragma once

#include <string>

namespace kv::server {

// crash-log-enabled: on SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT the process logs a crash
// report (the signal, the faulting address, a stack trace) between the bug report markers, then
// dies of the same signal, so its exit status and any core dump are what they would have been.
// Off: those signals keep their default action. A handler some library installed before (or
// over ours: call this again after loading it) still runs, after the report.
void SetCrashLogEnabled(bool on);
bool CrashLogEnabled();
// use-exit-on-panic (a testing knob, hidden as in Redis): a panic exits with status 1 instead
// of aborting.
void SetUseExitOnPanic(bool on);
// crash-memcheck-enabled: a crash report (a fatal signal, a panic, a failed assertion) ends
// with Redis' fast memory test of the process' anonymous mappings (memtest.h) and its verdict.
void SetCrashMemcheckEnabled(bool on);

// Redis' serverPanic: logs "Guru Meditation: <message> #<file>:<line>" inside a bug report,
// then aborts (or exits, under use-exit-on-panic).
[[noreturn]] void Panic(const char* file, int line, const std::string& message);
// Redis' serverAssert failing: "=== ASSERTION FAILED ===" and "==> <file>:<line> '<expr>' is
// not true" inside a bug report, then as a panic.
[[noreturn]] void AssertFailed(const char* file, int line, const char* expr);

// The start-up banner, logged before "Server initialized": the logo with the version, mode,
// port and PID lines when `logo` (always-show-logo, or standard output on a terminal with no
// logfile, as Redis decides), else "Running mode=standalone, port=N.".
void ShowStartupBanner(bool logo, int port);

}  // namespace kv::server

#define KV_PANIC(message) ::kv::server::Panic(__FILE__, __LINE__, (message))
#define KV_ASSERT_FAILED(expr) ::kv::server::AssertFailed(__FILE__, __LINE__, (expr))
