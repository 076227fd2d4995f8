// ACL LOG: the security log of refused commands and failed authentications, as Redis 7.0 keeps
// it. Newest first; an event like one of the 10 newest entries (same reason, context, object and
// user, within 60 s) bumps that entry's count and moves it to the front instead of adding one;
// the log holds at most `max_len` entries (acllog-max-len), the oldest dropped first. Plain
// data: the owner serializes access.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace kv::acl {

enum class LogReason { kCommand, kKey, kChannel, kAuth };
enum class LogContext { kTopLevel, kMulti, kLua };

// ACL LOG's words for them: "command", "key", "channel", "auth"; "toplevel", "multi", "lua".
std::string_view LogReasonName(LogReason r);
std::string_view LogContextName(LogContext c);

struct LogEntry {
  uint64_t count = 1;
  LogReason reason = LogReason::kCommand;
  LogContext context = LogContext::kTopLevel;
  std::string object;       // the command's full name, the key, the channel, or AUTH's name
  std::string username;     // the client's user, or the name an AUTH tried
  int64_t time_ms = 0;      // wall-clock milliseconds of the latest event
  std::string client_info;  // CLIENT LIST's line of the latest event's client
};

class Log {
 public:
  // Redis' ACL_LOG_GROUPING_MAX_TIME_DELTA and how many recent entries it looks at.
  static constexpr int64_t kGroupingWindowMs = 60000;
  static constexpr size_t kGroupingScan = 10;

  void Add(LogEntry e, size_t max_len);
  void Reset() { entries_.clear(); }
  const std::deque<LogEntry>& entries() const { return entries_; }  // newest first

 private:
  std::deque<LogEntry> entries_;
};

}  // namespace kv::acl
