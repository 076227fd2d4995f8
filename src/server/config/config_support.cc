// Which of Redis 7.0's parameters kvstore does not act on, and what it does with them. No
// setting is silent: a parameter is either read by the code (most of the table), refused when
// set to anything but its default (the feature is missing, and accepting it would promise what
// is not there), or inert, with the reason any value of it already holds for kvstore.
// config_support_test.cc checks that every parameter of the table is one of the three.
#include <map>
#include <string>

#include "server/config/config.h"

namespace kv::server {
namespace {

constexpr const char* kNoDefrag =
    "Active defragmentation cannot be enabled: it requires a Redis server compiled with a "
    "modified Jemalloc like the one shipped by default with the Redis source distribution";

const std::map<std::string, std::string>& Refused() {
  static const std::map<std::string, std::string> m = {
      {"activedefrag", kNoDefrag},
      {"active-defrag-ignore-bytes", kNoDefrag},
      {"active-defrag-threshold-lower", kNoDefrag},
      {"active-defrag-threshold-upper", kNoDefrag},
      {"active-defrag-cycle-min", kNoDefrag},
      {"active-defrag-cycle-max", kNoDefrag},
      {"active-defrag-max-scan-fields", kNoDefrag},
  };
  return m;
}

// Accepted with any value: what each says already holds, or concerns what kvstore does not have
// in a way no client can tell apart.
const std::map<std::string, std::string>& Inert() {
  static const std::map<std::string, std::string> m = {
      {"io-threads-do-reads", "kvstore's IO threads always read and parse their requests"},
      {"dynamic-hz", "kvstore's cron runs at hz whatever the number of clients"},
      {"jemalloc-bg-thread", "kvstore uses glibc's allocator, which has no background thread"},
      {"ignore-warnings", "kvstore has no startup warnings to silence"},
      {"sanitize-dump-payload",
       "kvstore checks every RESTORE payload and RDB value in depth (Redis' \"yes\"), whatever "
       "the setting: it decodes each listpack, ziplist and intset entry by entry and refuses "
       "duplicates, so a payload that only a deep check finds corrupt is refused even under "
       "\"no\""},
  };
  return m;
}

}  // namespace

const std::string* RefusedReason(const std::string& name) {
  auto it = Refused().find(name);
  return it == Refused().end() ? nullptr : &it->second;
}

const std::string* InertReason(const std::string& name) {
  auto it = Inert().find(name);
  return it == Inert().end() ? nullptr : &it->second;
}

}  // namespace kv::server
