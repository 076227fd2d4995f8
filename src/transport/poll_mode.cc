#include "transport/poll_mode.h"

namespace kv::transport {

Result<PollMode> ParsePollMode(std::string_view s) {
  if (s == "performance") return PollMode::kPerformance;
  if (s == "economy") return PollMode::kEconomy;
  if (s == "auto") return PollMode::kAuto;
  return Status::Invalid("unknown poll mode '" + std::string(s) +
                         "' (performance, economy, auto)");
}

const char* PollModeName(PollMode m) {
  switch (m) {
    case PollMode::kPerformance: return "performance";
    case PollMode::kEconomy: return "economy";
    case PollMode::kAuto: return "auto";
  }
  return "?";
}

PollModeController::PollModeController(const Config& cfg)
    : cfg_(cfg), spinning_(cfg.mode == PollMode::kPerformance) {}

void PollModeController::OnPoll(int events, int64_t now_us, bool woke) {
  if (cfg_.mode != PollMode::kAuto) return;
  if (events > 0) last_event_us_ = now_us;
  if (spinning_) {
    if (events == 0 && now_us - last_event_us_ >= cfg_.idle_us) {
      spinning_ = false;
      busy_wakeups_ = 0;
      ++switches_;
    }
    return;
  }
  // Sleeping: work found counts toward spinning (on a wakeup, or without needing to sleep at
  // all); only a wakeup that found nothing resets the count.
  if (events > 0) {
    ++busy_wakeups_;
  } else if (woke) {
    busy_wakeups_ = 0;
  }
  if (busy_wakeups_ >= cfg_.spin_after) {
    spinning_ = true;
    ++switches_;
  }
}

}  // namespace kv::transport
