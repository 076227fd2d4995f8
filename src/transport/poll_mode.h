// Poll modes and the `auto` switch between them: a pure state machine fed with "this poll found
// n events at time t" (no clock of its own; tests drive it with fake times).
//
//  * performance: always spin (busy-poll the completion queue).
//  * economy: always sleep between polls (wait on the CQ fd, or a timed poll where the provider
//    has no fd).
//  * auto: sleep while idle; spin after `spin_after` polls that found work with no empty
//    wakeup between them;
//    go back to sleep once no event was seen for `idle_us` while spinning. The two thresholds
//    are the hysteresis: one busy wakeup does not start spinning, a short gap does not stop it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kv::transport {

enum class PollMode { kPerformance, kEconomy, kAuto };

Result<PollMode> ParsePollMode(std::string_view s);
const char* PollModeName(PollMode m);

class PollModeController {
 public:
  struct Config {
    PollMode mode = PollMode::kAuto;
    uint32_t spin_after = 3;  // consecutive busy wakeups before spinning
    int64_t idle_us = 2000;   // idle time while spinning before sleeping again
  };

  explicit PollModeController(const Config& cfg);

  // Reports one poll: how many events it found, when, and whether it followed a sleep. While
  // sleeping, polls that found work count toward spinning; an empty poll resets the count only
  // if it followed a sleep (the first poll of each wait, right after handling work, often finds
  // nothing and says nothing about the load).
  void OnPoll(int events, int64_t now_us, bool woke = true);
  bool spinning() const { return spinning_; }
  // Number of switches so far (for stats and tests).
  uint64_t switches() const { return switches_; }

 private:
  Config cfg_;
  bool spinning_;
  uint32_t busy_wakeups_ = 0;
  int64_t last_event_us_ = 0;
  uint64_t switches_ = 0;
};

}  // namespace kv::transport
