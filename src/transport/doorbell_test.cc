// The doorbell of receivers without a completion fd (shm): a receiver that sleeps only on its
// WaitFds() with a long timeout gets every chunk without one timing out (the sender rings);
// with a sender that rings none it keeps polling; a name that is not a kvstore doorbell is
// refused by the sender.
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <thread>

#include "transport/channel.h"
#include "transport/fabric/doorbell.h"
#include "transport/test_util.h"
#include "transport/wire.h"

namespace kv::transport {
namespace {

TEST(TransportDoorbell, ShmReceiverSleepsOnlyOnItsDoorbell) {
  ChannelOptions o = test::OptionsFor("fabric/shm");
  o.poll_mode = PollMode::kEconomy;
  auto pair = test::MakePair(o);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  StreamReceiver& rx = *pair->receiver;
  std::vector<pollfd> fds;
  rx.WaitFds(&fds);
  ASSERT_EQ(fds.size(), 1u);

  constexpr int kMessages = 100;
  constexpr size_t kSize = 100;
  std::atomic<bool> stop{false};
  Status sent;
  std::thread tx([&] {
    StreamSender& s = *pair->sender;
    auto msg = test::RandomBytes(kSize, 5);
    for (int i = 0; i < kMessages && sent.ok() && !stop; i++) {
      sent = SendAll(s, msg, 10000);
      if (sent.ok()) sent = s.Progress().status();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Credits keep coming until the receiver is done.
    while (!stop && sent.ok()) sent = s.Wait(10).status();
  });
  size_t got = 0;
  int timeouts = 0, sleeps = 0;
  Status received;
  while (got < kMessages * kSize && timeouts == 0 && received.ok()) {
    received = rx.Progress().status();
    for (auto span = rx.Peek(); !span.empty() && received.ok(); span = rx.Peek()) {
      got += span.size();
      received = rx.Consume(span.size());
    }
    if (!received.ok() || got == kMessages * kSize || !rx.ArmWait()) continue;
    // No timed polling: a chunk whose ring never came would leave this asleep for 5 s.
    sleeps++;
    if (poll(fds.data(), fds.size(), 5000) == 0) timeouts++;
  }
  stop = true;
  tx.join();
  EXPECT_TRUE(received.ok()) << received.ToString();
  EXPECT_EQ(timeouts, 0);
  EXPECT_GT(sleeps, 0);  // it did sleep on the doorbell, and woke each time
  EXPECT_EQ(got, kMessages * kSize);
  EXPECT_TRUE(sent.ok() || sent.code() == Code::kClosed) << sent.ToString();
}

TEST(TransportDoorbell, ReceiverOfASenderThatRingsNoneKeepsPolling) {
  ChannelOptions o = test::OptionsFor("fabric/shm");
  auto rx = CreateReceiver(o, 0);
  auto tx = CreateSender(o);
  ASSERT_TRUE(rx.ok() && tx.ok());
  auto rblob = (*rx)->LocalBlob();
  auto sblob = Blob::Decode(*(*tx)->LocalBlob());
  ASSERT_TRUE(rblob.ok() && sblob.ok());
  ASSERT_TRUE(Blob::Decode(*rblob)->Get("doorbell").ok());
  ASSERT_TRUE(sblob->GetU64("rings").ok());
  // The sender as a kvstore without doorbells: its blob says no "rings", and it takes no
  // notice of the receiver's doorbell (nor may this one try to reach it: the receiver closes
  // its doorbell once it sees a sender that rings none).
  Blob old;
  for (const char* key : {"transport", "role", "provider", "ep", "addr_format", "addr",
                          "data_addr", "pid"}) {
    if (auto v = sblob->Get(key); v.ok()) old.Set(key, *v);
  }
  auto unrung = Blob::Decode(*rblob);
  unrung->Erase("doorbell");
  Status rs;
  std::thread t([&] { rs = (*rx)->Connect(old.Encode()); });
  Status ss = (*tx)->Connect(unrung->Encode());
  t.join();
  ASSERT_TRUE(ss.ok()) << ss.ToString();
  ASSERT_TRUE(rs.ok()) << rs.ToString();
  std::vector<pollfd> fds;
  (*rx)->WaitFds(&fds);
  EXPECT_TRUE(fds.empty());
  // It polls on a timer instead, and the stream still arrives.
  auto data = test::RandomBytes(1 << 20, 9);
  test::Checksum got;
  test::BackgroundReceiver bg(**rx, &got, 30000);
  Status sent = test::SendAndDrain(**tx, data, 30000);
  Status received = bg.Finish();
  ASSERT_TRUE(sent.ok()) << sent.ToString();
  ASSERT_TRUE(received.ok()) << received.ToString();
  EXPECT_EQ(got.value(), test::ChecksumOf(data));
}

TEST(TransportDoorbell, ANameThatIsNoKvstoreDoorbellIsRefused) {
  ChannelOptions o = test::OptionsFor("fabric/shm");
  auto rx = CreateReceiver(o, 0);
  ASSERT_TRUE(rx.ok());
  auto blob = Blob::Decode(*(*rx)->LocalBlob());
  ASSERT_TRUE(blob.ok());
  for (const char* name : {"", "x", "kvstore-doorbell-", "kvstore-doorbell-../../run/x",
                           "systemd-notify", "kvstore-doorbell-0123456789abcdef0123456789abcdef"
                           "0123456789abcdef"}) {
    blob->Set("doorbell", name);
    auto tx = CreateSender(o);
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE((*tx)->LocalBlob().ok());
    Status s = (*tx)->Connect(blob->Encode());
    EXPECT_EQ(s.code(), Code::kCorruption) << name << ": " << s.ToString();
    EXPECT_NE(s.message().find("doorbell"), std::string::npos) << s.ToString();
  }
}

TEST(TransportDoorbell, RingsWakeTheListener) {
  auto bell = fabric::DoorbellListener::Open();
  ASSERT_TRUE(bell.ok()) << bell.status().ToString();
  EXPECT_FALSE(bell->Drain());
  auto ringer = fabric::DoorbellRinger::Connect(bell->name());
  ASSERT_TRUE(ringer.ok()) << ringer.status().ToString();
  // More rings than one receive call takes: one Drain() still takes them all.
  for (int rings : {3, 40}) {
    for (int i = 0; i < rings; i++) ringer->Ring();
    pollfd p{bell->fd(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 5000), 1);
    EXPECT_TRUE(bell->Drain());
    EXPECT_FALSE(bell->Drain());
    EXPECT_EQ(poll(&p, 1, 0), 0);
  }
}

}  // namespace
}  // namespace kv::transport
