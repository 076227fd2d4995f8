#include "transport/poll_mode.h"

#include <gtest/gtest.h>

namespace kv::transport {
namespace {

PollModeController Make(PollMode m) {
  PollModeController::Config c;
  c.mode = m;
  c.spin_after = 3;
  c.idle_us = 2000;
  return PollModeController(c);
}

TEST(TransportPollMode, Parse) {
  EXPECT_EQ(*ParsePollMode("economy"), PollMode::kEconomy);
  EXPECT_EQ(*ParsePollMode("performance"), PollMode::kPerformance);
  EXPECT_EQ(*ParsePollMode("auto"), PollMode::kAuto);
  EXPECT_FALSE(ParsePollMode("turbo").ok());
}

TEST(TransportPollMode, FixedModesNeverSwitch) {
  auto p = Make(PollMode::kPerformance);
  auto e = Make(PollMode::kEconomy);
  for (int i = 0; i < 100; ++i) {
    p.OnPoll(i % 2, i * 10000);
    e.OnPoll(5, i * 10);
  }
  EXPECT_TRUE(p.spinning());
  EXPECT_FALSE(e.spinning());
  EXPECT_EQ(p.switches() + e.switches(), 0u);
}

TEST(TransportPollMode, AutoSpinsUnderLoadAndSleepsWhenIdleWithHysteresis) {
  auto a = Make(PollMode::kAuto);
  int64_t t = 0;
  EXPECT_FALSE(a.spinning());
  // Isolated busy wakeups separated by idle ones: stays asleep.
  for (int i = 0; i < 10; ++i) {
    a.OnPoll(1, t += 1000);
    a.OnPoll(0, t += 10000);
  }
  EXPECT_FALSE(a.spinning());
  // Three busy wakeups in a row: spin.
  a.OnPoll(2, t += 100);
  a.OnPoll(1, t += 100);
  EXPECT_FALSE(a.spinning());
  a.OnPoll(1, t += 100);
  EXPECT_TRUE(a.spinning());
  // Short gaps while spinning (empty polls for < idle_us) keep spinning.
  for (int i = 0; i < 100; ++i) a.OnPoll(0, t += 10);
  a.OnPoll(1, t += 10);
  for (int i = 0; i < 19; ++i) a.OnPoll(0, t += 100);
  EXPECT_TRUE(a.spinning());
  // Idle for idle_us: back to sleep.
  a.OnPoll(0, t += 200);
  EXPECT_FALSE(a.spinning());
  EXPECT_EQ(a.switches(), 2u);
  // And one busy wakeup alone does not restart spinning.
  a.OnPoll(1, t += 5000);
  EXPECT_FALSE(a.spinning());
}

// Empty polls that do not follow a sleep (the first poll of each wait, right after handling
// work) do not reset the count; polls that find work without sleeping count as busy.
TEST(TransportPollMode, OnlyWakeupsCountWhileSleeping) {
  auto a = Make(PollMode::kAuto);
  int64_t t = 0;
  for (int i = 0; i < 2; ++i) {
    a.OnPoll(0, t += 10, /*woke=*/false);
    a.OnPoll(1, t += 100, /*woke=*/true);
  }
  EXPECT_FALSE(a.spinning());
  a.OnPoll(0, t += 10, false);
  a.OnPoll(1, t += 100, true);
  EXPECT_TRUE(a.spinning());
}

}  // namespace
}  // namespace kv::transport
