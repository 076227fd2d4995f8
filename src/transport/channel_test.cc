// Streams over real endpoints: fabric over the tcp (MSG) and shm (RDM) providers, and the
// socket channel, two threads per link. Data is checked byte for byte (checksum), in order,
// with every credit back at the end.
#include "transport/channel.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <thread>

#include "common/clock.h"
#include "transport/fabric/fabric_channel.h"
#include "transport/test_util.h"

namespace kv::transport {
namespace {

using test::Checksum;

class ChannelTest : public ::testing::TestWithParam<std::string> {
 protected:
  ChannelOptions Opts() const { return test::OptionsFor(GetParam()); }

  // Streams `data` through a fresh link (or `pair`) and checks what arrives.
  void Transfer(test::LinkPair& pair, std::span<const uint8_t> data, size_t piece = SIZE_MAX,
                int slow_us = 0) {
    Status st = test::Transfer(pair, data, 60000, piece, slow_us);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(pair.receiver->consumed_offset(), data.size());
    EXPECT_EQ(pair.sender->acked_offset(), data.size());
    EXPECT_EQ(pair.sender->committed_offset(), data.size());
    if (auto* f = dynamic_cast<fabric::FabricSender*>(pair.sender.get())) {
      // Every credit came back.
      EXPECT_EQ(f->credits()->free_credits(), f->credits()->slots());
    }
  }
};

TEST_P(ChannelTest, StreamsOfManySizesArriveIdentical) {
  const size_t sizes[] = {1,          2,           63,           4095,        4096,
                          131071,     131072,      131073,       1048575,     1048576,
                          1048577,    3145728 + 17, 9 * 1048576 + 5};
  for (size_t size : sizes) {
    SCOPED_TRACE("size " + std::to_string(size));
    auto pair = test::MakePair(Opts());
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    auto data = test::RandomBytes(size, size);
    Transfer(*pair, data);
  }
}

// Streams `head`, then `body` written from its memory as a registered source region, then
// `tail`, and checks that all of it arrives identical. `zero_copy`: what the region must say of
// itself (nothing checked when unset).
void StreamWithSourceRegion(const std::string& config, std::span<const uint8_t> body,
                            std::optional<bool> zero_copy = std::nullopt) {
  auto pair = test::MakePair(test::OptionsFor(config));
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto head = test::RandomBytes(1000, 1);
  auto tail = test::RandomBytes(70000, 3);
  std::vector<uint8_t> all(head);
  all.insert(all.end(), body.begin(), body.end());
  all.insert(all.end(), tail.begin(), tail.end());
  Checksum got;
  test::BackgroundReceiver rx(*pair->receiver, &got, 60000);
  StreamSender& s = *pair->sender;
  Status ss = SendAll(s, head, 60000);
  {
    auto region = s.RegisterSource(body);
    ASSERT_TRUE(region.ok()) << region.status().ToString();
    if (zero_copy) EXPECT_EQ((*region)->zero_copy(), *zero_copy);
    // Outside the region: refused (fabric) or plainly copied (sockets), never a stray write.
    if (config != "tcp") {
      EXPECT_FALSE(s.WriteFrom(**region, head).ok());
    }
    size_t pos = 0;
    int64_t deadline = MonoMs() + 60000;
    while (ss.ok() && pos < body.size() && MonoMs() < deadline) {
      auto n =
          s.WriteFrom(**region, body.subspan(pos, std::min<size_t>(body.size() - pos, 3 << 20)));
      if (!n.ok()) {
        ss = n.status();
        break;
      }
      pos += *n;
      if (*n == 0) ss = s.Wait(100).status();
    }
    EXPECT_EQ(pos, body.size());
    while (ss.ok() && s.WritesInFlight() && MonoMs() < deadline) ss = s.Wait(10).status();
    EXPECT_FALSE(s.WritesInFlight());
  }  // the region is released before its memory
  if (ss.ok()) ss = test::SendAndDrain(s, tail, 60000);
  Status rs = rx.Finish();
  ASSERT_TRUE(ss.ok()) << ss.ToString();
  ASSERT_TRUE(rs.ok()) << rs.ToString();
  EXPECT_EQ(got.value(), test::ChecksumOf(all));
  EXPECT_EQ(pair->receiver->consumed_offset(), all.size());
}

// A registered source region is written straight from its memory, mixed with staged writes
// before and after it, and arrives identical.
TEST_P(ChannelTest, WritesFromARegisteredSourceRegion) {
  auto body = test::RandomBytes(5 * 1048576 + 333, 2);
  StreamWithSourceRegion(GetParam(), body, GetParam() != "tcp");
}

// The same from a file mapped read-only, as replication sends a saved snapshot. Such memory
// cannot be written, and verbs pins what it registers: libfabric 1.17's verbs turns FI_WRITE
// into IBV_ACCESS_LOCAL_WRITE (which the kernel refuses for pages it cannot write), and the
// kernel pins no page of a read-only MAP_SHARED file mapping at all (EFAULT whatever the
// access). A MAP_PRIVATE mapping (what replication uses) is still written straight from the
// file's pages; a MAP_SHARED one is copied through staging buffers where the provider refuses
// it. Either way the bytes arrive intact.
TEST_P(ChannelTest, WritesFromAReadOnlyFileMapping) {
  auto body = test::RandomBytes(3 * 1048576 + 77, 4);
  char path[] = "/tmp/kvstore-source-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(write(fd, body.data(), body.size()), static_cast<ssize_t>(body.size()));
  for (int flags : {MAP_PRIVATE, MAP_SHARED}) {
    SCOPED_TRACE(flags == MAP_PRIVATE ? "MAP_PRIVATE" : "MAP_SHARED");
    void* map = mmap(nullptr, body.size(), PROT_READ, flags, fd, 0);
    ASSERT_NE(map, MAP_FAILED);
    std::optional<bool> zero_copy;
    if (flags == MAP_PRIVATE) zero_copy = GetParam() != "tcp";
    StreamWithSourceRegion(GetParam(), std::span(static_cast<const uint8_t*>(map), body.size()),
                           zero_copy);
    munmap(map, body.size());
  }
  close(fd);
}

TEST_P(ChannelTest, ManyWritesOfOddSizesFormOneStream) {
  auto pair = test::MakePair(Opts());
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto data = test::RandomBytes(24 << 20, 7);
  Checksum got;
  test::BackgroundReceiver rx(*pair->receiver, &got, 60000);
  // Writes of 1 byte up to 300 KB, as a command stream would produce.
  size_t pos = 0, i = 0;
  Status ss;
  while (pos < data.size() && ss.ok()) {
    size_t n = std::min(data.size() - pos, (i++ * 7919) % 300000 + 1);
    ss = SendAll(*pair->sender, std::span(data).subspan(pos, n), 60000);
    pos += n;
  }
  if (ss.ok()) ss = FinishAndDrain(*pair->sender, 60000);
  Status rs = rx.Finish();
  ASSERT_TRUE(ss.ok()) << ss.ToString();
  ASSERT_TRUE(rs.ok()) << rs.ToString();
  EXPECT_EQ(got.value(), test::ChecksumOf(data));
}

TEST_P(ChannelTest, SlowConsumerNeverOverrunByTheSender) {
  ChannelOptions o = Opts();
  o.max_chunk = 64 * 1024;
  o.min_chunk = 16 * 1024;
  auto pair = test::MakePair(o);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto data = test::RandomBytes(3 << 20, 11);
  const uint64_t window = uint64_t{o.credits} * o.max_chunk;
  Checksum got;
  test::BackgroundReceiver rx(*pair->receiver, &got, 60000, /*piece=*/5000, /*slow_us=*/200);
  size_t pos = 0;
  Status ss;
  uint64_t max_outstanding = 0;
  auto* fs = dynamic_cast<fabric::FabricSender*>(pair->sender.get());
  while (pos < data.size() && ss.ok()) {
    auto w = pair->sender->Write(std::span(data).subspan(pos));
    if (!w.ok()) {
      ss = w.status();
      break;
    }
    pos += *w;
    // Invariants at every step: never more unacknowledged bytes than the ring holds; each
    // slot in exactly one state.
    uint64_t outstanding = pair->sender->committed_offset() - pair->sender->acked_offset();
    max_outstanding = std::max(max_outstanding, outstanding);
    ASSERT_LE(outstanding, window);
    if (fs) {
      const SenderCredits* c = fs->credits();
      using S = SenderCredits::SlotState;
      ASSERT_EQ(c->CountIn(S::kFree) + c->CountIn(S::kWriting) + c->CountIn(S::kWritten) +
                    c->CountIn(S::kDescribed),
                c->slots());
      ASSERT_EQ(c->CountIn(S::kFree), c->free_credits());
    }
    auto r = pair->sender->Wait(100);
    if (!r.ok()) ss = r.status();
  }
  if (ss.ok()) ss = FinishAndDrain(*pair->sender, 60000);
  Status rs = rx.Finish();
  ASSERT_TRUE(ss.ok()) << ss.ToString();
  ASSERT_TRUE(rs.ok()) << rs.ToString();
  EXPECT_EQ(got.value(), test::ChecksumOf(data));
  EXPECT_GT(max_outstanding, 0u);
}

// The link breaks mid-stream; a new link resumes from what the receiver consumed, and the
// bytes the consumer saw over both links are exactly the original stream.
TEST_P(ChannelTest, RebuildResumesFromAcknowledgedOffset) {
  auto data = test::RandomBytes(12 << 20, 3);
  const size_t cut = 5 << 20;
  Checksum got;
  uint64_t resume = 0;
  {
    auto pair = test::MakePair(Opts());
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    std::atomic<bool> stop{false}, reached{false};
    std::thread rt([&] {
      // Consume at most `cut` bytes, then keep polling until the sender breaks the link.
      while (!stop) {
        auto in = pair->receiver->Peek();
        if (!in.empty() && pair->receiver->consumed_offset() < cut) {
          size_t n = std::min<size_t>(in.size(), cut - pair->receiver->consumed_offset());
          got.Update(in.first(n));
          if (!pair->receiver->Consume(n).ok()) break;
          if (pair->receiver->consumed_offset() == cut) reached = true;
          continue;
        }
        if (!pair->receiver->Wait(10).ok()) break;
      }
    });
    // Send what the credits allow until the receiver has consumed `cut`, then fail the link.
    size_t pos = 0;
    int64_t deadline = MonoMs() + 30000;
    Status ss;
    while (!reached && MonoMs() < deadline && ss.ok()) {
      auto w = pair->sender->Write(std::span(data).subspan(pos));
      if (!w.ok()) {
        ss = w.status();
        break;
      }
      pos += *w;
      auto wr = pair->sender->Wait(10);
      if (!wr.ok()) ss = wr.status();
    }
    EXPECT_TRUE(ss.ok()) << ss.ToString();
    EXPECT_TRUE(reached);
    pair->sender->Close();
    uint64_t sender_acked = pair->sender->acked_offset();
    // Stop the receiver before the sender's memory goes: with both ends in one process, shm
    // maps the peer's region into this address space, and polling after it is unmapped crashes
    // inside libfabric (two processes, as replication uses, each keep their own mapping).
    stop = true;
    rt.join();
    pair->sender.reset();
    resume = pair->receiver->consumed_offset();
    ASSERT_EQ(resume, cut);
    // The sender's view never runs ahead of the receiver's.
    EXPECT_LE(sender_acked, resume);
  }
  auto pair = test::MakePair(Opts(), resume);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  ASSERT_EQ(pair->sender->start_offset(), resume);
  test::BackgroundReceiver rx(*pair->receiver, &got, 60000);
  Status ss = test::SendAndDrain(*pair->sender, std::span(data).subspan(resume), 60000);
  Status rs = rx.Finish();
  ASSERT_TRUE(ss.ok()) << ss.ToString();
  ASSERT_TRUE(rs.ok()) << rs.ToString();
  EXPECT_EQ(pair->receiver->consumed_offset(), data.size());
  EXPECT_EQ(got.value(), test::ChecksumOf(data));
}

// 1 GiB, byte-identical (a few seconds per configuration).
TEST_P(ChannelTest, OneGibibyte) {
  auto pair = test::MakePair(Opts());
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto data = test::RandomBytes(1ull << 30, 5);
  Transfer(*pair, data);
}

INSTANTIATE_TEST_SUITE_P(Transport, ChannelTest,
                         ::testing::ValuesIn(test::Configs({"fabric/tcp", "fabric/shm",
                                                            "fabric/tcp;ofi_rxm", "tcp"})),
                         [](const auto& info) { return test::ConfigName(info.param); });

// Chunks that wait together are credited together: a receiver that consumes three ready
// chunks at once sends one credit for the run (fabric), and the sender gets every slot back.
class CreditRunTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CreditRunTest, ReadyChunksAreCreditedInOneMessage) {
  ChannelOptions o = test::OptionsFor(GetParam());
  o.max_chunk = 4096;
  auto pair = test::MakePair(o);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto* tx = dynamic_cast<fabric::FabricSender*>(pair->sender.get());
  auto* rx = dynamic_cast<fabric::FabricReceiver*>(pair->receiver.get());
  ASSERT_TRUE(tx && rx);
  auto data = test::RandomBytes(3 * 4096, 3);
  for (int i = 0; i < 3; i++) {
    auto n = tx->Write(std::span(data).subspan(i * 4096, 4096));
    ASSERT_TRUE(n.ok() && *n == 4096);
  }
  int64_t deadline = MonoMs() + 10000;
  while (rx->slots()->filled() < 3 && MonoMs() < deadline) {
    ASSERT_TRUE(rx->Progress().ok());
    ASSERT_TRUE(tx->Progress().ok());
  }
  ASSERT_EQ(rx->slots()->filled(), 3u);
  auto front = rx->Peek();
  ASSERT_EQ(front.size(), 4096u);
  EXPECT_TRUE(std::equal(front.begin(), front.end(), data.begin()));
  // One Consume takes all three chunks: three slots freed in a row.
  ASSERT_TRUE(rx->Consume(data.size()).ok());
  while (!tx->credits()->Idle() && MonoMs() < deadline) {
    ASSERT_TRUE(tx->Progress().ok());
    ASSERT_TRUE(rx->Progress().ok());
  }
  EXPECT_TRUE(tx->credits()->Idle());
  EXPECT_EQ(tx->acked_offset(), data.size());
  EXPECT_EQ(tx->stats().credit_msgs, 1u);
}

INSTANTIATE_TEST_SUITE_P(Transport, CreditRunTest,
                         ::testing::ValuesIn(test::Configs({"fabric/tcp", "fabric/shm"})),
                         [](const auto& info) { return test::ConfigName(info.param.substr(7)); });

TEST(TransportChannelSetup, UnknownTransportAndProviderAreErrors) {
  ChannelOptions o;
  o.transport = "carrier-pigeon";
  EXPECT_FALSE(CreateSender(o).ok());
  o.transport = "fabric";
  o.provider = "nonsense";
  auto s = CreateSender(o);
  ASSERT_TRUE(s.ok());
  auto blob = (*s)->LocalBlob();
  EXPECT_FALSE(blob.ok());
  EXPECT_NE(blob.status().message().find("unknown fabric provider"), std::string::npos);
}

TEST(TransportChannelSetup, VerbsIsAbsentHereAndSaysSo) {
  ChannelOptions o;
  o.provider = "verbs";
  auto r = CreateReceiver(o, 0);
  ASSERT_TRUE(r.ok());
  auto blob = (*r)->LocalBlob();
  // On a machine with an RDMA NIC this succeeds; here it must fail cleanly, not crash.
  if (!blob.ok()) {
    EXPECT_NE(blob.status().message().find("verbs"), std::string::npos);
  }
}

}  // namespace
}  // namespace kv::transport
