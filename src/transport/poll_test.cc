// Poll modes on real links: every mode moves data intact; economy mode sleeps when idle (CPU
// measured with getrusage over a quiet second); auto mode spins under load and goes back to
// sleep when idle where polls are memory reads (shm), and sleeps from setup on where they are
// system calls (tcp); a link driven by the epoll loop (LoopDriver) streams too.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <thread>

#include "common/clock.h"
#include "net/event_loop.h"
#include "transport/channel.h"
#include "transport/loop_driver.h"
#include "transport/test_util.h"

namespace kv::transport {
namespace {

double ThreadCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Streams `bytes` random bytes over the pair: both ends finish, and the bytes arrive intact.
void ExpectIntactStream(test::LinkPair& pair, size_t bytes, uint64_t seed) {
  Status st = test::Transfer(pair, test::RandomBytes(bytes, seed), 60000);
  ASSERT_TRUE(st.ok()) << st.ToString();
}

// A configuration, the poll mode it is given and the one its links are in.
struct ModeCase {
  const char* config;
  PollMode configured, expected;
};

// A connected pair of the case's configuration in its configured mode.
Result<test::LinkPair> PairIn(const ModeCase& c) {
  ChannelOptions o = test::OptionsFor(c.config);
  o.poll_mode = c.configured;
  return test::MakePair(o);
}

using ModeParam = std::tuple<std::string, PollMode>;

class PollModeTest : public ::testing::TestWithParam<ModeParam> {};

TEST_P(PollModeTest, StreamArrivesIntact) {
  ChannelOptions o = test::OptionsFor(std::get<0>(GetParam()));
  o.poll_mode = std::get<1>(GetParam());
  auto pair = test::MakePair(o);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  ExpectIntactStream(*pair, (8 << 20) + 333, 21);
}

INSTANTIATE_TEST_SUITE_P(
    TransportModes, PollModeTest,
    ::testing::Combine(::testing::ValuesIn(test::Configs({"fabric/tcp", "fabric/shm", "tcp"})),
                       ::testing::Values(PollMode::kPerformance, PollMode::kEconomy,
                                         PollMode::kAuto)),
    [](const auto& info) {
      return test::ConfigName(std::get<0>(info.param)) + "_" +
             PollModeName(std::get<1>(info.param));
    });

class IdleTest : public ::testing::TestWithParam<std::string> {};

// Both ends of an idle link in economy mode, for one second: well under 0.1 s of CPU each
// (busy-polling would burn close to a second per end).
TEST_P(IdleTest, EconomyModeUsesAlmostNoCpuWhenIdle) {
  ChannelOptions o = test::OptionsFor(GetParam());
  o.poll_mode = PollMode::kEconomy;
  auto pair = test::MakePair(o);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto idle = [](Link& link, double* cpu) {
    double before = ThreadCpuSeconds();
    int64_t end = MonoMs() + 1000;
    while (MonoMs() < end) {
      auto r = link.Wait(static_cast<int>(std::max<int64_t>(1, end - MonoMs())));
      if (!r.ok()) break;
    }
    *cpu = ThreadCpuSeconds() - before;
  };
  double rcpu = 0, scpu = 0;
  std::thread rt([&] { idle(*pair->receiver, &rcpu); });
  idle(*pair->sender, &scpu);
  rt.join();
  EXPECT_TRUE(pair->receiver->status().ok());
  EXPECT_TRUE(pair->sender->status().ok());
  RecordProperty("receiver_cpu_ms", static_cast<int>(rcpu * 1000));
  RecordProperty("sender_cpu_ms", static_cast<int>(scpu * 1000));
  auto wakeups = [](const Link& link) {
    std::vector<pollfd> fds;
    link.WaitFds(&fds);
    return std::to_string(link.stats().polls) + " polls, " + std::to_string(link.stats().sleeps) +
           " sleeps, " + std::to_string(fds.size()) + " wait fds";
  };
  EXPECT_LT(rcpu, 0.1) << "receiver: " << wakeups(*pair->receiver);
  EXPECT_LT(scpu, 0.1) << "sender: " << wakeups(*pair->sender);
}

INSTANTIATE_TEST_SUITE_P(Transport, IdleTest,
                         ::testing::ValuesIn(test::Configs({"fabric/tcp", "fabric/shm", "tcp"})),
                         test::ConfigNamer());

// Auto mode on a link whose polls are memory reads (shm; verbs on a NIC): spins while a stream
// is flowing, sleeps again once it is idle.
class AutoSpinTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AutoSpinTest, AutoModeSpinsUnderLoadAndSleepsWhenIdle) {
  ChannelOptions o = test::OptionsFor(GetParam());
  o.poll_mode = PollMode::kAuto;
  auto pair = test::MakePair(o);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto data = test::RandomBytes(32 << 20, 2);
  test::Checksum got;
  Status rs;
  std::atomic<bool> done{false};
  std::thread rt([&] {
    rs = test::ReceiveAll(*pair->receiver, &got, 60000);
    while (!done && rs.ok()) (void)pair->receiver->Wait(10);
    // Idle for a while: auto mode must fall back to sleeping.
    for (int i = 0; i < 20 && rs.ok(); ++i) (void)pair->receiver->Wait(10);
  });
  Status ss = test::SendAndDrain(*pair->sender, data, 60000);
  done = true;
  rt.join();
  ASSERT_TRUE(ss.ok()) << ss.ToString();
  ASSERT_TRUE(rs.ok()) << rs.ToString();
  EXPECT_EQ(got.value(), test::ChecksumOf(data));
  const LinkStats& st = pair->receiver->stats();
  RecordProperty("receiver_switches", static_cast<int>(st.mode_switches));
  EXPECT_GE(st.mode_switches, 2u) << "never spun under load";
  EXPECT_EQ(st.mode_switches % 2, 0u) << "still spinning after going idle";
}

INSTANTIATE_TEST_SUITE_P(Transport, AutoSpinTest,
                         ::testing::ValuesIn(test::Configs({"fabric/shm"})), test::ConfigNamer());

// Where each poll is a system call (the tcp channel, libfabric's tcp provider), `auto` sleeps
// from setup on, under load too: both ends are in economy mode once connected and never spin
// while a stream flows. An explicit mode is kept.
TEST(TransportPollMode, AutoSleepsWherePollsAreSystemCalls) {
  for (const ModeCase& c : {ModeCase{"fabric/tcp", PollMode::kAuto, PollMode::kEconomy},
                            ModeCase{"tcp", PollMode::kAuto, PollMode::kEconomy},
                            ModeCase{"fabric/shm", PollMode::kAuto, PollMode::kAuto},
                            ModeCase{"fabric/tcp", PollMode::kPerformance,
                                     PollMode::kPerformance}}) {
    SCOPED_TRACE(c.config);
    auto pair = PairIn(c);
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    EXPECT_EQ(pair->sender->poll_mode(), c.expected);
    EXPECT_EQ(pair->receiver->poll_mode(), c.expected);
    if (c.expected != PollMode::kEconomy) continue;
    ExpectIntactStream(*pair, 16 << 20, 8);
    EXPECT_EQ(pair->receiver->stats().mode_switches, 0u);
    EXPECT_EQ(pair->sender->stats().mode_switches, 0u);
    EXPECT_GT(pair->receiver->stats().sleeps, 0u);
  }
}

// The receiver lives on an epoll loop, driven by LoopDriver in economy mode.
// A latency-bound stream does not spin: `auto` becomes `economy` (on shm with a short timed poll
// that backs off while idle); an explicit mode is never changed.
TEST(TransportPollMode, StreamPollModeDependsOnWaitFds) {
  for (const ModeCase& c : {ModeCase{"fabric/tcp", PollMode::kAuto, PollMode::kEconomy},
                            ModeCase{"tcp", PollMode::kAuto, PollMode::kEconomy},
                            ModeCase{"fabric/shm", PollMode::kAuto, PollMode::kEconomy},
                            ModeCase{"fabric/tcp", PollMode::kPerformance,
                                     PollMode::kPerformance}}) {
    SCOPED_TRACE(c.config);
    auto pair = PairIn(c);
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    pair->sender->UseStreamPollMode();
    pair->receiver->UseStreamPollMode();
    EXPECT_EQ(pair->sender->poll_mode(), c.expected);
    EXPECT_EQ(pair->receiver->poll_mode(), c.expected);
    // The link still moves data in the new mode.
    ExpectIntactStream(*pair, 300000, 5);
  }
}

TEST(TransportLoopDriver, ReceiverOnTheEventLoop) {
  for (const char* config : {"fabric/tcp", "fabric/shm", "tcp"}) {
    SCOPED_TRACE(config);
    ChannelOptions o = test::OptionsFor(config);
    o.poll_mode = PollMode::kEconomy;
    auto pair = test::MakePair(o);
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    auto data = test::RandomBytes((6 << 20) + 7, 9);
    test::Checksum got;
    Status rs;
    std::atomic<bool> sender_done{false};
    uint64_t rounds = 0;
    std::thread rt([&] {
      net::EventLoop loop;
      StreamReceiver& r = *pair->receiver;
      LoopDriver driver(&loop, &r, PollMode::kEconomy, 1, [&](Link& link, int) {
        while (true) {
          auto in = r.Peek();
          if (in.empty()) break;
          got.Update(in);
          (void)r.Consume(in.size());
        }
        if (!link.status().ok()) {
          rs = link.status();
          loop.Stop();
        } else if (r.eof() && sender_done) {
          loop.Stop();
        }
      });
      rs = driver.Start();
      if (rs.ok()) loop.Run();
      rounds = driver.rounds();
    });
    Status ss = test::SendAndDrain(*pair->sender, data, 60000);
    sender_done = true;
    rt.join();
    ASSERT_TRUE(ss.ok()) << ss.ToString();
    ASSERT_TRUE(rs.ok()) << rs.ToString();
    EXPECT_EQ(got.value(), test::ChecksumOf(data));
    EXPECT_GT(rounds, 0u);
  }
}

}  // namespace
}  // namespace kv::transport
