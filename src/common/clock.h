// Clocks. Wall-clock milliseconds drive TTLs (Redis semantics: absolute Unix time);
// the monotonic clock drives timers and durations.
#pragma once

#include <chrono>
#include <cstdint>

namespace kv {

inline int64_t WallMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}
inline int64_t WallUs() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}
inline int64_t MonoMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}
inline int64_t MonoUs() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace kv
