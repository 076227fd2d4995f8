#include "perf_common.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/clock.h"
#include "common/strutil.h"

namespace kv::perf {

std::string Usage() {
  return R"(usage:
  kvstore-perf --server [--port P] [--once]
  kvstore-perf --client HOST [--port P] [--test T] [--transport fabric|tcp] [--provider NAME]
               [--size BYTES] [--chunk BYTES] [--min-chunk BYTES] [--fixed-chunk] [--window N]
               [--credits N] [--iters N] [--msg BYTES] [--poll-mode performance|economy|auto]
               [--completion delivery|transmit] [--runs N] [--no-progress]
tests: write_bw read_bw send_bw send_lat (raw operations, like ib_write_bw / ib_send_lat)
       stream (the full channel: credits, descriptors, adaptive chunks)
sizes take k/m/g suffixes (binary). providers: tcp, shm, tcp;ofi_rxm, verbs, auto.
)";
}

namespace {
// "4096", "128k", "1m", "1g" (binary multiples; "kb"/"mb"/"gb" too).
Result<uint64_t> Bytes(const std::string& s) {
  std::string t = ToLower(s);
  if (t.size() > 1 && t.back() == 'b') t.pop_back();
  uint64_t mult = 1;
  if (!t.empty() && (t.back() == 'k' || t.back() == 'm' || t.back() == 'g')) {
    mult = t.back() == 'k' ? 1ull << 10 : t.back() == 'm' ? 1ull << 20 : 1ull << 30;
    t.pop_back();
  }
  auto v = ParseUint64(t);
  if (!v) return Status::Invalid("bad size '" + s + "'");
  return *v * mult;
}
}  // namespace

Result<PerfOptions> ParseArgs(int argc, char** argv) {
  PerfOptions o;
  bool client = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> Result<std::string> {
      if (i + 1 >= argc) return Status::Invalid(a + " needs a value");
      return std::string(argv[++i]);
    };
    auto num = [&](uint64_t* out) -> Status {
      auto v = next();
      if (!v.ok()) return v.status();
      auto b = Bytes(*v);
      if (!b.ok()) return b.status();
      *out = *b;
      return Status::Ok();
    };
    uint64_t n = 0;
    Status s;
    if (a == "--server") {
      o.server = true;
    } else if (a == "--client") {
      auto v = next();
      if (!v.ok()) return v.status();
      o.host = *v;
      client = true;
    } else if (a == "--once") {
      o.once = true;
    } else if (a == "--fixed-chunk") {
      o.adaptive = false;
    } else if (a == "--no-progress") {
      o.progress = false;
    } else if (a == "--port" && (s = num(&n)).ok()) {
      o.port = static_cast<int>(n);
    } else if (a == "--size" && (s = num(&n)).ok()) {
      o.size = n;
    } else if (a == "--chunk" && (s = num(&n)).ok()) {
      o.chunk = static_cast<uint32_t>(n);
    } else if (a == "--min-chunk" && (s = num(&n)).ok()) {
      o.min_chunk = static_cast<uint32_t>(n);
    } else if (a == "--window" && (s = num(&n)).ok()) {
      o.window = static_cast<uint32_t>(n);
    } else if (a == "--credits" && (s = num(&n)).ok()) {
      o.credits = static_cast<uint32_t>(n);
    } else if (a == "--iters" && (s = num(&n)).ok()) {
      o.iters = n;
    } else if (a == "--msg" && (s = num(&n)).ok()) {
      o.msg = static_cast<uint32_t>(n);
    } else if (a == "--runs" && (s = num(&n)).ok()) {
      o.runs = static_cast<int>(n);
    } else if (a == "--test" || a == "--transport" || a == "--provider" || a == "--poll-mode" ||
               a == "--completion") {
      auto v = next();
      if (!v.ok()) return v.status();
      if (a == "--test") o.test = *v;
      if (a == "--transport") o.transport = *v;
      if (a == "--provider") o.provider = *v;
      if (a == "--completion") o.delivery_complete = *v != "transmit";
      if (a == "--poll-mode") {
        auto m = transport::ParsePollMode(*v);
        if (!m.ok()) return m.status();
        o.poll_mode = *m;
      }
    } else if (!s.ok()) {
      return s;
    } else {
      return Status::Invalid("unknown option " + a);
    }
    if (!s.ok()) return s;
  }
  if (o.server == client) return Status::Invalid("give exactly one of --server, --client HOST");
  static const char* kTests[] = {"write_bw", "read_bw", "send_bw", "send_lat", "stream"};
  if (std::find_if(std::begin(kTests), std::end(kTests),
                   [&](const char* t) { return o.test == t; }) == std::end(kTests)) {
    return Status::Invalid("unknown test " + o.test);
  }
  if (o.transport != "fabric" && o.transport != "tcp") {
    return Status::Invalid("unknown transport " + o.transport);
  }
  if (o.chunk == 0 || o.window == 0 || o.credits == 0 || o.size == 0 || o.runs <= 0) {
    return Status::Invalid("sizes and counts must be positive");
  }
  if (o.iters == 0) o.iters = 10000;
  return o;
}

transport::Blob ToBlob(const PerfOptions& o) {
  transport::Blob b;
  b.Set("test", o.test);
  b.Set("transport", o.transport);
  b.Set("provider", o.provider);
  b.SetU64("size", o.size);
  b.SetU64("chunk", o.chunk);
  b.SetU64("min_chunk", o.min_chunk);
  b.SetU64("adaptive", o.adaptive);
  b.SetU64("window", o.window);
  b.SetU64("credits", o.credits);
  b.SetU64("iters", o.iters);
  b.SetU64("msg", o.msg);
  b.Set("poll_mode", transport::PollModeName(o.poll_mode));
  return b;
}

Result<PerfOptions> FromBlob(const transport::Blob& b) {
  PerfOptions o;
  auto g = [&](const char* k) { return b.Get(k); };
  auto u = [&](const char* k) { return b.GetU64(k); };
  for (const char* k : {"test", "transport", "provider", "poll_mode"}) {
    if (!g(k).ok()) return g(k).status();
  }
  for (const char* k :
       {"size", "chunk", "min_chunk", "adaptive", "window", "credits", "iters", "msg"}) {
    if (!u(k).ok()) return u(k).status();
  }
  o.test = *g("test");
  o.transport = *g("transport");
  o.provider = *g("provider");
  o.size = *u("size");
  o.chunk = static_cast<uint32_t>(*u("chunk"));
  o.min_chunk = static_cast<uint32_t>(*u("min_chunk"));
  o.adaptive = *u("adaptive") != 0;
  o.window = static_cast<uint32_t>(*u("window"));
  o.credits = static_cast<uint32_t>(*u("credits"));
  o.iters = *u("iters");
  o.msg = static_cast<uint32_t>(*u("msg"));
  auto m = transport::ParsePollMode(*g("poll_mode"));
  if (!m.ok()) return m.status();
  o.poll_mode = *m;
  if (o.chunk == 0 || o.window == 0 || o.window > 1024 || o.credits == 0 || o.msg == 0 ||
      o.chunk > (64u << 20)) {
    return Status::Invalid("parameters out of range");
  }
  return o;
}

transport::ChannelOptions ChannelOptionsFor(const PerfOptions& o) {
  transport::ChannelOptions c;
  c.transport = o.transport;
  c.provider = o.provider;
  c.bind_addr = "127.0.0.1";
  c.credits = o.credits;
  c.max_chunk = o.chunk;
  c.min_chunk = std::min(o.min_chunk, o.chunk);
  c.adaptive = o.adaptive;
  c.poll_mode = o.poll_mode;
  c.stall_timeout_ms = 10000;
  return c;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void Latencies::Add(double us) {
  v_.push_back(us);
  sorted_ = false;
}

double Latencies::Percentile(double p) {
  if (v_.empty()) return 0;
  if (!sorted_) std::sort(v_.begin(), v_.end());
  sorted_ = true;
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(v_.size() - 1) + 0.5);
  return v_[std::min(i, v_.size() - 1)];
}

Progress::Progress(bool enabled, std::string label, uint64_t total)
    : enabled_(enabled), label_(std::move(label)), total_(total), start_us_(MonoUs()),
      last_us_(start_us_) {}

void Progress::Update(uint64_t done) {
  if (!enabled_) return;
  int64_t now = MonoUs();
  if (now - start_us_ < 1000000 || now - last_us_ < 500000) return;
  last_us_ = now;
  double secs = (now - start_us_) / 1e6;
  std::fprintf(stderr, "\r%s: %7.1f / %.1f MiB  %.2f GB/s   ", label_.c_str(), done / 1048576.0,
               total_ / 1048576.0, done / secs / 1e9);
  printed_ = true;
}

void Progress::Finish() {
  if (printed_) std::fprintf(stderr, "\r%*s\r", 60, "");
}

void PrintHeader() {
  std::printf("%-9s %-24s %10s %9s %9s %9s %9s %9s %9s %10s %10s\n", "test", "transport",
              "bytes", "chunk", "iters", "GB/s", "Gbit/s", "p50_us", "p99_us", "cli_cpu_s",
              "srv_cpu_s");
}

void PrintRow(const PerfOptions& o, const RunResult& r) {
  std::string t = o.transport == "tcp" ? "tcp-socket" : "fabric/" + o.provider;
  t += std::string("/") + transport::PollModeName(o.poll_mode);
  double gbs = r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0;
  uint64_t chunk = o.test == "send_lat" ? o.msg : (r.final_chunk ? r.final_chunk : o.chunk);
  std::printf("%-9s %-24s %10llu %9llu %9llu %9.3f %9.2f %9.2f %9.2f %10.3f %10.3f\n",
              o.test.c_str(), t.c_str(), static_cast<unsigned long long>(r.bytes),
              static_cast<unsigned long long>(chunk), static_cast<unsigned long long>(r.iters),
              gbs, gbs * 8, r.p50_us, r.p99_us, r.client_cpu, r.server_cpu);
  std::fflush(stdout);
}

}  // namespace kv::perf
