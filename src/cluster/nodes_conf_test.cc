#include "cluster/nodes_conf.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cluster/redis_node_test_util.h"

namespace kv::cluster {
namespace {

namespace fs = std::filesystem;
using test_util::FreeClusterPort;
using test_util::kRedisServer;
using test_util::ReadFile;
using test_util::RedisClusterNode;
using test_util::Reply;
using test_util::TempDir;
using test_util::WaitUntil;

std::string Name(char c) { return std::string(kNameLen, c); }

SlotBitmap Slots(std::initializer_list<std::pair<int, int>> ranges) {
  SlotBitmap b;
  for (auto [first, last] : ranges) {
    for (int s = first; s <= last; s++) b.set(s);
  }
  return b;
}

void ExpectSameNode(const NodeInfo& a, const NodeInfo& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.ip, b.ip);
  EXPECT_EQ(a.port, b.port);
  EXPECT_EQ(a.cport, b.cport);
  EXPECT_EQ(a.pport, b.pport);
  EXPECT_EQ(a.hostname, b.hostname);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.primary, b.primary);
  EXPECT_EQ(a.ping_sent_ms, b.ping_sent_ms);
  EXPECT_EQ(a.pong_received_ms, b.pong_received_ms);
  EXPECT_EQ(a.config_epoch, b.config_epoch);
  EXPECT_EQ(a.link_connected, b.link_connected);
  EXPECT_EQ(a.slots, b.slots);
  EXPECT_EQ(a.migrating, b.migrating);
  EXPECT_EQ(a.importing, b.importing);
}

void ExpectSameFile(const NodesFile& a, const NodesFile& b) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); i++) ExpectSameNode(a.nodes[i], b.nodes[i]);
  EXPECT_EQ(a.current_epoch, b.current_epoch);
  EXPECT_EQ(a.last_vote_epoch, b.last_vote_epoch);
}

const NodeInfo* Find(const NodesFile& f, const std::string& name) {
  for (const NodeInfo& n : f.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// --- Formatting, parsing and round trips ---

TEST(NodesConfTest, SlotRanges) {
  EXPECT_TRUE(SlotRanges(SlotBitmap()).empty());
  SlotBitmap all;
  all.set();
  EXPECT_EQ(SlotRanges(all), (std::vector<std::pair<int, int>>{{0, 16383}}));
  EXPECT_EQ(SlotRanges(Slots({{0, 0}, {2, 5}, {16383, 16383}})),
            (std::vector<std::pair<int, int>>{{0, 0}, {2, 5}, {16383, 16383}}));
  SlotBitmap odd;
  for (int s = 1; s < kClusterSlots; s += 2) odd.set(s);
  auto ranges = SlotRanges(odd);
  ASSERT_EQ(ranges.size(), 8192u);
  EXPECT_EQ(ranges.back(), std::make_pair(16383, 16383));
}

TEST(NodesConfTest, FlagsTextInRedisOrder) {
  EXPECT_EQ(FlagsText(0), "noflags");
  EXPECT_EQ(FlagsText(kFlagMaster | kFlagMyself), "myself,master");
  EXPECT_EQ(FlagsText(kFlagReplica | kFlagFail | kFlagPFail), "slave,fail?,fail");
  EXPECT_EQ(FlagsText(kFlagMaster | kFlagHandshake | kFlagNoAddr), "master,handshake,noaddr");
  EXPECT_EQ(FlagsText(kFlagReplica | kFlagNoFailover | kFlagMigrateTo | kFlagMeet),
            "slave,nofailover");
}

// Three primaries and three replicas as redis-server 7.0 writes them after `redis-cli --cluster
// create` and a failure: one replica failed, one primary suspected, one node with a hostname.
const char kRedisFile[] =
    "5b1e6c4f3e0d2c1b0a9f8e7d6c5b4a3928170605 10.0.0.2:7001@17001 master - 0 1700000001500 2 "
    "connected 5461-10922\n"
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 10.0.0.1:7000@17000,node-a.example.com "
    "myself,master - 0 0 1 connected 0-5460\n"
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 10.0.0.3:7002@17002 master,fail? - 1700000003000 "
    "1700000000100 3 connected 10923-16383\n"
    "07c37dfeb235213a872192d90877d0cd55635b91 10.0.0.4:7003@17003 slave "
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1700000002000 1 connected\n"
    "6ec23923021cf3ffec47632106199cb7f496ce01 10.0.0.5:7004@17004 slave "
    "5b1e6c4f3e0d2c1b0a9f8e7d6c5b4a3928170605 0 1700000002100 2 connected\n"
    "824fe116063bc5fcf9f4ffd895bc17aee7731ac3 10.0.0.6:7005@17005 slave,fail "
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 1700000000500 1700000000200 3 disconnected\n"
    "vars currentEpoch 6 lastVoteEpoch 4\n";

TEST(NodesConfTest, ParsesRedisFileAndWritesItBackIdentically) {
  auto f = ParseNodesFile(kRedisFile);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->nodes.size(), 6u);
  EXPECT_EQ(f->current_epoch, 6u);
  EXPECT_EQ(f->last_vote_epoch, 4u);

  const NodeInfo& me = f->nodes[1];
  EXPECT_EQ(me.name, "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca");
  EXPECT_EQ(me.ip, "10.0.0.1");
  EXPECT_EQ(me.port, 7000);
  EXPECT_EQ(me.cport, 17000);
  EXPECT_EQ(me.hostname, "node-a.example.com");
  EXPECT_EQ(me.flags, kFlagMyself | kFlagMaster);
  EXPECT_EQ(me.primary, "");
  EXPECT_EQ(me.config_epoch, 1u);
  EXPECT_TRUE(me.link_connected);
  EXPECT_EQ(me.slots, Slots({{0, 5460}}));

  const NodeInfo& suspect = f->nodes[2];
  EXPECT_EQ(suspect.flags, kFlagMaster | kFlagPFail);
  EXPECT_EQ(suspect.ping_sent_ms, 1700000003000);
  EXPECT_EQ(suspect.pong_received_ms, 1700000000100);
  EXPECT_EQ(suspect.slots, Slots({{10923, 16383}}));

  const NodeInfo& failed = f->nodes[5];
  EXPECT_EQ(failed.flags, kFlagReplica | kFlagFail);
  EXPECT_EQ(failed.primary, "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f");
  EXPECT_EQ(failed.config_epoch, 3u);
  EXPECT_FALSE(failed.link_connected);
  EXPECT_TRUE(failed.slots.none());
  EXPECT_EQ(failed.hostname, "");

  EXPECT_EQ(FormatNodesFile(*f), kRedisFile);
}

NodesFile EveryKindOfNode() {
  NodesFile f;
  f.current_epoch = 42;
  f.last_vote_epoch = 41;

  NodeInfo me;
  me.name = Name('a');
  me.ip = "192.168.1.10";
  me.port = 6379;
  me.cport = 16379;
  me.hostname = "me.example.com";
  me.flags = kFlagMyself | kFlagMaster;
  me.config_epoch = 40;
  me.link_connected = true;
  me.slots = Slots({{0, 100}, {102, 102}, {200, 300}, {16383, 16383}});
  me.migrating = {{5, Name('b')}, {200, Name('c')}};
  me.importing = {{101, Name('b')}, {9000, Name('c')}};
  f.nodes.push_back(me);

  NodeInfo v6;
  v6.name = Name('b');
  v6.ip = "2001:db8::1";
  v6.port = 7000;
  v6.cport = 17000;
  v6.flags = kFlagMaster | kFlagPFail | kFlagFail;
  v6.ping_sent_ms = 1700000000123;
  v6.pong_received_ms = 1700000000001;
  v6.config_epoch = 39;
  for (int s = 1000; s < 3000; s += 3) v6.slots.set(s);  // many single slots
  f.nodes.push_back(v6);

  NodeInfo replica;
  replica.name = Name('c');
  replica.ip = "::1";
  replica.port = 7001;
  replica.cport = 21000;  // cluster-port set, not port + 10000
  replica.hostname = "replica-c";
  replica.flags = kFlagReplica | kFlagNoFailover;
  replica.primary = Name('b');
  replica.config_epoch = 39;
  replica.pong_received_ms = 5;
  replica.link_connected = true;
  f.nodes.push_back(replica);

  NodeInfo noaddr;
  noaddr.name = "0123456789abcdefghijklmnopqrstuvwxyz0123";  // Redis accepts [a-z0-9]
  noaddr.flags = kFlagNoAddr;
  f.nodes.push_back(noaddr);

  NodeInfo last;
  last.name = Name('d');
  last.ip = "10.1.2.3";
  last.port = 65535;
  last.cport = 0;
  last.flags = kFlagReplica | kFlagFail | kFlagNoAddr;
  last.primary = Name('e');  // a primary the file does not list
  last.config_epoch = UINT64_MAX;
  f.nodes.push_back(last);
  return f;
}

TEST(NodesConfTest, RoundTripsEveryKindOfNode) {
  NodesFile f = EveryKindOfNode();
  std::string text = FormatNodesFile(f);
  auto back = ParseNodesFile(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
  ExpectSameFile(f, *back);
  EXPECT_EQ(FormatNodesFile(*back), text);

  EXPECT_EQ(NodeLine(f.nodes[0]),
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 192.168.1.10:6379@16379,me.example.com "
            "myself,master - 0 0 40 connected 0-100 102 200-300 16383 "
            "[5->-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb] "
            "[101-<-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb] "
            "[200->-cccccccccccccccccccccccccccccccccccccccc] "
            "[9000-<-cccccccccccccccccccccccccccccccccccccccc]");
  EXPECT_EQ(NodeLine(f.nodes[2]),
            "cccccccccccccccccccccccccccccccccccccccc ::1:7001@21000,replica-c slave,nofailover "
            "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 0 5 39 connected");
  EXPECT_EQ(NodeLine(f.nodes[3]),
            "0123456789abcdefghijklmnopqrstuvwxyz0123 :0@0 noaddr - 0 0 0 disconnected");
}

TEST(NodesConfTest, LineRulesThatFollowRedis) {
  NodeInfo n;
  n.name = Name('a');
  n.ip = "127.0.0.1";
  n.port = 6380;
  n.pport = 6379;
  n.cport = 16380;
  n.flags = kFlagMyself | kFlagMaster;
  n.link_connected = false;  // myself is always "connected"
  n.migrating = {{7, Name('b')}};
  n.importing = {{7, Name('c')}, {8, Name('c')}};  // where both are set, migrating is written
  EXPECT_EQ(NodeLine(n),
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 127.0.0.1:6380@16380 myself,master - 0 0 0 "
            "connected [7->-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb] "
            "[8-<-cccccccccccccccccccccccccccccccccccccccc]");
  EXPECT_EQ(NodeLine(n, /*use_pport=*/true).substr(41, 20), "127.0.0.1:6379@16380");

  n.flags = kFlagMaster;  // open slots are shown for myself only
  EXPECT_EQ(NodeLine(n),
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 127.0.0.1:6380@16380 master - 0 0 0 "
            "disconnected");
}

TEST(NodesConfTest, HandshakeNodesStayOutOfTheFile) {
  NodesFile f = EveryKindOfNode();
  NodeInfo hs;
  hs.name = Name('f');
  hs.ip = "10.9.9.9";
  hs.port = 7000;
  hs.cport = 17000;
  hs.flags = kFlagHandshake | kFlagMaster;
  f.nodes.insert(f.nodes.begin() + 1, hs);
  EXPECT_EQ(FormatNodesFile(f), FormatNodesFile(EveryKindOfNode()));

  // CLUSTER NODES shows them, and a file that holds one (hand-written) loads.
  NodesFile one;
  one.nodes = {f.nodes[0], hs};
  std::string text = NodeLine(f.nodes[0]) + "\n" + NodeLine(hs) + "\n";
  auto back = ParseNodesFile(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameFile(one, *back);
}

TEST(NodesConfTest, AcceptsOlderAndNewerForms) {
  const std::string me = Name('a');
  const std::string other = Name('b');
  // No "@cport" (before Redis 4.0): the bus port is port + 10000. Blank lines, CR LF line ends,
  // upper-case flag names, vars before the nodes, no final newline.
  std::string text = "\n\r\nvars lastVoteEpoch 3 currentEpoch 5\n" + me +
                     " 127.0.0.1:7000 MYSELF,Master - 0 0 1 connected 0-10\r\n\n   \n" + other +
                     " 127.0.0.1:7001 noflags - 0 0 0 disconnected";
  auto f = ParseNodesFile(text);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->nodes.size(), 2u);
  EXPECT_EQ(f->nodes[0].cport, 17000);
  EXPECT_EQ(f->nodes[0].flags, kFlagMyself | kFlagMaster);
  EXPECT_EQ(f->nodes[1].flags, 0);
  EXPECT_EQ(f->current_epoch, 5u);
  EXPECT_EQ(f->last_vote_epoch, 3u);

  // Redis 7.2 writes auxiliary fields after the hostname (an empty hostname when there is
  // none) and unknown vars are skipped.
  std::string v72 =
      me + " 127.0.0.1:7000@17000,,tls-port=0,shard-id=" + Name('9') +
      " myself,master - 0 0 1 connected 0-10\n" + other +
      " 127.0.0.1:7001@17001,host-b,tcp-port=7001,nodename=b,shard-id=" + Name('8') +
      " master - 0 1700000000000 2 connected 11\nvars currentEpoch 2 lastVoteEpoch 0 future 1\n";
  f = ParseNodesFile(v72);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->nodes[0].hostname, "");
  EXPECT_EQ(f->nodes[0].port, 7000);
  EXPECT_EQ(f->nodes[1].hostname, "host-b");
  EXPECT_EQ(f->nodes[1].cport, 17001);
  EXPECT_EQ(f->current_epoch, 2u);
}

TEST(NodesConfTest, RejectsBadFilesNamingTheLine) {
  const std::string me = Name('a') + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected";
  const std::string b = Name('b');
  struct Case {
    std::string text;
    std::string expect;  // in the message
  };
  const std::vector<Case> cases = {
      {me + "\n" + b + " 127.0.0.1:7001@17001 master - 0 0\n", "line 2"},
      {me + "\n" + b + " 127.0.0.1-7001 master - 0 0 1 connected\n", "no ':'"},
      {me + "\n" + b + " 127.0.0.1:x@17001 master - 0 0 1 connected\n", "bad port"},
      {me + "\n" + b + " 127.0.0.1:70000@17001 master - 0 0 1 connected\n", "bad port"},
      {me + "\n" + b + " 127.0.0.1:7001@ master - 0 0 1 connected\n", "bus port"},
      {me + "\n" + b + " 127.0.0.1:7001@17001,h,junk master - 0 0 1 connected\n", "auxiliary"},
      {me + " 16384\n", "line 1"},
      {me + " -1\n", "bad slot"},
      {me + " 5-3\n", "reversed"},
      {me + " 5-\n", "bad slot"},
      {me + " 0-16384\n", "bad slot"},
      {me + " 1x\n", "bad slot"},
      {me + " \"\"\n", "bad slot"},
      {me + " [16384->-" + b + "]\n", "migrating/importing"},
      {me + " [5->>" + b + "]\n", "migrating/importing"},
      {me + " [5->-" + b + "\n", "migrating/importing"},
      {me + " [5->-abc]\n", "migrating/importing"},
      {me + " [5\n", "migrating/importing"},
      {me + "\n" + b + " 127.0.0.1:7001@17001 master,leader - 0 0 1 connected\n", "Unknown flag"},
      {me + "\n" + b + " 127.0.0.1:7001@17001 master, - 0 0 1 connected\n", "Unknown flag"},
      {me + "\n" + me + "\n", "named twice"},
      {me + "\n" + b + " 127.0.0.1:7001@17001 myself,master - 0 0 1 connected\n", "second myself"},
      {b + " 127.0.0.1:7001@17001 master - 0 0 1 connected\n", "no node is myself"},
      {"", "no node is myself"},
      {"vars currentEpoch 1 lastVoteEpoch 0\n", "no node is myself"},
      {me + "\nvars currentEpoch\n", "line 2"},
      {me + "\nvars currentEpoch x lastVoteEpoch 0\n", "bad value"},
      {me + "\nvars currentEpoch -1\n", "bad value"},
      {me + "\n" + b + "x 127.0.0.1:7001@17001 master - 0 0 1 connected\n", "bad node name"},
      {me + "\n" + b + " 127.0.0.1:7001@17001 slave ABC 0 0 1 connected\n", "bad primary"},
      {me + "\n" + b + " 127.0.0.1:7001@17001 master - x 0 1 connected\n", "ping-sent"},
      {me + "\n" + b + " 127.0.0.1:7001@17001 master - 0 0 -1 connected\n", "config epoch"},
      {me + "\n" + b + " 127.0.0.1:7001@17001 master - 0 0 1 up\n", "link state"},
      {me + "\n" + b + " \"127.0.0.1:7001@17001 master - 0 0 1 connected\n", "quotes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto f = ParseNodesFile(c.text);
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), Code::kCorruption);
    EXPECT_NE(f.status().message().find("corrupted cluster config file"), std::string::npos);
    EXPECT_NE(f.status().message().find(c.expect), std::string::npos) << f.status().message();
  }
}

TEST(NodesConfTest, LongBadLinesAreShortenedInTheMessage) {
  std::string line = Name('a') + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected";
  for (int s = 0; s < 16000; s += 2) line += " " + std::to_string(s);
  line += " 99999";
  auto f = ParseNodesFile(line);
  ASSERT_FALSE(f.ok());
  EXPECT_LT(f.status().message().size(), 400u);
  EXPECT_NE(f.status().message().find("line 1"), std::string::npos);
}

// --- Files ---

TEST(NodesConfTest, LoadTreatsMissingAndEmptyFilesAsNoConfiguration) {
  TempDir dir;
  auto missing = LoadNodesFile(dir.File("nodes.conf"));
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_FALSE(missing->has_value());

  WriteAll(dir.File("nodes.conf"), "");
  auto empty = LoadNodesFile(dir.File("nodes.conf"));
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());

  WriteAll(dir.File("nodes.conf"), kRedisFile);
  auto full = LoadNodesFile(dir.File("nodes.conf"));
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  ASSERT_TRUE(full->has_value());
  EXPECT_EQ((*full)->nodes.size(), 6u);

  WriteAll(dir.File("nodes.conf"), "garbage\n");
  auto bad = LoadNodesFile(dir.File("nodes.conf"));
  EXPECT_EQ(bad.status().code(), Code::kCorruption);

  auto unreadable = LoadNodesFile(dir.path());  // a directory: read fails with EISDIR
  EXPECT_EQ(unreadable.status().code(), Code::kIoError);
}

TEST(NodesConfTest, WritesTheWholeFileAndReplacesTheOldOne) {
  TempDir dir;
  const std::string path = dir.File("nodes.conf");
  WriteAll(path, std::string(100000, '\n'));  // bigger than the new text
  NodesFile f = EveryKindOfNode();
  ASSERT_TRUE(WriteNodesFileAtomically(path, f).ok());
  EXPECT_EQ(ReadFile(path), FormatNodesFile(f));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);

  auto loaded = LoadNodesFile(path);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  ExpectSameFile(f, **loaded);
}

TEST(NodesConfTest, FailedWriteLeavesTheOldFile) {
  TempDir dir;
  const std::string path = dir.File("nodes.conf");
  WriteAll(path, kRedisFile);

  // A file size limit makes the write itself fail part way (it works for root too, where a
  // read-only directory would not stop anything).
  NodesFile big = EveryKindOfNode();
  for (int s = 0; s < kClusterSlots; s += 2) big.nodes[1].slots.set(s);
  ASSERT_GT(FormatNodesFile(big).size(), 40000u);
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  Status st = WriteNodesFileAtomically(path, big);
  setrlimit(RLIMIT_FSIZE, &old_limit);
  signal(SIGXFSZ, old_handler);
  EXPECT_EQ(st.code(), Code::kIoError);
  EXPECT_NE(st.message().find("write"), std::string::npos) << st.message();
  EXPECT_EQ(ReadFile(path), kRedisFile);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);

  // The target cannot be replaced (a directory is in its place): the temporary file goes.
  fs::create_directory(dir.File("taken"));
  WriteAll(dir.File("taken/inside"), "x");
  st = WriteNodesFileAtomically(dir.File("taken"), big);
  EXPECT_NE(st.message().find("rename"), std::string::npos) << st.message();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 2);

  // A missing directory.
  st = WriteNodesFileAtomically(dir.File("no/such/dir/nodes.conf"), big);
  EXPECT_EQ(st.code(), Code::kIoError);

  // An unwritable directory (root writes anyway, so only where that means something).
  if (geteuid() != 0) {
    fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
    st = WriteNodesFileAtomically(path, big);
    fs::permissions(dir.path(), fs::perms::owner_all);
    EXPECT_EQ(st.code(), Code::kIoError);
    EXPECT_EQ(ReadFile(path), kRedisFile);
  }
}

// --- Against Debian's redis-server 7.0 ---

// CLUSTER NODES, parsed (a reply without a vars line).
NodesFile NodesOf(RedisClusterNode& node) {
  Reply r = node.Command({"CLUSTER", "NODES"});
  auto f = ParseNodesFile(r.str);
  EXPECT_TRUE(f.ok()) << f.status().ToString() << "\n" << r.str;
  return f.ok() ? *f : NodesFile();
}

// Gossip between three nodes settles within a few cron runs; generous for a loaded machine.
constexpr std::chrono::seconds kGossipWait(30);

// Every line of a CLUSTER NODES reply is NodeLine of what it parses to.
void ExpectNodeLinesMatch(const std::string& reply) {
  auto f = ParseNodesFile(reply);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::string rebuilt;
  for (const NodeInfo& n : f->nodes) rebuilt += NodeLine(n) + "\n";
  EXPECT_EQ(rebuilt, reply);
}

std::string FileLineOf(const std::string& text, const std::string& name) {
  size_t at = text.find(name + " ");
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

TEST(NodesConfTest, ReadsWhatRedisWrites) {
  if (access(kRedisServer, X_OK) != 0) GTEST_SKIP() << "no " << kRedisServer;
  RedisClusterNode a, b, c;
  ASSERT_TRUE(a.Start() && b.Start() && c.Start());
  const std::string a_id = a.Ok({"CLUSTER", "MYID"});
  const std::string b_id = b.Ok({"CLUSTER", "MYID"});
  const std::string c_id = c.Ok({"CLUSTER", "MYID"});

  // Alone, before it has met anyone, a node does not know its own address yet.
  a.Ok({"CLUSTER", "SET-CONFIG-EPOCH", "7"});
  b.Ok({"CLUSTER", "SET-CONFIG-EPOCH", "3"});
  a.Ok({"CLUSTER", "ADDSLOTSRANGE", "0", "100"});
  a.Ok({"CLUSTER", "ADDSLOTS", "200"});
  b.Ok({"CLUSTER", "ADDSLOTS", "300"});
  b.Ok({"CLUSTER", "ADDSLOTSRANGE", "16000", "16383"});
  a.Ok({"CLUSTER", "SAVECONFIG"});
  std::string text = ReadFile(a.conf_path());
  EXPECT_EQ(text, a_id + " :" + std::to_string(a.port()) + "@" + std::to_string(a.port() + 10000) +
                      " myself,master - 0 0 7 connected 0-100 200\n"
                      "vars currentEpoch 7 lastVoteEpoch 0\n");
  auto alone = ParseNodesFile(text);
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_EQ(alone->nodes[0].ip, "");
  EXPECT_EQ(FormatNodesFile(*alone), text);

  // a meets b, c meets a and becomes b's replica; a opens two slots towards b.
  a.Ok({"CLUSTER", "MEET", "127.0.0.1", std::to_string(b.port())});
  c.Ok({"CLUSTER", "MEET", "127.0.0.1", std::to_string(a.port())});
  ASSERT_TRUE(WaitUntil(
      [&] {
        NodesFile v = NodesOf(c);
        const NodeInfo* nb = Find(v, b_id);
        return nb && !(nb->flags & kFlagHandshake) && nb->slots.test(300);
      },
      kGossipWait))
      << c.Command({"CLUSTER", "NODES"}).str;
  c.Ok({"CLUSTER", "REPLICATE", b_id});
  a.Ok({"CLUSTER", "SETSLOT", "50", "MIGRATING", b_id});
  a.Ok({"CLUSTER", "SETSLOT", "150", "IMPORTING", b_id});
  ASSERT_TRUE(WaitUntil(
      [&] {
        NodesFile v = NodesOf(a);
        const NodeInfo* nb = Find(v, b_id);
        const NodeInfo* nc = Find(v, c_id);
        return v.nodes.size() == 3 && nb && nb->slots.test(300) && nb->link_connected && nc &&
               nc->primary == b_id && !(nc->flags & kFlagHandshake) && !Find(v, a_id)->ip.empty();
      },
      kGossipWait))
      << a.Command({"CLUSTER", "NODES"}).str;

  a.Ok({"CLUSTER", "SAVECONFIG"});
  text = ReadFile(a.conf_path());
  auto f = ParseNodesFile(text);
  ASSERT_TRUE(f.ok()) << f.status().ToString() << "\n" << text;
  EXPECT_EQ(FormatNodesFile(*f), text);  // timestamps and order included
  EXPECT_EQ(f->current_epoch, 7u);
  EXPECT_EQ(f->last_vote_epoch, 0u);

  const NodeInfo* me = Find(*f, a_id);
  ASSERT_NE(me, nullptr);
  EXPECT_EQ(me->flags, kFlagMyself | kFlagMaster);
  EXPECT_EQ(me->ip, "127.0.0.1");
  EXPECT_EQ(me->port, a.port());
  EXPECT_EQ(me->cport, a.port() + 10000);
  EXPECT_EQ(me->config_epoch, 7u);
  EXPECT_EQ(me->ping_sent_ms, 0);  // (pong-received may not be 0: gossip about myself sets it)
  EXPECT_EQ(me->slots, Slots({{0, 100}, {200, 200}}));
  EXPECT_EQ(me->migrating, (std::map<int, std::string>{{50, b_id}}));
  EXPECT_EQ(me->importing, (std::map<int, std::string>{{150, b_id}}));

  const NodeInfo* nb = Find(*f, b_id);
  ASSERT_NE(nb, nullptr);
  EXPECT_EQ(nb->flags, kFlagMaster);
  EXPECT_EQ(nb->primary, "");
  EXPECT_EQ(nb->config_epoch, 3u);
  EXPECT_EQ(nb->port, b.port());
  EXPECT_EQ(nb->slots, Slots({{300, 300}, {16000, 16383}}));
  EXPECT_GT(nb->pong_received_ms, 0);

  const NodeInfo* nc = Find(*f, c_id);
  ASSERT_NE(nc, nullptr);
  EXPECT_EQ(nc->flags, kFlagReplica);
  EXPECT_EQ(nc->primary, b_id);
  EXPECT_EQ(nc->config_epoch, 3u);  // a replica shows its primary's epoch
  EXPECT_TRUE(nc->slots.none());

  // The replica's own file: myself,slave.
  c.Ok({"CLUSTER", "SAVECONFIG"});
  std::string c_text = ReadFile(c.conf_path());
  auto cf = ParseNodesFile(c_text);
  ASSERT_TRUE(cf.ok()) << cf.status().ToString() << "\n" << c_text;
  EXPECT_EQ(FormatNodesFile(*cf), c_text);
  const NodeInfo* c_me = Find(*cf, c_id);
  ASSERT_NE(c_me, nullptr);
  EXPECT_EQ(c_me->flags, kFlagMyself | kFlagReplica);
  EXPECT_EQ(c_me->primary, b_id);

  // CLUSTER NODES is the same text per node, and shows myself as the file does but for the
  // pong time, which gossip may have moved since.
  std::string reply = a.Command({"CLUSTER", "NODES"}).str;
  ExpectNodeLinesMatch(reply);
  auto shown = ParseNodesFile(reply);
  ASSERT_TRUE(shown.ok());
  ASSERT_NE(Find(*shown, a_id), nullptr);
  NodeInfo shown_me = *Find(*shown, a_id);
  shown_me.pong_received_ms = me->pong_received_ms;
  ExpectSameNode(shown_me, *me);
  ExpectNodeLinesMatch(c.Command({"CLUSTER", "NODES"}).str);
}

TEST(NodesConfTest, RedisReadsWhatWeWrite) {
  if (access(kRedisServer, X_OK) != 0) GTEST_SKIP() << "no " << kRedisServer;
  const int port = FreeClusterPort();
  ASSERT_NE(port, 0);

  NodesFile f;
  f.current_epoch = 9;
  f.last_vote_epoch = 2;
  NodeInfo me;
  me.name = "1111111111111111111111111111111111111111";
  me.ip = "127.0.0.1";
  me.port = port;
  me.cport = port + 10000;
  me.flags = kFlagMyself | kFlagMaster;
  me.config_epoch = 5;
  me.link_connected = true;
  me.slots = Slots({{0, 5460}, {7000, 7000}});
  me.importing = {{7001, "2222222222222222222222222222222222222222"}};
  NodeInfo y;  // nothing listens at its address: Redis keeps trying, which is fine here
  y.name = "2222222222222222222222222222222222222222";
  y.ip = "127.0.0.1";
  y.port = 1;
  y.cport = 2;
  y.hostname = "host-y.example.com";
  y.flags = kFlagMaster;
  y.config_epoch = 4;
  y.slots = Slots({{5461, 6999}, {7001, 16383}});
  NodeInfo z;
  z.name = "3333333333333333333333333333333333333333";
  z.ip = "::1";
  z.port = 3;
  z.cport = 4;
  z.flags = kFlagReplica | kFlagFail;
  z.primary = y.name;
  z.config_epoch = 4;
  z.pong_received_ms = 1700000000000;
  f.nodes = {y, me, z};

  RedisClusterNode r;
  ASSERT_TRUE(WriteNodesFileAtomically(r.conf_path(), f).ok());
  ASSERT_TRUE(r.Start(port));

  EXPECT_EQ(r.Ok({"CLUSTER", "MYID"}), me.name);
  std::string info = r.Command({"CLUSTER", "INFO"}).str;
  EXPECT_NE(info.find("cluster_current_epoch:9\r\n"), std::string::npos) << info;
  EXPECT_NE(info.find("cluster_my_epoch:5\r\n"), std::string::npos) << info;
  EXPECT_NE(info.find("cluster_known_nodes:3\r\n"), std::string::npos) << info;
  EXPECT_NE(info.find("cluster_slots_assigned:16384\r\n"), std::string::npos) << info;

  std::string reply = r.Command({"CLUSTER", "NODES"}).str;
  ExpectNodeLinesMatch(reply);
  EXPECT_EQ(FileLineOf(reply, me.name), NodeLine(me));  // myself comes back byte for byte
  auto seen = ParseNodesFile(reply);
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  const NodeInfo* ny = Find(*seen, y.name);
  ASSERT_NE(ny, nullptr);
  EXPECT_EQ(ny->hostname, y.hostname);
  EXPECT_EQ(ny->port, 1);
  EXPECT_EQ(ny->cport, 2);
  EXPECT_EQ(ny->config_epoch, 4u);
  EXPECT_EQ(ny->slots, y.slots);
  EXPECT_TRUE(ny->flags & kFlagMaster);
  const NodeInfo* nz = Find(*seen, z.name);
  ASSERT_NE(nz, nullptr);
  EXPECT_EQ(nz->ip, "::1");
  EXPECT_EQ(nz->primary, y.name);
  EXPECT_TRUE(nz->flags & kFlagReplica);
  EXPECT_TRUE(nz->flags & kFlagFail);
  EXPECT_EQ(nz->config_epoch, 4u);

  // And what Redis writes back from it reads as the same cluster.
  r.Ok({"CLUSTER", "SAVECONFIG"});
  auto back = ParseNodesFile(ReadFile(r.conf_path()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->current_epoch, 9u);
  EXPECT_EQ(back->last_vote_epoch, 2u);
  ASSERT_NE(Find(*back, me.name), nullptr);
  EXPECT_EQ(NodeLine(*Find(*back, me.name)), NodeLine(me));
}

}  // namespace
}  // namespace kv::cluster
