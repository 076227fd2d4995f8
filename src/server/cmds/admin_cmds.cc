// LATENCY, SLOWLOG, MEMORY, MONITOR and SHUTDOWN: the administrative and diagnostic commands
// (DEBUG is in debug_cmds.cc), with Redis 7.0's arities, flags, reply shapes and error texts.
//
// Every handler runs on a poll-group thread with the keyspace lock held (see server.h).
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "cmd/context.h"
#include "cmd/errors.h"
#include "common/alloc_count.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "server/client.h"
#include "server/evict.h"
#include "server/persistence/persistence.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;

// ---- LATENCY -------------------------------------------------------------------------------

void LatencyLatest(Context& c) {
  auto& events = ServerOf(c).latency_events();
  c.out.Array(events.size());
  for (const auto& [name, e] : events) {
    LatencySample last = e.history.empty() ? LatencySample{0, 0} : e.history.back();
    c.out.Array(4);
    c.out.Bulk(name);
    c.out.Int(last.time_s);
    c.out.Int(last.latency_ms);
    c.out.Int(e.max_ms);
  }
}

void LatencyHistory(Context& c) {
  auto& events = ServerOf(c).latency_events();
  auto it = events.find(std::string(c.arg(2)));
  if (it == events.end()) {
    c.out.Array(0);
    return;
  }
  c.out.Array(it->second.history.size());
  for (const LatencySample& s : it->second.history) {
    c.out.Array(2);
    c.out.Int(s.time_s);
    c.out.Int(s.latency_ms);
  }
}

// Replies with the number of event series removed.
void LatencyReset(Context& c) {
  auto& events = ServerOf(c).latency_events();
  int64_t removed = 0;
  if (c.argc() == 2) {
    removed = static_cast<int64_t>(events.size());
    events.clear();
  } else {
    for (size_t i = 2; i < c.argc(); i++) removed += events.erase(std::string(c.arg(i)));
  }
  c.out.Int(removed);
}

// Redis' analyzeLatencyForEvent: sample count, average, mean absolute deviation, and the
// seconds from the oldest sample to now.
struct EventAnalysis {
  int64_t samples = 0, avg = 0, mad = 0, period = 0;
};

EventAnalysis Analyze(const LatencyEvent& e, int64_t now_s) {
  EventAnalysis a;
  int64_t sum = 0, oldest = 0;
  for (const LatencySample& s : e.history) {
    a.samples++;
    sum += s.latency_ms;
    if (oldest == 0 || s.time_s < oldest) oldest = s.time_s;
  }
  if (a.samples == 0) return a;
  a.avg = sum / a.samples;
  a.period = std::max<int64_t>(now_s - oldest, 1);
  int64_t dev = 0;
  for (const LatencySample& s : e.history) dev += std::abs(a.avg - s.latency_ms);
  a.mad = dev / a.samples;
  return a;
}

// The advice part of Redis' createLatencyReport, limited to what applies to kvstore (no fork,
// AOF, transparent huge pages or swapping checks).
std::string LatencyAdvice(Server& s, bool slow_commands, bool fast_commands) {
  if (!slow_commands && !fast_commands) {
    return "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please "
           "use the Redis community to get some help, providing this report in your request.\n";
  }
  std::string r = "\nI have a few advices for you:\n\n";
  int64_t threshold_ms = s.config().GetInt("latency-monitor-threshold");
  int64_t slower_than_us = s.config().GetInt("slowlog-log-slower-than");
  std::string wanted = std::to_string(threshold_ms * 1000);
  if (slow_commands && slower_than_us < 0) {
    r += "- There are latency issues with potentially slow commands you are using. Try to enable "
         "the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than " +
         wanted +
         "'. If the Slow log is disabled Redis is not able to log slow commands "
         "execution for you.\n";
  } else if (slow_commands && slower_than_us / 1000 > threshold_ms) {
    r += "- Your current Slow Log configuration only logs events that are slower than your "
         "configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than " +
         wanted + "'.\n";
  }
  if (slow_commands) {
    r += "- Check your Slow Log to understand what are the commands you are running which are "
         "too slow to execute. Please check https://redis.io/commands/slowlog for more "
         "information.\n";
  }
  if (fast_commands) {
    r += "- The system is slow to execute Redis code paths not containing system calls. This "
         "usually means the system does not provide Redis CPU time to run for long periods. You "
         "should try to:\n  1) Lower the system load.\n  2) Use a computer / VM just for Redis "
         "if you are running other software in the same system.\n  3) Check if you have a "
         "\"noisy neighbour\" problem.\n  4) Check with 'redis-cli --intrinsic-latency 100' "
         "what is the intrinsic latency in your system.\n";
  }
  if (slow_commands) {
    r += "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a "
         "blocking operation. If you have very large objects that are often deleted, expired, "
         "or evicted, try to fragment those objects into multiple smaller objects.\n";
  }
  return r;
}

// Redis' createLatencyReport: one line per event series, then advice.
std::string LatencyReport(Server& s) {
  auto& events = s.latency_events();
  if (events.empty() && s.config().GetInt("latency-monitor-threshold") == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it. If we weren't in a deep space mission I'd suggest to take a look "
           "at https://redis.io/topics/latency-monitor.\n";
  }
  if (events.empty()) {
    return "Dave, no latency spike was observed during the lifetime of this Redis instance, not "
           "in the slightest bit. I honestly think you ought to sleep better tonight.\n";
  }
  std::string r =
      "Dave, I have observed latency spikes in this Redis instance. You don't mind "
      "talking about it, do you Dave?\n\n";
  int n = 0;
  int64_t now_s = WallMs() / 1000;
  for (const auto& [name, e] : events) {
    EventAnalysis a = Analyze(e, now_s);
    char line[512];
    snprintf(line, sizeof(line),
             "%d. %s: %lld latency spikes (average %lldms, mean deviation %lldms, period %.2f "
             "sec). Worst all time event %lldms.\n",
             ++n, name.c_str(), static_cast<long long>(a.samples), static_cast<long long>(a.avg),
             static_cast<long long>(a.mad),
             a.samples ? static_cast<double>(a.period) / a.samples : 0.0,
             static_cast<long long>(e.max_ms));
    r += line;
  }
  return r + LatencyAdvice(s, events.count("command"), events.count("fast-command"));
}

void LatencyDoctor(Context& c) { c.out.Verbatim(LatencyReport(ServerOf(c))); }

void LatencyHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
  };
  c.ReplyHelp(kLines);
}

// ---- SLOWLOG -------------------------------------------------------------------------------

void SlowlogGet(Context& c) {
  if (c.argc() > 3) {
    c.Error(cmd::SubcommandSyntax(c.arg(1), c.arg(0)));
    return;
  }
  const auto& log = ServerOf(c).slowlog();
  int64_t count = 10;
  if (c.argc() == 3) {
    auto n = ParseInt64(c.arg(2));
    if (!n || *n < -1) {
      c.Error("count should be greater than or equal to -1");
      return;
    }
    count = *n == -1 ? static_cast<int64_t>(log.size()) : *n;
  }
  size_t shown = std::min(static_cast<size_t>(count), log.size());
  c.out.Array(shown);
  for (size_t i = 0; i < shown; i++) {  // newest first
    const SlowlogEntry& e = log[i];
    c.out.Array(6);
    c.out.Int(static_cast<int64_t>(e.id));
    c.out.Int(e.time_s);
    c.out.Int(e.duration_us);
    c.out.Array(e.args.size());
    for (const std::string& a : e.args) c.out.Bulk(a);
    c.out.Bulk(e.peer);
    c.out.Bulk(e.name);
  }
}

void SlowlogLen(Context& c) { c.out.Int(static_cast<int64_t>(ServerOf(c).slowlog().size())); }

void SlowlogReset(Context& c) {
  ServerOf(c).slowlog().clear();  // ids keep counting, as in Redis
  c.out.Ok();
}

void SlowlogHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
  };
  c.ReplyHelp(kLines);
}

// ---- MEMORY --------------------------------------------------------------------------------

// Bytes handed out and not yet freed (counted at each malloc and free: INFO's used_memory, what
// maxmemory is checked against), and what glibc malloc holds from the system (arenas plus
// mmapped chunks).
struct AllocatorStats {
  size_t allocated = 0;
  size_t active = 0;
  size_t resident = 0;  // the process's RSS
};

AllocatorStats ReadAllocatorStats() {
  struct mallinfo2 mi = mallinfo2();
  AllocatorStats a;
  a.allocated = AllocatedBytes();
  a.active = mi.arena + mi.hblkhd;
  if (FILE* f = fopen("/proc/self/statm", "r")) {
    unsigned long size = 0, resident = 0;
    if (fscanf(f, "%lu %lu", &size, &resident) == 2) {
      a.resident = resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
    }
    fclose(f);
  }
  return a;
}

// Redis' startup.allocated: the allocation before any data. Taken when the first server of the
// process registers its commands (a kvstore-server process has exactly one).
size_t StartupAllocated() {
  static const size_t bytes = ReadAllocatorStats().allocated;
  return bytes;
}

struct DbOverhead {
  int index;
  size_t main;     // bucket array plus the fixed part of every entry (Redis: dictEntry + robj)
  size_t expires;  // TTL index slots: entry pointer and deadline
};

// Redis' getMemoryOverheadData, for the parts kvstore can measure.
struct MemoryOverhead {
  AllocatorStats alloc;
  size_t startup = 0, overhead = 0, keys = 0, bytes_per_key = 0, dataset = 0;
  double dataset_perc = 0;
  std::vector<DbOverhead> dbs;
};

MemoryOverhead ComputeOverhead(store::Keyspace& ks) {
  MemoryOverhead m;
  m.alloc = ReadAllocatorStats();
  m.startup = StartupAllocated();
  m.overhead = m.startup;
  for (int i = 0; i < ks.num_dbs(); i++) {
    store::Db& db = ks.db(i);
    if (db.size() == 0) continue;
    DbOverhead d{
        i, db.table().bucket_count() * sizeof(store::Entry*) + db.size() * sizeof(store::Entry),
        db.expires_size() * (sizeof(store::Entry*) + sizeof(int64_t))};
    m.overhead += d.main + d.expires;
    m.keys += db.size();
    m.dbs.push_back(d);
  }
  size_t total = m.alloc.allocated;
  size_t net = total > m.startup ? total - m.startup : 1;
  m.bytes_per_key = m.keys ? net / m.keys : 0;
  m.dataset = total > m.overhead ? total - m.overhead : 0;
  m.dataset_perc = static_cast<double>(m.dataset) * 100 / static_cast<double>(net);
  return m;
}

double Ratio(size_t a, size_t b) { return b ? static_cast<double>(a) / b : 0; }
int64_t Diff(size_t a, size_t b) { return static_cast<int64_t>(a) - static_cast<int64_t>(b); }

// Redis' MEMORY STATS fields that kvstore can report truthfully, in Redis' order. Left out:
// peak.* (glibc keeps no high-water mark and the server samples none), normal clients' buffers,
// the AOF buffer and script caches (not measured or not built), and the jemalloc-only
// allocator.resident / allocator-rss / rss-overhead figures.
void MemoryStats(Context& c) {
  MemoryOverhead m = ComputeOverhead(c.ks);
  std::string body;
  resp::ReplyWriter w(&body, c.out.proto());
  size_t pairs = 0;
  auto num = [&](std::string_view name, int64_t v) {
    w.Bulk(name);
    w.Int(v);
    pairs++;
  };
  auto dbl = [&](std::string_view name, double v) {
    w.Bulk(name);
    w.Double(v);
    pairs++;
  };
  const AllocatorStats& a = m.alloc;
  num("total.allocated", static_cast<int64_t>(a.allocated));
  num("startup.allocated", static_cast<int64_t>(m.startup));
  repl::Backlog* backlog = ServerOf(c).primary().feed().backlog();
  num("replication.backlog", static_cast<int64_t>(backlog ? backlog->capacity() : 0));
  num("clients.slaves", static_cast<int64_t>(ServerOf(c).evictor().NotCounted()));
  for (const DbOverhead& d : m.dbs) {  // one pair whose value is a map
    w.Bulk("db." + std::to_string(d.index));
    w.Map(2);
    w.Bulk("overhead.hashtable.main");
    w.Int(static_cast<int64_t>(d.main));
    w.Bulk("overhead.hashtable.expires");
    w.Int(static_cast<int64_t>(d.expires));
    pairs++;
  }
  num("overhead.total", static_cast<int64_t>(m.overhead));
  num("keys.count", static_cast<int64_t>(m.keys));
  num("keys.bytes-per-key", static_cast<int64_t>(m.bytes_per_key));
  num("dataset.bytes", static_cast<int64_t>(m.dataset));
  dbl("dataset.percentage", m.dataset_perc);
  num("allocator.allocated", static_cast<int64_t>(a.allocated));
  num("allocator.active", static_cast<int64_t>(a.active));
  dbl("allocator-fragmentation.ratio", Ratio(a.active, a.allocated));
  num("allocator-fragmentation.bytes", Diff(a.active, a.allocated));
  dbl("fragmentation", Ratio(a.resident, a.allocated));
  num("fragmentation.bytes", Diff(a.resident, a.allocated));
  c.out.Map(pairs);
  c.out.Raw(body);
}

// Bytes for the key, its value and its slot in the key table. Like Redis, the table is read
// directly (an expired key not yet reclaimed still counts). SAMPLES is accepted and validated;
// collections report their whole size (Collection::MemoryUsage), so it changes nothing.
void MemoryUsage(Context& c) {
  for (size_t i = 3; i < c.argc(); i++) {
    int64_t samples = 0;
    if (!EqualsIgnoreCase(c.arg(i), "SAMPLES") || i + 1 >= c.argc()) {
      c.Error(cmd::OpStatus::kSyntax);
      return;
    }
    if (!c.ParseInt(c.arg(++i), &samples)) return;
    if (samples < 0) {
      c.Error(cmd::OpStatus::kSyntax);
      return;
    }
  }
  const store::Entry* e = c.db().Find(c.arg(2));
  if (!e) {
    c.out.Null();
    return;
  }
  c.out.Int(static_cast<int64_t>(e->MemoryUsage() + sizeof(store::Entry*)));
}

// Redis' getMemoryDoctorReport, with the checks that apply (no peak or client-buffer data).
std::string MemoryReport(const MemoryOverhead& m) {
  const AllocatorStats& a = m.alloc;
  if (a.allocated < 5 * 1024 * 1024) {
    return "Hi Sam, this instance is empty or is using very little memory, my issues detector "
           "can't be used in these conditions. Please, leave for your mission on Earth and fill "
           "it with some data. The new Sam and I will be back to our programming as soon as I "
           "finished rebooting.\n";
  }
  if (Ratio(a.resident, a.allocated) > 1.4 && Diff(a.resident, a.allocated) > (10 << 20)) {
    return "Sam, I detected a few issues in this Redis instance memory implants:\n\n"
           " * High total RSS: This instance has a memory fragmentation and RSS overhead greater "
           "than 1.4 (this means that the Resident Set Size of the Redis process is much larger "
           "than the sum of the logical allocations Redis performed). This problem is usually "
           "due either to a large peak memory (check if there is a peak memory entry above in "
           "the report) or may result from a workload that causes the allocator to fragment "
           "memory a lot. If the problem is a large peak memory, then there is no issue. "
           "Otherwise, make sure you are using the Jemalloc allocator and not the default libc "
           "malloc. Note: The currently used allocator is \"libc\".\n\n"
           "I'm here to keep you safe, Sam. I want to help you.\n";
  }
  return "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
         "occurs on this base.\n";
}

void MemoryDoctor(Context& c) { c.out.Verbatim(MemoryReport(ComputeOverhead(c.ks))); }

// glibc's malloc_info XML (Redis prints jemalloc's statistics here).
void MemoryMallocStats(Context& c) {
  char* buf = nullptr;
  size_t len = 0;
  if (FILE* f = open_memstream(&buf, &len)) {
    malloc_info(0, f);
    fclose(f);
  }
  if (buf && len)
    c.out.Verbatim(std::string_view(buf, len));
  else
    c.out.Bulk("Stats not supported for the current allocator");
  free(buf);
}

void MemoryPurge(Context& c) {
  malloc_trim(0);  // returns free heap pages to the system, as jemalloc's purge does in Redis
  c.out.Ok();
}

void MemoryHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
  };
  c.ReplyHelp(kLines);
}

// ---- MONITOR and SHUTDOWN ------------------------------------------------------------------

// From here on the dispatcher feeds this client every command other clients run (except
// admin and skip_monitor ones), in Redis' format (Server::FeedMonitors).
void Monitor(Context& c) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  if (me.flags() & Client::kMulti) {
    c.Error("MONITOR isn't allowed for DENY BLOCKING client");
    return;
  }
  // Redis ignores MONITOR from a replica or a client already monitoring, without a reply.
  if (me.flags() & (Client::kReplica | Client::kMonitor)) return;
  s.AddMonitor(&me);
  c.out.Ok();
}

// Saves a final snapshot when save points are configured or SAVE is given (not with NOSAVE); a
// failed save refuses the shutdown unless FORCE. There are no replicas to wait for, so NOW
// changes nothing and ABORT never finds a shutdown in progress. On success there is no reply:
// the connection closes and the process exits with status 0 (Server::WaitForShutdown, main).
void Shutdown(Context& c) {
  bool save = false, nosave = false, other = false, abort = false, force = false;
  for (size_t i = 1; i < c.argc(); i++) {
    std::string_view a = c.arg(i);
    if (EqualsIgnoreCase(a, "NOSAVE"))
      nosave = true;
    else if (EqualsIgnoreCase(a, "SAVE"))
      save = true;
    else if (EqualsIgnoreCase(a, "NOW"))
      other = true;
    else if (EqualsIgnoreCase(a, "FORCE"))
      other = force = true;
    else if (EqualsIgnoreCase(a, "ABORT"))
      abort = true;
    else {
      c.Error(cmd::OpStatus::kSyntax);
      return;
    }
  }
  if ((abort && (save || nosave || other)) || (save && nosave)) {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  if (abort) {
    c.Error("No shutdown in progress.");
    return;
  }
  if (!ServerOf(c).PrepareShutdown(save, nosave, force).ok() && !force) {
    c.Error("Errors trying to SHUTDOWN. Check logs.");
    return;
  }
  ServerOf(c).RequestShutdown();
  c.session.close_after_reply = true;  // nothing is written, so the connection just closes
}

// ---- registration --------------------------------------------------------------------------

constexpr uint32_t kAdminFlags = cmd::kAdmin | cmd::kNoScript | cmd::kLoading | cmd::kStale;
constexpr uint32_t kHelpFlags = cmd::kLoading | cmd::kStale;

// Adds a "<name> <subcommand>" container (no flags, arity -2, as in Redis) and its subcommands.
struct SubSpec {
  const char* name;
  int arity;
  uint32_t flags;
  cmd::Handler handler;
  const char* summary;
  const char* since;
  int first_key = 0;
};

void AddContainer(cmd::CommandTable& t, const char* name, const char* summary, const char* since,
                  std::initializer_list<SubSpec> subs) {
  cmd::CommandSpec* parent =
      t.Add({.name = name, .arity = -2, .group = "server", .summary = summary, .since = since});
  for (const SubSpec& s : subs) {
    t.AddSub(parent, {.name = s.name,
                      .arity = s.arity,
                      .flags = s.flags,
                      .first_key = s.first_key,
                      .last_key = s.first_key,
                      .key_step = s.first_key ? 1 : 0,
                      .handler = s.handler,
                      .group = "server",
                      .summary = s.summary,
                      .since = s.since});
  }
}

}  // namespace

void RegisterAdminCommands(cmd::CommandTable& t) {
  using namespace cmd;
  StartupAllocated();  // fixes the baseline before any data exists
  t.Add({.name = "monitor",
         .arity = 1,
         .flags = kAdminFlags,
         .handler = Monitor,
         .group = "server",
         .summary = "Listen for all requests received by the server in real time",
         .since = "1.0.0"});
  t.Add({.name = "shutdown",
         .arity = -1,
         .flags = kAdminFlags | kNoMulti | kAllowBusy,
         .handler = Shutdown,
         .group = "server",
         .summary = "Synchronously save the dataset to disk and then shut down the server",
         .since = "1.0.0"});
  AddContainer(t, "latency", "A container for latency diagnostics commands", "2.8.13",
               {
                   {"latest", 2, kAdminFlags, LatencyLatest,
                    "Return the latest latency samples for all events.", "2.8.13"},
                   {"history", 3, kAdminFlags, LatencyHistory,
                    "Return timestamp-latency samples for the event.", "2.8.13"},
                   {"reset", -2, kAdminFlags, LatencyReset,
                    "Reset latency data for one or more events.", "2.8.13"},
                   {"doctor", 2, kAdminFlags, LatencyDoctor,
                    "Return a human readable latency analysis report.", "2.8.13"},
                   {"help", 2, kHelpFlags, LatencyHelp,
                    "Show helpful text about the different subcommands.", "2.8.13"},
               });
  const uint32_t kSlowlogFlags = kAdmin | kLoading | kStale;  // Redis: not noscript
  AddContainer(t, "slowlog", "A container for slow log commands", "2.2.12",
               {
                   {"get", -2, kSlowlogFlags, SlowlogGet, "Get the slow log's entries", "2.2.12"},
                   {"len", 2, kSlowlogFlags, SlowlogLen, "Get the slow log's length", "2.2.12"},
                   {"reset", 2, kSlowlogFlags, SlowlogReset, "Clear all entries from the slow log",
                    "2.2.12"},
                   {"help", 2, kHelpFlags, SlowlogHelp,
                    "Show helpful text about the different subcommands", "6.2.0"},
               });
  AddContainer(
      t, "memory", "A container for memory diagnostics commands", "4.0.0",
      {
          {"doctor", 2, 0, MemoryDoctor, "Outputs memory problems report", "4.0.0"},
          {"malloc-stats", 2, 0, MemoryMallocStats, "Show allocator internal stats", "4.0.0"},
          {"purge", 2, 0, MemoryPurge, "Ask the allocator to release memory", "4.0.0"},
          {"stats", 2, 0, MemoryStats, "Show memory usage details", "4.0.0"},
          {"usage", -3, kReadOnly, MemoryUsage, "Estimate the memory usage of a key", "4.0.0", 2},
          {"help", 2, kHelpFlags, MemoryHelp, "Show helpful text about the different subcommands",
           "4.0.0"},
      });
}

}  // namespace kv::server
