// End-to-end tests of replication over TCP with real processes on loopback: kvstore and Debian's
// redis-server following each other (full and partial resyncs with writes running, chains and
// failover, disk-based and diskless syncs and loads), limits, auth and faults. How a sync starts
// and how its stream follows: replication_sync_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "tests/support/background_writes.h"
#include "tests/support/populate.h"
#include "tests/support/process.h"
#include "net/socket.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

// 100,000 keys of 1,000 bytes: a snapshot that takes a moment to move.
void LoadHundredMegabytes(RespClient& c) {
  for (int batch = 0; batch < 100; batch++) {
    Cmd mset = {"MSET"};
    for (int i = 0; i < 1000; i++) {
      mset.push_back("k:" + std::to_string(batch) + ":" + std::to_string(i));
      mset.push_back(std::string(1000, static_cast<char>('a' + i % 26)));
    }
    ASSERT_EQ(c.Call(mset).str, "OK");
  }
}

// Writes of every kind, including ones Redis rewrites for replicas (relative TTLs, INCRBYFLOAT,
// SPOP, blocking pops served later) and transactions.
void Writes(RespClient& c, int round) {
  std::string r = std::to_string(round);
  c.Call({"SET", "w:" + r, r, "PX", "500000"});
  c.Call({"INCRBYFLOAT", "float", "1.5"});
  c.Call({"LPUSH", "list", r});
  c.Call({"SADD", "spop-set", "a" + r, "b" + r, "c" + r});
  c.Call({"SPOP", "spop-set"});
  c.Call({"ZINCRBY", "zset", "1", "m" + r});
  c.Call({"HINCRBY", "hash", "n", "1"});
  c.Call({"EXPIRE", "key:" + r, "1000"});
  c.Call({"DEL", "key:" + std::to_string(round + 500)});
  c.Call({"MULTI"});
  c.Call({"INCR", "tx"});
  c.Call({"SELECT", "5"});
  c.Call({"INCR", "tx"});
  c.Call({"EXEC"});
  c.Call({"SELECT", "0"});
}

class KvstorePrimary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    primary_ = std::make_unique<ServerProcess>(Kind::kKvstore, Cmd{"--repl-diskless-sync-delay", "0"});
  }
  std::unique_ptr<ServerProcess> primary_;
};

TEST_F(KvstorePrimary, RedisReplicaFullSyncWithWritesRunning) {
  RespClient p(primary_->port());
  Populate(p, 20000);
  BackgroundWrites writer(primary_->port(), Writes);
  ServerProcess replica(Kind::kRedis, {"--replicaof", "127.0.0.1 " + std::to_string(primary_->port())});
  RespClient r(replica.port());
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "replication", "master_link_status") == "up"; }))
      << "primary:\n" << primary_->LogText() << "replica:\n" << replica.LogText();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  writer.Stop();
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(InfoField(p, "replication", "connected_slaves"), "1");
  EXPECT_NE(InfoField(p, "replication", "slave0").find("state=online"), std::string::npos);
  // Expirations reach the replica as DELs.
  p.Call({"SET", "short", "v", "PX", "50"});
  ASSERT_TRUE(WaitFor([&] { return p.Call({"EXISTS", "short"}).integer == 0; }));
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
}

TEST_F(KvstorePrimary, DroppedLinkResyncsPartially) {
  RespClient p(primary_->port());
  Populate(p, 1000);
  ServerProcess replica(Kind::kRedis, {"--replicaof", "127.0.0.1 " + std::to_string(primary_->port())});
  RespClient r(replica.port());
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(p.Call({"CLIENT", "KILL", "TYPE", "replica"}).integer, 1);
  for (int i = 0; i < 20; i++) Writes(p, i);
  ASSERT_TRUE(WaitFor([&] { return InfoField(p, "replication", "connected_slaves") == "1"; }));
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_NE(replica.LogText().find("Successful partial resynchronization"), std::string::npos)
      << replica.LogText();
  EXPECT_NE(primary_->LogText().find("Partial resynchronization request"), std::string::npos);
  // INFO stats counts them as Redis does; a PSYNC of an unknown history is a refused partial
  // resync followed by a full one, "PSYNC ? -1" a full one only.
  EXPECT_EQ(InfoField(p, "stats", "sync_full"), "1");
  EXPECT_EQ(InfoField(p, "stats", "sync_partial_ok"), "1");
  EXPECT_EQ(InfoField(p, "stats", "sync_partial_err"), "0");
  for (const char* replid : {"0123456789012345678901234567890123456789", "?"}) {
    RespClient other(primary_->port());
    other.Send({"PSYNC", replid, std::string(replid) == "?" ? "-1" : "5"});
    // The previous one's child may still run: keepalive newlines come first then.
    Reply reply = other.ReadSkippingNewlines();
    EXPECT_EQ(reply.str.rfind("FULLRESYNC", 0), 0u) << reply.raw;
  }
  EXPECT_EQ(InfoField(p, "stats", "sync_full"), "3");
  EXPECT_EQ(InfoField(p, "stats", "sync_partial_err"), "1");
  EXPECT_EQ(p.Call({"CONFIG", "RESETSTAT"}).str, "OK");
  EXPECT_EQ(InfoField(p, "stats", "sync_full"), "0");
  EXPECT_EQ(InfoField(p, "stats", "sync_partial_ok"), "0");
}

class KvstoreReplica : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
  static Cmd Follow(const ServerProcess& primary) {
    return {"--replicaof", "127.0.0.1 " + std::to_string(primary.port()),
            "--repl-diskless-sync-delay", "0"};
  }
};

TEST_F(KvstoreReplica, FollowsRedisPrimaryAndResyncsPartially) {
  ServerProcess primary(Kind::kRedis, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 20000);
  BackgroundWrites writer(primary.port(), Writes);
  ServerProcess replica(Kind::kKvstore, Follow(primary));
  RespClient r(replica.port());
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "replication", "master_link_status") == "up"; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  writer.Stop();
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(r.Call({"SET", "x", "1"}).str, "READONLY You can't write against a read only replica.");
  Reply role = r.Call({"ROLE"});
  ASSERT_EQ(role.elems.size(), 5u);
  EXPECT_EQ(role.elems[0].str, "slave");
  EXPECT_EQ(role.elems[3].str, "connected");
  // Drop the link from the primary's side: the replica comes back with PSYNC and continues.
  EXPECT_EQ(p.Call({"CLIENT", "KILL", "TYPE", "replica"}).integer, 1);
  for (int i = 0; i < 20; i++) Writes(p, 1000 + i);
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_NE(replica.LogText().find("Master accepted a Partial Resynchronization"),
            std::string::npos)
      << replica.LogText();
}

// kvstore -> kvstore -> kvstore, then a failover: the middle replica is promoted and the last one
// keeps following it without a full resync; a second replica re-pointed to it resyncs partially.
TEST_F(KvstoreReplica, ChainedReplicasAndFailover) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 5000);
  ServerProcess r1(Kind::kKvstore, Follow(primary));
  ServerProcess r2(Kind::kKvstore, Follow(primary));
  RespClient c1(r1.port()), c2(r2.port());
  ASSERT_TRUE(InSync(p, c1));
  ServerProcess r3(Kind::kKvstore, Follow(r1));
  RespClient c3(r3.port());
  for (int i = 0; i < 30; i++) Writes(p, i);
  ASSERT_TRUE(InSync(p, c1));
  ASSERT_TRUE(InSync(p, c2));
  ASSERT_TRUE(InSync(c1, c3));
  std::string digest = p.Call({"DEBUG", "DIGEST"}).str;
  EXPECT_EQ(c1.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(c2.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(c3.Call({"DEBUG", "DIGEST"}).str, digest);
  // Failover to r1.
  ASSERT_EQ(c1.Call({"REPLICAOF", "NO", "ONE"}).str, "OK");
  EXPECT_EQ(InfoField(c1, "replication", "role"), "master");
  ASSERT_EQ(c2.Call({"REPLICAOF", "127.0.0.1", std::to_string(r1.port())}).str, "OK");
  for (int i = 0; i < 30; i++) Writes(c1, 100 + i);
  ASSERT_TRUE(InSync(c1, c2)) << c2.Call({"INFO", "replication"}).str << "\n---- r1:\n"
                              << c1.Call({"INFO", "replication"}).str;
  ASSERT_TRUE(InSync(c1, c3)) << r3.LogText();
  digest = c1.Call({"DEBUG", "DIGEST"}).str;
  EXPECT_EQ(c2.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(c3.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(r2.LogText().find("Full resync from master", r2.LogText().find("Connecting to MASTER 127.0.0.1:" + std::to_string(r1.port()))),
            std::string::npos)
      << r2.LogText();
  EXPECT_NE(r1.LogText().find("Partial resynchronization request"), std::string::npos);
}

class Replication : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
  static Cmd Follow(const ServerProcess& primary, Cmd extra = {}) {
    Cmd args = {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
};

// Disk-based full syncs (repl-diskless-sync no): the primary saves the snapshot to its file and
// sends it with the $<length> framing; a kvstore and a redis-server replica at once.
TEST_F(Replication, DiskBasedSyncToKvstoreAndRedisReplicas) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync", "no"});
  RespClient p(primary.port());
  Populate(p, 20000);
  ServerProcess kv(Kind::kKvstore, Follow(primary));
  ServerProcess redis(Kind::kRedis, Follow(primary));
  RespClient k(kv.port()), r(redis.port());
  for (int i = 0; i < 20; i++) Writes(p, i);
  ASSERT_TRUE(InSync(p, k));
  ASSERT_TRUE(InSync(p, r));
  std::string digest = p.Call({"DEBUG", "DIGEST"}).str;
  EXPECT_EQ(k.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, digest);
  EXPECT_NE(primary.LogText().find("target: disk"), std::string::npos);
}

// A kvstore replica of a redis-server primary doing disk-based syncs.
TEST_F(Replication, KvstoreReplicaOfRedisDiskBased) {
  ServerProcess primary(Kind::kRedis, {"--repl-diskless-sync", "no"});
  RespClient p(primary.port());
  Populate(p, 5000);
  ServerProcess kv(Kind::kKvstore, Follow(primary));
  RespClient k(kv.port());
  for (int i = 0; i < 10; i++) Writes(p, i);
  ASSERT_TRUE(InSync(p, k));
  EXPECT_EQ(k.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
}

TEST_F(Replication, WaitCountsAcknowledgingReplicas) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  ServerProcess r1(Kind::kKvstore, Follow(primary)), r2(Kind::kRedis, Follow(primary));
  RespClient c1(r1.port()), c2(r2.port());
  p.Call({"SET", "k", "v"});
  ASSERT_TRUE(InSync(p, c1));
  ASSERT_TRUE(InSync(p, c2));
  p.Call({"SET", "k", "v2"});
  EXPECT_EQ(p.Call({"WAIT", "2", "5000"}).integer, 2);
  auto start = std::chrono::steady_clock::now();
  p.Call({"SET", "k", "v3"});
  EXPECT_EQ(p.Call({"WAIT", "3", "300"}).integer, 2);  // times out with the count it has
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  EXPECT_EQ(p.Call({"WAIT", "1", "-1"}).str, "ERR timeout is negative");
  EXPECT_TRUE(c1.Call({"WAIT", "1", "0"}).is_error());  // not on a replica
  // Inside MULTI it answers at once.
  p.Call({"MULTI"});
  p.Call({"WAIT", "5", "0"});
  Reply exec = p.Call({"EXEC"});
  ASSERT_EQ(exec.elems.size(), 1u);
  EXPECT_EQ(exec.elems[0].integer, 2);
  // min-replicas-to-write refuses writes when too few replicas are connected.
  ASSERT_EQ(p.Call({"CONFIG", "SET", "min-replicas-to-write", "3"}).str, "OK");
  EXPECT_EQ(p.Call({"SET", "k", "x"}).str, "NOREPLICAS Not enough good replicas to write.");
  EXPECT_EQ(p.Call({"GET", "k"}).str, "v3");
  ASSERT_EQ(p.Call({"CONFIG", "SET", "min-replicas-to-write", "2"}).str, "OK");
  EXPECT_EQ(p.Call({"SET", "k", "x"}).str, "OK");
}

// A replica restarted from its own snapshot (which records the replication ID and offset)
// continues with a partial resync.
TEST_F(Replication, RestartedReplicaResyncsPartially) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  Populate(p, 2000);
  std::string dir;
  {
    ServerProcess replica(Kind::kKvstore, Follow(primary));
    RespClient r(replica.port());
    for (int i = 0; i < 5; i++) Writes(p, i);
    ASSERT_TRUE(InSync(p, r));
    ASSERT_EQ(r.Call({"SAVE"}).str, "OK");
    dir = replica.dir();
    // Keep the directory: restart on it below (ServerProcess removes its own on destruction).
    std::string keep = "cp -r '" + dir + "' '" + dir + ".keep'";
    ASSERT_EQ(system(keep.c_str()), 0);
  }
  for (int i = 5; i < 10; i++) Writes(p, i);
  ServerProcess again(Kind::kKvstore, Follow(primary, {"--dir", dir + ".keep"}));
  RespClient r(again.port());
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_NE(again.LogText().find("Master accepted a Partial Resynchronization"),
            std::string::npos)
      << again.LogText();
  std::string rm = "rm -rf '" + dir + ".keep'";
  ASSERT_EQ(system(rm.c_str()), 0);
}

// A fake primary on a raw socket: answers the handshake, then sends `payload` after the PSYNC
// reply (garbage, or a corrupt snapshot).
class FakePrimary {
 public:
  FakePrimary(std::string psync_reply, std::string payload)
      : reply_(std::move(psync_reply)), payload_(std::move(payload)) {
    port_ = FreePort();
    auto fd = net::ListenTcp("127.0.0.1", port_, 16);
    if (!fd.ok()) abort();
    listen_ = std::move(*fd);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakePrimary() {
    stop_ = true;
    thread_.join();
  }
  int port() const { return port_; }
  int connections() const { return connections_; }

 private:
  void Serve() {
    while (!stop_) {
      auto c = net::AcceptTcp(listen_.get());
      if (!c.ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      connections_++;
      int fd = c->get();
      std::string in;
      char buf[4096];
      // PING, REPLCONF x2, PSYNC: answer each request as it comes.
      int answered = 0;
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      while (answered < 4 && std::chrono::steady_clock::now() < deadline && !stop_) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0) in.append(buf, static_cast<size_t>(n));
        if (n == 0) break;
        while (answered < 4) {
          size_t star = in.find('*', 1);
          bool complete = in.find("\r\n", in.rfind('$') == std::string::npos ? 0 : in.rfind('$')) !=
                          std::string::npos;
          if (in.empty() || !complete) break;
          std::string cmd = in;
          in = star == std::string::npos ? "" : in.substr(star);
          std::string reply = cmd.find("PSYNC") != std::string::npos ? reply_ + payload_
                              : cmd.find("PING") != std::string::npos ? "+PONG\r\n"
                                                                      : "+OK\r\n";
          [[maybe_unused]] ssize_t w = write(fd, reply.data(), reply.size());
          answered++;
          if (star == std::string::npos) break;
        }
        if (n < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  int port_;
  net::Fd listen_;
  std::string reply_, payload_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
};

TEST(ReplicationFaults, GarbageAndCorruptSnapshotsAreRefused) {
  std::string corrupt_rdb = "REDIS0010\xfe\x00\x00\x01k\x01v" + std::string("\x42\x42\x42", 3);
  std::vector<std::pair<std::string, std::string>> cases = {
      {"+FULLRESYNC nonsense\r\n", ""},
      {"-ERR go away\r\n", ""},
      {"+FULLRESYNC " + std::string(40, 'a') + " 0\r\n",
       "$" + std::to_string(corrupt_rdb.size()) + "\r\n" + corrupt_rdb},
      {"+FULLRESYNC " + std::string(40, 'a') + " 0\r\n", "$garbage\r\n"},
      {"+WHATEVER\r\n", "\x01\x02\x03"},
      // A snapshot cut short: the connection closes after half of it.
      {"+FULLRESYNC " + std::string(40, 'a') + " 0\r\n", "$100000\r\nREDIS0010" + std::string(500, '\0')},
  };
  for (const auto& [reply, payload] : cases) {
    SCOPED_TRACE(reply);
    FakePrimary fake(reply, payload);
    ServerProcess kv(Kind::kKvstore, {"--replicaof", "127.0.0.1 " + std::to_string(fake.port())});
    RespClient c(kv.port());
    c.Call({"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
    ASSERT_TRUE(WaitFor([&] { return fake.connections() >= 2; }, 10000));  // it retried
    EXPECT_EQ(InfoField(c, "replication", "master_link_status"), "down");
    EXPECT_EQ(c.Call({"DBSIZE"}).integer, 0);  // nothing partial is served
    EXPECT_TRUE(kv.Alive());
    EXPECT_NE(kv.LogText().find("Replication link to"), std::string::npos) << kv.LogText();
  }
}

// DEBUG SET-SKIP-CHECKSUM-VALIDATION 1 lets a replica load a full sync whose CRC-64 is wrong,
// as Redis' rdbLoad honours it; without it a kvstore replica refuses the snapshot, keeps
// nothing of it and asks again. (A redis-server replica exits on such a snapshot.)
TEST(ReplicationFaults, SkipChecksumValidationAppliesToAFullSync) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::string rdb;
  {
    ServerProcess src(Kind::kKvstore);
    RespClient c(src.port());
    ASSERT_EQ(c.Call({"SET", "k", "v"}).str, "OK");
    ASSERT_EQ(c.Call({"SAVE"}).str, "OK");
    rdb = ReadFile(src.dir() + "/dump.rdb");
  }
  ASSERT_GT(rdb.size(), 8u);
  rdb.back() = static_cast<char>(rdb.back() ^ 0x5a);  // the checksum's last byte
  FakePrimary fake("+FULLRESYNC " + std::string(40, 'a') + " 0\r\n",
                   "$" + std::to_string(rdb.size()) + "\r\n" + rdb);
  std::string port = std::to_string(fake.port());
  {
    ServerProcess kv(Kind::kKvstore);
    RespClient c(kv.port());
    int before = fake.connections();
    ASSERT_EQ(c.Call({"REPLICAOF", "127.0.0.1", port}).str, "OK");
    ASSERT_TRUE(WaitFor([&] { return fake.connections() >= before + 2; }, 10000));  // retried
    EXPECT_EQ(InfoField(c, "replication", "master_link_status"), "down");
    EXPECT_EQ(c.Call({"DBSIZE"}).integer, 0);
  }
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    SCOPED_TRACE(kind == Kind::kKvstore ? "kvstore" : "redis");
    ServerProcess replica(kind);
    RespClient c(replica.port());
    ASSERT_EQ(c.Call({"DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"}).str, "OK");
    ASSERT_EQ(c.Call({"REPLICAOF", "127.0.0.1", port}).str, "OK");
    ASSERT_TRUE(WaitFor([&] { return InfoField(c, "replication", "master_link_status") == "up"; }))
        << replica.LogText();
    EXPECT_EQ(c.Call({"GET", "k"}).str, "v");
  }
}

// The primary dies in the middle of a snapshot transfer: the replica serves nothing partial and
// syncs again once a primary is back on that port.
TEST_F(Replication, PrimaryKilledMidTransfer) {
  auto primary = std::make_unique<ServerProcess>(Kind::kKvstore, Cmd{"--repl-diskless-sync-delay", "0"});
  int port = primary->port();
  {
    RespClient p(port);
    ASSERT_NO_FATAL_FAILURE(LoadHundredMegabytes(p));
  }
  ServerProcess replica(Kind::kKvstore, {"--replicaof", "127.0.0.1 " + std::to_string(port)});
  RespClient r(replica.port());
  ASSERT_TRUE(WaitFor([&] {
    return InfoField(r, "replication", "master_sync_in_progress") == "1" ||
           InfoField(r, "replication", "master_link_status") == "up";
  }));
  kill(primary->pid(), SIGKILL);
  primary.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // All of it (the transfer had finished) or nothing. DBSIZE waits for a load in progress, which
  // logs its end before letting go of the dataset.
  int64_t keys = r.Call({"DBSIZE"}).integer;
  bool finished = replica.LogText().find("Finished with success") != std::string::npos;
  EXPECT_EQ(keys, finished ? 100000 : 0);
  EXPECT_TRUE(replica.Alive());
}

// repl-diskless-load swapdb / on-empty-db: the snapshot is loaded straight from the socket into
// a second dataset (the old one keeps serving), from a redis-server and from a kvstore primary,
// with the diskless ($EOF:) and the disk-based ($<len>) framings.
TEST(ReplicationDisklessLoad, FromRedisAndKvstorePrimaries) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (Kind kind : {Kind::kRedis, Kind::kKvstore}) {
    for (const char* diskless_sync : {"yes", "no"}) {
      for (const char* load : {"swapdb", "on-empty-db"}) {
        SCOPED_TRACE(std::string(kind == Kind::kRedis ? "redis" : "kvstore") + " primary, " +
                     "diskless sync " + diskless_sync + ", load " + load);
        ServerProcess primary(kind, {"--repl-diskless-sync", diskless_sync,
                                     "--repl-diskless-sync-delay", "0"});
        RespClient p(primary.port());
        Populate(p, 3000);
        ServerProcess replica(Kind::kKvstore,
                              {"--replicaof", "127.0.0.1 " + std::to_string(primary.port()),
                               "--repl-diskless-load", load});
        RespClient r(replica.port());
        for (int i = 0; i < 10; i++) Writes(p, i);
        ASSERT_TRUE(InSync(p, r));
        EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
        EXPECT_NE(replica.LogText().find("diskless load"), std::string::npos);
      }
    }
  }
}

TEST(ReplicationLimits, StaleDataAndStalledReplica) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  // replica-serve-stale-data no: a replica whose link is down answers MASTERDOWN.
  {
    ServerProcess replica(Kind::kKvstore, {"--replicaof", "127.0.0.1 " + std::to_string(FreePort()),
                                           "--replica-serve-stale-data", "no"});
    RespClient r(replica.port());
    EXPECT_EQ(r.Call({"GET", "k"}).str,
              "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
    EXPECT_EQ(InfoField(r, "replication", "master_link_status"), "down");  // INFO is "stale"
  }
  // A replica that stops reading (SIGSTOP) does not hold the primary up: WAIT times out, the
  // replica is cut off at its output limit, and it resyncs once it runs again.
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0",
                                         "--client-output-buffer-limit", "replica 1mb 256kb 1"});
  RespClient p(primary.port());
  ServerProcess replica(Kind::kRedis, {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  RespClient r(replica.port());
  p.Call({"SET", "k", "v"});
  ASSERT_TRUE(InSync(p, r));
  kill(replica.pid(), SIGSTOP);
  std::string big(100000, 'x');
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; i++) ASSERT_EQ(p.Call({"SET", "big:" + std::to_string(i), big}).str, "OK");
  EXPECT_EQ(p.Call({"WAIT", "1", "200"}).integer, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(WaitFor([&] { return InfoField(p, "replication", "connected_slaves") == "0"; }));
  EXPECT_NE(primary.LogText().find("output buffer limits"), std::string::npos);
  kill(replica.pid(), SIGCONT);
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
}

TEST(ReplicationAuth, MasterauthAgainstKvstoreAndRedisPrimaries) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    ServerProcess primary(kind, {"--requirepass", "s3cret", "--repl-diskless-sync-delay", "0"});
    RespClient p(primary.port());
    ASSERT_EQ(p.Call({"AUTH", "s3cret"}).str, "OK");
    p.Call({"SET", "k", "v"});
    std::string target = "127.0.0.1 " + std::to_string(primary.port());
    ServerProcess wrong(Kind::kKvstore, {"--replicaof", target, "--masterauth", "nope"});
    ServerProcess right(Kind::kKvstore, {"--replicaof", target, "--masterauth", "s3cret"});
    RespClient w(wrong.port()), r(right.port());
    ASSERT_TRUE(InSync(p, r));
    EXPECT_EQ(r.Call({"GET", "k"}).str, "v");
    EXPECT_EQ(InfoField(w, "replication", "master_link_status"), "down");
    // Both kinds of replica log the primary's refusal in Redis' words.
    ServerProcess redis_wrong(Kind::kRedis, {"--replicaof", target, "--masterauth", "nope"});
    for (ServerProcess* s : {&wrong, &redis_wrong}) {
      EXPECT_TRUE(WaitFor([&] {
        return s->LogText().find("Unable to AUTH to MASTER: -") != std::string::npos;
      })) << s->LogText();
    }
  }
}

// A replica that authenticates as a user with only the replication rights (masteruser), as
// Redis' docs set one up, against a kvstore and a redis-server primary, with kvstore and
// redis-server replicas; and one whose user lacks PSYNC stays down.
TEST(ReplicationAuth, MasteruserWithOnlyTheReplicationRights) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (Kind primary_kind : {Kind::kKvstore, Kind::kRedis}) {
    ServerProcess primary(
        primary_kind,
        {"--requirepass", "admin", "--repl-diskless-sync-delay", "0", "--user", "repl", "on", ">rp",
         "+psync", "+replconf", "+ping", "--user", "norepl", "on", ">np", "+replconf", "+ping"});
    RespClient p(primary.port());
    ASSERT_EQ(p.Call({"AUTH", "admin"}).str, "OK");
    p.Call({"SET", "k", "v"});
    std::string target = "127.0.0.1 " + std::to_string(primary.port());
    for (Kind replica_kind : {Kind::kKvstore, Kind::kRedis}) {
      if (primary_kind == Kind::kRedis && replica_kind == Kind::kRedis) continue;
      ServerProcess replica(replica_kind,
                            {"--replicaof", target, "--masteruser", "repl", "--masterauth", "rp"});
      RespClient r(replica.port());
      ASSERT_TRUE(InSync(p, r));
      EXPECT_EQ(r.Call({"GET", "k"}).str, "v");
      p.Call({"INCR", "n"});
      ASSERT_TRUE(InSync(p, r));
      EXPECT_EQ(r.Call({"GET", "n"}).str, p.Call({"GET", "n"}).str);
    }
    EXPECT_EQ(p.Call({"ACL", "LOG"}).elems.size(), 0u) << p.Call({"ACL", "LOG"}).raw;
    ServerProcess refused(Kind::kKvstore,
                          {"--replicaof", target, "--masteruser", "norepl", "--masterauth", "np"});
    ASSERT_TRUE(WaitFor([&] {
      Reply log = p.Call({"ACL", "LOG"});
      return !log.elems.empty() && log.elems[0].elems.size() == 14 &&
             log.elems[0].elems[7].str == "psync" && log.elems[0].elems[9].str == "norepl";
    })) << p.Call({"ACL", "LOG"}).raw;
    RespClient rr(refused.port());
    EXPECT_EQ(InfoField(rr, "replication", "master_link_status"), "down");
  }
}

// As in Redis, the snapshot child of a full resync counts as an RDB save in progress: INFO
// persistence says so and BGSAVE is refused until it ends. The replica here asks for a full
// resync and never reads, so the child stays blocked on the 100 MB snapshot.
TEST(ReplicationInfo, SnapshotChildIsABgsaveInProgress) {
  ServerProcess primary(Kind::kKvstore,
                        {"--repl-diskless-sync-delay", "0", "--rdbcompression", "no"});
  RespClient p(primary.port());
  ASSERT_NO_FATAL_FAILURE(LoadHundredMegabytes(p));
  EXPECT_EQ(InfoField(p, "persistence", "rdb_bgsave_in_progress"), "0");
  {
    RespClient stuck(primary.port());
    stuck.Send({"PSYNC", "?", "-1"});
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(p, "persistence", "rdb_bgsave_in_progress") == "1";
    }));
    Reply bgsave = p.Call({"BGSAVE"});
    EXPECT_TRUE(bgsave.is_error()) << bgsave.raw;
  }
  // The replica went away: the child ends.
  EXPECT_TRUE(WaitFor([&] {
    return InfoField(p, "persistence", "rdb_bgsave_in_progress") == "0";
  }));
}

// A replica killed while it loads a snapshot restarts cleanly on what its directory holds and
// syncs again.
TEST(ReplicationFaults, ReplicaKilledMidLoadRestartsCleanly) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  ASSERT_NO_FATAL_FAILURE(LoadHundredMegabytes(p));
  std::string target = "127.0.0.1 " + std::to_string(primary.port());
  ServerProcess first(Kind::kKvstore, {"--replicaof", target});
  ASSERT_TRUE(WaitFor([&] {
    std::string log = first.LogText();
    return log.find("Loading DB in memory") != std::string::npos ||
           log.find("Finished with success") != std::string::npos;
  }));
  kill(first.pid(), SIGKILL);
  ServerProcess again(Kind::kKvstore, {"--replicaof", target, "--dir", first.dir()});
  RespClient r(again.port());
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
}

// The snapshot child dies 200 KB into a diskless sync over TCP: a redis-server replica sees its
// transfer cut short, drops it and syncs again; the datasets end identical.
TEST(ReplicationFaults, FailedSnapshotChildEndsInACleanResyncOfARedisReplica) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port());
  ASSERT_NO_FATAL_FAILURE(LoadHundredMegabytes(p));
  // (The values compress: the whole snapshot is a few MB.)
  ASSERT_EQ(p.Call({"DEBUG", "REPLICATION-FAIL-SNAPSHOT", "AFTER", "200000"}).str, "OK");
  ServerProcess redis(Kind::kRedis, {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  RespClient r(redis.port());
  ASSERT_TRUE(InSync(p, r)) << primary.LogText();
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  std::string plog = primary.LogText();
  EXPECT_NE(plog.find("DEBUG REPLICATION-FAIL-SNAPSHOT"), std::string::npos) << plog;
  size_t first = plog.find("Full resync requested");
  ASSERT_NE(first, std::string::npos) << plog;
  EXPECT_NE(plog.find("Full resync requested", first + 1), std::string::npos) << plog;
}

}  // namespace
}  // namespace kv::test
