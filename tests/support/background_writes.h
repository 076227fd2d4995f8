// Writes to a server from a thread while a test does something else (a sync, a broken link):
// `round(client, i)` runs for i = 0, 1, ... until Stop() or destruction (also on a failed
// ASSERT, which leaves the test early).
#pragma once

#include <atomic>
#include <functional>
#include <thread>
#include <utility>

#include "tests/support/resp_client.h"

namespace kv::test {

class BackgroundWrites {
 public:
  using Round = std::function<void(RespClient&, int)>;

  BackgroundWrites(int port, Round round)
      : thread_([this, port, round = std::move(round)] {
          RespClient c(port);
          for (int i = 0; !stop_; i++) round(c, i);
        }) {}
  ~BackgroundWrites() { Stop(); }
  BackgroundWrites(const BackgroundWrites&) = delete;
  BackgroundWrites& operator=(const BackgroundWrites&) = delete;

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts once stop_ exists
};

}  // namespace kv::test
