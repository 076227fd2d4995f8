// A peer that lies: real endpoints driven by hand to send malformed or malicious control
// messages. The honest end must close the link with a clear error, expose no data, and never
// touch memory outside its ring.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <optional>
#include <thread>

#include "common/clock.h"
#include "net/socket.h"
#include "transport/channel.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric_channel.h"
#include "transport/test_util.h"
#include "transport/wire.h"

namespace kv::transport {
namespace {

using fabric::FabricContext;

// A hand-driven fabric sender: connects to a real FabricReceiver, then says whatever the test
// wants on the control endpoint and in the immediate data of its writes.
class HostileFabricPeer : public fabric::ControlPlane::Handler {
 public:
  Status Start(const ChannelOptions& opts, StreamReceiver& receiver) {
    auto rblob = receiver.LocalBlob();
    if (!rblob.ok()) return rblob.status();
    auto b = Blob::Decode(*rblob);
    auto ctx = FabricContext::Open(fabric::ToFabricOptions(opts), false);
    if (!ctx.ok()) return ctx.status();
    ctx_ = std::move(*ctx);
    link_id_ = *b->GetU64("link_id");
    ring_base_ = *b->GetU64("ring_base");
    ring_key_ = *b->GetU64("ring_key");
    slot_stride_ = *b->GetU64("slot_stride");
    ring_bytes_ = slot_stride_ * *b->GetU64("slots");
    slot_size_ = *b->GetU64("slot_size");
    auto peer = fabric::GetPeerAddress(*b);
    if (!peer.ok()) return peer.status();
    auto raw = fabric::RegisteredSlots::Create(*ctx_, 4096, 2, FI_SEND | FI_WRITE);
    if (!raw.ok()) return raw.status();
    raw_ = std::move(*raw);
    if (Status s = control_.Init(ctx_.get(), link_id_, 8, 8); !s.ok()) return s;

    auto mine = ctx_->LocalAddress();
    Blob hb;
    hb.Set("transport", "fabric");
    hb.Set("role", "sender");
    fabric::PutPeerAddress(hb, *mine);
    Status rc;
    std::thread t([&] { rc = receiver.Connect(hb.Encode()); });
    Status s = ctx_->Connect(*peer, link_id_, 10000,
                             [this](fid_ep* ep, bool data) {
                               return control_.PostAllRecvs(ep, data);
                             });
    t.join();
    return s.ok() ? rc : s;
  }

  void SendMsg(ControlMsg m) {
    control_.Queue(m);
    ASSERT_TRUE(control_.Flush().ok());
  }
  // Sends arbitrary bytes as one message (posted by Poll(): shm answers EAGAIN until the
  // receiver has progressed its side of the lazy peer mapping).
  void SendRaw(const std::string& bytes) {
    std::memcpy(raw_.slot(0), bytes.data(), bytes.size());
    raw_len_ = bytes.size();
  }
  // RDMA-writes `len` bytes at `offset` from the start of the receiver's ring; with `imm`, the
  // write carries it as remote CQ data (the chunk description).
  ssize_t WriteAt(uint64_t offset, size_t len, std::optional<uint64_t> imm = std::nullopt) {
    std::memset(raw_.slot(1), 0xab, len);
    raw_op_.kind = fabric::OpContext::Kind::kWrite;
    uint64_t flags = FI_DELIVERY_COMPLETE | FI_COMPLETION | (imm ? FI_REMOTE_CQ_DATA : 0);
    return ctx_->PostWrite(raw_.slot(1), len, raw_.desc(), ring_base_ + offset, ring_key_,
                           &raw_op_, flags, imm.value_or(0));
  }
  // Writes a chunk described by `imm` (whatever it says) into slot 0, retrying while the
  // provider is busy (on shm until the receiver has progressed its side of the peer mapping).
  void WriteChunk(StreamReceiver& receiver, uint64_t imm, size_t len = 10) {
    ssize_t r;
    int64_t deadline = MonoMs() + 5000;
    while ((r = WriteAt(0, len, imm)) == -FI_EAGAIN && MonoMs() < deadline) {
      (void)receiver.Wait(1);
      (void)Poll();
    }
    ASSERT_EQ(r, 0) << fabric::FiStrerror(static_cast<int>(-r));
    // Our own completion, so that the next write may reuse the staging buffer.
    int before = done_;
    deadline = MonoMs() + 5000;
    while (done_ == before && MonoMs() < deadline && receiver.status().ok()) {
      (void)receiver.Wait(1);
      if (!Poll().ok()) break;
    }
  }
  // Polls our side once: completions of our raw operations and messages from the receiver.
  Result<int> Poll() {
    if (raw_len_ > 0) {
      raw_op_.kind = fabric::OpContext::Kind::kWrite;
      ssize_t r = fi_send(ctx_->ctrl_ep(), raw_.slot(0), raw_len_, raw_.desc(), ctx_->peer(),
                          &raw_op_);
      if (r == 0) raw_len_ = 0;
      EXPECT_TRUE(r == 0 || r == -FI_EAGAIN) << fabric::FiStrerror(static_cast<int>(-r));
    }
    return control_.Poll(16, *this);
  }

  Status OnMessage(const ControlMsg&) override { return Status::Ok(); }
  Status OnRemoteWrite(uint64_t) override { return Status::Ok(); }
  Status OnWriteDone(fabric::OpContext*) override {
    ++done_;
    return Status::Ok();
  }

  const FabricContext& ctx() const { return *ctx_; }
  uint64_t ring_bytes() const { return ring_bytes_; }
  uint64_t slot_size() const { return slot_size_; }
  int done() const { return done_; }

 private:
  std::unique_ptr<FabricContext> ctx_;
  fabric::RegisteredSlots raw_;
  fabric::ControlPlane control_;
  fabric::OpContext raw_op_;
  uint64_t link_id_ = 0, ring_base_ = 0, ring_key_ = 0, ring_bytes_ = 0, slot_size_ = 0;
  uint64_t slot_stride_ = 0;
  int done_ = 0;
  size_t raw_len_ = 0;
};

// Polls the receiver (and the hostile peer, which must drive its own progress) until the
// receiver's link fails; returns its status.
Status AwaitFailure(StreamReceiver& r, HostileFabricPeer& h) {
  int64_t deadline = MonoMs() + 10000;
  while (r.status().ok() && MonoMs() < deadline) {
    (void)r.Wait(5);
    (void)h.Poll();
  }
  return r.status();
}

class HostileFabricTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    opts_ = test::OptionsFor(GetParam());
    opts_.max_chunk = 64 * 1024;
    auto r = CreateReceiver(opts_, 0);
    ASSERT_TRUE(r.ok());
    receiver_ = std::move(*r);
    Status s = peer_.Start(opts_, *receiver_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void ExpectRejected(const std::string& what) {
    Status s = AwaitFailure(*receiver_, peer_);
    EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
    EXPECT_NE(s.message().find(what), std::string::npos) << s.ToString();
    EXPECT_TRUE(receiver_->Peek().empty());
    EXPECT_EQ(receiver_->consumed_offset(), 0u);
  }

  ChannelOptions opts_;
  std::unique_ptr<StreamReceiver> receiver_;
  HostileFabricPeer peer_;
};

TEST_P(HostileFabricTest, UnknownSlot) {
  peer_.WriteChunk(*receiver_, EncodeChunkImm(99, 10));
  ExpectRejected("unknown slot");
}

TEST_P(HostileFabricTest, LengthBeyondTheSlot) {
  peer_.WriteChunk(*receiver_, EncodeChunkImm(0, static_cast<uint32_t>(peer_.slot_size() + 1)));
  ExpectRejected("length");
}

TEST_P(HostileFabricTest, MalformedImmediateData) {
  if (peer_.ctx().cq_data_size() < 8) {
    // verbs carries 4 bytes of immediate data: the bits this test sets cannot reach the
    // receiver, which reads the 32 bits that arrive like any other chunk description.
    GTEST_SKIP() << "provider " << peer_.ctx().provider() << " carries "
                 << peer_.ctx().cq_data_size() << " bytes of CQ data";
  }
  peer_.WriteChunk(*receiver_, uint64_t{1} << 40 | 10);
  ExpectRejected("malformed immediate");
}

TEST_P(HostileFabricTest, SlotWithoutCredit) {
  peer_.WriteChunk(*receiver_, EncodeChunkImm(0, 10));
  peer_.WriteChunk(*receiver_, EncodeChunkImm(0, 10));  // slot 0 not consumed: no credit
  ExpectRejected("credit");
}

TEST_P(HostileFabricTest, ChunkMessageInsteadOfImmediateData) {
  peer_.SendMsg({MsgType::kChunk, 0, 10, 0, 0, 0});
  ExpectRejected("sender sent a chunk");
}

TEST_P(HostileFabricTest, CreditFromTheSender) {
  peer_.SendMsg({MsgType::kCredit, 0, 0, 0, 0, 0});
  ExpectRejected("sender sent a credit");
}

TEST_P(HostileFabricTest, GarbageOfTheWrongSize) {
  peer_.SendRaw("garbage");
  ExpectRejected("7 bytes");
}

TEST_P(HostileFabricTest, WrongMagic) {
  peer_.SendRaw(std::string(kControlMsgSize, 'x'));
  ExpectRejected("magic");
}

TEST_P(HostileFabricTest, OversizedMessageFailsTheLink) {
  peer_.SendRaw(std::string(1000, 'x'));
  Status s = AwaitFailure(*receiver_, peer_);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(receiver_->Peek().empty());
}

// The ring's registration bounds what a peer can write: a write that runs past its end must
// not complete successfully. Measured with libfabric 1.17: tcp fails it (and the connection);
// shm never completes it (the sender's stall timeout then closes the link); the bytes inside
// the ring are not touched either way, and the guard page behind the ring is never written
// (that would crash this process).
TEST_P(HostileFabricTest, WritePastTheRingNeverLands) {
  ssize_t r;
  int64_t post_deadline = MonoMs() + 5000;
  while ((r = peer_.WriteAt(peer_.ring_bytes() - 8, 64)) == -FI_EAGAIN &&
         MonoMs() < post_deadline) {
    (void)receiver_->Wait(1);
    (void)peer_.Poll();
  }
  EXPECT_NE(r, -FI_EAGAIN);
  if (r == 0) {
    int64_t deadline = MonoMs() + 2000;
    Result<int> p = 0;
    while (MonoMs() < deadline) {
      (void)receiver_->Wait(5);
      p = peer_.Poll();
      if (!p.ok() || peer_.done() > 0) break;
    }
    EXPECT_EQ(peer_.done(), 0) << "the provider completed a write past the registered ring";
    RecordProperty("outcome", p.ok() ? "no completion" : p.status().ToString());
  } else {
    RecordProperty("outcome", fabric::FiStrerror(static_cast<int>(-r)));
  }
  auto ring = dynamic_cast<fabric::FabricReceiver*>(receiver_.get())->ring_memory();
  for (size_t i = ring.size() - 8; i < ring.size(); ++i) EXPECT_EQ(ring[i], 0) << i;
  EXPECT_TRUE(receiver_->Peek().empty());
}

INSTANTIATE_TEST_SUITE_P(TransportHostile, HostileFabricTest,
                         ::testing::ValuesIn(test::Configs({"fabric/tcp", "fabric/shm"})),
                         [](const auto& info) { return test::ConfigName(info.param.substr(7)); });

// The socket channel, lied to over a raw socket.
class TransportHostileTcp : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_ = test::OptionsFor("tcp");
    opts_.max_chunk = 64 * 1024;
    auto r = CreateReceiver(opts_, 0);
    ASSERT_TRUE(r.ok());
    receiver_ = std::move(*r);
    auto blob = Blob::Decode(*receiver_->LocalBlob());
    link_id_ = *blob->GetU64("link_id");
    int port = static_cast<int>(*blob->GetU64("port"));
    Status rc;
    std::thread t([&] { rc = receiver_->Connect("transport=tcp\nrole=sender\n"); });
    auto fd = net::ConnectTcp("127.0.0.1", port, 5000);
    ASSERT_TRUE(fd.ok());
    fd_ = std::move(*fd);
    ASSERT_EQ(::send(fd_.get(), &link_id_, 8, MSG_NOSIGNAL), 8);
    t.join();
    ASSERT_TRUE(rc.ok()) << rc.ToString();
  }
  void Send(ControlMsg m) {
    m.link_id = link_id_;
    uint8_t buf[kControlMsgSize];
    EncodeControl(m, buf);
    ASSERT_EQ(::send(fd_.get(), buf, sizeof(buf), MSG_NOSIGNAL), (ssize_t)sizeof(buf));
  }
  Status AwaitFailure() {
    int64_t deadline = MonoMs() + 10000;
    while (receiver_->status().ok() && MonoMs() < deadline) (void)receiver_->Wait(10);
    return receiver_->status();
  }

  ChannelOptions opts_;
  std::unique_ptr<StreamReceiver> receiver_;
  net::Fd fd_;
  uint64_t link_id_ = 0;
};

TEST_F(TransportHostileTcp, ChunkLongerThanAllowed) {
  Send({MsgType::kChunk, 0, 64 * 1024 + 1, 0, 0, 0});
  EXPECT_EQ(AwaitFailure().code(), Code::kCorruption);
}

TEST_F(TransportHostileTcp, OffsetOutOfOrder) {
  Send({MsgType::kChunk, 0, 10, 0, 77, 0});
  EXPECT_EQ(AwaitFailure().code(), Code::kCorruption);
}

TEST_F(TransportHostileTcp, OtherLinksMessage) {
  uint8_t buf[kControlMsgSize];
  EncodeControl({MsgType::kChunk, 0, 10, 0, 0, link_id_ + 1}, buf);
  ASSERT_EQ(::send(fd_.get(), buf, sizeof(buf), MSG_NOSIGNAL), (ssize_t)sizeof(buf));
  EXPECT_EQ(AwaitFailure().code(), Code::kCorruption);
}

TEST_F(TransportHostileTcp, PeerVanishesMidChunk) {
  Send({MsgType::kChunk, 0, 1000, 0, 0, 0});
  ASSERT_EQ(::send(fd_.get(), "abc", 3, MSG_NOSIGNAL), 3);
  fd_.Reset();
  EXPECT_EQ(AwaitFailure().code(), Code::kClosed);
}

// A lying receiver: acknowledges bytes that were never sent.
TEST(TransportHostileTcpReceiver, AckBeyondWhatWasSentIsRejected) {
  ChannelOptions o = test::OptionsFor("tcp");
  auto s = CreateSender(o);
  ASSERT_TRUE(s.ok());
  auto l = net::ListenTcp("127.0.0.1", 0, 1);
  ASSERT_TRUE(l.ok());
  Blob b;
  b.Set("transport", "tcp");
  b.Set("role", "receiver");
  b.Set("host", "127.0.0.1");
  b.SetU64("port", net::LocalPort(l->get()));
  b.SetU64("link_id", 5);
  b.SetU64("offset", 0);
  ASSERT_TRUE((*s)->Connect(b.Encode()).ok());
  pollfd p{l->get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  auto c = net::AcceptTcp(l->get());
  ASSERT_TRUE(c.ok());
  uint8_t buf[kControlMsgSize];
  EncodeControl({MsgType::kCredit, 0, 0, 0, 1000, 5}, buf);
  ASSERT_EQ(::send(c->get(), buf, sizeof(buf), MSG_NOSIGNAL), (ssize_t)sizeof(buf));
  int64_t deadline = MonoMs() + 10000;
  while ((*s)->status().ok() && MonoMs() < deadline) (void)(*s)->Wait(10);
  EXPECT_EQ((*s)->status().code(), Code::kCorruption) << (*s)->status().ToString();
}

}  // namespace
}  // namespace kv::transport
