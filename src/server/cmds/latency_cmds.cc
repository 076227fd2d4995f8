// LATENCY: the latency monitor's events (LATEST, HISTORY, RESET, DOCTOR, GRAPH) and the
// per-command latency histograms (HISTOGRAM), with Redis 7.0's arities, flags, reply shapes
// and texts.
//
// Every handler runs on a poll-group thread with the keyspace lock held (see server.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cmd/context.h"
#include "common/clock.h"
#include "common/histogram.h"
#include "common/sparkline.h"
#include "common/strutil.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;

// ---- latency events (latency-monitor-threshold) --------------------------------------------

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

// Redis' latencyCommandGenSparkeline: a header, a rule, then the samples oldest first, 80
// columns per block, each labelled with how long ago it was taken.
std::string LatencyGraph(const std::string& event, const LatencyEvent& e, int64_t now_s) {
  constexpr int kColumns = 80;
  std::vector<SparklineSample> samples;
  int64_t low = 0, high = 0;
  for (const LatencySample& s : e.history) {
    low = samples.empty() ? s.latency_ms : std::min(low, s.latency_ms);
    high = samples.empty() ? s.latency_ms : std::max(high, s.latency_ms);
    int64_t ago = now_s - s.time_s;
    char label[64];
    if (ago < 60) {
      snprintf(label, sizeof(label), "%llds", static_cast<long long>(ago));
    } else if (ago < 3600) {
      snprintf(label, sizeof(label), "%lldm", static_cast<long long>(ago / 60));
    } else if (ago < 3600 * 24) {
      snprintf(label, sizeof(label), "%lldh", static_cast<long long>(ago / 3600));
    } else {
      snprintf(label, sizeof(label), "%lldd", static_cast<long long>(ago / (3600 * 24)));
    }
    samples.push_back({static_cast<double>(s.latency_ms), label});
  }
  char head[512];
  snprintf(head, sizeof(head), "%s - high %lld ms, low %lld ms (all time high %lld ms)\n",
           event.c_str(), static_cast<long long>(high), static_cast<long long>(low),
           static_cast<long long>(e.max_ms));
  return head + std::string(kColumns, '-') + "\n" +
         RenderSparkline(samples, kColumns, /*rows=*/4, /*fill=*/true);
}

void LatencyGraphCommand(Context& c) {
  auto& events = ServerOf(c).latency_events();
  auto it = events.find(std::string(c.arg(2)));
  if (it == events.end()) {
    c.Error("No samples available for event '" + std::string(c.arg(2)) + "'");
    return;
  }
  c.out.Verbatim(LatencyGraph(it->first, it->second, WallMs() / 1000));
}

// ---- per-command histograms (latency-tracking) ---------------------------------------------

// Redis' fillCommandCDF: {calls, histogram_usec: {bucket top in usec: cumulative count}}, one
// bucket per power of two nanoseconds from 1024, empty buckets left out.
void WriteHistogram(resp::ReplyWriter& w, const Histogram& h) {
  std::vector<Histogram::Step> buckets;
  int64_t previous = 0;
  for (const Histogram::Step& s : h.LogarithmicSteps(1024, 2)) {
    if (s.cumulative_count > previous) buckets.push_back(s);
    previous = s.cumulative_count;
  }
  w.Map(2);
  w.Bulk("calls");
  w.Int(h.total_count());
  w.Bulk("histogram_usec");
  w.Map(buckets.size());
  for (const Histogram::Step& s : buckets) {
    w.Int(s.highest_equivalent / 1000);
    w.Int(s.cumulative_count);
  }
}

// Writes `spec`'s histogram as one map entry, if it has one; returns the entries written.
size_t WriteCommandHistogram(Server& s, const cmd::CommandSpec& spec, resp::ReplyWriter& w) {
  const Histogram* h = s.command_latency(spec);
  if (!h) return 0;
  w.Bulk(spec.name);
  WriteHistogram(w, *h);
  return 1;
}

// Redis' lookupCommandBySds: "name" or "container|sub" (one level), by the names clients use.
const cmd::CommandSpec* LookupByFullName(const cmd::CommandTable& t, std::string_view name) {
  size_t bar = name.find('|');
  const cmd::CommandSpec* spec = t.Find(name.substr(0, bar));
  if (!spec || bar == std::string_view::npos) return spec;
  std::string_view sub = name.substr(bar + 1);
  if (sub.find('|') != std::string_view::npos) return nullptr;
  return spec->FindSub(sub);
}

// LATENCY HISTOGRAM [command ...]: every command and subcommand with a histogram, or those
// named (a container names its subcommands too); unknown names are skipped, and a name given
// twice answers twice, as in Redis.
void LatencyHistogramCommand(Context& c) {
  Server& s = ServerOf(c);
  std::string body;
  resp::ReplyWriter w(&body, c.out.proto());
  size_t entries = 0;
  auto with_subs = [&](const cmd::CommandSpec& spec) {
    entries += WriteCommandHistogram(s, spec, w);
    for (const auto& sub : spec.subcommands) entries += WriteCommandHistogram(s, *sub, w);
  };
  if (c.argc() == 2) {
    for (const cmd::CommandSpec* spec : s.commands().all()) with_subs(*spec);
  } else {
    for (size_t i = 2; i < c.argc(); i++) {
      if (const cmd::CommandSpec* spec = LookupByFullName(s.commands(), c.arg(i))) with_subs(*spec);
    }
  }
  c.out.Map(entries);
  c.out.Raw(body);
}

void LatencyHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "GRAPH <event>",
      "    Return an ASCII latency graph for the <event> class.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      "    Return a cumulative distribution of latencies in the format of a histogram for the "
      "specified command names.",
      "    If no commands are specified then all histograms are replied.",
  };
  c.ReplyHelp(kLines);
}

}  // namespace

void RegisterLatencyCommands(cmd::CommandTable& t) {
  constexpr uint32_t kFlags = cmd::kAdmin | cmd::kNoScript | cmd::kLoading | cmd::kStale;
  constexpr uint32_t kHelpFlags = cmd::kLoading | cmd::kStale;
  cmd::CommandSpec* parent = t.Add({.name = "latency",
                                    .arity = -2,
                                    .group = "server",
                                    .summary = "A container for latency diagnostics commands",
                                    .since = "2.8.13"});
  struct Sub {
    const char* name;
    int arity;
    uint32_t flags;
    cmd::Handler handler;
    const char* summary;
    const char* since;
  };
  static constexpr Sub kSubs[] = {
      {"latest", 2, kFlags, LatencyLatest, "Return the latest latency samples for all events.",
       "2.8.13"},
      {"history", 3, kFlags, LatencyHistory, "Return timestamp-latency samples for the event.",
       "2.8.13"},
      {"reset", -2, kFlags, LatencyReset, "Reset latency data for one or more events.", "2.8.13"},
      {"doctor", 2, kFlags, LatencyDoctor, "Return a human readable latency analysis report.",
       "2.8.13"},
      {"graph", 3, kFlags, LatencyGraphCommand, "Return a latency graph for the event.", "2.8.13"},
      {"histogram", -2, kFlags, LatencyHistogramCommand,
       "Return the cumulative distribution of latencies of a subset of commands or all.", "7.0.0"},
      {"help", 2, kHelpFlags, LatencyHelp, "Show helpful text about the different subcommands.",
       "2.8.13"},
  };
  for (const Sub& s : kSubs) {
    t.AddSub(parent, {.name = s.name,
                      .arity = s.arity,
                      .flags = s.flags,
                      .handler = s.handler,
                      .group = "server",
                      .summary = s.summary,
                      .since = s.since});
  }
}

}  // namespace kv::server
