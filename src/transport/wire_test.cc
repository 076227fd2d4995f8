#include "transport/wire.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <thread>

#include "net/socket.h"

namespace kv::transport {
namespace {

TEST(TransportWire, ControlMessageRoundTrip) {
  ControlMsg m{MsgType::kChunk, 3, 131072, 0, 1ull << 40, 0xabcdef};
  uint8_t buf[kControlMsgSize];
  EncodeControl(m, buf);
  auto d = DecodeControl({buf, kControlMsgSize}, 0xabcdef);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->type, MsgType::kChunk);
  EXPECT_EQ(d->slot, 3);
  EXPECT_EQ(d->length, 131072u);
  EXPECT_EQ(d->offset, 1ull << 40);
}

TEST(TransportWire, RejectsWrongSizeMagicTypeAndLink) {
  ControlMsg m{MsgType::kCredit, 1, 0, 0, 10, 42};
  uint8_t buf[kControlMsgSize + 1];
  EncodeControl(m, buf);
  EXPECT_EQ(DecodeControl({buf, kControlMsgSize - 1}, 42).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeControl({buf, kControlMsgSize + 1}, 42).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeControl({buf, 0}, 42).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeControl({buf, kControlMsgSize}, 43).status().code(), Code::kCorruption);
  uint8_t bad[kControlMsgSize];
  std::memcpy(bad, buf, kControlMsgSize);
  bad[0] ^= 1;
  EXPECT_EQ(DecodeControl({bad, kControlMsgSize}, 42).status().code(), Code::kCorruption);
  std::memcpy(bad, buf, kControlMsgSize);
  bad[4] = 9;  // type 9
  EXPECT_EQ(DecodeControl({bad, kControlMsgSize}, 42).status().code(), Code::kCorruption);
  bad[4] = 0;
  EXPECT_EQ(DecodeControl({bad, kControlMsgSize}, 42).status().code(), Code::kCorruption);
}

TEST(TransportWire, BlobRoundTripAndErrors) {
  Blob b;
  b.Set("transport", "fabric");
  b.SetU64("slots", 4);
  b.SetBytes("addr", std::string("\x00\x01\xfe\xff", 4));
  auto d = Blob::Decode(b.Encode());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d->Get("transport"), "fabric");
  EXPECT_EQ(*d->GetU64("slots"), 4u);
  EXPECT_EQ(*d->GetBytes("addr"), std::string("\x00\x01\xfe\xff", 4));
  EXPECT_FALSE(d->Get("missing").ok());
  EXPECT_FALSE(Blob::Decode("no newline").ok());
  EXPECT_FALSE(Blob::Decode("=value\n").ok());
  auto bad = Blob::Decode("n=12x\nh=abc\nz=zz\n");
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(bad->GetU64("n").ok());
  EXPECT_FALSE(bad->GetBytes("h").ok());
  EXPECT_FALSE(bad->GetBytes("z").ok());
}

TEST(TransportWire, ExchangeBlobsOverASocketpair) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  net::Fd a(sv[0]), b(sv[1]);
  Result<std::string> other = Status::Internal("");
  std::thread t([&] { other = ExchangeBlobs(b.get(), "from b", 5000); });
  auto mine = ExchangeBlobs(a.get(), std::string(10000, 'a'), 5000);
  t.join();
  ASSERT_TRUE(mine.ok());
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(*mine, "from b");
  EXPECT_EQ(*other, std::string(10000, 'a'));
  // A peer that closes mid-exchange is an error, not a hang.
  b.Reset();
  EXPECT_FALSE(ExchangeBlobs(a.get(), "x", 5000).ok());
}

}  // namespace
}  // namespace kv::transport
