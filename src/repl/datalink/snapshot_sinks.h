// The snapshot child's sinks (primary/primary_sync.cc): the sockets of TCP replicas, the fan-out
// that feeds several replicas from one walk of the dataset, and DEBUG REPLICATION-FAIL-SNAPSHOT.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "persist/sink.h"

namespace kv::repl {

// DEBUG REPLICATION-FAIL-SNAPSHOT: passes the first `budget` bytes on, then fails.
class FailingSink : public persist::Sink {
 public:
  FailingSink(persist::Sink& inner, int64_t budget) : inner_(inner), budget_(budget) {}
  Status Write(const void* data, size_t len) override {
    if (budget_ < 0) return inner_.Write(data, len);
    size_t n = std::min(len, static_cast<size_t>(budget_));
    if (n > 0) KV_TRY(inner_.Write(data, n));
    budget_ -= static_cast<int64_t>(n);
    if (n < len) return Failed();
    return Status::Ok();
  }
  // The inner sink's windows, cut to the bytes still allowed.
  Result<std::span<uint8_t>> Window(size_t max) override {
    if (budget_ < 0) return inner_.Window(max);
    if (budget_ == 0) return Failed();
    KV_TRY_ASSIGN(w, inner_.Window(std::min(max, static_cast<size_t>(budget_))));
    return w.first(std::min(w.size(), static_cast<size_t>(budget_)));
  }
  Status Commit(size_t n) override {
    if (budget_ >= 0) budget_ -= static_cast<int64_t>(n);
    return inner_.Commit(n);
  }

 private:
  static Status Failed() {
    return Status::IoError("snapshot failed (DEBUG REPLICATION-FAIL-SNAPSHOT)");
  }

  persist::Sink& inner_;
  int64_t budget_;  // -1: no failure
};

// The snapshot child's sink for the replicas it serves at once: each byte goes to every target
// still in the transfer. A target that fails (its replica went away, or stopped reading) drops
// out and the others go on; the sink fails once none is left. A lone target is written in
// place through its windows (a data link's ring); several get copies.
class FanOutSink : public persist::Sink {
 public:
  explicit FanOutSink(std::vector<persist::Sink*> targets)
      : targets_(std::move(targets)), status_(targets_.size()) {}

  Status Write(const void* data, size_t len) override {
    for (size_t i = 0; i < targets_.size(); i++) {
      if (status_[i].ok()) status_[i] = targets_[i]->Write(data, len);
    }
    return Left();
  }
  Result<std::span<uint8_t>> Window(size_t max) override {
    if (targets_.size() != 1) return std::span<uint8_t>();
    auto w = targets_[0]->Window(max);
    if (!w.ok()) status_[0] = w.status();
    return w;
  }
  Status Commit(size_t n) override {
    status_[0] = targets_[0]->Commit(n);
    return status_[0];
  }
  // Marks a target failed before any byte (its header could not be sent).
  void Fail(size_t i, Status why) { status_[i] = std::move(why); }
  const Status& status(size_t i) const { return status_[i]; }

 private:
  // OK while a target is left, else the first target's failure.
  Status Left() const {
    for (const Status& s : status_) {
      if (s.ok()) return Status::Ok();
    }
    return status_.empty() ? Status::Ok() : status_[0];
  }

  std::vector<persist::Sink*> targets_;
  std::vector<Status> status_;
};

// Writes all of `data` to a non-blocking socket, waiting for room with poll (a snapshot child,
// or the few bytes of +FULLRESYNC). Gives up after `timeout_ms` without progress.
class PollingSink : public persist::Sink {
 public:
  PollingSink(int fd, int timeout_ms) : fd_(fd), timeout_ms_(timeout_ms) {}
  Status Write(const void* data, size_t len) override;

 private:
  int fd_;
  int timeout_ms_;
};

// Sends a snapshot file as a bulk payload ("$<size>\r\n" and the bytes), with sendfile;
// `tick` between its steps, at least once a second while the replica does not read (the
// replicas waiting behind this one keep hearing their newlines).
Status SendFile(persist::Sink& sink, int fd, const std::string& path, int timeout_ms,
                const std::function<void()>& tick);

}  // namespace kv::repl
