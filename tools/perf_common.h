// kvstore-perf shared pieces: options, the control-link protocol, measurements and output.
//
// Control link: a TCP connection from client to server. Every step is a symmetric
// ExchangeBlobs() (both ends send one blob, then read the other's), so the two processes move in
// lockstep: (1) parameters -> "ok"; (2) link setup blobs; (3) after the run, "done" -> the
// server's CPU seconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/channel.h"
#include "transport/wire.h"

namespace kv::perf {

struct PerfOptions {
  bool server = false;
  std::string host = "127.0.0.1";
  int port = 18515;  // ib_write_bw's default port
  std::string test = "stream";        // write_bw, read_bw, send_bw, send_lat, stream
  std::string transport = "fabric";   // fabric or tcp
  std::string provider = "tcp";
  uint64_t size = 1ull << 30;         // bytes per run (bandwidth tests)
  uint32_t chunk = 1 << 20;           // bytes per operation (stream: max chunk)
  uint32_t min_chunk = 128 * 1024;    // stream: adaptive lower bound
  bool adaptive = true;
  uint32_t window = 16;               // outstanding operations (raw tests)
  uint32_t credits = 4;               // stream: ring slots
  uint64_t iters = 0;                 // send_lat round trips (0: 10000)
  uint32_t msg = 8;                   // send_lat message size
  transport::PollMode poll_mode = transport::PollMode::kPerformance;
  bool delivery_complete = true;      // raw writes: FI_DELIVERY_COMPLETE on every write
  int runs = 1;
  bool progress = true;
  bool once = false;                  // server: exit after one client
};

// Parses argv; returns a usage error message on bad input.
Result<PerfOptions> ParseArgs(int argc, char** argv);
std::string Usage();
// Parameters <-> blob (what the client tells the server).
transport::Blob ToBlob(const PerfOptions& o);
Result<PerfOptions> FromBlob(const transport::Blob& b);
transport::ChannelOptions ChannelOptionsFor(const PerfOptions& o);

// Process CPU time (user + system), seconds.
double CpuSeconds();

// One run's result.
struct RunResult {
  uint64_t bytes = 0;
  uint64_t iters = 0;
  double seconds = 0;
  double p50_us = 0, p99_us = 0;
  double client_cpu = 0, server_cpu = 0;
  uint32_t final_chunk = 0;
};

// Collects per-operation latencies (microseconds) and reports percentiles.
class Latencies {
 public:
  void Add(double us);
  double Percentile(double p);
  size_t count() const { return v_.size(); }

 private:
  std::vector<double> v_;
  bool sorted_ = false;
};

// A live progress line on stderr (at most every 500 ms, only after the run has lasted 1 s).
class Progress {
 public:
  Progress(bool enabled, std::string label, uint64_t total);
  void Update(uint64_t done);
  void Finish();

 private:
  bool enabled_;
  std::string label_;
  uint64_t total_;
  int64_t start_us_, last_us_;
  bool printed_ = false;
};

void PrintHeader();
void PrintRow(const PerfOptions& o, const RunResult& r);

}  // namespace kv::perf
