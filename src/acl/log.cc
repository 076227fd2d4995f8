#include "acl/log.h"

#include <algorithm>
#include <cstdlib>

namespace kv::acl {

std::string_view LogReasonName(LogReason r) {
  switch (r) {
    case LogReason::kCommand:
      return "command";
    case LogReason::kKey:
      return "key";
    case LogReason::kChannel:
      return "channel";
    case LogReason::kAuth:
      return "auth";
  }
  return "unknown";
}

std::string_view LogContextName(LogContext c) {
  switch (c) {
    case LogContext::kTopLevel:
      return "toplevel";
    case LogContext::kMulti:
      return "multi";
    case LogContext::kLua:
      return "lua";
  }
  return "unknown";
}

void Log::Add(LogEntry e, size_t max_len) {
  size_t scan = std::min(kGroupingScan, entries_.size());
  for (size_t i = 0; i < scan; i++) {
    LogEntry& old = entries_[i];
    if (old.reason != e.reason || old.context != e.context ||
        std::llabs(old.time_ms - e.time_ms) > kGroupingWindowMs || old.object != e.object ||
        old.username != e.username) {
      continue;
    }
    LogEntry bumped = std::move(old);
    bumped.count++;
    bumped.time_ms = e.time_ms;
    bumped.client_info = std::move(e.client_info);
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    entries_.push_front(std::move(bumped));
    return;
  }
  entries_.push_front(std::move(e));
  while (entries_.size() > max_len) entries_.pop_back();
}

}  // namespace kv::acl
