#include "server/crash.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "common/logging.h"
#include "common/version.h"
#include "server/memtest.h"

namespace kv::server {
namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
std::atomic<bool> g_exit_on_panic{false};
std::atomic<bool> g_crash_log{false};
std::atomic<bool> g_memcheck{true};
std::atomic<bool> g_report_started{false};
// A handler a library installed over ours (libfabric's shm provider cleans up its shared memory
// on a crash); ours calls it once the report is written.
struct sigaction g_chained[NSIG];

void WriteRaw(const char* text) {
  int fd = LogFdForCrash();
  if (write(fd, text, strlen(text)) < 0) return;
}

// The markers are Redis' own words: the tools that collect a crash report from a log (Redis'
// test harness among them) look for them.
void ReportStart() {
  if (g_report_started.exchange(true)) return;
  WriteRaw("\n\n=== REDIS BUG REPORT START: Cut & paste starting from here ===\n");
}

void StackTrace() {
  LogFromHandler("------ STACK TRACE ------");
  void* frames[100];
  int n = backtrace(frames, 100);
  WriteRaw("\nBacktrace:\n");
  backtrace_symbols_fd(frames, n, LogFdForCrash());
  WriteRaw("\n");
}

// crash-memcheck-enabled: the memory the process has written may be what broke it.
void FastMemoryTest() {
  if (!g_memcheck) return;
  WriteRaw("\n------ FAST MEMORY TEST ------\n");
  if (TestAnonymousMappings(LogFdForCrash()) != 0) {
    WriteRaw("!!! MEMORY ERROR DETECTED! Check your memory ASAP !!!\n");
  } else {
    WriteRaw(
        "Fast memory test PASSED, however your memory can still be broken. Please run a memory "
        "test for several hours if possible.\n");
  }
}

void ReportEnd() {
  WriteRaw(
      "\n=== REDIS BUG REPORT END. Make sure to include from START to END. ===\n\n"
      "       kvstore crashed: please report it with the lines from START to END above.\n\n");
}

void DefaultAction(int sig) {
  struct sigaction act = {};
  sigemptyset(&act.sa_mask);
  act.sa_handler = SIG_DFL;
  sigaction(sig, &act, nullptr);
}

void CrashHandler(int sig, siginfo_t* info, void* context) {
  ReportStart();
  LogFromHandler("kvstore %s crashed by signal: %d, si_code: %d", kKvstoreVersion, sig,
                 info ? info->si_code : 0);
  if (info && (sig == SIGSEGV || sig == SIGBUS)) {
    LogFromHandler("Accessing address: %p", info->si_addr);
  }
  if (info && info->si_pid != 0 && info->si_code <= 0) {
    LogFromHandler("Killed by PID: %d, UID: %d", static_cast<int>(info->si_pid),
                   static_cast<int>(info->si_uid));
  }
  StackTrace();
  FastMemoryTest();
  ReportEnd();
  const struct sigaction& chained = g_chained[sig];
  DefaultAction(sig);
  if ((chained.sa_flags & SA_SIGINFO) && chained.sa_sigaction != nullptr) {
    chained.sa_sigaction(sig, info, context);
  } else if (chained.sa_handler != SIG_DFL && chained.sa_handler != SIG_IGN &&
             chained.sa_handler != nullptr) {
    chained.sa_handler(sig);
  }
  // Die of the same signal: the exit status, and a core dump where enabled, are the signal's.
  DefaultAction(sig);
  kill(getpid(), sig);
}

// The end of a panic or a failed assertion: the stack, the end marker, then exit or abort.
[[noreturn]] void Die() {
  if (g_crash_log) StackTrace();
  FastMemoryTest();
  ReportEnd();
  if (g_exit_on_panic) {
    fflush(stdout);
    _exit(1);
  }
  DefaultAction(SIGABRT);  // the report is written: abort without a second one
  abort();
}

}  // namespace

void SetCrashLogEnabled(bool on) {
  g_crash_log = on;
  for (int sig : kCrashSignals) {
    if (!on) {
      DefaultAction(sig);
      continue;
    }
    struct sigaction act = {}, old = {};
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_NODEFER | SA_RESETHAND | SA_SIGINFO;
    act.sa_sigaction = CrashHandler;
    sigaction(sig, &act, &old);
    bool ours = (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == CrashHandler;
    if (!ours) g_chained[sig] = old;
  }
}

bool CrashLogEnabled() { return g_crash_log; }

void SetUseExitOnPanic(bool on) { g_exit_on_panic = on; }
void SetCrashMemcheckEnabled(bool on) { g_memcheck = on; }

void Panic(const char* file, int line, const std::string& message) {
  ReportStart();
  LOG_WARNING("------------------------------------------------");
  LOG_WARNING("!!! Software Failure. Press left mouse button to continue");
  LOG_WARNING("Guru Meditation: %s #%s:%d", message.c_str(), file, line);
  Die();
}

void AssertFailed(const char* file, int line, const char* expr) {
  ReportStart();
  LOG_WARNING("=== ASSERTION FAILED ===");
  LOG_WARNING("==> %s:%d '%s' is not true", file, line, expr);
  Die();
}

void ShowStartupBanner(bool logo, int port) {
  if (!logo) {
    LOG_NOTICE("Running mode=standalone, port=%d.", port);
    return;
  }
  char buf[1024];
  snprintf(buf, sizeof(buf),
           "\n"
           "     .-----------------.\n"
           "     |  k v s t o r e  |      kvstore %s (Redis %s compatible) 64 bit\n"
           "     |-----------------|\n"
           "     |  [key] -> [val] |      Running in standalone mode\n"
           "     |  [key] -> [val] |      Port: %d\n"
           "     |  [key] -> [val] |      PID: %d\n"
           "     '-----------------'\n"
           "\n",
           kKvstoreVersion, kRedisCompatVersion, port, static_cast<int>(getpid()));
  LogRaw(buf);
}

}  // namespace kv::server
