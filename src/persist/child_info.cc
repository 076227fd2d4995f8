#include "persist/child_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"

namespace kv::persist {

namespace {

// A report at most this often while the child runs, as Redis' once a second.
constexpr int64_t kReportEveryUs = 1000 * 1000;
// A measurement of the copy-on-write size waits this many times its own cost since the last
// (Redis' CHILD_COW_DUTY_CYCLE): it walks every mapping of the process.
constexpr int64_t kCowDutyCycle = 100;

// The sum of the "Private_Dirty:" lines of `path`, in bytes; false where it cannot be read.
bool SumPrivateDirty(const char* path, size_t* bytes) {
  FILE* f = fopen(path, "re");
  if (f == nullptr) return false;
  char line[256];
  size_t kb = 0;
  while (fgets(line, sizeof line, f) != nullptr) {
    unsigned long long v;
    if (strncmp(line, "Private_Dirty:", 14) == 0 && sscanf(line + 14, "%llu", &v) == 1) kb += v;
  }
  fclose(f);
  *bytes = kb * 1024;
  return true;
}

}  // namespace

size_t PrivateDirtyBytes() {
  size_t bytes = 0;
  if (SumPrivateDirty("/proc/self/smaps_rollup", &bytes)) return bytes;
  if (SumPrivateDirty("/proc/self/smaps", &bytes)) return bytes;
  return 0;
}

ChildInfo::~ChildInfo() { CloseFds(); }

void ChildInfo::CloseFds() {
  if (read_fd_ >= 0) close(read_fd_);
  if (write_fd_ >= 0) close(write_fd_);
  read_fd_ = write_fd_ = -1;
}

Status ChildInfo::Prepare(Kind kind, uint64_t keys_total) {
  CloseFds();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return Status::FromErrno("pipe", errno);
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  kind_ = kind;
  keys_done_ = cow_ = cow_peak_ = final_cow_ = 0;
  cow_updated_us_ = 0;
  got_final_ = false;
  keys_total_ = keys_total;
  return Status::Ok();
}

void ChildInfo::EnterChild() {
  if (read_fd_ >= 0) close(read_fd_);
  read_fd_ = -1;
  last_report_us_ = measured_us_ = measure_cost_us_ = 0;
  child_cow_ = child_peak_ = child_sum_ = child_measures_ = 0;
}

void ChildInfo::EnterParent() {
  if (write_fd_ >= 0) close(write_fd_);
  write_fd_ = -1;
}

void ChildInfo::Progress(uint64_t keys) {
  if (write_fd_ < 0) return;
  int64_t now = MonoUs();
  if (last_report_us_ != 0 && now - last_report_us_ < kReportEveryUs) return;
  last_report_us_ = now;
  Send(false, keys);
}

void ChildInfo::Finish(uint64_t keys) {
  if (write_fd_ < 0) return;
  Send(true, keys);
}

void ChildInfo::Send(bool final, uint64_t keys) {
  int64_t now = MonoUs();
  if (final || measured_us_ == 0 || now - measured_us_ > measure_cost_us_ * kCowDutyCycle) {
    child_cow_ = PrivateDirtyBytes();
    measured_us_ = MonoUs();
    measure_cost_us_ = measured_us_ - now;
    if (child_cow_ > child_peak_) child_peak_ = child_cow_;
    child_sum_ += child_cow_;
    child_measures_++;
    if (child_cow_ != 0 || final) {
      const char* what = kind_ == Kind::kAof ? "AOF rewrite" : "RDB";
      auto mb = [](uint64_t b) { return static_cast<unsigned long long>(b >> 20); };
      KV_LOG(final ? LogLevel::kNotice : LogLevel::kVerbose,
             "Fork CoW for %s: current %llu MB, peak %llu MB, average %llu MB", what,
             mb(child_cow_), mb(child_peak_), mb(child_sum_ / child_measures_));
    }
  }
  Message m;
  m.final = final ? 1 : 0;
  m.keys = keys;
  m.cow = child_cow_;
  m.cow_updated_us = measured_us_;
  // Smaller than PIPE_BUF: written whole or not at all (a full pipe drops the report, as
  // Redis' does).
  [[maybe_unused]] ssize_t n = write(write_fd_, &m, sizeof m);
}

void ChildInfo::Drain() {
  Message m;
  while (read_fd_ >= 0 && read(read_fd_, &m, sizeof m) == static_cast<ssize_t>(sizeof m)) {
    keys_done_ = m.keys;
    cow_ = m.cow;
    cow_updated_us_ = m.cow_updated_us;
    if (cow_ > cow_peak_) cow_peak_ = cow_;
    if (m.final) {
      got_final_ = true;
      final_cow_ = m.cow;
    }
  }
}

void ChildInfo::EndChild() {
  Drain();
  if (got_final_) (kind_ == Kind::kAof ? last_aof_cow_ : last_rdb_cow_) = final_cow_;
  CloseFds();
  keys_done_ = keys_total_ = cow_ = cow_peak_ = final_cow_ = 0;
  cow_updated_us_ = 0;
  got_final_ = false;
}

int64_t ChildInfo::cow_age_s() const {
  return cow_updated_us_ == 0 ? 0 : (MonoUs() - cow_updated_us_) / 1000000;
}

}  // namespace kv::persist
