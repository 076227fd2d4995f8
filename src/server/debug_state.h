// The switches DEBUG sets (Redis' server.pause_cron, skip_checksum_validation, aof_flush_sleep,
// script_disable_deny_script): testing knobs that no configuration parameter holds. One per
// Server; the atomics let threads that run without the keyspace lock (the AOF's writes) read
// them.
#pragma once

#include <atomic>

namespace kv::server {

struct DebugState {
  // DEBUG PAUSE-CRON: the cron returns at once (its watchdog re-arm excepted), so no active
  // expiry, no rehashing, no persistence or replication upkeep.
  std::atomic<bool> pause_cron{false};
  // DEBUG SET-SKIP-CHECKSUM-VALIDATION: RDB loads and RESTORE / FUNCTION RESTORE payloads are
  // taken without checking their CRC-64.
  std::atomic<bool> skip_checksum_validation{false};
  // DEBUG AOF-FLUSH-SLEEP: microseconds to sleep before each write of a non-empty AOF buffer.
  std::atomic<int> aof_flush_sleep_us{0};
  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call commands flagged noscript.
  std::atomic<bool> disable_deny_scripts{false};
  // DEBUG REPLYBUFFER PEAK-RESET-TIME: how often (ms) the cron resets a client's reply buffer
  // peak, which a smaller one shrinks the buffer to; -1 never (NEVER), 5000 by default (RESET).
  static constexpr int64_t kReplyBufferPeakResetMs = 5000;
  std::atomic<int64_t> reply_buffer_peak_reset_ms{kReplyBufferPeakResetMs};
  // DEBUG REPLYBUFFER RESIZING: whether the cron resizes the clients' reply buffers at all.
  std::atomic<bool> reply_buffer_resizing{true};
};

}  // namespace kv::server
