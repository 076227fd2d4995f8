// client-output-buffer-limit for one class of clients (normal, replica, pubsub): a connection
// whose unsent output passes the hard limit, or stays over the soft one for `seconds`, is closed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kv::net {

struct OutputLimit {
  size_t hard = 0, soft = 0;
  int64_t seconds = 0;
  // Whether `pending` output bytes at `now_ms` pass the hard limit, or have been over the soft
  // one for `seconds`; `*over_soft_since_ms` (0: under it) keeps when they went over.
  bool Exceeded(size_t pending, int64_t now_ms, int64_t* over_soft_since_ms) const {
    bool over_soft = soft && pending > soft;
    if (!over_soft)
      *over_soft_since_ms = 0;
    else if (!*over_soft_since_ms)
      *over_soft_since_ms = now_ms;
    return (hard && pending > hard) ||
           (over_soft && now_ms - *over_soft_since_ms >= seconds * 1000);
  }
};

// An OutputLimit that CONFIG SET changes while clients of any thread read it.
class AtomicOutputLimit {
 public:
  OutputLimit Load() const {
    return {hard_.load(std::memory_order_relaxed), soft_.load(std::memory_order_relaxed),
            seconds_.load(std::memory_order_relaxed)};
  }
  void Store(const OutputLimit& l) {
    hard_.store(l.hard, std::memory_order_relaxed);
    soft_.store(l.soft, std::memory_order_relaxed);
    seconds_.store(l.seconds, std::memory_order_relaxed);
  }

 private:
  std::atomic<size_t> hard_{0}, soft_{0};
  std::atomic<int64_t> seconds_{0};
};

}  // namespace kv::net
