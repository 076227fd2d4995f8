// Small helpers the end-to-end tests share: reading INFO fields and lines, waiting for a condition,
// and waiting for a replica to have applied everything its primary produced.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/resp_client.h"

namespace kv::test {

// The value of `name` in INFO's text `info` (a section after its title), or "".
inline std::string InfoTextField(const std::string& info, const std::string& name) {
  size_t at = info.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  at += name.size() + 3;
  return info.substr(at, info.find("\r\n", at) - at);
}

// The value of `name` in INFO `section`, or "".
inline std::string InfoField(RespClient& c, const std::string& section, const std::string& name) {
  return InfoTextField(c.Call({"INFO", section}).str, name);
}

// The integer value of `name` in INFO `section`, or -1 when it is missing.
inline int64_t InfoInt(RespClient& c, const std::string& section, const std::string& name) {
  std::string v = InfoField(c, section, name);
  return v.empty() ? -1 : std::stoll(v);
}

// The lines of INFO `section` that start with one of `prefixes`, with usec fields removed.
inline std::vector<std::string> InfoLines(RespClient& c, const std::string& section,
                                          const std::vector<std::string>& prefixes) {
  std::string info = c.Call({"INFO", section}).str;
  std::vector<std::string> out;
  size_t at = 0;
  while (at < info.size()) {
    size_t end = info.find("\r\n", at);
    if (end == std::string::npos) end = info.size();
    std::string line = info.substr(at, end - at);
    at = end + 2;
    for (const auto& p : prefixes) {
      if (line.rfind(p, 0) != 0) continue;
      size_t u = line.find("usec=");
      size_t r = line.find("rejected_calls=");
      if (u != std::string::npos && r != std::string::npos) line.erase(u, r - u);
      out.push_back(line);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Polls `cond` every `step_ms`; its last answer after `timeout_ms`.
inline bool WaitFor(const std::function<bool()>& cond, int timeout_ms = 20000, int step_ms = 20) {
  for (int waited = 0; waited < timeout_ms; waited += step_ms) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
  }
  return cond();
}

// The replica's link is up and it applied the primary's whole stream so far.
inline bool InSync(RespClient& primary, RespClient& replica) {
  return WaitFor([&] {
    return InfoField(replica, "replication", "master_link_status") == "up" &&
           InfoField(replica, "replication", "slave_repl_offset") ==
               InfoField(primary, "replication", "master_repl_offset");
  });
}

}  // namespace kv::test
