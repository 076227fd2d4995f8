// Bad input on a kvstore node's cluster bus (issue 40's list): a wrong signature, a length
// below the header's, a wrong version, a gossip section longer than the message, a message cut
// off by its sender, a node claiming slots with a stale config epoch, and randomly damaged
// messages. Each is dropped (or its connection closed) with a log line; the node stays up,
// keeps its view of the cluster and goes on talking with the real node beside it.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>

#include "cluster/bus_wire.h"
#include "cluster/bus_wire_test_util.h"
#include "cluster/redis_node_test_util.h"

namespace kv::cluster {
namespace {

using namespace test_util;

// The slots and epochs of each node as `node` sees them (CLUSTER NODES without the ping and
// pong times and link states, which change on their own).
std::string View(RedisClusterNode& node) {
  std::string nodes = node.Command({"CLUSTER", "NODES"}).str;
  std::string out;
  std::regex line("([0-9a-f]{40}) \\S+ (\\S+) (\\S+) \\d+ \\d+ (\\d+) \\S+(.*)");
  for (auto it = std::sregex_iterator(nodes.begin(), nodes.end(), line);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    // Nodes met by a MEET from a stranger are in handshake until it times out: not the view.
    if (m[2].str().find("handshake") != std::string::npos) continue;
    out += m[1].str() + " " + m[2].str() + " " + m[3].str() + " " + m[4].str() + m[5].str() + "\n";
  }
  return out;
}

// A node name no node has.
std::string FakeName() { return std::string(40, 'e'); }

bool StateOk(RedisClusterNode& n) {
  return n.Command({"CLUSTER", "INFO"}).str.find("cluster_state:ok") != std::string::npos;
}

// Whether the peer closed `fd` within a while (what it sent meanwhile is read and dropped).
bool ClosedByPeer(int fd) {
  return WaitUntil(
      [&] {
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
      },
      std::chrono::seconds(10));
}

class ClusterBusInput : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kv_.Start());
    ASSERT_TRUE(redis_.Start());
    kv_id_ = kv_.Ok({"CLUSTER", "MYID"});
    redis_id_ = redis_.Ok({"CLUSTER", "MYID"});
    kv_.Ok({"CLUSTER", "SET-CONFIG-EPOCH", "2"});
    redis_.Ok({"CLUSTER", "SET-CONFIG-EPOCH", "1"});
    kv_.Ok({"CLUSTER", "ADDSLOTSRANGE", "0", "8191"});
    redis_.Ok({"CLUSTER", "ADDSLOTSRANGE", "8192", "16383"});
    kv_.Ok({"CLUSTER", "MEET", "127.0.0.1", std::to_string(redis_.port())});
    ASSERT_TRUE(WaitUntil(
        [&] {
          std::string a = View(kv_), b = View(redis_);
          return a.find(redis_id_) != std::string::npos && b.find(kv_id_) != std::string::npos &&
                 a.find("handshake") == std::string::npos && StateOk(kv_) && StateOk(redis_);
        },
        std::chrono::seconds(30)))
        << kv_.Command({"CLUSTER", "NODES"}).str;
    view_ = View(kv_);
  }

  // The node answers, its view of slots and epochs is what it was, and the real node beside it
  // still sees it connected and serving.
  void ExpectUnharmed() {
    ASSERT_TRUE(kv_.Alive()) << kv_.LogText();
    EXPECT_EQ(kv_.Command({"PING"}).str, "PONG");
    EXPECT_EQ(View(kv_), view_);
    EXPECT_TRUE(WaitUntil(
        [&] {
          std::string n = redis_.Command({"CLUSTER", "NODES"}).str;
          size_t at = n.find(kv_id_);
          return at != std::string::npos && n.find("connected", at) < n.find('\n', at) &&
                 n.find("fail", at) > n.find('\n', at);
        },
        std::chrono::seconds(20)));
  }

  // A PING as a node named `sender` would send it.
  BusMessage Ping(const std::string& sender) {
    BusMessage m;
    m.hdr.type = MsgType::kPing;
    m.hdr.sender = sender;
    m.hdr.port = 1;
    m.hdr.cport = 2;
    m.hdr.flags = kFlagMaster;
    return m;
  }

  RedisClusterNode kv_{{}, KvstoreServer()};
  RedisClusterNode redis_;
  std::string kv_id_, redis_id_, view_;
};

TEST_F(ClusterBusInput, FramingErrorsCloseTheConnectionAlone) {
  {
    Fd fd = Connect(kv_.bus_port());
    ASSERT_TRUE(SendAll(fd.get(), std::string("XXXX\0\0\x10\0", 8) + std::string(4088, 'x')));
    EXPECT_TRUE(ClosedByPeer(fd.get()));
  }
  {
    std::string short_len = Encode(Ping(FakeName()));
    short_len[4] = short_len[5] = short_len[6] = 0;
    short_len[7] = 100;  // totlen 100, below the header's 2256
    Fd fd = Connect(kv_.bus_port());
    ASSERT_TRUE(SendAll(fd.get(), short_len));
    EXPECT_TRUE(ClosedByPeer(fd.get()));
  }
  {
    // Half a message, then the sender goes away.
    std::string m = Encode(Ping(FakeName()));
    Fd fd = Connect(kv_.bus_port());
    ASSERT_TRUE(SendAll(fd.get(), m.substr(0, m.size() / 2)));
  }
  ExpectUnharmed();
  EXPECT_NE(kv_.LogText().find("Bad message length or signature received from Cluster bus."),
            std::string::npos);
}

TEST_F(ClusterBusInput, MalformedMessagesAreDroppedAndTheLinkKept) {
  Fd fd = Connect(kv_.bus_port());
  std::string wrong_version = Encode(Ping(FakeName()));
  wrong_version[8] = 0;
  wrong_version[9] = 2;  // version 2
  std::string long_gossip = Encode(Ping(FakeName()));
  long_gossip[14] = 0;
  long_gossip[15] = 50;  // a gossip count of 50 in a message that holds none
  ASSERT_TRUE(SendAll(fd.get(), wrong_version));
  ASSERT_TRUE(SendAll(fd.get(), long_gossip));
  // The connection is still open: a well-formed PING after them gets its PONG.
  ASSERT_TRUE(SendAll(fd.get(), Encode(Ping(FakeName()))));
  std::string got;
  ASSERT_TRUE(WaitUntil(
      [&] {
        char buf[8192];
        ssize_t n = recv(fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) got.append(buf, static_cast<size_t>(n));
        return got.size() >= kBusHeaderLen;
      },
      std::chrono::seconds(10)));
  auto pong = Decode(std::string_view(got).substr(0, *MessageLength(got)));
  ASSERT_TRUE(pong.ok()) << pong.status().ToString();
  EXPECT_EQ(pong->hdr.type, MsgType::kPong);
  EXPECT_EQ(pong->hdr.sender, kv_id_);
  ExpectUnharmed();
  EXPECT_NE(kv_.LogText().find("Dropping a cluster bus message"), std::string::npos);
}

// A node (here a forger using the real node's name) claims this node's slots with an older
// config epoch: the claim loses, and this node keeps serving them.
TEST_F(ClusterBusInput, StaleSlotClaimsLose) {
  BusMessage m = Ping(redis_id_);
  m.hdr.config_epoch = 1;  // this node's is 2
  m.hdr.current_epoch = 2;
  for (int s = 0; s < 8192; s++) m.hdr.myslots.set(s);
  m.hdr.port = redis_.port();
  m.hdr.cport = redis_.bus_port();
  Fd fd = Connect(kv_.bus_port());
  ASSERT_TRUE(SendAll(fd.get(), Encode(m)));
  m.hdr.type = MsgType::kUpdate;
  m.update.name = kv_id_;
  m.update.config_epoch = 1;
  m.update.slots = SlotBitmap();  // "the node owns nothing now", with an old epoch
  ASSERT_TRUE(SendAll(fd.get(), Encode(m)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  fd.Reset();
  ExpectUnharmed();
  EXPECT_EQ(kv_.Command({"CLUSTER", "COUNTKEYSINSLOT", "0"}).integer, 0);
  std::string key;
  for (int i = 0; key.empty(); i++) {
    std::string k = "k" + std::to_string(i);
    if (kv_.Command({"CLUSTER", "KEYSLOT", k}).integer < 8192) key = k;
  }
  EXPECT_EQ(kv_.Command({"SET", key, "v"}).str, "OK");
}

TEST_F(ClusterBusInput, RandomlyDamagedMessagesChangeNothing) {
  std::mt19937 rng(20261207);
  for (int round = 0; round < 20; round++) {
    Fd fd = Connect(kv_.bus_port());
    for (int i = 0; i < 20; i++) {
      BusMessage m = RandomBusMessage(rng);
      if (!SendAll(fd.get(), MutateBusMessage(Encode(m), rng))) break;
    }
  }
  ExpectUnharmed();
}

}  // namespace
}  // namespace kv::cluster
