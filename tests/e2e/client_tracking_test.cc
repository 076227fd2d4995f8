// Client-side caching end to end (CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO): each scenario
// runs against kvstore (several poll groups, so the tracking client, the writer and the redirect
// client are on different threads) and Debian's redis-server 7.0, and the bytes of every reply and
// invalidation message, in the order each connection got them, must be the same. Client ids differ
// between the servers, so they are recorded by name. node-redis' own client-side cache runs against
// kvstore at the end.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/client_tracking_util.h"

namespace kv::test {
namespace {

using namespace tracking;  // NOLINT: the helpers of client_tracking_util.h

class Tracking : public TrackingDiffSuite {};

TEST_F(Tracking, DefaultModeInvalidatesKeysRead) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), b(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(b, "b", {"MSET", "k", "1", "k2", "2", "k3", "3"});
    t.Call(a, "a", {"GET", "k"});
    t.Call(a, "a", {"MGET", "k2", "k3", "missing"});
    t.Call(a, "a", {"STRLEN", "k3"});  // tracked twice by one client: one message
    t.Call(b, "b", {"SET", "k", "new"});
    t.Read(a, "a");
    t.Call(b, "b", {"SET", "k", "newer"});  // no longer tracked: nothing
    t.Call(b, "b", {"MSET", "k2", "x", "k3", "y"});
    t.Read(a, "a");
    t.Read(a, "a");
    t.Call(b, "b", {"SET", "missing", "now"});  // a missing key read is tracked too
    t.Read(a, "a");
    t.Call(a, "a", {"PING"});
    // Its own change: the message follows the reply.
    t.Call(a, "a", {"GET", "k"});
    t.Call(a, "a", {"INCR", "counter"});
    t.Call(a, "a", {"SET", "k", "mine"}, 1);
    t.Call(a, "a", {"CLIENT", "TRACKING", "OFF"});
    t.Call(a, "a", {"GET", "k"});
    t.Call(b, "b", {"DEL", "k"});
    t.Call(a, "a", {"PING"});
  });
}

TEST_F(Tracking, BcastPrefixes) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), b(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "item:"});
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
    t.Call(b, "b", {"MSET", "user:2", "x", "other", "y", "user:1", "z", "item:9", "w"});
    t.Read(a, "a");  // item: first (prefixes in order), then user: with its keys
                     // sorted
    t.Read(a, "a");
    t.Call(b, "b", {"SET", "other", "again"});
    t.Call(a, "a", {"PING"});
    t.Call(a, "a", {"SET", "user:3", "self"},
           1);  // no NOLOOP: its own change too
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "order:"});  // adds one
    t.Call(b, "b", {"SET", "order:1", "x"});
    t.Read(a, "a");
    t.Info(a, "a");
    // No prefix: every key.
    RespClient c = Resp3(port);
    t.Call(c, "c", {"CLIENT", "TRACKING", "ON", "BCAST"});
    t.Call(b, "b", {"SET", "anything", "1"});
    t.Read(c, "c");
    t.Call(c, "c", {"CLIENT", "TRACKINGINFO"});
  });
}

TEST_F(Tracking, OptinAndOptout) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), b(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "OPTIN"});
    t.Call(a, "a", {"GET", "k1"});  // not tracked
    t.Call(a, "a", {"CLIENT", "CACHING", "YES"});
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});  // a CLIENT command keeps the CACHING
    t.Call(a, "a", {"GET", "k2"});               // tracked, and the CACHING is used up
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
    t.Call(a, "a", {"GET", "k3"});
    t.Call(b, "b", {"MSET", "k1", "1", "k2", "2", "k3", "3"});
    t.Read(a, "a");
    t.Call(a, "a", {"PING"});
    // A transaction after CACHING YES is tracked as a whole.
    t.Call(a, "a", {"CLIENT", "CACHING", "YES"});
    t.Call(a, "a", {"MULTI"});
    t.Call(a, "a", {"GET", "t1"});
    t.Call(a, "a", {"GET", "t2"});
    t.Call(a, "a", {"EXEC"});
    t.Call(b, "b", {"MSET", "t1", "1", "t2", "2"});
    t.Read(a, "a");
    t.Read(a, "a");
    t.Call(a, "a", {"CLIENT", "TRACKING", "OFF"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "OPTOUT"});
    t.Call(a, "a", {"CLIENT", "CACHING", "NO"});
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
    t.Call(a, "a", {"GET", "o1"});  // not tracked
    t.Call(a, "a", {"GET", "o2"});  // tracked
    t.Call(b, "b", {"MSET", "o1", "1", "o2", "2"});
    t.Read(a, "a");
    t.Call(a, "a", {"PING"});
  });
}

TEST_F(Tracking, Noloop) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), b(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "NOLOOP"});
    t.Call(a, "a", {"GET", "k"});
    t.Call(a, "a", {"SET", "k", "mine"});  // its own change: no message, and k is forgotten
    t.Call(b, "b", {"SET", "k", "theirs"});
    t.Call(a, "a", {"GET", "k"});
    t.Call(b, "b", {"SET", "k", "again"});
    t.Read(a, "a");
    // A script's writes are the caller's own.
    t.Call(a, "a", {"GET", "s"});
    t.Call(a, "a", {"EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "s"});
    t.Call(a, "a", {"PING"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "OFF"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP", "PREFIX", "n"});
    t.Call(a, "a", {"SET", "n1", "mine"});
    t.Call(b, "b", {"SET", "n2", "theirs"});
    t.Read(a, "a");
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
  });
}

TEST_F(Tracking, RedirectToResp2Subscriber) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient r(port), a(port), b(port);
    std::string rid = t.Id(r, "r");
    t.Call(r, "r", {"SUBSCRIBE", "__redis__:invalidate"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "REDIRECT", rid});
    t.Call(a, "a", {"CLIENT", "GETREDIR"});
    t.Info(a, "a");
    t.Call(a, "a", {"GET", "k"});
    t.Call(b, "b", {"SET", "k", "v"});
    t.Read(r, "r");
    t.Call(a, "a", {"GET", "k"});
    t.Call(a, "a", {"SET", "k", "self"});  // its own change goes to r as well
    t.Read(r, "r");
    t.Call(b, "b", {"FLUSHALL"});  // a null, in a's protocol
    t.Read(r, "r");
    // A RESP2 client that is not subscribed gets nothing.
    RespClient a2(port);
    t.Call(a2, "a2", {"CLIENT", "TRACKING", "ON"});
    t.Call(a2, "a2", {"GET", "k"});
    t.Call(b, "b", {"SET", "k", "v"});
    t.Call(a2, "a2", {"PING"});
    // The redirect client goes: RESP2 learns of it from TRACKINGINFO and CLIENT LIST only.
    t.Call(a, "a", {"GET", "k2"});
    r.Call({"QUIT"});
    WaitGone(port, rid);
    t.Call(b, "b", {"SET", "k2", "v"});
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
    t.Info(a, "a");
    t.Call(a, "a", {"CLIENT", "GETREDIR"});
  });
}

TEST_F(Tracking, RedirectBrokenResp3) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient r = Resp3(port), a = Resp3(port), b(port);
    std::string rid = t.Id(r, "r");
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "REDIRECT", rid});
    t.Call(a, "a", {"GET", "k"});
    t.Call(b, "b", {"SET", "k", "v"});
    t.Read(r, "r");  // a RESP3 redirect client gets the push itself
    t.Call(a, "a", {"GET", "k"});
    r.Call({"QUIT"});
    WaitGone(port, rid);
    t.Call(b, "b", {"SET", "k", "v2"});
    t.Read(a, "a");                      // tracking-redir-broken
    t.Call(b, "b", {"SET", "k", "v3"});  // k was dropped from the table: nothing more
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
    t.Info(a, "a");
  });
}

TEST_F(Tracking, FlushSendsNull) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), c = Resp3(port), b(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(c, "c", {"CLIENT", "TRACKING", "ON", "BCAST"});
    t.Call(a, "a", {"GET", "k"});
    t.Call(b, "b", {"FLUSHALL"});
    t.Read(a, "a");
    t.Read(c, "c");
    t.Call(a, "a", {"FLUSHDB"}, 1);  // its own: after the reply
    t.Read(c, "c");
    t.Call(b, "b", {"SWAPDB", "0", "1"});  // no message
    t.Call(a, "a", {"PING"});
  });
}

TEST_F(Tracking, ExpiredKeysAreInvalidated) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), b(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(b, "b", {"SET", "k", "v", "PX", "100"});
    t.Call(a, "a", {"GET", "k"});
    t.Read(a, "a");  // the active expiry's
    // Found expired by the tracking client's own read: the message follows the reply.
    t.Call(b, "b", {"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
    t.Call(b, "b", {"SET", "k2", "v", "PX", "100"});
    t.Call(a, "a", {"GET", "k2"});
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    t.Call(a, "a", {"GET", "k2"}, 1);
    t.Call(b, "b", {"DEBUG", "SET-ACTIVE-EXPIRE", "1"});
  });
}

TEST_F(Tracking, TransactionsAndScriptsInvalidateAfterTheirReply) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), b(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(a, "a", {"GET", "k"});
    t.Call(a, "a", {"MULTI"});
    t.Call(a, "a", {"SET", "k", "1"});
    t.Call(a, "a", {"GET", "k"});
    t.Call(a, "a", {"FLUSHDB"});
    t.Call(a, "a", {"EXEC"}, 2);
    t.Call(a, "a", {"GET", "s"});
    t.Call(a, "a", {"EVAL", "redis.call('set', KEYS[1], 'x') return 1", "1", "s"}, 1);
    // A script's reads track the script's declared keys (Redis 7.0).
    t.Call(a, "a", {"EVAL", "return redis.call('get', KEYS[1])", "1", "declared"});
    t.Call(a, "a", {"EVAL", "return redis.call('get', 'undeclared')", "0"});
    t.Call(b, "b", {"SET", "undeclared", "1"});
    t.Call(b, "b", {"SET", "declared", "1"});
    t.Read(a, "a");
  });
}

TEST_F(Tracking, Errors) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port);
    std::string me = t.Id(a, "a");
    const std::vector<Args> cases = {
        {"ON", "OPTIN", "OPTOUT"},
        {"ON", "PREFIX", "a"},
        {"ON", "REDIRECT", "999999"},
        {"ON", "REDIRECT", "0"},
        {"ON", "REDIRECT", "abc"},
        {"ON", "REDIRECT", me, "REDIRECT", me},
        {"ON", "BCAST", "OPTIN"},
        {"ON", "BCAST", "OPTOUT"},
        {"MAYBE"},
        {"ON", "FOO"},
        {"ON", "PREFIX"},
        {"OFF", "PREFIX", "a"},
        {"OFF", "FOO"},
        {"ON", "BCAST", "PREFIX", "a", "PREFIX", "ab"},
        {"ON", "BCAST", "PREFIX", "ab", "PREFIX", "a"},
    };
    for (const Args& options : cases) {
      Args args = {"CLIENT", "TRACKING"};
      args.insert(args.end(), options.begin(), options.end());
      t.Call(a, "a", args);
      a.Call({"CLIENT", "TRACKING", "OFF"});
    }
    t.Call(a, "a", {"CLIENT", "CACHING", "YES"});
    t.Call(a, "a", {"CLIENT", "GETREDIR"});
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(a, "a", {"CLIENT", "CACHING", "YES"});
    t.Call(a, "a", {"CLIENT", "CACHING", "NO"});
    t.Call(a, "a", {"CLIENT", "CACHING", "MAYBE"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "OPTIN"});
    t.Call(a, "a", {"CLIENT", "CACHING", "NO"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "OPTOUT"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "REDIRECT", me, "NOLOOP"});  // resets OPTIN
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
    t.Call(a, "a", {"CLIENT", "GETREDIR"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "OFF"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "abc"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "b"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
    t.Call(a, "a", {"CLIENT", "TRACKING"});
    t.Call(a, "a", {"CLIENT", "CACHING"});
    t.Call(a, "a", {"CLIENT", "GETREDIR", "x"});
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO", "x"});
    t.Call(a, "a", {"HELLO", "2"});
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
    t.Call(a, "a", {"RESET"});  // turns tracking off
    t.Call(a, "a", {"CLIENT", "TRACKINGINFO"});
  });
}

TEST_F(Tracking, InfoAndClientList) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), c = Resp3(port), d = Resp3(port), q(port);
    auto stats = [&] {
      std::string line;
      for (const char* f :
           {"tracking_total_keys", "tracking_total_items", "tracking_total_prefixes"})
        line += std::string(f) + ":" + InfoField(q, "stats", f) + " ";
      t.Note("clients " + InfoField(q, "clients", "tracking_clients") + " " + line);
    };
    stats();
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(c, "c", {"CLIENT", "TRACKING", "ON"});
    t.Call(d, "d", {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "p", "PREFIX", "q"});
    t.Call(a, "a", {"MGET", "x", "y"});
    t.Call(c, "c", {"GET", "x"});
    stats();
    t.Info(a, "a");
    t.Info(d, "d");
    t.Info(q, "q");
    t.Call(q, "q", {"SET", "x", "1"});
    t.Read(a, "a");
    t.Read(c, "c");
    stats();
    t.Call(c, "c", {"CLIENT", "TRACKING", "OFF"});  // y stays in the table (dropped lazily)
    t.Call(d, "d", {"CLIENT", "TRACKING", "OFF"});
    stats();
  });
}

// tracking-table-max-keys: before the next command, a random key past the limit is dropped and its
// readers told (which key is random: the bytes are compared with the key masked).
TEST_F(Tracking, TableMaxKeysEvicts) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), q(port);
    t.Call(q, "q", {"CONFIG", "SET", "tracking-table-max-keys", "1"});
    t.Call(q, "q", {"CONFIG", "GET", "tracking-table-max-keys"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(a, "a", {"GET", "a"});
    t.Call(a, "a", {"GET", "b"});
    a.Send({"PING"});
    Reply push = a.Read(), pong = a.Read();
    std::string raw = push.raw;
    ReplaceAll(&raw, "$1\r\na\r\n", "$1\r\n?\r\n");
    ReplaceAll(&raw, "$1\r\nb\r\n", "$1\r\n?\r\n");
    t.Note("a: PING -> " + raw + pong.raw);
    t.Note("keys " + InfoField(q, "stats", "tracking_total_keys"));
    t.Call(q, "q", {"CONFIG", "SET", "tracking-table-max-keys", "0"});  // no limit
    t.Call(a, "a", {"GET", "c"});
    t.Call(a, "a", {"GET", "d"});
    t.Call(a, "a", {"PING"});
    t.Note("keys " + InfoField(q, "stats", "tracking_total_keys"));
    t.Call(q, "q", {"CONFIG", "SET", "tracking-table-max-keys", "1000000"});
  });
}

// node-redis' client-side cache (RESP3, CLIENT TRACKING ON) over kvstore: a cached GET, its
// invalidation by another connection's SET, and the new value (tests/clients/node_redis_cache.js).
TEST(TrackingClientLibrary, NodeRedisClientSideCache) {
  ServerProcess kv(ServerProcess::Kind::kKvstore, {"--io-threads", "3"});
  std::string cmd = "node " + std::string(KV_SOURCE_DIR) + "/tests/clients/node_redis_cache.js " +
                    std::to_string(kv.port()) + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int st = pclose(p);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
  EXPECT_NE(out.find("after SET elsewhere: v2"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("ok\n")) << out;
}

}  // namespace
}  // namespace kv::test
