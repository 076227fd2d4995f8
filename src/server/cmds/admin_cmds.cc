// SLOWLOG, MEMORY and MONITOR: the administrative and diagnostic commands (LATENCY is in
// latency_cmds.cc, DEBUG in debug_cmds.cc, SHUTDOWN in shutdown_cmds.cc), with Redis 7.0's arities,
// flags, reply shapes and error texts.
//
// Every handler runs on a poll-group thread with the keyspace lock held (see server.h).
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "cmd/context.h"
#include "cmd/errors.h"
#include "common/alloc_count.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "server/client.h"
#include "server/evict.h"
#include "server/persistence/persistence.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;

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
  repl::Primary::Memory repl_mem = ServerOf(c).primary().ReplicationMemory();
  num("replication.backlog", static_cast<int64_t>(repl_mem.backlog));
  num("clients.slaves", static_cast<int64_t>(repl_mem.replicas));
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

// ---- MONITOR ----------------------------------------------------------------------------

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
