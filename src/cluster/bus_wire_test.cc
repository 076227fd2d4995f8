#include "cluster/bus_wire.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cluster/bus_wire_test_util.h"
#include "cluster/redis_node_test_util.h"

namespace kv::cluster {
namespace {

using test_util::Clock;
using test_util::Connect;
using test_util::Fd;
using test_util::kRedisServer;
using test_util::Listen;
using test_util::MutateBusMessage;
using test_util::RandomBusMessage;
using test_util::RandomHexName;
using test_util::RedisClusterNode;
using test_util::Reply;
using test_util::SendAll;

uint64_t BeAt(const std::string& b, size_t at, int len) {
  uint64_t v = 0;
  for (int i = 0; i < len; i++) v = v << 8 | static_cast<uint8_t>(b[at + i]);
  return v;
}

void SetBe(std::string& b, size_t at, uint64_t v, int len) {
  for (int i = 0; i < len; i++) b[at + i] = static_cast<char>(v >> (8 * (len - 1 - i)));
}

const MsgType kAllTypes[] = {
    MsgType::kPing,
    MsgType::kPong,
    MsgType::kMeet,
    MsgType::kFail,
    MsgType::kPublish,
    MsgType::kFailoverAuthRequest,
    MsgType::kFailoverAuthAck,
    MsgType::kUpdate,
    MsgType::kMfStart,
    MsgType::kModule,
    MsgType::kPublishShard,
};

// A header as a primary with a few slots would send it.
BusHeader SampleHeader(MsgType type) {
  BusHeader h;
  h.type = type;
  h.port = 7000;
  h.current_epoch = 0x0102030405060708;
  h.config_epoch = 42;
  h.offset = 123456789;
  h.sender = "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca";
  h.myslots.set(0);
  h.myslots.set(9);
  h.myslots.set(kClusterSlots - 1);
  h.myip = "127.0.0.1";
  h.pport = 0;
  h.cport = 17000;
  h.flags = kFlagMaster | kFlagMyself;
  h.state = 0;
  return h;
}

GossipEntry SampleGossip(int i) {
  GossipEntry g;
  g.name = std::string(kNameLen, static_cast<char>('a' + i));
  g.ping_sent_s = 1700000000 + i;
  g.pong_received_s = 1700000100 + i;
  g.ip = "10.1.2." + std::to_string(i);
  g.port = 7001 + i;
  g.cport = 17001 + i;
  g.pport = 6001 + i;
  g.flags = kFlagReplica | kFlagPFail;
  return g;
}

BusMessage SamplePing(int gossip, std::string hostname) {
  BusMessage m;
  m.hdr = SampleHeader(MsgType::kPing);
  for (int i = 0; i < gossip; i++) m.gossip.push_back(SampleGossip(i));
  m.hostname = std::move(hostname);
  if (!m.hostname.empty()) m.hdr.mflags[0] = kMsgFlag0ExtData;
  return m;
}

BusMessage SampleOf(MsgType type) {
  BusMessage m;
  m.hdr = SampleHeader(type);
  switch (type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      m = SamplePing(3, "node-1.example.com");
      m.hdr.type = type;
      break;
    case MsgType::kFail:
      m.fail_about = "0123456789012345678901234567890123456789";
      break;
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      m.publish = {"news", std::string("hello\0world", 11)};
      break;
    case MsgType::kUpdate:
      m.update.config_epoch = 7;
      m.update.name = "fedcba9876543210fedcba9876543210fedcba98";
      for (int s = 100; s < 200; s++) m.update.slots.set(s);
      break;
    case MsgType::kModule:
      m.module = {0x1122334455667788, 3, "module payload"};
      break;
    case MsgType::kFailoverAuthRequest:
      m.hdr.replicaof = "1111111111111111111111111111111111111111";
      m.hdr.flags = kFlagReplica | kFlagMyself;
      m.hdr.mflags[0] = kMsgFlag0ForceAck;
      break;
    case MsgType::kFailoverAuthAck:
      break;
    case MsgType::kMfStart:
      m.hdr.replicaof = "2222222222222222222222222222222222222222";
      break;
  }
  return m;
}

// Sizes and offsets as Redis 7.0's cluster.h declares them (its static_asserts on clusterMsg).
TEST(BusWire, SizesAreRedis70s) {
  EXPECT_EQ(kBusHeaderLen, 2256u);   // offsetof(clusterMsg, data)
  EXPECT_EQ(kGossipEntryLen, 104u);  // sizeof(clusterMsgDataGossip)
  EXPECT_EQ(kUpdateBodyLen, 2096u);  // sizeof(clusterMsgDataUpdate)
  EXPECT_EQ(kPingExtHeaderLen, 8u);  // sizeof(clusterMsgPingExt)
  // totlen as clusterBuildMessageHdr, clusterSendPublish and clusterSendModule compute it.
  EXPECT_EQ(Encode(SampleOf(MsgType::kFail)).size(), 2296u);
  EXPECT_EQ(Encode(SampleOf(MsgType::kUpdate)).size(), 4352u);
  EXPECT_EQ(Encode(SampleOf(MsgType::kFailoverAuthRequest)).size(), 2256u);
  EXPECT_EQ(Encode(SampleOf(MsgType::kFailoverAuthAck)).size(), 2256u);
  EXPECT_EQ(Encode(SampleOf(MsgType::kMfStart)).size(), 2256u);
  EXPECT_EQ(Encode(SampleOf(MsgType::kPublish)).size(), 2256u + 8 + 4 + 11);
  EXPECT_EQ(Encode(SampleOf(MsgType::kModule)).size(), 2256u + 13 + 14);
}

TEST(BusWire, PingLengthsAsClusterSendPingComputes) {
  // Header + 104 per gossip entry + the hostname extension: 8 bytes of extension header, then
  // the hostname and its NUL padded to a multiple of 8.
  for (int n : {0, 1, 3, 10}) {
    EXPECT_EQ(Encode(SamplePing(n, "")).size(), 2256u + 104 * n);
    EXPECT_EQ(Encode(SamplePing(n, "abcdefg")).size(), 2256u + 104 * n + 8 + 8);
    EXPECT_EQ(Encode(SamplePing(n, "abcdefgh")).size(), 2256u + 104 * n + 8 + 16);
    EXPECT_EQ(Encode(SamplePing(n, "a")).size(), 2256u + 104 * n + 8 + 8);
  }
}

TEST(BusWire, HeaderFieldsAtRedisOffsets) {
  BusMessage m = SamplePing(2, "h.example");
  m.hdr.replicaof = "r123456789r123456789r123456789r123456789";
  m.hdr.pport = 6380;
  m.hdr.state = 1;
  m.hdr.mflags = {kMsgFlag0Paused, 0x5a, 0xa5};
  std::string b = Encode(m);
  const size_t ext = 2256 + 2 * 104;
  ASSERT_EQ(b.size(), ext + 8 + 16);
  EXPECT_EQ(b.substr(0, 4), "RCmb");
  EXPECT_EQ(BeAt(b, 4, 4), b.size());  // totlen
  EXPECT_EQ(BeAt(b, 8, 2), 1u);        // ver
  EXPECT_EQ(BeAt(b, 10, 2), 7000u);    // port
  EXPECT_EQ(BeAt(b, 12, 2), 0u);       // type PING
  EXPECT_EQ(BeAt(b, 14, 2), 2u);       // count
  EXPECT_EQ(BeAt(b, 16, 8), 0x0102030405060708u);
  EXPECT_EQ(BeAt(b, 24, 8), 42u);
  EXPECT_EQ(BeAt(b, 32, 8), 123456789u);
  EXPECT_EQ(b.substr(40, 40), m.hdr.sender);
  // myslots at 80: slot s is bit s % 8 of byte s / 8 (bitmapTestBit).
  EXPECT_EQ(static_cast<uint8_t>(b[80]), 0x01);         // slot 0
  EXPECT_EQ(static_cast<uint8_t>(b[81]), 0x02);         // slot 9
  EXPECT_EQ(static_cast<uint8_t>(b[80 + 2047]), 0x80);  // slot 16383
  for (size_t i = 82; i < 80 + 2047; i++) ASSERT_EQ(b[i], 0) << i;
  EXPECT_EQ(b.substr(2128, 40), m.hdr.replicaof);
  EXPECT_EQ(b.substr(2168, 46), "127.0.0.1" + std::string(46 - 9, '\0'));
  EXPECT_EQ(BeAt(b, 2214, 2), 1u);  // extensions
  EXPECT_EQ(b.substr(2216, 30), std::string(30, '\0'));
  EXPECT_EQ(BeAt(b, 2246, 2), 6380u);   // pport
  EXPECT_EQ(BeAt(b, 2248, 2), 17000u);  // cport
  EXPECT_EQ(BeAt(b, 2250, 2), 17u);     // flags: master | myself
  EXPECT_EQ(b[2252], 1);                // state
  EXPECT_EQ(static_cast<uint8_t>(b[2253]), kMsgFlag0Paused | kMsgFlag0ExtData);
  EXPECT_EQ(static_cast<uint8_t>(b[2254]), 0x5a);
  EXPECT_EQ(static_cast<uint8_t>(b[2255]), 0xa5);
  // The second gossip entry (clusterMsgDataGossip).
  const size_t g = 2256 + 104;
  EXPECT_EQ(b.substr(g, 40), std::string(40, 'b'));
  EXPECT_EQ(BeAt(b, g + 40, 4), 1700000001u);  // ping_sent, seconds
  EXPECT_EQ(BeAt(b, g + 44, 4), 1700000101u);  // pong_received, seconds
  EXPECT_EQ(b.substr(g + 48, 46), "10.1.2.1" + std::string(46 - 8, '\0'));
  EXPECT_EQ(BeAt(b, g + 94, 2), 7002u);   // port
  EXPECT_EQ(BeAt(b, g + 96, 2), 17002u);  // cport
  EXPECT_EQ(BeAt(b, g + 98, 2), uint64_t{kFlagReplica | kFlagPFail});
  EXPECT_EQ(BeAt(b, g + 100, 2), 6002u);  // pport
  EXPECT_EQ(BeAt(b, g + 102, 2), 0u);     // notused1
  // The hostname extension (clusterMsgPingExt + clusterMsgPingExtHostname).
  EXPECT_EQ(BeAt(b, ext, 4), 24u);     // length, its header included
  EXPECT_EQ(BeAt(b, ext + 4, 2), 0u);  // CLUSTERMSG_EXT_TYPE_HOSTNAME
  EXPECT_EQ(BeAt(b, ext + 6, 2), 0u);
  EXPECT_EQ(b.substr(ext + 8), "h.example" + std::string(7, '\0'));
}

TEST(BusWire, BodiesAtRedisOffsets) {
  std::string fail = Encode(SampleOf(MsgType::kFail));
  EXPECT_EQ(BeAt(fail, 12, 2), 3u);
  EXPECT_EQ(fail.substr(2256), "0123456789012345678901234567890123456789");

  std::string pub = Encode(SampleOf(MsgType::kPublishShard));
  EXPECT_EQ(BeAt(pub, 12, 2), 10u);
  EXPECT_EQ(BeAt(pub, 2256, 4), 4u);   // channel_len
  EXPECT_EQ(BeAt(pub, 2260, 4), 11u);  // message_len
  EXPECT_EQ(pub.substr(2264), std::string("newshello\0world", 15));

  std::string upd = Encode(SampleOf(MsgType::kUpdate));
  EXPECT_EQ(BeAt(upd, 12, 2), 7u);
  EXPECT_EQ(BeAt(upd, 2256, 8), 7u);  // configEpoch
  EXPECT_EQ(upd.substr(2264, 40), "fedcba9876543210fedcba9876543210fedcba98");
  const size_t slots = 2304;  // slot 100 is bit 4 of byte 12; 100..199 end at bit 7 of byte 24
  EXPECT_EQ(static_cast<uint8_t>(upd[slots + 12]), 0xf0);
  EXPECT_EQ(static_cast<uint8_t>(upd[slots + 13]), 0xff);
  EXPECT_EQ(static_cast<uint8_t>(upd[slots + 24]), 0xff);
  EXPECT_EQ(static_cast<uint8_t>(upd[slots + 25]), 0x00);

  std::string mod = Encode(SampleOf(MsgType::kModule));
  EXPECT_EQ(BeAt(mod, 12, 2), 9u);
  uint64_t id;
  memcpy(&id, mod.data() + 2256, 8);  // unconverted, as Redis copies it
  EXPECT_EQ(id, 0x1122334455667788u);
  EXPECT_EQ(BeAt(mod, 2264, 4), 14u);  // len
  EXPECT_EQ(mod[2268], 3);             // type
  EXPECT_EQ(mod.substr(2269), "module payload");

  BusMessage req = SampleOf(MsgType::kFailoverAuthRequest);
  std::string r = Encode(req);
  EXPECT_EQ(BeAt(r, 12, 2), 5u);
  EXPECT_EQ(BeAt(r, 14, 2), 0u);  // no gossip count outside PING, PONG, MEET
  EXPECT_EQ(static_cast<uint8_t>(r[2253]), kMsgFlag0ForceAck);
  EXPECT_EQ(r.substr(2128, 40), req.hdr.replicaof);
  // A primary's replicaof is all zero.
  EXPECT_EQ(Encode(SampleOf(MsgType::kFailoverAuthAck)).substr(2128, 40), std::string(40, '\0'));
}

TEST(BusWire, EveryTypeRoundTrips) {
  for (MsgType type : kAllTypes) {
    BusMessage m = SampleOf(type);
    std::string b = Encode(m);
    Result<uint32_t> len = MessageLength(b.substr(0, 8));
    ASSERT_TRUE(len.ok()) << len.status().ToString();
    EXPECT_EQ(*len, b.size());
    Result<BusMessage> back = Decode(b);
    ASSERT_TRUE(back.ok()) << MsgTypeName(type) << ": " << back.status().ToString();
    EXPECT_TRUE(*back == m) << MsgTypeName(type);
    EXPECT_EQ(Encode(*back), b);
  }
  // Empty bodies and edge values.
  BusMessage ping = SamplePing(0, "");
  ping.hdr.myip = "";
  ping.hdr.sender = std::string(kNameLen, '\0');
  ping.hdr.port = 65535;
  ping.hdr.current_epoch = UINT64_MAX;
  Result<BusMessage> back = Decode(Encode(ping));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back == ping);
  BusMessage pub;
  pub.hdr = SampleHeader(MsgType::kPublish);
  back = Decode(Encode(pub));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back == pub);
}

TEST(BusWire, RandomMessagesRoundTrip) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; i++) {
    BusMessage m = RandomBusMessage(rng);
    std::string b = Encode(m);
    Result<BusMessage> back = Decode(b);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_TRUE(*back == m) << MsgTypeName(m.hdr.type) << " #" << i;
  }
}

TEST(BusWire, FieldsAreCutToTheirWidth) {
  BusMessage m = SamplePing(1, "");
  m.hdr.sender = "short";
  m.hdr.myip = std::string(60, '1');
  m.gossip[0].ip = std::string(46, '2');
  Result<BusMessage> back = Decode(Encode(m));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->hdr.sender, "short" + std::string(35, '\0'));
  EXPECT_EQ(back->hdr.myip, std::string(45, '1'));  // the 46th byte is the NUL
  EXPECT_EQ(back->gossip[0].ip, std::string(45, '2'));
}

// Decoding what Redis could send but kvstore never does.
TEST(BusWire, ExtensionsAsRedisReadsThem) {
  BusMessage m = SamplePing(1, "first");
  std::string b = Encode(m);
  // An extension of a type Redis 7.0 does not know (a later version's) is skipped.
  std::string unknown(16, '\0');
  unknown[3] = 16;
  unknown[5] = 3;
  b.insert(2256 + 104, unknown);
  b[2215] = 2;  // two extensions
  b[6] = static_cast<char>(b.size() >> 8);
  b[7] = static_cast<char>(b.size());
  Result<BusMessage> back = Decode(b);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->hostname, "first");
  EXPECT_EQ(back->gossip, m.gossip);
  // Without the flag, Redis looks at no extension: the bytes are then too many.
  b[2253] = 0;
  back = Decode(b);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("expected 2360"), std::string::npos)
      << back.status().message();
}

TEST(BusWire, MessageLengthChecksTheFirstEightBytes) {
  std::string b = Encode(SampleOf(MsgType::kFail));
  EXPECT_EQ(*MessageLength(b), 2296u);
  EXPECT_FALSE(MessageLength(b.substr(0, 7)).ok());
  std::string bad = b;
  bad[0] = 'r';
  EXPECT_NE(MessageLength(bad).status().message().find("signature"), std::string::npos);
  bad = b;
  SetBe(bad, 4, 2255, 4);
  EXPECT_FALSE(MessageLength(bad).ok());
  SetBe(bad, 4, 2256, 4);
  EXPECT_EQ(*MessageLength(bad), 2256u);
  SetBe(bad, 4, kMaxBusMessageLen, 4);
  EXPECT_EQ(*MessageLength(bad), kMaxBusMessageLen);
  SetBe(bad, 4, kMaxBusMessageLen + 1, 4);
  EXPECT_FALSE(MessageLength(bad).ok());
  SetBe(bad, 4, 0xffffffff, 4);
  EXPECT_FALSE(MessageLength(bad).ok());
}

// Each bad message is refused with a message saying what was wrong.
void ExpectRefused(const std::string& b, const std::string& says) {
  Result<BusMessage> r = Decode(b);
  ASSERT_FALSE(r.ok()) << "accepted; wanted an error saying " << says;
  EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
}

// `b` with the `len`-byte big-endian field at `at` set to `v`.
std::string With(std::string b, size_t at, uint64_t v, int len) {
  SetBe(b, at, v, len);
  return b;
}

// `b` with its totlen saying how long it now is (after it was cut or extended).
std::string WithTotlen(std::string b) {
  SetBe(b, 4, b.size(), 4);
  return b;
}

TEST(BusWire, BadMessagesAreRefused) {
  const std::string ping = Encode(SamplePing(2, "host"));
  for (size_t n : {0, 4, 7, 8, 100, 2255}) ExpectRefused(ping.substr(0, n), "");
  ExpectRefused(ping.substr(0, 2300), "totlen 2480 but 2300 bytes");
  std::string b = ping;
  b[3] = 'B';
  ExpectRefused(b, "signature");
  ExpectRefused(With(ping, 8, 2, 2), "version 2");
  ExpectRefused(With(ping, 12, 11, 2), "unknown bus message type 11");
  ExpectRefused(WithTotlen(ping + std::string(8, '\0')),
                "ping message of 2488 bytes, expected 2480");
  ExpectRefused(With(ping, 4, ping.size() - 8, 4), "totlen 2472 but 2480");

  // Gossip counts: more than the message holds, and fewer than it carries.
  ExpectRefused(With(ping, 14, 3, 2), "ping with 3 gossip entries in 2480 bytes");
  ExpectRefused(With(ping, 14, 65535, 2), "65535 gossip entries");
  ExpectRefused(With(ping, 14, 1, 2), "unpadded");  // the second gossip entry read as an extension

  // Extensions: past the end, unaligned, shorter than their header, more than there are.
  const size_t ext = 2256 + 2 * 104;
  ExpectRefused(With(ping, ext, 24, 4), "is 24 bytes, 16 are left");
  ExpectRefused(With(ping, ext, 12, 4), "unpadded");
  ExpectRefused(With(ping, ext, 0, 4), "less than its header");
  ExpectRefused(With(ping, ext, 0xfffffff8u, 4), "are left");
  ExpectRefused(With(ping, 2214, 2, 2), "extension 1 of 2 starts 0 bytes from the end");
  ExpectRefused(With(ping, 2214, 0, 2), "expected 2464");

  // Fixed-size bodies.
  for (MsgType t : {MsgType::kFail, MsgType::kUpdate, MsgType::kFailoverAuthAck,
                    MsgType::kFailoverAuthRequest, MsgType::kMfStart}) {
    std::string good = Encode(SampleOf(t));
    ExpectRefused(WithTotlen(good + "x"), std::string(MsgTypeName(t)) + " message of " +
                                              std::to_string(good.size() + 1) +
                                              " bytes, expected " + std::to_string(good.size()));
  }
  ExpectRefused(WithTotlen(Encode(SampleOf(MsgType::kFail)).substr(0, 2256)),
                "fail message of 2256 bytes, expected 2296");

  // PUBLISH: the two lengths must add up to the body, without wrapping around.
  const std::string pub = Encode(SampleOf(MsgType::kPublish));
  ExpectRefused(With(pub, 2260, 12, 4), "expected 2280");
  // 2^32 - 1 and 16 add up to 2^32 + 15: the right length, were the sum cut to 32 bits.
  b = With(pub, 2256, 0xffffffffu, 4);
  ExpectRefused(With(b, 2260, 0x10u, 4), "expected 4294969575");
  ExpectRefused(WithTotlen(pub.substr(0, 2260)), "publish message of 2260 bytes, expected 2264");

  // MODULE: its length must match the payload.
  const std::string mod = Encode(SampleOf(MsgType::kModule));
  ExpectRefused(With(mod, 2264, 15, 4), "expected 2284");
  ExpectRefused(WithTotlen(mod.substr(0, 2268)), "module message of 2268 bytes, expected 2269");
}

// Mutated messages: Decode never crashes or reads outside its input (the ASan build checks),
// and what it accepts encodes to bytes that decode to the same message.
TEST(BusWire, MutatedMessagesNeverCrashAndReencode) {
  std::mt19937 rng(20240611);
  int accepted = 0;
  for (int i = 0; i < 5000; i++) {
    std::string b = MutateBusMessage(Encode(RandomBusMessage(rng)), rng);
    Result<BusMessage> m = Decode(b);
    if (!m.ok()) {
      ASSERT_FALSE(m.status().message().empty());
      continue;
    }
    accepted++;
    std::string again = Encode(*m);
    Result<BusMessage> m2 = Decode(again);
    ASSERT_TRUE(m2.ok()) << m2.status().ToString();
    ASSERT_TRUE(*m2 == *m) << "#" << i;
    ASSERT_EQ(Encode(*m2), again);
  }
  // Some mutations keep the message valid (a flipped epoch bit, a new type that fits).
  EXPECT_GT(accepted, 100);
  EXPECT_LT(accepted, 4900);
}

// ---- Against a real redis-server 7.0 -----------------------------------------------------

// Waits until `fd` has something to read; false once the deadline passes.
bool Readable(int fd, Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  pollfd p{fd, POLLIN, 0};
  return left.count() > 0 && poll(&p, 1, static_cast<int>(left.count())) == 1;
}

Fd Accept(int listener, Clock::time_point deadline) {
  if (!Readable(listener, deadline)) return Fd();
  return Fd(accept(listener, nullptr, nullptr));
}

bool ReadExact(int fd, size_t n, std::string* out, Clock::time_point deadline) {
  size_t have = out->size();
  out->resize(have + n);
  while (n > 0) {
    if (!Readable(fd, deadline)) return false;
    ssize_t r = read(fd, out->data() + out->size() - n, n);
    if (r <= 0) return false;
    n -= r;
  }
  return true;
}

// One bus message off a connection, framed as Redis' clusterReadHandler frames it.
Result<BusMessage> ReadBusMessage(int fd, std::string* raw, Clock::time_point deadline) {
  raw->clear();
  if (!ReadExact(fd, 8, raw, deadline)) return Status::IoError("no message header");
  KV_TRY_ASSIGN(len, MessageLength(*raw));
  if (!ReadExact(fd, len - 8, raw, deadline)) return Status::IoError("message cut short");
  return Decode(*raw);
}

// A node played by the test: a name, and a listener on the cluster bus port it announces.
struct FakeNode {
  std::string name;
  Fd listener;
  Fd from_redis;  // the connection Redis opened to `listener`
  int cport = 0;
  int port = 0;  // the client port it announces; nothing listens there
  std::string hostname;

  FakeNode(std::mt19937& rng, std::string host)
      : name(RandomHexName(rng)), listener(Listen(0)), hostname(std::move(host)) {
    cport = net::LocalPort(listener.get());
    port = cport > 1000 ? cport - 1000 : cport + 1000;
  }

  BusMessage Message(MsgType type) const {
    BusMessage m;
    m.hdr.type = type;
    m.hdr.port = port;
    m.hdr.cport = cport;
    m.hdr.sender = name;
    m.hdr.myip = "127.0.0.1";
    m.hdr.flags = kFlagMaster;
    m.hdr.state = 1;
    if (type == MsgType::kPing || type == MsgType::kPong || type == MsgType::kMeet) {
      m.hostname = hostname;
    }
    return m;
  }
};

// The hostname the test's redis-server announces.
constexpr char kRedisHostname[] = "kv-bus-test.example";

// Reads exactly what `want` is long and says whether it was `want`.
bool Expect(int fd, const std::string& want, Clock::time_point deadline) {
  std::string got;
  return ReadExact(fd, want.size(), &got, deadline) && got == want;
}

// redis-server 7.0 answers a MEET built by Encode with a PONG, connects to the bus port the
// MEET announced and sends a PING there, and once the handshake is done gossips about the
// test's nodes. Every message Decode reads re-encodes to the very bytes Redis sent.
TEST(BusWireInterop, MeetPingPongWithRedisServer) {
  if (access(kRedisServer, X_OK) != 0) GTEST_SKIP() << "no " << kRedisServer;
  RedisClusterNode redis({"--cluster-announce-hostname", kRedisHostname});
  ASSERT_TRUE(redis.Start());
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  Reply id = redis.Command({"CLUSTER", "MYID"});
  ASSERT_EQ(id.type, '$') << id.str;
  ASSERT_EQ(id.str.size(), kNameLen) << id.str;
  const std::string myid = id.str;
  const int bus_port = redis.bus_port();

  std::mt19937 rng(std::random_device{}());
  FakeNode a(rng, "fake-a.example"), b(rng, "b");
  ASSERT_GE(a.listener.get(), 0);
  ASSERT_GE(b.listener.get(), 0);

  // MEET -> PONG, on the connection the MEET came on.
  std::string raw;
  Fd to_redis_a = Connect(bus_port), to_redis_b = Connect(bus_port);
  ASSERT_GE(to_redis_a.get(), 0);
  ASSERT_GE(to_redis_b.get(), 0);
  ASSERT_TRUE(SendAll(to_redis_a.get(), Encode(a.Message(MsgType::kMeet))));
  Result<BusMessage> pong = ReadBusMessage(to_redis_a.get(), &raw, deadline);
  ASSERT_TRUE(pong.ok()) << pong.status().ToString() << "\n" << redis.LogText();
  EXPECT_EQ(pong->hdr.type, MsgType::kPong);
  EXPECT_EQ(pong->hdr.sender, myid);
  EXPECT_EQ(pong->hdr.port, redis.port());
  EXPECT_EQ(pong->hdr.cport, bus_port);
  EXPECT_EQ(pong->hdr.pport, 0);
  EXPECT_EQ(pong->hdr.flags, kFlagMaster | kFlagMyself);
  EXPECT_EQ(pong->hdr.replicaof, "");
  EXPECT_EQ(pong->hdr.myip, "");  // no cluster-announce-ip
  EXPECT_EQ(pong->hdr.state, 1);  // no slots assigned: the cluster is down
  EXPECT_TRUE(pong->hdr.myslots.none());
  EXPECT_TRUE(pong->gossip.empty());  // the only other node it knows is in handshake
  EXPECT_EQ(pong->hostname, kRedisHostname);
  EXPECT_EQ(pong->hdr.mflags[0], kMsgFlag0ExtData);
  EXPECT_EQ(raw.size(), 2256u + 8 + 24);  // the hostname's 19 bytes and NUL padded to 24
  EXPECT_EQ(Encode(*pong), raw);

  ASSERT_TRUE(SendAll(to_redis_b.get(), Encode(b.Message(MsgType::kMeet))));
  pong = ReadBusMessage(to_redis_b.get(), &raw, deadline);
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();
  EXPECT_EQ(Encode(*pong), raw);

  // Redis connects to each announced bus port and sends a PING (the nodes are in handshake,
  // not flagged MEET); a PONG with the node's name completes the handshake.
  for (FakeNode* node : {&a, &b}) {
    Fd from_redis = Accept(node->listener.get(), deadline);
    ASSERT_GE(from_redis.get(), 0) << "redis-server did not connect\n" << redis.LogText();
    Result<BusMessage> ping = ReadBusMessage(from_redis.get(), &raw, deadline);
    ASSERT_TRUE(ping.ok()) << ping.status().ToString();
    EXPECT_EQ(ping->hdr.type, MsgType::kPing);
    EXPECT_EQ(ping->hdr.sender, myid);
    EXPECT_EQ(ping->hostname, kRedisHostname);
    EXPECT_EQ(Encode(*ping), raw);
    ASSERT_TRUE(SendAll(from_redis.get(), Encode(node->Message(MsgType::kPong))));
    // Kept open: Redis leaves a node whose link dropped (and that has no slots) out of gossip.
    node->from_redis = std::move(from_redis);
  }

  // Now out of handshake, the two nodes are what Redis gossips about: with three nodes known
  // it adds one entry to a PONG when its random pick is not itself, so ask until one comes.
  bool gossiped = false;
  for (int i = 0; i < 100 && !gossiped; i++) {
    ASSERT_TRUE(SendAll(to_redis_a.get(), Encode(a.Message(MsgType::kPing))));
    pong = ReadBusMessage(to_redis_a.get(), &raw, deadline);
    ASSERT_TRUE(pong.ok()) << pong.status().ToString() << "\n" << redis.LogText();
    EXPECT_EQ(pong->hdr.type, MsgType::kPong);
    EXPECT_EQ(Encode(*pong), raw);
    for (const GossipEntry& g : pong->gossip) {
      const FakeNode* about = g.name == a.name ? &a : g.name == b.name ? &b : nullptr;
      ASSERT_NE(about, nullptr) << "gossip about an unknown node " << g.name;
      EXPECT_EQ(g.ip, "127.0.0.1");
      EXPECT_EQ(g.port, about->port);
      EXPECT_EQ(g.cport, about->cport);
      EXPECT_EQ(g.pport, 0);
      EXPECT_EQ(g.flags & (kFlagMaster | kFlagHandshake), kFlagMaster);
      EXPECT_EQ(raw.size(), 2256u + 104 * pong->gossip.size() + 8 + 24);
      gossiped = true;
    }
  }
  EXPECT_TRUE(gossiped) << redis.LogText();

  // Redis took the hostname extension of the PINGs above (it reads extensions from known nodes).
  std::string nodes = redis.Command({"CLUSTER", "NODES"}).str;
  std::string addr = "127.0.0.1:" + std::to_string(a.port) + "@" + std::to_string(a.cport);
  EXPECT_NE(nodes.find(a.name + " " + addr + ",fake-a.example "), std::string::npos) << nodes;

  // A client's PUBLISH goes to every node Redis has a link to, as a PUBLISH message.
  Reply receivers = redis.Command({"PUBLISH", "news", "to the bus"});
  EXPECT_EQ(receivers.type, ':');
  EXPECT_EQ(receivers.integer, 0);
  Result<BusMessage> pub = ReadBusMessage(a.from_redis.get(), &raw, deadline);
  // Skipping the cron's PINGs on the same link.
  while (pub.ok() && (pub->hdr.type == MsgType::kPing || pub->hdr.type == MsgType::kPong)) {
    pub = ReadBusMessage(a.from_redis.get(), &raw, deadline);
  }
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  EXPECT_EQ(pub->hdr.type, MsgType::kPublish);
  EXPECT_EQ(pub->hdr.sender, myid);
  EXPECT_EQ(pub->publish.channel, "news");
  EXPECT_EQ(pub->publish.message, "to the bus");
  EXPECT_EQ(Encode(*pub), raw);

  // And a PUBLISH message built by Encode reaches Redis' subscribers.
  Fd subscriber = Connect(redis.port());
  ASSERT_TRUE(SendAll(subscriber.get(), "*2\r\n$9\r\nSUBSCRIBE\r\n$4\r\nnews\r\n"));
  ASSERT_TRUE(Expect(subscriber.get(), "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n", deadline));
  BusMessage from_a = a.Message(MsgType::kPublish);
  from_a.publish = {"news", "from the bus"};
  ASSERT_TRUE(SendAll(to_redis_a.get(), Encode(from_a)));
  EXPECT_TRUE(Expect(subscriber.get(),
                     "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$12\r\nfrom the bus\r\n", deadline))
      << redis.LogText();
}

}  // namespace
}  // namespace kv::cluster
