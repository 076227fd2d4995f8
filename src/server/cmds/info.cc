// INFO: the server's state as Redis 7.0's "field:value" sections.
//
// Every value is measured, not invented: memory comes from glibc's mallinfo2() and
// /proc/self/statm, CPU from getrusage(), counters from ServerStats, the keyspace and the command
// table. Fields of features kvstore does not have (AOF, Lua, pub/sub, forks, defrag, eviction,
// tracking) report the idle state, which is their true state. Fields kvstore cannot measure are
// left out rather than made up: the errorstats and latencystats sections, the memory overhead
// and dataset breakdown, the expire-cycle counters, the read/write event counters, and the CPU
// lines of Redis' main thread. used_memory_peak is the largest usage INFO has sampled (nothing
// else samples memory).
//
// Runs as a command: the keyspace lock is held, so ServerStats' plain fields are stable.
#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <set>

#include "cluster/cluster.h"
#include "cmd/context.h"
#include "common/alloc_count.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "script/function_libraries.h"
#include "script/lua_engine.h"
#include "server/client.h"
#include "server/client_eviction.h"
#include "server/cmds/migrate_sockets.h"
#include "server/evict.h"
#include "server/persistence/aof.h"
#include "server/persistence/persistence.h"
#include "server/poll_group.h"
#include "server/server.h"
#include "server/shutdown.h"
#include "server/slot_migration.h"
#include "server/tracking.h"

namespace kv::server {
namespace {

// Process-wide memory marks: the allocator is process-wide, so they are too.
std::atomic<size_t> g_peak_memory{0};
std::atomic<size_t> g_startup_memory{0};

void Appendf(std::string* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void Appendf(std::string* out, const char* fmt, ...) {
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  char buf[512];
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  if (n >= static_cast<int>(sizeof(buf))) {
    size_t at = out->size();
    out->resize(at + static_cast<size_t>(n) + 1);
    vsnprintf(out->data() + at, static_cast<size_t>(n) + 1, fmt, again);
    out->resize(at + static_cast<size_t>(n));
  } else if (n > 0) {
    out->append(buf, static_cast<size_t>(n));
  }
  va_end(again);
  va_end(ap);
}

// Redis' bytesToHuman: "919.09K", "6.39M", "0B".
std::string BytesToHuman(uint64_t n) {
  static const char kUnits[] = "KMGTP";
  if (n < 1024) return std::to_string(n) + "B";
  double d = static_cast<double>(n) / 1024;
  for (int i = 0; i < 5; i++, d /= 1024) {
    if (d < 1024 || i == 4) {
      char buf[64];
      snprintf(buf, sizeof(buf), "%.2f%c", d, kUnits[i]);
      return buf;
    }
  }
  return std::to_string(n) + "B";
}

// Bytes handed out by malloc (arena chunks in use plus mmapped chunks), the allocator's own
// footprint, and the resident set size.
struct MemoryUsage {
  size_t used = 0, active = 0, rss = 0;
};

MemoryUsage SampleMemory() {
  MemoryUsage m;
  struct mallinfo2 mi = mallinfo2();
  m.used = AllocatedBytes();  // counted at each malloc and free (common/alloc_count.h)
  m.active = mi.arena + mi.hblkhd;
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  if (statm >> pages >> resident) m.rss = resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t peak = g_peak_memory.load();
  while (m.used > peak && !g_peak_memory.compare_exchange_weak(peak, m.used)) {
  }
  return m;
}

}  // namespace

size_t UsedMemory() { return SampleMemory().used; }

namespace {

double Ratio(size_t a, size_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0; }

// A numeric field of a CLIENT LIST line ("qbuf=26"), or 0.
size_t ClientField(const std::string& line, std::string_view name) {
  size_t at = line.find(" " + std::string(name) + "=");
  if (at == std::string::npos) return 0;
  return std::strtoull(line.c_str() + at + name.size() + 2, nullptr, 10);
}

void ServerSection(Server& s, std::string* out) {
  utsname u{};
  uname(&u);
  char exe[4096] = {};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n < 0) exe[0] = '\0';
  int64_t now_us = WallUs();
  int64_t uptime = (now_us / 1000 - s.start_time_ms()) / 1000;
  int hz = static_cast<int>(std::clamp<int64_t>(s.config().GetInt("hz"), 1, 500));
  Appendf(out,
          "redis_version:%s\r\nkvstore_version:%s\r\nredis_git_sha1:00000000\r\n"
          "redis_git_dirty:0\r\nredis_build_id:0\r\nredis_mode:standalone\r\n"
          "os:%s %s %s\r\narch_bits:%d\r\nmonotonic_clock:POSIX clock_gettime\r\n"
          "multiplexing_api:epoll\r\natomicvar_api:c11-builtin\r\n",
          kRedisCompatVersion, kKvstoreVersion, u.sysname, u.release, u.machine,
          static_cast<int>(sizeof(void*) * 8));
  Appendf(out, "gcc_version:%d.%d.%d\r\nprocess_id:%d\r\nprocess_supervised:no\r\n", __GNUC__,
          __GNUC_MINOR__, __GNUC_PATCHLEVEL__, static_cast<int>(getpid()));
  Appendf(out, "run_id:%s\r\ntcp_port:%d\r\nserver_time_usec:%lld\r\n", s.run_id().c_str(),
          s.port(), static_cast<long long>(now_us));
  Appendf(out, "uptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\nhz:%d\r\nconfigured_hz:%d\r\n",
          static_cast<long long>(uptime), static_cast<long long>(uptime / 86400), hz, hz);
  Appendf(out, "lru_clock:%lld\r\n", static_cast<long long>((now_us / 1000000) & 0xFFFFFF));
  Appendf(out, "executable:%s\r\nconfig_file:%s\r\nio_threads_active:%d\r\n", exe,
          s.config().config_file().c_str(), s.num_groups() > 1 ? 1 : 0);
  // Only while a shutdown waits for its replicas, as in Redis.
  if (int64_t left = s.shutdown_wait().remaining_ms(now_us / 1000); left >= 0) {
    Appendf(out, "shutdown_in_milliseconds:%lld\r\n", static_cast<long long>(left));
  }
}

void ClientsSection(Server& s, std::string* out) {
  size_t connected = 0, max_in = 0, max_out = 0;
  int64_t now = MonoMs();
  for (const auto& [id, cl] : s.clients()) {
    if (cl->flags() & Client::kReplica) continue;
    connected++;
    max_in = std::max(max_in, ClientField(cl->Describe(now), "qbuf"));
    max_out = std::max(max_out, cl->output_pending());
  }
  Appendf(out, "connected_clients:%zu\r\ncluster_connections:%zu\r\nmaxclients:%lld\r\n", connected,
          s.cluster() ? s.cluster()->link_count() : size_t{0},
          static_cast<long long>(s.config().GetInt("maxclients")));
  Appendf(out, "client_recent_max_input_buffer:%zu\r\nclient_recent_max_output_buffer:%zu\r\n",
          max_in, max_out);
  Appendf(out, "blocked_clients:%zu\r\ntracking_clients:%zu\r\n", s.blocked_clients(),
          s.tracking().clients());
  Appendf(out, "clients_in_timeout_table:%zu\r\n", s.blocked_clients());
}

// The memory of normal (non-replica) clients, as CLIENT LIST's tot-mem counts it.
size_t ClientMemory(Server& s) {
  size_t total = 0;
  int64_t now = MonoMs();
  for (const auto& [id, cl] : s.clients()) {
    if (!(cl->flags() & Client::kReplica)) total += ClientField(cl->Describe(now), "tot-mem");
  }
  return total;
}

void MemoryUsageLines(const MemoryUsage& m, std::string* out) {
  size_t peak = std::max(g_peak_memory.load(), m.used);
  size_t phys =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  Appendf(out, "used_memory:%zu\r\nused_memory_human:%s\r\n", m.used, BytesToHuman(m.used).c_str());
  Appendf(out, "used_memory_rss:%zu\r\nused_memory_rss_human:%s\r\n", m.rss,
          BytesToHuman(m.rss).c_str());
  Appendf(out, "used_memory_peak:%zu\r\nused_memory_peak_human:%s\r\n", peak,
          BytesToHuman(peak).c_str());
  Appendf(out, "used_memory_peak_perc:%.2f%%\r\nused_memory_startup:%zu\r\n",
          Ratio(m.used, peak) * 100, g_startup_memory.load());
  Appendf(out, "allocator_allocated:%zu\r\nallocator_active:%zu\r\nallocator_resident:%zu\r\n",
          m.used, m.active, m.rss);
  Appendf(out, "total_system_memory:%zu\r\ntotal_system_memory_human:%s\r\n", phys,
          BytesToHuman(phys).c_str());
}

void MemorySection(Server& s, std::string* out) {
  MemoryUsage m = SampleMemory();
  MemoryUsageLines(m, out);
  // The EVAL interpreter and its script cache, the functions' interpreter and libraries.
  // An interpreter not made yet (no script has run) uses nothing: it is not made to be measured.
  script::LuaEngine* lua = s.lua_if_made();
  script::FunctionLibraries* fn = s.functions_if_made();
  size_t vm = lua ? lua->lua_memory() : 0, scripts = lua ? lua->cache_memory() : 0;
  size_t fn_vm = fn ? fn->engine().lua_memory() : 0, fn_mem = fn ? fn->overhead_bytes() : 0;
  Appendf(out,
          "used_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\nused_memory_lua_human:%s\r\n"
          "used_memory_scripts_eval:%zu\r\nnumber_of_cached_scripts:%zu\r\n"
          "number_of_functions:%zu\r\nused_memory_vm_functions:%zu\r\n"
          "used_memory_vm_total:%zu\r\nused_memory_vm_total_human:%s\r\n"
          "used_memory_functions:%zu\r\nused_memory_scripts:%zu\r\n"
          "used_memory_scripts_human:%s\r\n",
          vm, vm, BytesToHuman(vm).c_str(), scripts, lua ? lua->scripts() : 0,
          fn ? fn->function_count() : 0, fn_vm, vm + fn_vm, BytesToHuman(vm + fn_vm).c_str(),
          fn_mem, scripts + fn_mem, BytesToHuman(scripts + fn_mem).c_str());
  int64_t maxmemory = s.config().GetInt("maxmemory");
  Appendf(out, "maxmemory:%lld\r\nmaxmemory_human:%s\r\nmaxmemory_policy:%s\r\n",
          static_cast<long long>(maxmemory), BytesToHuman(static_cast<uint64_t>(maxmemory)).c_str(),
          s.config().GetString("maxmemory-policy").c_str());
  auto diff = [](size_t a, size_t b) {
    return static_cast<long long>(a) - static_cast<long long>(b);
  };
  Appendf(out, "allocator_frag_ratio:%.2f\r\nallocator_frag_bytes:%lld\r\n",
          Ratio(m.active, m.used), diff(m.active, m.used));
  Appendf(out, "allocator_rss_ratio:%.2f\r\nallocator_rss_bytes:%lld\r\n", Ratio(m.rss, m.active),
          diff(m.rss, m.active));
  Appendf(out, "rss_overhead_ratio:1.00\r\nrss_overhead_bytes:0\r\n");
  Appendf(out, "mem_fragmentation_ratio:%.2f\r\nmem_fragmentation_bytes:%lld\r\n",
          Ratio(m.rss, m.used), diff(m.rss, m.used));
  size_t not_counted = s.evictor().NotCounted();
  repl::Primary::Memory repl_mem = s.primary().ReplicationMemory();
  Appendf(out,
          "mem_not_counted_for_evict:%zu\r\nmem_replication_backlog:%zu\r\n"
          "mem_total_replication_buffers:%zu\r\nmem_clients_slaves:%zu\r\n"
          "mem_clients_normal:%zu\r\n"
          "mem_cluster_links:%zu\r\nmem_aof_buffer:%zu\r\nmem_allocator:libc\r\n"
          "active_defrag_running:0\r\nlazyfree_pending_objects:%zu\r\nlazyfreed_objects:%llu\r\n",
          not_counted, repl_mem.backlog, repl_mem.total_buffers, repl_mem.replicas, ClientMemory(s),
          s.cluster() ? s.cluster()->links_memory() : size_t{0}, s.aof().buffer_length(),
          s.keyspace().lazy_pending(), static_cast<unsigned long long>(s.keyspace().lazy_freed()));
}

void PersistenceSection(Server& s, std::string* out) {
  int64_t now = WallMs();
  s.persistence().AppendInfo(out, now);
  s.aof().AppendInfo(out, now);
  s.persistence().AppendLoadingInfo(out, now);
}

// Rates over the cron's sample ring, oldest to newest sample: commands/s and KiB/s in and out.
struct Rates {
  uint64_t ops = 0;
  double in_kbps = 0, out_kbps = 0;
};

Rates InstantaneousRates(const ServerStats& st) {
  Rates r;
  int n = std::min(st.sample_idx, ServerStats::kSamples);
  if (n < 2) return r;
  int newest = (st.sample_idx - 1) % ServerStats::kSamples;
  int oldest = st.sample_idx >= ServerStats::kSamples ? st.sample_idx % ServerStats::kSamples : 0;
  int64_t ms = st.sample_time[newest] - st.sample_time[oldest];
  if (ms <= 0) return r;
  auto per_sec = [&](const uint64_t* v) {
    return v[newest] >= v[oldest] ? static_cast<double>(v[newest] - v[oldest]) * 1000 / ms : 0.0;
  };
  r.ops = static_cast<uint64_t>(per_sec(st.sample_cmds));
  r.in_kbps = per_sec(st.sample_in) / 1024;
  r.out_kbps = per_sec(st.sample_out) / 1024;
  return r;
}

void StatsSection(Server& s, std::string* out) {
  const ServerStats& st = s.stats();
  Rates rates = InstantaneousRates(st);
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  Appendf(out,
          "total_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
          "instantaneous_ops_per_sec:%llu\r\ntotal_net_input_bytes:%llu\r\n"
          "total_net_output_bytes:%llu\r\n",
          u(st.total_connections.load()), u(st.total_commands), u(rates.ops),
          u(st.net_input_bytes.Load()), u(st.net_output_bytes.Load()));
  Appendf(out,
          "total_net_repl_input_bytes:0\r\ntotal_net_repl_output_bytes:0\r\n"
          "instantaneous_input_kbps:%.2f\r\ninstantaneous_output_kbps:%.2f\r\n"
          "instantaneous_input_repl_kbps:0.00\r\ninstantaneous_output_repl_kbps:0.00\r\n",
          rates.in_kbps, rates.out_kbps);
  const repl::SyncStats& syncs = s.primary().sync_stats();
  Appendf(out,
          "rejected_connections:%llu\r\nsync_full:%llu\r\nsync_partial_ok:%llu\r\n"
          "sync_partial_err:%llu\r\nexpired_keys:%llu\r\nevicted_keys:%llu\r\n"
          "evicted_clients:%llu\r\ntotal_eviction_exceeded_time:%llu\r\n"
          "current_eviction_exceeded_time:%llu\r\n",
          u(st.rejected_connections.load()), u(syncs.full), u(syncs.partial_ok),
          u(syncs.partial_err), u(s.keyspace().expired_keys()), u(s.evictor().evicted_keys()),
          u(s.client_eviction().evicted_clients()), u(s.evictor().ExceededMs(MonoUs(), true)),
          u(s.evictor().ExceededMs(MonoUs(), false)));
  Appendf(out,
          "keyspace_hits:%llu\r\nkeyspace_misses:%llu\r\npubsub_channels:%zu\r\n"
          "pubsub_patterns:%zu\r\npubsubshard_channels:%zu\r\n",
          u(st.exec.keyspace_hits), u(st.exec.keyspace_misses), s.channel_subscribers().size(),
          s.pattern_subscribers().size(), s.shard_channel_subscribers().size());
  s.persistence().AppendForkStats(out);
  Appendf(out, "migrate_cached_sockets:%zu\r\nslave_expires_tracked_keys:0\r\n",
          s.migrate_sockets().size());
  Appendf(out,
          "active_defrag_hits:0\r\nactive_defrag_misses:0\r\nactive_defrag_key_hits:0\r\n"
          "active_defrag_key_misses:0\r\ntotal_active_defrag_time:0\r\n"
          "current_active_defrag_time:0\r\n");
  Appendf(out, "tracking_total_keys:%zu\r\ntracking_total_items:%llu\r\n",
          s.tracking().total_keys(), u(s.tracking().total_items()));
  Appendf(out, "tracking_total_prefixes:%zu\r\n", s.tracking().total_prefixes());
  Appendf(out,
          "unexpected_error_replies:%llu\r\ntotal_error_replies:%llu\r\n"
          "dump_payload_sanitizations:%llu\r\n",
          u(st.unexpected_error_replies), u(st.total_error_replies),
          u(st.dump_payload_sanitizations));
  Appendf(out, "reply_buffer_shrinks:%llu\r\nreply_buffer_expands:%llu\r\n",
          u(st.reply_buffer_shrinks.load()), u(st.reply_buffer_expands.load()));
  // kvstore: poll groups' busy polls (io-busy-poll-us) that found events, and that ran out.
  uint64_t hits = 0, misses = 0;
  for (size_t i = 0; i < s.num_groups(); i++) {
    hits += s.group(i).loop().busy_poll_hits();
    misses += s.group(i).loop().busy_poll_misses();
  }
  Appendf(out, "io_busy_poll_hits:%llu\r\nio_busy_poll_misses:%llu\r\n", u(hits), u(misses));
}

void ReplicationSection(Server& s, std::string* out) {
  int64_t now = WallMs();
  bool replica = s.replica().is_replica();
  if (replica) s.replica().AppendInfo(out, now);
  s.primary().AppendInfo(out, now, !replica);
}

void CpuSection(Server&, std::string* out) {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto line = [&](const char* name, const timeval& tv) {
    Appendf(out, "%s:%ld.%06ld\r\n", name, static_cast<long>(tv.tv_sec),
            static_cast<long>(tv.tv_usec));
  };
  line("used_cpu_sys", self.ru_stime);
  line("used_cpu_user", self.ru_utime);
  line("used_cpu_sys_children", children.ru_stime);
  line("used_cpu_user_children", children.ru_utime);
}

void ModulesSection(Server&, std::string*) {}  // no modules are loaded

void CommandStatsLine(const cmd::CommandSpec& c, std::string* out) {
  const cmd::CommandStats& st = c.stats;
  if (!st.calls && !st.rejected_calls && !st.failed_calls) return;
  double per_call = st.calls ? static_cast<double>(st.usec) / static_cast<double>(st.calls) : 0;
  Appendf(out,
          "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,"
          "failed_calls=%llu\r\n",
          c.name.c_str(), static_cast<unsigned long long>(st.calls),
          static_cast<unsigned long long>(st.usec), per_call,
          static_cast<unsigned long long>(st.rejected_calls),
          static_cast<unsigned long long>(st.failed_calls));
}

void CommandStatsSection(Server& s, std::string* out) {
  for (const cmd::CommandSpec* c : s.commands().all()) {
    CommandStatsLine(*c, out);
    for (const auto& sub : c->subcommands) CommandStatsLine(*sub, out);
  }
}

void ErrorStatsSection(Server& s, std::string* out) {
  for (const auto& [code, count] : s.stats().error_codes) {
    Appendf(out, "errorstat_%s:count=%llu\r\n", code.c_str(),
            static_cast<unsigned long long>(count));
  }
}

// Redis' fillPercentileDistributionLatencies, for every command and subcommand with a
// histogram: "latency_percentiles_usec_<name>:p50=1.003,p99=...".
void LatencyStatsLine(Server& s, const cmd::CommandSpec& c, std::string* out) {
  const Histogram* h = s.command_latency(c);
  if (!h) return;
  Appendf(out, "latency_percentiles_usec_%s:", c.name.c_str());
  const std::vector<double>& percentiles = s.latency_percentiles();
  for (size_t i = 0; i < percentiles.size(); i++) {
    Appendf(out, "%sp%s=%.3f", i ? "," : "", PercentileToString(percentiles[i]).c_str(),
            static_cast<double>(h->ValueAtPercentile(percentiles[i])) / 1000.0);
  }
  out->append("\r\n");
}

void LatencyStatsSection(Server& s, std::string* out) {
  if (!s.latency_tracking()) return;
  for (const cmd::CommandSpec* c : s.commands().all()) {
    LatencyStatsLine(s, *c, out);
    for (const auto& sub : c->subcommands) LatencyStatsLine(s, *sub, out);
  }
}

void ClusterSection(Server& s, std::string* out) {
  out->append(s.cluster() ? "cluster_enabled:1\r\n" : "cluster_enabled:0\r\n");
}

// kvstore's own: the whole-slot migrations of this node (cluster mode only).
void SlotMigrationSection(Server& s, std::string* out) {
  if (s.has_slot_migrations()) s.slot_migrations().Info(out);
}

void KeyspaceSection(Server& s, std::string* out) {
  int64_t now = WallMs();
  for (int i = 0; i < s.keyspace().num_dbs(); i++) {
    store::Db& db = s.keyspace().db(i);
    if (db.size() == 0) continue;
    Appendf(out, "db%d:keys=%zu,expires=%zu,avg_ttl=%lld\r\n", i, db.size(), db.expires_size(),
            static_cast<long long>(db.AvgTtlSample(now)));
  }
}

struct Section {
  const char* name;   // as INFO's arguments name it
  const char* title;  // the "# Title" line
  bool in_default;    // part of plain INFO / INFO default
  void (*generate)(Server&, std::string*);
  // kvstore's own: given when named, and by INFO everything where `present` says it applies
  // (not by INFO all, whose sections are Redis').
  bool (*present)(Server&) = nullptr;
};

// In Redis' order.
constexpr Section kSections[] = {
    {"server", "Server", true, ServerSection},
    {"clients", "Clients", true, ClientsSection},
    {"memory", "Memory", true, MemorySection},
    {"persistence", "Persistence", true, PersistenceSection},
    {"stats", "Stats", true, StatsSection},
    {"replication", "Replication", true, ReplicationSection},
    {"cpu", "CPU", true, CpuSection},
    {"modules", "Modules", true, ModulesSection},
    {"commandstats", "Commandstats", false, CommandStatsSection},
    {"errorstats", "Errorstats", true, ErrorStatsSection},
    {"latencystats", "Latencystats", false, LatencyStatsSection},
    {"cluster", "Cluster", true, ClusterSection},
    {"slot_migration", "Slot_migration", false, SlotMigrationSection,
     [](Server& s) { return s.has_slot_migrations(); }},
    {"keyspace", "Keyspace", true, KeyspaceSection},
};

// Which sections INFO's arguments ask for (Redis' genInfoSectionDict).
struct Selection {
  bool all = false, everything = false;
  std::set<std::string> names;

  bool Wants(const Section& s, Server& server) const {
    if (names.count(s.name)) return true;
    if (s.present) return everything && s.present(server);
    if (all) return true;
    return std::string_view(s.name) == "modules" && names.count("module_list");
  }
};

Selection SelectSections(std::span<const std::string_view> args) {
  Selection sel;
  auto add_defaults = [&] {
    for (const Section& s : kSections) {
      if (s.in_default) sel.names.insert(s.name);
    }
  };
  if (args.empty()) add_defaults();
  for (std::string_view a : args) {
    std::string name = ToLower(a);
    if (name == "default") {
      add_defaults();
    } else if (name == "all" || name == "everything") {
      sel.all = true;
      if (name == "everything") sel.everything = true;
    } else {
      sel.names.insert(std::move(name));
    }
  }
  return sel;
}

void Info(cmd::Context& c) {
  Server& s = ServerOf(c);
  Selection sel = SelectSections(c.args.subspan(1));
  std::string out;
  int emitted = 0;
  for (const Section& sec : kSections) {
    if (!sel.Wants(sec, s)) continue;
    if (emitted++) out += "\r\n";
    Appendf(&out, "# %s\r\n", sec.title);
    sec.generate(s, &out);
  }
  c.out.Verbatim(out);
}

}  // namespace

void RegisterInfoCommand(cmd::CommandTable& t) {
  // The allocator's usage when the server was built, for used_memory_startup.
  size_t unset = 0;
  g_startup_memory.compare_exchange_strong(unset, SampleMemory().used);
  t.Add({.name = "info",
         .arity = -1,
         .flags = cmd::kLoading | cmd::kStale,
         .handler = Info,
         .group = "server",
         .summary = "Get information and statistics about the server",
         .since = "1.0.0"});
}

}  // namespace kv::server
