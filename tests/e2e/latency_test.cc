// End-to-end tests of the per-command latency histograms (latency-tracking, LATENCY HISTOGRAM,
// INFO latencystats, CONFIG RESETSTAT) and LATENCY GRAPH, each run against kvstore-server and
// Debian's redis-server: the same checks must hold for both, and where the reply does not
// depend on timings it must be the same bytes.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Cmd = std::vector<std::string>;
using Kind = ServerProcess::Kind;

std::string KindName(const ::testing::TestParamInfo<Kind>& info) {
  return info.param == Kind::kKvstore ? "kvstore" : "redis";
}

// One command's entry of a LATENCY HISTOGRAM reply.
struct CommandHistogram {
  int64_t calls = -1;
  std::vector<std::pair<int64_t, int64_t>> buckets;  // (usec bucket top, cumulative count)
};

// The reply as (name, histogram) pairs in reply order; works for RESP2 arrays and RESP3 maps,
// which the client flattens alike. Fails the test on a malformed reply.
std::vector<std::pair<std::string, CommandHistogram>> ParseHistograms(const Reply& r) {
  std::vector<std::pair<std::string, CommandHistogram>> out;
  EXPECT_TRUE(r.type == '*' || r.type == '%') << r.Debug();
  EXPECT_EQ(r.elems.size() % 2, 0u) << r.Debug();
  for (size_t i = 0; i + 1 < r.elems.size(); i += 2) {
    CommandHistogram h;
    const Reply& body = r.elems[i + 1];
    EXPECT_EQ(body.elems.size(), 4u) << body.Debug();
    if (body.elems.size() != 4) continue;
    EXPECT_EQ(body.elems[0].str, "calls");
    h.calls = body.elems[1].integer;
    EXPECT_EQ(body.elems[2].str, "histogram_usec");
    const Reply& buckets = body.elems[3];
    for (size_t j = 0; j + 1 < buckets.elems.size(); j += 2) {
      h.buckets.emplace_back(buckets.elems[j].integer, buckets.elems[j + 1].integer);
    }
    out.emplace_back(r.elems[i].str, h);
  }
  return out;
}

// The bucket tops Redis reports: the highest nanosecond value sharing a counter with 2^k ns
// (k = 10 .. 29, 2 significant figures), in microseconds: 1, 2, 4, 8, 16, 33, 66, 132, ...
std::set<int64_t> BucketTops() {
  std::set<int64_t> tops;
  for (int k = 10; k <= 29; k++)
    tops.insert(((int64_t{1} << k) + (int64_t{1} << (k - 7)) - 1) / 1000);
  return tops;
}

// Checks the shape of one histogram: bucket tops from the power-of-two series, increasing;
// cumulative counts increasing (empty buckets are left out) and ending at the calls.
void ExpectWellFormed(const std::string& name, const CommandHistogram& h) {
  static const std::set<int64_t> tops = BucketTops();
  ASSERT_FALSE(h.buckets.empty()) << name;
  for (size_t i = 0; i < h.buckets.size(); i++) {
    EXPECT_TRUE(tops.count(h.buckets[i].first)) << name << " bucket " << h.buckets[i].first;
    if (i > 0) {
      EXPECT_GT(h.buckets[i].first, h.buckets[i - 1].first) << name;
      EXPECT_GT(h.buckets[i].second, h.buckets[i - 1].second) << name;
    }
  }
  EXPECT_EQ(h.buckets.back().second, h.calls) << name;
}

std::map<std::string, int64_t> CallsByName(const Reply& r) {
  std::map<std::string, int64_t> calls;
  for (const auto& [name, h] : ParseHistograms(r)) calls[name] = h.calls;
  return calls;
}

// The "latency_percentiles_usec_*" lines of INFO latencystats, by command.
std::map<std::string, std::string> LatencyStats(RespClient& c) {
  std::string info = c.Call({"INFO", "latencystats"}).str;
  std::map<std::string, std::string> out;
  std::istringstream in(info);
  std::string line;
  const std::string prefix = "latency_percentiles_usec_";
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(prefix, 0) != 0) continue;
    size_t colon = line.find(':');
    out[line.substr(prefix.size(), colon - prefix.size())] = line.substr(colon + 1);
  }
  return out;
}

class LatencyTracking : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
    server_ = std::make_unique<ServerProcess>(GetParam());
    c_ = std::make_unique<RespClient>(server_->port(), 5000);
    ASSERT_EQ(c_->Raw({"CONFIG", "RESETSTAT"}), "+OK\r\n");
  }
  RespClient& c() { return *c_; }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<RespClient> c_;
};

TEST_P(LatencyTracking, HistogramCountsEachCommandAndSubcommand) {
  for (int i = 0; i < 3; i++) c().Call({"SET", "k", "v"});
  for (int i = 0; i < 2; i++) c().Call({"GET", "k"});
  c().Call({"CLIENT", "ID"});
  c().Call({"EVAL", "return redis.call('get', KEYS[1])", "1", "k"});  // a script's call counts
  // A container names its subcommands; unknown names and bad subcommands are skipped; a name
  // given twice answers twice.
  Reply some = c().Call({"LATENCY", "HISTOGRAM", "set", "GET", "client", "nosuch", "get|x",
                         "client|nosuch", "client|ID"});
  auto entries = ParseHistograms(some);
  ASSERT_EQ(entries.size(), 4u) << some.Debug();
  EXPECT_EQ(entries[0].first, "set");
  EXPECT_EQ(entries[0].second.calls, 3);
  EXPECT_EQ(entries[1].first, "get");
  EXPECT_EQ(entries[1].second.calls, 3);
  EXPECT_EQ(entries[2].first, "client|id");
  EXPECT_EQ(entries[3].first, "client|id");
  for (const auto& [name, h] : entries) ExpectWellFormed(name, h);

  // Without names: every command with calls, the previous LATENCY HISTOGRAM included.
  Reply all = c().Call({"LATENCY", "HISTOGRAM"});
  auto calls = CallsByName(all);
  EXPECT_EQ(calls, (std::map<std::string, int64_t>{{"config|resetstat", 1},
                                                   {"set", 3},
                                                   {"get", 3},
                                                   {"client|id", 1},
                                                   {"eval", 1},
                                                   {"latency|histogram", 1}}))
      << all.Debug();
  for (const auto& [name, h] : ParseHistograms(all)) ExpectWellFormed(name, h);
  // RESP3 frames the same content as maps.
  c().Call({"HELLO", "3"});
  Reply resp3 = c().Call({"LATENCY", "HISTOGRAM", "set"});
  EXPECT_EQ(resp3.type, '%');
  EXPECT_EQ(resp3.raw.substr(0, 14), "%1\r\n$3\r\nset\r\n%") << resp3.raw;
}

TEST_P(LatencyTracking, ResetStatDropsEveryHistogram) {
  c().Call({"SET", "k", "v"});
  c().Call({"CLIENT", "ID"});
  ASSERT_EQ(c().Raw({"CONFIG", "RESETSTAT"}), "+OK\r\n");
  // RESETSTAT itself is counted once it is done.
  EXPECT_EQ(CallsByName(c().Call({"LATENCY", "HISTOGRAM"})),
            (std::map<std::string, int64_t>{{"config|resetstat", 1}}));
  EXPECT_EQ(c().Raw({"LATENCY", "HISTOGRAM", "set", "client"}), "*0\r\n");
}

TEST_P(LatencyTracking, TurnedOffRecordsNothingAndHidesTheStats) {
  ASSERT_EQ(c().Raw({"CONFIG", "SET", "latency-tracking", "no"}), "+OK\r\n");
  ASSERT_EQ(c().Raw({"CONFIG", "RESETSTAT"}), "+OK\r\n");
  c().Call({"SET", "k", "v"});
  EXPECT_EQ(c().Raw({"LATENCY", "HISTOGRAM"}), "*0\r\n");
  EXPECT_EQ(c().Call({"INFO", "latencystats"}).str, "# Latencystats\r\n");
  ASSERT_EQ(c().Raw({"CONFIG", "SET", "latency-tracking", "yes"}), "+OK\r\n");
  c().Call({"SET", "k", "v"});
  EXPECT_EQ(CallsByName(c().Call({"LATENCY", "HISTOGRAM", "set"})),
            (std::map<std::string, int64_t>{{"set", 1}}));
}

TEST_P(LatencyTracking, InfoLatencystatsShowsTheConfiguredPercentiles) {
  c().Call({"SET", "k", "v"});
  auto stats = LatencyStats(c());
  EXPECT_EQ(std::set<std::string>({"config|resetstat", "set"}), [&] {
    std::set<std::string> names;
    for (const auto& [n, v] : stats) names.insert(n);
    return names;
  }());
  const std::regex value(R"(\d+\.\d{3})");
  const std::regex defaults(R"(p50=(\d+\.\d{3}),p99=(\d+\.\d{3}),p99\.9=(\d+\.\d{3}))");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(stats["set"], m, defaults)) << stats["set"];
  // One call: every percentile is the same counter's top.
  EXPECT_EQ(m[1], m[2]);
  EXPECT_EQ(m[2], m[3]);

  ASSERT_EQ(c().Raw({"CONFIG", "SET", "latency-tracking-info-percentiles", "0 0.5 99.990 100"}),
            "+OK\r\n");
  c().Call({"SET", "k", "v"});
  stats = LatencyStats(c());
  const std::regex custom(
      R"(p0=(\d+\.\d{3}),p0\.5=(\d+\.\d{3}),p99\.99=(\d+\.\d{3}),p100=(\d+\.\d{3}))");
  ASSERT_TRUE(std::regex_match(stats["set"], m, custom)) << stats["set"];
  EXPECT_LE(std::stod(m[1]), std::stod(m[2]));
  EXPECT_LE(std::stod(m[2]), std::stod(m[4]));

  ASSERT_EQ(c().Raw({"CONFIG", "SET", "latency-tracking-info-percentiles", ""}), "+OK\r\n");
  EXPECT_EQ(LatencyStats(c())["set"], "");

  // Not a default section; part of all and everything.
  EXPECT_EQ(c().Call({"INFO"}).str.find("# Latencystats"), std::string::npos);
  EXPECT_EQ(c().Call({"INFO", "default"}).str.find("# Latencystats"), std::string::npos);
  EXPECT_NE(c().Call({"INFO", "all"}).str.find("# Latencystats\r\n"), std::string::npos);
  EXPECT_NE(c().Call({"INFO", "everything"}).str.find("\r\nlatency_percentiles_usec_info:"),
            std::string::npos);
}

// LATENCY GRAPH draws the monitor's samples, oldest first, each labelled with its age.
TEST_P(LatencyTracking, GraphDrawsTheMonitorsSamples) {
  ASSERT_EQ(c().Raw({"CONFIG", "SET", "latency-monitor-threshold", "50"}), "+OK\r\n");
  EXPECT_EQ(c().Raw({"LATENCY", "GRAPH", "command"}),
            "-ERR No samples available for event 'command'\r\n");
  auto now_s = [] {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  int64_t first_second = now_s();
  ASSERT_EQ(c().Raw({"DEBUG", "SLEEP", "0.1"}), "+OK\r\n");
  // A sample per second: the second sleep starts in a later second than the first one ended.
  first_second = std::max(first_second, now_s());
  ASSERT_TRUE(WaitFor([&] { return now_s() > first_second; }, 5000, 10));
  ASSERT_EQ(c().Raw({"DEBUG", "SLEEP", "0.2"}), "+OK\r\n");
  std::string graph = c().Call({"LATENCY", "GRAPH", "command"}).str;
  std::smatch m;
  const std::regex head(
      R"(command - high (\d+) ms, low (\d+) ms \(all time high (\d+) ms\)\n-{80}\n([\s\S]*))");
  ASSERT_TRUE(std::regex_match(graph, m, head)) << graph;
  EXPECT_GE(std::stoi(m[1]), 200);
  EXPECT_GE(std::stoi(m[2]), 100);
  EXPECT_LT(std::stoi(m[2]), 200);
  EXPECT_EQ(m[3], m[1]);
  // Two columns: the lower sample at the bottom, the higher one filled to the top; a blank row;
  // the ages ("1s", "0s" or older) written downwards.
  std::string body = std::regex_replace(std::string(m[4]), std::regex(R"(\d)"), "9");
  EXPECT_EQ(body,
            " #\n"
            " |\n"
            " |\n"
            "_|\n"
            "  \n"
            "99\n"
            "ss\n")
      << graph;
  // The event name is matched exactly.
  EXPECT_EQ(c().Raw({"LATENCY", "GRAPH", "COMMAND"}),
            "-ERR No samples available for event 'COMMAND'\r\n");
  EXPECT_EQ(c().Call({"LATENCY", "GRAPH"}).type, '-');
}

// The monitor's latest sample of `event` in ms, or -1 when LATENCY LATEST has none.
int64_t LatestSample(RespClient& c, const std::string& event) {
  Reply r = c.Call({"LATENCY", "LATEST"});
  for (const Reply& e : r.elems) {
    if (e.elems.size() == 4 && e.elems[0].str == event) return e.elems[2].integer;
  }
  return -1;
}

// Builds a set of a million members in one EVAL (Redis' test), gives it a 50 ms TTL and waits
// until the active expiry has removed it.
void ExpireBigSet(ServerProcess& server) {
  RespClient slow(server.port(), 60000);  // the EVAL takes seconds
  ASSERT_EQ(slow.Raw({"FLUSHALL"}), "+OK\r\n");
  Reply made = slow.Call({"EVAL",
                          "local i = 0 while (i < tonumber(ARGV[1])) do "
                          "redis.call('sadd', KEYS[1], i) i = i + 1 end",
                          "1", "mybigkey", "1000000"});
  ASSERT_FALSE(made.is_error()) << made.Debug();
  ASSERT_EQ(slow.Raw({"SCARD", "mybigkey"}), ":1000000\r\n");
  ASSERT_EQ(slow.Raw({"PEXPIRE", "mybigkey", "50"}), ":1\r\n");
  ASSERT_TRUE(WaitFor([&] { return slow.Raw({"DBSIZE"}) == ":0\r\n"; }, 20000, 10));
}

// The active expiry's cycle that frees a big value in place takes well over the threshold:
// "expire-cycle" records it, and "expire-del" the key's own removal (Redis' expire.c and db.c).
TEST_P(LatencyTracking, ExpireCycleFreeingABigValueIsMonitored) {
  ASSERT_EQ(c().Raw({"CONFIG", "SET", "latency-monitor-threshold", "20"}), "+OK\r\n");
  ASSERT_EQ(c().Raw({"CONFIG", "SET", "lazyfree-lazy-expire", "no"}), "+OK\r\n");
  ASSERT_NO_FATAL_FAILURE(ExpireBigSet(*server_));
  EXPECT_GE(LatestSample(c(), "expire-cycle"), 20) << c().Call({"LATENCY", "LATEST"}).Debug();
  EXPECT_GE(LatestSample(c(), "expire-del"), 20) << c().Call({"LATENCY", "LATEST"}).Debug();
  // The cycle includes the removal (Redis counts the removal in whole clock milliseconds, so it
  // may show one more).
  EXPECT_GE(LatestSample(c(), "expire-cycle") + 1, LatestSample(c(), "expire-del"));
}

// With lazyfree-lazy-expire the value is freed on another thread: the cycle itself is quick
// (well under a millisecond) and neither event is recorded. The threshold leaves room for a
// busy machine's scheduling while staying under what freeing the set inline takes (100 ms and
// more here, 385 ms for redis-server).
TEST_P(LatencyTracking, ExpireCycleHandingTheValueOffIsNotMonitored) {
  ASSERT_EQ(c().Raw({"CONFIG", "SET", "latency-monitor-threshold", "50"}), "+OK\r\n");
  ASSERT_EQ(c().Raw({"CONFIG", "SET", "lazyfree-lazy-expire", "yes"}), "+OK\r\n");
  ASSERT_NO_FATAL_FAILURE(ExpireBigSet(*server_));
  EXPECT_EQ(LatestSample(c(), "expire-cycle"), -1) << c().Call({"LATENCY", "LATEST"}).Debug();
  EXPECT_EQ(LatestSample(c(), "expire-del"), -1) << c().Call({"LATENCY", "LATEST"}).Debug();
  EXPECT_GE(LatestSample(c(), "command"), 50);  // the EVAL: the monitor was on
}

INSTANTIATE_TEST_SUITE_P(Servers, LatencyTracking, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         KindName);

// ---- byte-for-byte against redis-server ----------------------------------------------------

class LatencyVsRedisTracking : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    kv_ = std::make_unique<ServerProcess>(Kind::kKvstore);
    redis_ = std::make_unique<ServerProcess>(Kind::kRedis);
    k_ = std::make_unique<RespClient>(kv_->port(), 5000);
    r_ = std::make_unique<RespClient>(redis_->port(), 5000);
  }
  Reply Same(const Cmd& cmd) {
    Reply k = k_->Call(cmd);
    Reply r = r_->Call(cmd);
    std::string shown;
    for (const auto& a : cmd) shown += "[" + a + "]";
    EXPECT_EQ(k.raw, r.raw) << shown;
    return k;
  }

  std::unique_ptr<ServerProcess> kv_, redis_;
  std::unique_ptr<RespClient> k_, r_;
};

TEST_F(LatencyVsRedisTracking, PercentileSettingIsValidatedAsRedisDoes) {
  const char* values[] = {"101",          "-1",         "abc",       "50 abc",    "",    "0",
                          "100",          "1e1",        "0x10",      "inf",       "nan", "50,99",
                          "50.50 99.990", "99.9999999", "0.0000001", "50 99 99.9"};
  for (const char* v : values) {
    Same({"CONFIG", "SET", "latency-tracking-info-percentiles", v});
    Same({"CONFIG", "GET", "latency-tracking-info-percentiles"});
  }
  Same({"CONFIG", "SET", "latency-tracking", "maybe"});
  Same({"CONFIG", "SET", "latency-tracking", "NO"});
  Same({"CONFIG", "GET", "latency-tracking"});
}

TEST_F(LatencyVsRedisTracking, HelpAndRepliesWithoutTimingsMatch) {
  Same({"LATENCY", "HELP"});
  Same({"LATENCY", "HISTOGRAM", "nosuch", "get|x", "client|nosuch", "client|list|x"});
  Same({"LATENCY", "GRAPH", "command"});
  Same({"LATENCY", "GRAPH"});
  Same({"LATENCY", "GRAPH", "a", "b"});
  Same({"COMMAND", "INFO", "latency|histogram", "latency|graph"});
  Same({"CONFIG", "SET", "latency-tracking", "no"});
  Same({"CONFIG", "RESETSTAT"});
  Same({"GET", "k"});
  Same({"LATENCY", "HISTOGRAM"});
  Same({"INFO", "latencystats"});
}

}  // namespace
}  // namespace kv::test
