// The software watchdog (`watchdog-period`, Redis' debug.c watchdog): each cron run re-arms a
// one-shot timer of that many milliseconds; when the cron is late by more than that (a command
// that holds the keyspace lock too long, a DEBUG SLEEP), the timer's SIGALRM logs
// "--- WATCHDOG TIMER EXPIRED ---" and the stack of the thread that runs the cron, then the
// server goes on. A SIGALRM sent by another process logs "Received SIGALRM" and the stack.
#pragma once

namespace kv::server {

// watchdog-period changed (ms; 0 turns the watchdog off, and SIGALRM is ignored from then on,
// as in Redis). Any thread. A new period arms the timer at once, for the cron's thread.
void ApplyWatchdogPeriod(int period_ms);
// From the cron, at the start of each run (paused or not): re-arms the timer, targeting the
// calling thread. The period is raised to two cron periods when shorter, as Redis does, so that
// a punctual cron never trips it.
void WatchdogSchedule(int cron_period_ms);

}  // namespace kv::server
