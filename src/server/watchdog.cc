#include "server/watchdog.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "common/logging.h"

namespace kv::server {
namespace {

std::atomic<int> g_period_ms{0};
std::atomic<bool> g_installed{false};
std::mutex g_mu;  // guards the timer's creation and target
timer_t g_timer;
bool g_timer_created = false;
pid_t g_target_tid = 0;
// The thread that runs the cron, and its period, as of its last run.
std::atomic<pid_t> g_cron_tid{0};
std::atomic<int> g_cron_period_ms{100};

// A timer's expiry carries SI_TIMER; kill(2) or tgkill(2) from elsewhere SI_USER / SI_TKILL.
void OnAlarm(int, siginfo_t* info, void*) {
  if (info->si_code == SI_TIMER) {
    LogFromHandler("\n--- WATCHDOG TIMER EXPIRED ---");
  } else {
    LogFromHandler("\nReceived SIGALRM");
  }
  LogFromHandler("------ STACK TRACE ------");
  void* frames[100];
  int n = backtrace(frames, 100);
  int fd = LogFdForCrash();
  if (write(fd, "\nBacktrace:\n", 12) < 0) return;
  backtrace_symbols_fd(frames, n, fd);
  LogFromHandler("--------\n");
}

void Arm(int ms) {
  itimerspec its = {};
  its.it_value.tv_sec = ms / 1000;
  its.it_value.tv_nsec = static_cast<long>(ms % 1000) * 1000000L;
  timer_settime(g_timer, 0, &its, nullptr);
}

// Arms the timer for `ms`, aimed at thread `tid` (a new timer when the target changed). Under
// g_mu.
void ArmFor(pid_t tid, int ms) {
  if (!g_timer_created || tid != g_target_tid) {
    if (g_timer_created) timer_delete(g_timer);
    sigevent sev = {};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGALRM;
    sev._sigev_un._tid = tid;
    g_timer_created = timer_create(CLOCK_MONOTONIC, &sev, &g_timer) == 0;
    g_target_tid = tid;
    if (!g_timer_created) return;
  }
  Arm(ms);
}

}  // namespace

void ApplyWatchdogPeriod(int period_ms) {
  std::lock_guard lock(g_mu);
  g_period_ms = period_ms;
  struct sigaction act = {};
  sigemptyset(&act.sa_mask);
  if (period_ms <= 0) {
    if (!g_installed) return;  // never on: SIGALRM keeps its default action
    if (g_timer_created) Arm(0);
    act.sa_handler = SIG_IGN;  // also drops a pending one
    sigaction(SIGALRM, &act, nullptr);
    return;
  }
  // backtrace() loads its unwinder on first use, which may allocate: not in the handler.
  void* warm[1];
  backtrace(warm, 1);
  act.sa_flags = SA_SIGINFO | SA_RESTART;
  act.sa_sigaction = OnAlarm;
  sigaction(SIGALRM, &act, nullptr);
  g_installed = true;
  // Armed now, as Redis' enableWatchdog does: a command that runs right after the CONFIG SET
  // (before the next cron) is watched too.
  pid_t tid = g_cron_tid.load(std::memory_order_relaxed);
  if (tid != 0) ArmFor(tid, std::max(period_ms, 2 * g_cron_period_ms.load()));
}

void WatchdogSchedule(int cron_period_ms) {
  pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  g_cron_tid.store(tid, std::memory_order_relaxed);
  g_cron_period_ms.store(cron_period_ms, std::memory_order_relaxed);
  int period = g_period_ms.load(std::memory_order_relaxed);
  if (period <= 0) return;
  std::lock_guard lock(g_mu);
  ArmFor(tid, std::max(period, 2 * cron_period_ms));
}

}  // namespace kv::server
