// The primary's end of a data link (DataLinkSender) against a real receiver over libfabric's
// tcp and shm providers: stream bytes enqueued and kicked from several threads at once, as the
// poll groups do, arrive whole and in order.
#include "repl/datalink/data_link.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "transport/channel.h"
#include "transport/test_providers.h"

namespace kv::repl {
namespace {

// Record `seq` of the stream: its number and a body whose length and bytes follow from it, so
// that a lost, repeated or misplaced piece shows at the first byte that differs.
std::string Record(uint64_t seq) {
  std::string r = std::to_string(seq) + ":";
  size_t len = 1 + (seq * 2654435761u) % 3000;
  for (size_t i = 0; i < len; i++) r += static_cast<char>('a' + (seq + i) % 26);
  r += '\n';
  return r;
}

class DataLinkSenderTest : public ::testing::TestWithParam<std::string> {};

// A tiny ring (2 slots of 4 KiB) makes the kicking threads run out of credits over and over
// while others enqueue: what a kick could not write must stay queued, ahead of what came after.
TEST_P(DataLinkSenderTest, ConcurrentKicksLoseNoStreamBytes) {
  transport::ChannelOptions o = DataLinkOptions(GetParam());
  o.credits = 2;
  o.min_chunk = o.max_chunk = 4096;
  std::string sender_blob;
  auto sender = DataLinkSender::Create(o, &sender_blob);
  ASSERT_TRUE(sender.ok()) << sender.status().ToString();
  auto rx = transport::CreateReceiver(o, 0);
  ASSERT_TRUE(rx.ok()) << rx.status().ToString();
  auto rx_blob = (*rx)->LocalBlob();
  ASSERT_TRUE(rx_blob.ok()) << rx_blob.status().ToString();
  (*sender)->Start(*rx_blob);
  Status connected = (*rx)->Connect(sender_blob);
  ASSERT_TRUE(connected.ok()) << connected.ToString();

  constexpr uint64_t kRecords = 40000;
  std::string expected;
  std::vector<std::string> records;
  for (uint64_t i = 0; i < kRecords; i++) {
    records.push_back(Record(i));
    expected += records.back();
  }

  // Enqueue calls are ordered by a lock (the keyspace lock in the server); Kick comes after it.
  std::mutex order;
  uint64_t next = 0;
  std::vector<std::thread> writers;
  for (int t = 0; t < 3; t++) {
    writers.emplace_back([&] {
      for (;;) {
        {
          std::lock_guard lock(order);
          if (next == kRecords) return;
          (*sender)->Enqueue(records[next++]);
        }
        (*sender)->Kick();
      }
    });
  }

  size_t got = 0;
  std::string mismatch;
  int64_t deadline = MonoMs() + 60000;
  while (got < expected.size() && mismatch.empty() && MonoMs() < deadline) {
    auto span = (*rx)->Peek();
    if (span.empty()) {
      auto w = (*rx)->Wait(10);
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      continue;
    }
    size_t n = std::min(span.size(), expected.size() - got);
    if (std::string_view(reinterpret_cast<const char*>(span.data()), n) !=
        std::string_view(expected).substr(got, n)) {
      size_t at = 0;
      while (at < n && static_cast<char>(span[at]) == expected[got + at]) at++;
      mismatch = "stream differs at byte " + std::to_string(got + at) + " of " +
                 std::to_string(expected.size());
      break;
    }
    got += n;
    ASSERT_TRUE((*rx)->Consume(n).ok());
    if (got % 7 == 0) std::this_thread::yield();  // now and then a slower consumer
  }
  for (auto& w : writers) w.join();
  EXPECT_EQ(mismatch, "");
  EXPECT_EQ(got, expected.size()) << "stream bytes missing";
  EXPECT_FALSE((*sender)->failed()) << (*sender)->error();
  sender->reset();  // closes the link before the receiver goes (on shm both share its queues)
}

INSTANTIATE_TEST_SUITE_P(Providers, DataLinkSenderTest,
                         ::testing::ValuesIn(transport::test::WithVerbs({"tcp", "shm"}, {"verbs"})),
                         transport::test::ConfigNamer());

}  // namespace
}  // namespace kv::repl
