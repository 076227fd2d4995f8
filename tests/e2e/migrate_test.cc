// End-to-end tests of MIGRATE between real processes on loopback: kvstore and Debian's
// redis-server as source and as target in every pairing (Redis' DUMP payloads restore in
// kvstore and the other way round). The same scripts run with kvstore and with redis-server as
// the source against the same kind of target, and the replies are compared byte for byte:
// single keys and KEYS, COPY, REPLACE, BUSYKEY, NOKEY, TTLs, the destination db, AUTH and
// AUTH2, syntax errors, IOERR for a closed port, a bad host and a MIGRATE to the server itself.
// Also: the DEL the move becomes for replicas, a 100,000-element list moving intact, the
// argument positions COMMAND GETKEYS finds, and the connection cache (reused, and closed after
// ten idle seconds).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

const char* KindName(Kind k) { return k == Kind::kKvstore ? "kvstore" : "redis"; }

// The raw replies of a script that migrates from `src` to `dst`. Lines sent to the target
// (to check what arrived) are recorded too.
class Script {
 public:
  Script(ServerProcess& src, ServerProcess& dst, std::vector<std::string> dst_auth = {})
      : src_(src.port()), dst_(dst.port()), port_(std::to_string(dst.port())) {
    if (!dst_auth.empty()) dst_.Call(dst_auth);
    dst_.Call({"FLUSHALL"});
  }
  std::string Src(const Cmd& cmd) { return Record(src_.Raw(cmd)); }
  std::string Dst(const Cmd& cmd) { return Record(dst_.Raw(cmd)); }
  // MIGRATE 127.0.0.1 <target port> key db timeout options...
  std::string Migrate(const std::string& key, const std::string& db, Cmd opts = {}) {
    Cmd cmd = {"MIGRATE", "127.0.0.1", port_, key, db, "5000"};
    cmd.insert(cmd.end(), opts.begin(), opts.end());
    return Src(cmd);
  }
  const std::vector<std::string>& replies() const { return replies_; }
  RespClient& src() { return src_; }
  RespClient& dst() { return dst_; }

 private:
  std::string Record(std::string r) {
    replies_.push_back(r);
    return r;
  }
  RespClient src_, dst_;
  std::string port_;
  std::vector<std::string> replies_;
};

// The keys' moves, errors and options (the target starts empty).
std::vector<std::string> MoveScript(ServerProcess& src, ServerProcess& dst) {
  Script s(src, dst);
  s.Src({"FLUSHALL"});
  s.Src({"SET", "k", "v"});
  EXPECT_EQ(s.Migrate("k", "0"), "+OK\r\n");
  EXPECT_EQ(s.Src({"EXISTS", "k"}), ":0\r\n");
  EXPECT_EQ(s.Dst({"GET", "k"}), "$1\r\nv\r\n");
  EXPECT_EQ(s.Migrate("k", "0"), "+NOKEY\r\n");
  s.Src({"SET", "k", "v2"});
  EXPECT_EQ(s.Migrate("k", "0"),
            "-ERR Target instance replied with error: BUSYKEY Target key name already "
            "exists.\r\n");
  EXPECT_EQ(s.Src({"EXISTS", "k"}), ":1\r\n");
  EXPECT_EQ(s.Migrate("k", "0", {"COPY", "REPLACE"}), "+OK\r\n");
  EXPECT_EQ(s.Src({"GET", "k"}), "$2\r\nv2\r\n");
  EXPECT_EQ(s.Dst({"GET", "k"}), "$2\r\nv2\r\n");
  // Another db: SELECT goes first.
  EXPECT_EQ(s.Migrate("k", "3", {"COPY"}), "+OK\r\n");
  s.Dst({"SELECT", "3"});
  EXPECT_EQ(s.Dst({"GET", "k"}), "$2\r\nv2\r\n");
  s.Dst({"SELECT", "0"});
  // KEYS: the missing ones are skipped.
  s.Src({"MSET", "a", "1", "b", "2"});
  EXPECT_EQ(s.Migrate("", "0", {"KEYS", "a", "nokey", "b"}), "+OK\r\n");
  EXPECT_EQ(s.Src({"EXISTS", "a", "b"}), ":0\r\n");
  s.Dst({"MGET", "a", "b"});
  s.Migrate("", "0", {"KEYS", "x", "y"});
  s.Migrate("", "0", {"KEYS"});
  s.Migrate("a", "0", {"KEYS", "a"});
  s.Migrate("k", "0", {"BOGUS"});
  s.Migrate("k", "0", {"AUTH"});
  s.Migrate("k", "0", {"AUTH2", "user"});
  s.Migrate("k", "0", {"COPY", "KEYS"});  // KEYS with a non-empty key
  s.Src({"MIGRATE", "127.0.0.1", "1", "k", "x", "5000"});
  s.Src({"MIGRATE", "127.0.0.1", "1", "k", "0", "x"});
  s.Src({"MIGRATE", "127.0.0.1", "1", "k", "0"});
  // The target refuses the db; the error forgets the selected db, so the next one selects.
  s.Migrate("k", "99", {"COPY"});
  s.Migrate("k", "0", {"REPLACE"});
  s.Dst({"GET", "k"});
  // A TTL goes along.
  s.Src({"SET", "t", "v", "PX", "100000"});
  s.Migrate("t", "0");
  int64_t pttl = s.dst().Call({"PTTL", "t"}).integer;
  EXPECT_GT(pttl, 50000);
  EXPECT_LE(pttl, 100000);
  s.Src({"SET", "gone", "v"});
  EXPECT_EQ(s.Src({"MIGRATE", "127.0.0.1", std::to_string(FreePort()), "gone", "0", "1000"}),
            "-IOERR error or timeout writing to target instance\r\n");
  EXPECT_EQ(s.Src({"MIGRATE", "", "1", "gone", "0", "1000"}),  // a host that cannot resolve
            "-IOERR error or timeout connecting to the client\r\n");
  s.Src({"EXISTS", "gone"});
  return s.replies();
}

// MIGRATE against a target with requirepass.
std::vector<std::string> AuthScript(ServerProcess& src, ServerProcess& dst) {
  Script s(src, dst, {"AUTH", "secret"});
  s.Src({"FLUSHALL"});
  s.Src({"MSET", "k", "v", "k2", "v2"});
  s.Migrate("k", "0", {"COPY"});
  s.Migrate("k", "0", {"COPY", "AUTH", "wrong"});
  s.Migrate("k", "0", {"COPY", "AUTH2", "default", "wrong"});
  EXPECT_EQ(s.Migrate("k", "0", {"COPY", "AUTH", "secret"}), "+OK\r\n");
  EXPECT_EQ(s.Migrate("k2", "0", {"AUTH2", "default", "secret"}), "+OK\r\n");
  EXPECT_EQ(s.Dst({"MGET", "k", "k2"}), "*2\r\n$1\r\nv\r\n$2\r\nv2\r\n");
  s.Src({"EXISTS", "k", "k2"});
  return s.replies();
}

class MigrateTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

INSTANTIATE_TEST_SUITE_P(Target, MigrateTest, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) { return KindName(info.param); });

TEST_P(MigrateTest, RepliesMatchRedisAsSource) {
  ServerProcess dst(GetParam()), kv(Kind::kKvstore), redis(Kind::kRedis);
  std::vector<std::string> ours = MoveScript(kv, dst);
  std::vector<std::string> theirs = MoveScript(redis, dst);
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); i++) EXPECT_EQ(ours[i], theirs[i]) << "reply " << i;
}

TEST_P(MigrateTest, AuthAndAuth2MatchRedisAsSource) {
  ServerProcess dst(GetParam(), {"--requirepass", "secret"}), kv(Kind::kKvstore),
      redis(Kind::kRedis);
  std::vector<std::string> ours = AuthScript(kv, dst);
  std::vector<std::string> theirs = AuthScript(redis, dst);
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); i++) EXPECT_EQ(ours[i], theirs[i]) << "reply " << i;
}

// Values of each type, and a list of 100,000 elements, move intact from kvstore to the target,
// and from redis-server to kvstore.
TEST_P(MigrateTest, BigValuesMoveIntact) {
  ServerProcess dst(GetParam()), kv(Kind::kKvstore), redis(Kind::kRedis);
  for (ServerProcess* src : {&kv, &redis}) {
    ServerProcess* to = src == &redis ? &kv : &dst;
    RespClient s(src->port()), d(to->port());
    d.Call({"FLUSHALL"});
    for (int batch = 0; batch < 100; batch++) {
      Cmd push = {"RPUSH", "list"};
      for (int i = 0; i < 1000; i++) {
        int n = batch * 1000 + i;
        push.push_back(n % 3 == 0 ? std::to_string(n) : "element-" + std::to_string(n));
      }
      s.Call(push);
    }
    s.Call({"HSET", "hash", "f1", "v1", "f2", "2"});
    s.Call({"ZADD", "zset", "1.5", "a", "2", "b"});
    s.Call({"SADD", "set", "x", "y", "1"});
    s.Call({"XADD", "stream", "1-1", "f", "v"});
    const Cmd kReads[] = {{"LRANGE", "list", "0", "-1"},
                          {"HGETALL", "hash"},
                          {"ZRANGE", "zset", "0", "-1", "WITHSCORES"},
                          {"SMEMBERS", "set"},
                          {"XRANGE", "stream", "-", "+"}};
    std::vector<std::string> before;
    for (const Cmd& r : kReads) before.push_back(s.Raw(r));
    ASSERT_EQ(s.Raw({"MIGRATE", "127.0.0.1", std::to_string(to->port()), "", "0", "10000", "KEYS",
                     "list", "hash", "zset", "set", "stream"}),
              "+OK\r\n")
        << KindName(GetParam());
    EXPECT_EQ(s.Call({"DBSIZE"}).integer, 0);
    EXPECT_EQ(d.Call({"LLEN", "list"}).integer, 100000);
    for (size_t i = 0; i < std::size(kReads); i++) {
      std::string after = d.Raw(kReads[i]);
      if (kReads[i][0] == "SMEMBERS" || kReads[i][0] == "HGETALL") {
        EXPECT_EQ(after.size(), before[i].size()) << kReads[i][0];  // order may differ
      } else {
        EXPECT_EQ(after, before[i]) << kReads[i][0];
      }
    }
  }
}

// The target is the server itself: it cannot answer while MIGRATE waits, so the wait times out
// (in Redis as in kvstore), and the server goes on serving.
TEST_P(MigrateTest, ToItselfTimesOut) {
  ServerProcess self(GetParam());
  RespClient c(self.port());
  c.Call({"SET", "k", "v"});
  EXPECT_EQ(c.Raw({"MIGRATE", "127.0.0.1", std::to_string(self.port()), "k", "0", "300"}),
            "-IOERR error or timeout reading to target instance\r\n");
  EXPECT_EQ(c.Raw({"GET", "k"}), "$1\r\nv\r\n");
  RespClient other(self.port());
  EXPECT_EQ(other.Raw({"PING"}), "+PONG\r\n");
}

// The connection to a target is kept for the next MIGRATE, and counted in INFO.
TEST_P(MigrateTest, ConnectionIsReused) {
  ServerProcess src(GetParam()), dst(Kind::kKvstore);
  RespClient s(src.port()), d(dst.port());
  std::string port = std::to_string(dst.port());
  EXPECT_EQ(InfoField(s, "stats", "migrate_cached_sockets"), "0");
  s.Call({"MSET", "a", "1", "b", "2"});
  ASSERT_EQ(s.Raw({"MIGRATE", "127.0.0.1", port, "a", "0", "5000"}), "+OK\r\n");
  EXPECT_EQ(InfoField(s, "stats", "migrate_cached_sockets"), "1");
  std::string conns = InfoField(d, "stats", "total_connections_received");
  ASSERT_EQ(s.Raw({"MIGRATE", "127.0.0.1", port, "b", "0", "5000"}), "+OK\r\n");
  EXPECT_EQ(InfoField(d, "stats", "total_connections_received"), conns);
  EXPECT_EQ(InfoField(d, "clients", "connected_clients"), "2");  // d, and the source's
  // The target drops the connection: the next MIGRATE finds out and retries on a new one.
  ASSERT_EQ(d.Call({"CLIENT", "KILL", "SKIPME", "yes"}).integer, 1);
  s.Call({"SET", "c", "3"});
  EXPECT_EQ(s.Raw({"MIGRATE", "127.0.0.1", port, "c", "0", "5000"}), "+OK\r\n");
  EXPECT_EQ(InfoField(d, "stats", "total_connections_received"),
            std::to_string(std::stoi(conns) + 1));
  EXPECT_EQ(d.Raw({"GET", "c"}), "$1\r\n3\r\n");
}

// An unused connection is closed after ten seconds.
TEST(MigrateSocketCache, IdleConnectionIsClosed) {
  ServerProcess src(Kind::kKvstore), dst(Kind::kKvstore);
  RespClient s(src.port()), d(dst.port());
  s.Call({"SET", "a", "1"});
  ASSERT_EQ(s.Raw({"MIGRATE", "127.0.0.1", std::to_string(dst.port()), "a", "0", "5000"}),
            "+OK\r\n");
  EXPECT_EQ(InfoField(s, "stats", "migrate_cached_sockets"), "1");
  EXPECT_TRUE(
      WaitFor([&] { return InfoField(s, "stats", "migrate_cached_sockets") == "0"; }, 30000, 200));
  EXPECT_TRUE(WaitFor([&] { return InfoField(d, "clients", "connected_clients") == "1"; }));
}

// A MIGRATE that moved keys reaches replicas as a DEL of those keys; with COPY, or when nothing
// moved, it reaches them not at all.
TEST(MigrateReplication, MoveIsReplicatedAsDel) {
  ServerProcess primary(Kind::kKvstore), dst(Kind::kKvstore);
  ServerProcess replica(Kind::kKvstore,
                        {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  RespClient p(primary.port()), r(replica.port());
  std::string port = std::to_string(dst.port());
  p.Call({"MSET", "k", "v", "c", "v", "m1", "1", "m2", "2"});
  ASSERT_TRUE(InSync(p, r));
  ASSERT_EQ(p.Raw({"MIGRATE", "127.0.0.1", port, "k", "0", "5000"}), "+OK\r\n");
  ASSERT_EQ(p.Raw({"MIGRATE", "127.0.0.1", port, "c", "0", "5000", "COPY"}), "+OK\r\n");
  ASSERT_EQ(p.Raw({"MIGRATE", "127.0.0.1", port, "", "0", "5000", "KEYS", "m1", "m2"}), "+OK\r\n");
  ASSERT_EQ(p.Raw({"MIGRATE", "127.0.0.1", port, "nokey", "0", "5000"}), "+NOKEY\r\n");
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"EXISTS", "k", "m1", "m2"}).integer, 0);
  EXPECT_EQ(r.Call({"GET", "c"}).str, "v");
  std::string stats = r.Call({"INFO", "commandstats"}).str;
  EXPECT_NE(stats.find("cmdstat_del:calls=2,"), std::string::npos) << stats;
  EXPECT_EQ(stats.find("cmdstat_migrate"), std::string::npos) << stats;
}

// COMMAND GETKEYS and GETKEYSANDFLAGS find MIGRATE's keys where Redis does.
TEST(MigrateKeys, GetKeysMatchesRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess kv(Kind::kKvstore), redis(Kind::kRedis);
  RespClient c(kv.port()), r(redis.port());
  const std::vector<Cmd> kCases = {
      {"h", "1", "k", "0", "5"},
      {"h", "1", "k", "0", "5", "COPY", "REPLACE"},
      {"h", "1", "", "0", "5", "KEYS", "a", "b"},
      {"h", "1", "", "0", "5", "KEYS"},
      {"h", "1", "k", "0", "5", "KEYS", "a"},
      {"h", "1", "", "0", "5", "AUTH", "keys", "KEYS", "a"},
      {"h", "1", "", "0", "5", "AUTH2", "keys", "keys", "keys", "b"},
      {"h", "1", "", "0", "5", "AUTH2", "keys", "keys", "keys"},
      {"h", "1", "", "0", "5", "COPY"},
  };
  for (const char* sub : {"GETKEYS", "GETKEYSANDFLAGS"}) {
    for (Cmd args : kCases) {
      args.insert(args.begin(), {"COMMAND", sub, "MIGRATE"});
      EXPECT_EQ(c.Raw(args), r.Raw(args)) << sub << " " << args[6] << " " << args.size();
    }
  }
}

}  // namespace
}  // namespace kv::test
