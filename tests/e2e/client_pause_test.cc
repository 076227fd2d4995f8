// CLIENT PAUSE and CLIENT UNPAUSE end to end, compared with Debian's redis-server where the
// replies are deterministic: what a WRITE pause holds (writes, PUBLISH, PFCOUNT, scripts that
// may write, EXEC of a transaction that queued one) and what it lets through, ALL, how a newer
// pause extends but never shortens nor relaxes one in force, the order held clients run in
// once released (kvstore runs several poll groups), expiry and eviction standing still, and a
// replica whose stream from its primary waits for the pause.
//
// "Held" is seen from another client (INFO blocked_clients, CLIENT LIST) rather than from
// time; under ALL, where every command waits, only lower bounds of elapsed time are checked.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/suite_servers.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Cmd = std::vector<std::string>;

class ClientPause : public KvstoreAndRedisSuite {
 protected:
  static void SetUpTestSuite() { StartServers({"--io-threads", "3"}); }
  void SetUp() override {
    for (int port : Ports()) RespClient(port).Call({"FLUSHALL"});
  }
  void TearDown() override {
    for (int port : Ports()) RespClient(port).Call({"CLIENT", "UNPAUSE"});
  }
  // kvstore, then redis-server when installed.
  static std::vector<int> Ports() {
    std::vector<int> out = {kv_->port()};
    if (redis_) out.push_back(redis_->port());
    return out;
  }
  // Waits until INFO says `n` clients are blocked (held by the pause, here).
  static bool WaitHeld(RespClient& c, int n) {
    return WaitFor([&] { return InfoField(c, "clients", "blocked_clients") == std::to_string(n); });
  }
};

// The value of `field` in a CLIENT LIST line.
std::string Field(const std::string& line, const std::string& field) {
  size_t at = line.find(" " + field + "=");
  if (at == std::string::npos) return "";
  size_t start = at + field.size() + 2;
  return line.substr(start, line.find_first_of(" \n", start) - start);
}

int64_t ElapsedMs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               since)
      .count();
}

TEST_F(ClientPause, ArgumentErrorsMatchRedis) {
  if (!redis_) GTEST_SKIP() << "redis-server is not installed";
  const std::vector<Cmd> cmds = {
      {"CLIENT", "PAUSE"},
      {"CLIENT", "PAUSE", "abc"},
      {"CLIENT", "PAUSE", "-1"},
      {"CLIENT", "PAUSE", "1.5"},
      {"CLIENT", "PAUSE", "99999999999999999999"},
      {"CLIENT", "PAUSE", "100", "FOO"},
      {"CLIENT", "PAUSE", "abc", "FOO"},  // the mode is checked first
      {"CLIENT", "PAUSE", "100", "WRITE", "x"},
      {"CLIENT", "PAUSE", "0"},                           // over at once
      {"CLIENT", "PAUSE", "9223372036854775807", "ALL"},  // wraps around in Redis 7.0: over
      {"CLIENT", "UNPAUSE", "x"},
      {"CLIENT", "UNPAUSE"},
      {"CLIENT", "UNBLOCK"},
      {"CLIENT", "UNBLOCK", "abc"},
      {"CLIENT", "UNBLOCK", "abc", "FOO"},  // the reason is checked first
      {"CLIENT", "UNBLOCK", "1", "FOO"},
      {"CLIENT", "UNBLOCK", "1", "TIMEOUT", "x"},
      {"CLIENT", "UNBLOCK", "-5"},
      {"CLIENT", "UNBLOCK", "99999", "error"},
      {"PING"},  // no pause is left in force
  };
  RespClient c(kv_->port()), r(redis_->port());
  for (const Cmd& cmd : cmds) {
    std::string what;
    for (const auto& a : cmd) what += a + " ";
    EXPECT_EQ(c.Raw(cmd), r.Raw(cmd)) << what;
  }
}

// Under WRITE, commands that may reach the replication stream wait; the rest run.
TEST_F(ClientPause, WriteHoldsWhatMayReplicate) {
  const std::vector<Cmd> runs = {
      {"GET", "k"},
      {"PING"},
      {"EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k"},
      {"EVAL", "#!lua flags=no-writes\nreturn 2", "0"},
      {"SCRIPT", "EXISTS", "0000000000000000000000000000000000000000"},
      {"PUBSUB", "NUMSUB", "ch"},
      {"CLIENT", "PAUSE", "10", "WRITE"},  // does not shorten the pause
      {"SELECT", "0"},
  };
  const std::vector<Cmd> held = {
      {"SET", "k", "v2"},
      {"PUBLISH", "ch", "m"},
      {"PFCOUNT", "hll"},
      {"EVAL", "return 1", "0"},
      {"EVAL", "#!lua\nreturn 3", "0"},
      {"EVALSHA", "0000000000000000000000000000000000000000", "0"},
      {"FLUSHALL"},
      {"EXPIRE", "k", "100"},
  };
  std::vector<std::vector<std::string>> replies(Ports().size());
  for (size_t s = 0; s < Ports().size(); s++) {
    int port = Ports()[s];
    RespClient admin(port), reader(port);
    ASSERT_EQ(admin.Raw({"SET", "k", "v"}), "+OK\r\n");
    // A transaction that queued a write before the pause waits at EXEC; one that only reads
    // does not.
    RespClient tx(port), ro_tx(port);
    ASSERT_EQ(tx.Raw({"MULTI"}), "+OK\r\n");
    ASSERT_EQ(tx.Raw({"INCR", "n"}), "+QUEUED\r\n");
    ASSERT_EQ(admin.Raw({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK\r\n");
    for (const Cmd& cmd : runs) replies[s].push_back(reader.Raw(cmd));
    ASSERT_EQ(ro_tx.Raw({"MULTI"}), "+OK\r\n");
    ASSERT_EQ(ro_tx.Raw({"GET", "k"}), "+QUEUED\r\n");
    replies[s].push_back(ro_tx.Raw({"EXEC"}));
    std::vector<std::unique_ptr<RespClient>> waiting;
    for (const Cmd& cmd : held) {
      waiting.push_back(std::make_unique<RespClient>(port));
      waiting.back()->Send(cmd);
      ASSERT_TRUE(WaitHeld(admin, static_cast<int>(waiting.size()))) << cmd[0] << " " << port;
    }
    tx.Send({"EXEC"});
    ASSERT_TRUE(WaitHeld(admin, static_cast<int>(held.size()) + 1)) << port;
    EXPECT_EQ(reader.Raw({"GET", "k"}), "$1\r\nv\r\n");  // nothing held has run
    ASSERT_EQ(admin.Raw({"CLIENT", "UNPAUSE"}), "+OK\r\n");
    for (auto& w : waiting) replies[s].push_back(w->Read().raw);
    replies[s].push_back(tx.Read().raw);
    EXPECT_EQ(admin.Raw({"DBSIZE"}), ":1\r\n");  // FLUSHALL ran, then the EXEC's INCR
  }
  if (redis_) EXPECT_EQ(replies[0], replies[1]);
}

// Inside MULTI a write is held before it is queued, as in Redis; CLIENT LIST shows the held
// client blocked, with the held command.
TEST_F(ClientPause, WriteInsideMultiIsHeldBeforeItIsQueued) {
  std::vector<std::string> got[2];
  for (size_t s = 0; s < Ports().size(); s++) {
    RespClient admin(Ports()[s]), c(Ports()[s]);
    int64_t id = c.Call({"CLIENT", "ID"}).integer;
    ASSERT_EQ(c.Raw({"MULTI"}), "+OK\r\n");
    ASSERT_EQ(admin.Raw({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK\r\n");
    got[s].push_back(c.Raw({"GET", "k"}));
    c.Send({"SET", "k", "v"});
    ASSERT_TRUE(WaitHeld(admin, 1));
    std::string line = admin.Call({"CLIENT", "LIST", "ID", std::to_string(id)}).str;
    got[s].push_back(Field(line, "flags") + " " + Field(line, "cmd"));
    got[s].push_back(admin.Raw({"CLIENT", "UNPAUSE"}));
    got[s].push_back(c.Read().raw);
    got[s].push_back(c.Raw({"EXEC"}));
  }
  EXPECT_EQ(got[0], (std::vector<std::string>{"+QUEUED\r\n", "xb set", "+OK\r\n", "+QUEUED\r\n",
                                              "*2\r\n$-1\r\n+OK\r\n"}));
  if (redis_) EXPECT_EQ(got[0], got[1]);
}

// Under ALL every command waits, CLIENT UNPAUSE included, until the pause's end.
TEST_F(ClientPause, AllHoldsEveryCommandUntilTheEnd) {
  RespClient admin(kv_->port()), a(kv_->port()), b(kv_->port());
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(admin.Raw({"CLIENT", "PAUSE", "500", "ALL"}), "+OK\r\n");
  a.Send({"CLIENT", "UNPAUSE"});
  b.Send({"PING"});
  EXPECT_EQ(a.Read().raw, "+OK\r\n");
  EXPECT_GE(ElapsedMs(start), 490);  // not before the end (the server's clock counts in ms)
  EXPECT_EQ(b.Read().raw, "+PONG\r\n");
  EXPECT_EQ(InfoField(admin, "clients", "blocked_clients"), "0");
}

// A newer pause keeps the later end and the stricter type of the one in force.
TEST_F(ClientPause, NewerPauseExtendsButNeverShortensOrRelaxes) {
  RespClient admin(kv_->port()), c(kv_->port());
  ASSERT_EQ(admin.Raw({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK\r\n");
  ASSERT_EQ(admin.Raw({"CLIENT", "PAUSE", "10", "WRITE"}), "+OK\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  c.Send({"SET", "k", "v"});
  ASSERT_TRUE(WaitHeld(admin, 1));  // still paused past the shorter pause's end
  ASSERT_EQ(admin.Raw({"CLIENT", "UNPAUSE"}), "+OK\r\n");
  EXPECT_EQ(c.Read().raw, "+OK\r\n");
  // ALL for a short while on top of WRITE: ALL until WRITE's end.
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(admin.Raw({"CLIENT", "PAUSE", "800", "WRITE"}), "+OK\r\n");
  ASSERT_EQ(admin.Raw({"CLIENT", "PAUSE", "10", "ALL"}), "+OK\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(c.Raw({"GET", "k"}), "$1\r\nv\r\n");
  EXPECT_GE(ElapsedMs(start), 790);
}

// Held clients run in the order they were held, whatever their poll group; the rest of the
// unpausing client's own input runs first, and a newcomer after them all.
TEST_F(ClientPause, HeldClientsRunInOrder) {
  std::vector<std::string> got[2];
  for (size_t s = 0; s < Ports().size(); s++) {
    int port = Ports()[s];
    RespClient admin(port), late(port);
    std::vector<std::unique_ptr<RespClient>> held;
    ASSERT_EQ(admin.Raw({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK\r\n");
    for (int i = 0; i < 6; i++) {
      held.push_back(std::make_unique<RespClient>(port));
      held.back()->Send({"RPUSH", "list", std::to_string(i)});
      ASSERT_TRUE(WaitHeld(admin, i + 1));  // so the order they were held in is known
    }
    admin.SendRaw(RespClient::Encode({"CLIENT", "UNPAUSE"}) +
                  RespClient::Encode({"RPUSH", "list", "admin"}));
    got[s].push_back(admin.Read().raw);
    got[s].push_back(admin.Read().raw);
    got[s].push_back(late.Raw({"RPUSH", "list", "late"}));
    for (auto& h : held) got[s].push_back(h->Read().raw);
    Reply list = admin.Call({"LRANGE", "list", "0", "-1"});
    for (const Reply& e : list.elems) got[s].push_back(e.str);
  }
  EXPECT_EQ(got[0], (std::vector<std::string>{"+OK\r\n", ":1\r\n", ":8\r\n", ":2\r\n", ":3\r\n",
                                              ":4\r\n", ":5\r\n", ":6\r\n", ":7\r\n", "admin", "0",
                                              "1", "2", "3", "4", "5", "late"}));
  if (redis_) EXPECT_EQ(got[0], got[1]);
}

// While paused, keys whose TTL passed read as absent but are not removed (expired_keys stays);
// they go once the pause ends. A pause started inside EXEC starts after it.
TEST_F(ClientPause, ExpiryWaitsForThePause) {
  for (int port : Ports()) {
    RespClient c(port);
    std::string before = InfoField(c, "stats", "expired_keys");
    ASSERT_EQ(c.Raw({"MULTI"}), "+OK\r\n");
    c.Call({"SET", "foo", "bar", "PX", "10"});
    c.Call({"SET", "bar", "foo", "PX", "10"});
    c.Call({"CLIENT", "PAUSE", "100000", "WRITE"});
    ASSERT_EQ(c.Call({"EXEC"}).elems.size(), 3u) << port;
    ASSERT_TRUE(WaitFor([&] {
      return c.Call({"GET", "foo"}).is_null && c.Call({"GET", "bar"}).is_null;
    })) << port;
    EXPECT_EQ(InfoField(c, "stats", "expired_keys"), before) << port;
    EXPECT_EQ(c.Raw({"DBSIZE"}), ":2\r\n") << port;
    ASSERT_EQ(c.Raw({"CLIENT", "UNPAUSE"}), "+OK\r\n");
    c.Call({"GET", "foo"});
    c.Call({"GET", "bar"});
    EXPECT_EQ(InfoField(c, "stats", "expired_keys"), std::to_string(std::stoll(before) + 2))
        << port;
  }
}

// Nothing is evicted while paused, however far memory is over maxmemory.
TEST_F(ClientPause, EvictionWaitsForThePause) {
  RespClient c(kv_->port());
  for (int i = 0; i < 100; i++) c.Call({"SET", "key" + std::to_string(i), std::string(100, 'x')});
  std::string before = InfoField(c, "stats", "evicted_keys");
  ASSERT_EQ(c.Raw({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK\r\n");
  ASSERT_EQ(c.Raw({"CONFIG", "SET", "maxmemory-policy", "allkeys-random"}), "+OK\r\n");
  ASSERT_EQ(c.Raw({"CONFIG", "SET", "maxmemory", "1"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"GET", "key1"}), "$100\r\n" + std::string(100, 'x') + "\r\n");
  EXPECT_EQ(c.Raw({"DBSIZE"}), ":100\r\n");
  EXPECT_EQ(InfoField(c, "stats", "evicted_keys"), before);
  ASSERT_EQ(c.Raw({"CLIENT", "UNPAUSE"}), "+OK\r\n");
  c.Call({"GET", "key1"});  // every command evicts first
  EXPECT_NE(InfoField(c, "stats", "evicted_keys"), before);
  ASSERT_EQ(c.Raw({"CONFIG", "SET", "maxmemory", "0"}), "+OK\r\n");
  ASSERT_EQ(c.Raw({"CONFIG", "SET", "maxmemory-policy", "noeviction"}), "+OK\r\n");
}

// A paused replica holds its primary's stream (its offset stays), as Redis does, and applies
// it when the pause ends.
TEST_F(ClientPause, ReplicaHoldsItsPrimarysStream) {
  ServerProcess primary(ServerProcess::Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  ServerProcess replica(ServerProcess::Kind::kKvstore,
                        {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  RespClient p(primary.port()), r(replica.port());
  ASSERT_EQ(p.Raw({"SET", "a", "1"}), "+OK\r\n");
  ASSERT_TRUE(InSync(p, r));
  ASSERT_EQ(r.Raw({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK\r\n");
  ASSERT_EQ(p.Raw({"SET", "b", "2"}), "+OK\r\n");
  ASSERT_TRUE(WaitFor([&] {
    std::string line = r.Call({"CLIENT", "LIST", "TYPE", "master"}).str;
    return Field(line, "cmd") == "set" && Field(line, "flags").find('b') != std::string::npos;
  }));
  EXPECT_TRUE(r.Call({"GET", "b"}).is_null);
  // What came before the SET (a SELECT) may be applied; the SET and what follows are not.
  EXPECT_NE(InfoField(r, "replication", "slave_repl_offset"),
            InfoField(p, "replication", "master_repl_offset"));
  // The bytes were read though, as Redis' slave_read_repl_offset shows.
  EXPECT_TRUE(WaitFor([&] {
    return InfoField(r, "replication", "slave_read_repl_offset") ==
           InfoField(p, "replication", "master_repl_offset");
  }));
  ASSERT_EQ(r.Raw({"CLIENT", "UNPAUSE"}), "+OK\r\n");
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Raw({"GET", "b"}), "$1\r\n2\r\n");
}

// WAIT asks the replicas where they are with a GETACK in the stream, which moves the offset: not
// while writes are paused (a FAILOVER waits for the offsets to stay put), but once they resume.
TEST_F(ClientPause, WaitSendsItsGetackOnceThePauseEnds) {
  for (auto kind : {ServerProcess::Kind::kKvstore, ServerProcess::Kind::kRedis}) {
    SCOPED_TRACE(kind == ServerProcess::Kind::kKvstore ? "kvstore" : "redis-server");
    ServerProcess primary(kind, {"--repl-diskless-sync-delay", "0"});
    ServerProcess replica(kind, {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
    RespClient p(primary.port()), r(replica.port());
    ASSERT_EQ(p.Raw({"SET", "a", "1"}), "+OK\r\n");
    ASSERT_TRUE(InSync(p, r));
    // The primary has the replica's ACK of everything (a replica acknowledges once a second).
    ASSERT_TRUE(WaitFor([&] {
      std::string offset = InfoField(p, "replication", "master_repl_offset");
      return InfoField(p, "replication", "slave0").find(",offset=" + offset + ",") !=
             std::string::npos;
    }));
    ASSERT_EQ(p.Raw({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK\r\n");
    std::string before = InfoField(p, "replication", "master_repl_offset");
    // Two replicas asked for, one there: the WAIT times out with 1.
    EXPECT_EQ(p.Raw({"WAIT", "2", "300"}), ":1\r\n");
    EXPECT_EQ(InfoField(p, "replication", "master_repl_offset"), before);
    ASSERT_EQ(p.Raw({"CLIENT", "UNPAUSE"}), "+OK\r\n");
    // *3 $8 REPLCONF $6 GETACK $1 *: 37 bytes.
    std::string after = std::to_string(std::stoll(before) + 37);
    EXPECT_TRUE(WaitFor([&] { return InfoField(p, "replication", "master_repl_offset") == after; }))
        << InfoField(p, "replication", "master_repl_offset") << " after " << before;
    ASSERT_TRUE(InSync(p, r));
  }
}

}  // namespace
}  // namespace kv::test
