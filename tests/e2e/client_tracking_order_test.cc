// Client-side caching differentials for who gets an invalidation and when, beside the reply of
// the command that caused it: writes of a script (BCAST NOLOOP counts them as the script's, not
// the caller's), keys evicted by maxmemory (before the command that triggered the eviction runs,
// so its own invalidations precede its reply), keys expired in bulk, a flush inside a script,
// blocked list pops (serving one is no change of the list), and tracking-table-max-keys applied
// by the cron with no command running. Each scenario runs against kvstore and redis-server 7.0
// and the transcripts must match byte for byte (client_tracking_util.h).
#include <gtest/gtest.h>

#include <chrono>
#include <initializer_list>
#include <string>
#include <thread>

#include "tests/e2e/client_tracking_util.h"

namespace kv::test {
namespace {

using namespace tracking;  // NOLINT: the helpers of client_tracking_util.h

class TrackingOrder : public TrackingDiffSuite {};

constexpr const char* kSetKey = "return redis.call('set', KEYS[1], 'x')";

// Commands in one write, so that the server reads them in one round of its event loop.
std::string Pipeline(std::initializer_list<Args> cmds) {
  std::string out;
  for (const Args& args : cmds) {
    out += "*" + std::to_string(args.size()) + "\r\n";
    for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  return out;
}

// Waits until `n` clients are blocked (a blocking command sent on another connection).
void WaitBlocked(RespClient& q, const std::string& n) {
  ASSERT_TRUE(WaitFor([&] { return InfoField(q, "clients", "blocked_clients") == n; }));
}

void LoadSetFunction(RespClient& q) {
  q.Call({"FUNCTION", "FLUSH"});
  q.Call({"FUNCTION", "LOAD",
          "#!lua name=trk\nredis.register_function('w', function(k) return "
          "redis.call('set', k[1], 'x') end)"});
}

// Over maxmemory with every key still there: the next command (of anyone) evicts them all.
void ArmEviction(RespClient& q) {
  q.Call({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  q.Call({"CONFIG", "SET", "maxmemory", "1"});
  q.Call({"CONFIG", "SET", "maxmemory-policy", "allkeys-random"});
}

TEST_F(TrackingOrder, BcastNoloopCountsScriptWritesAsTheScripts) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), b(port), q(port);
    LoadSetFunction(q);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP"});
    t.Call(a, "a", {"SET", "k1", "v"});  // its own: nothing
    t.Call(a, "a", {"EVAL", kSetKey, "1", "k2"}, 1);
    t.Call(a, "a", {"FCALL", "w", "1", "k3"}, 1);
    t.Call(a, "a",
           {"EVAL", "redis.call('set', KEYS[1], 'x') redis.call('set', KEYS[2], 'y') return 1", "2",
            "k4", "k5"},
           1);
    t.Call(a, "a", {"MULTI"});
    t.Call(a, "a", {"SET", "k6", "v"});
    t.Call(a, "a", {"EXEC"});  // its own again
    t.Call(a, "a", {"MULTI"});
    t.Call(a, "a", {"EVAL", kSetKey, "1", "k7"});
    t.Call(a, "a", {"EXEC"}, 1);
    // One round of the event loop: the key's last writer decides.
    a.SendRaw(Pipeline({{"SET", "k8", "v"}, {"EVAL", kSetKey, "1", "k8"}}));
    t.Read(a, "a");
    t.Read(a, "a");
    t.Read(a, "a");
    a.SendRaw(Pipeline({{"EVAL", kSetKey, "1", "k9"}, {"SET", "k9", "v"}}));
    t.Read(a, "a");
    t.Read(a, "a");
    t.Call(a, "a", {"PING"});
    t.Call(b, "b", {"SET", "k10", "v"});
    t.Read(a, "a");
  });
}

// A write's broadcast reaches a tracking client before the reply to a command that client
// sends once the write was answered: the invalidation is written in the write's own round, as
// Redis writes it before it sleeps (unit/tracking's switch from normal tracking to BCAST).
TEST_F(TrackingOrder, BroadcastPrecedesTheNextReply) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), b(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(b, "b", {"SET", "key1", "1"});
    t.Call(a, "a", {"GET", "key1"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "OFF"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON", "BCAST"});
    for (int i = 0; i < 50; i++) {
      t.Call(b, "b", {"INCR", "key1"});
      t.Call(a, "a", {"PING"}, 1);
    }
  });
}

TEST_F(TrackingOrder, NoloopScriptWritesThroughRedirect) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient r(port), c(port), d(port), b(port), q(port);
    LoadSetFunction(q);
    std::string rid = t.Id(r, "r");
    t.Call(r, "r", {"SUBSCRIBE", "__redis__:invalidate"});
    t.Call(c, "c", {"CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP", "REDIRECT", rid, "PREFIX", "x"});
    t.Call(c, "c", {"SET", "x1", "v"});
    t.Call(c, "c", {"EVAL", kSetKey, "1", "x2"});
    t.Read(r, "r");  // x2: x1 was c's own
    t.Call(c, "c", {"FCALL", "w", "1", "x3"});
    t.Read(r, "r");
    t.Call(b, "b", {"SET", "x4", "v"});
    t.Read(r, "r");
    // Default mode: the script's writes are the caller's own, and the key leaves the table.
    t.Call(d, "d", {"CLIENT", "TRACKING", "ON", "NOLOOP", "REDIRECT", rid});
    t.Call(d, "d", {"GET", "y"});
    t.Call(d, "d", {"EVAL", kSetKey, "1", "y"});
    t.Call(b, "b", {"SET", "y", "v"});
    t.Call(d, "d", {"GET", "y"});
    t.Call(b, "b", {"SET", "y", "w"});
    t.Read(r, "r");
  });
}

// maxmemory evicts before a command runs: the invalidations of its own keys come before its
// reply, NOLOOP hides only the default-mode ones of the client whose command evicted, and a
// BCAST NOLOOP client is told of keys its command evicted (no client changed them).
TEST_F(TrackingOrder, EvictionInvalidatesBeforeTheReply) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient q(port), a = Resp3(port), n = Resp3(port), b = Resp3(port), r(port), c(port);
    std::string rid = t.Id(r, "r");
    t.Call(q, "q", {"CONFIG", "SET", "maxmemory-policy", "allkeys-random"});
    t.Call(r, "r", {"SUBSCRIBE", "__redis__:invalidate"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(n, "n", {"CLIENT", "TRACKING", "ON", "NOLOOP"});
    t.Call(b, "b", {"CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP", "PREFIX", "k"});
    t.Call(c, "c", {"CLIENT", "TRACKING", "ON", "REDIRECT", rid});
    auto fill = [&] {
      t.Call(q, "q", {"MSET", "k1", "1", "k2", "2", "k3", "3"});
      t.Read(b, "b");
      t.Call(a, "a", {"MGET", "k1", "k2"});
      t.Call(n, "n", {"GET", "k1"});
      t.Call(c, "c", {"GET", "k3"});
      ArmEviction(q);
    };
    // b's PING evicts: b hears of all three keys after its reply (BCAST waits for the round).
    fill();
    t.Call(b, "b", {"PING"}, 1);
    t.ReadSorted(a, "a", 2);
    t.Read(n, "n");
    t.Read(r, "r");
    t.Call(q, "q", {"CONFIG", "SET", "maxmemory", "0"});
    // a's PING evicts: its two keys before its PONG.
    fill();
    t.CallSorted(a, "a", {"PING"}, 2);
    t.Read(n, "n");
    t.Read(r, "r");
    t.Read(b, "b");
    t.Call(q, "q", {"CONFIG", "SET", "maxmemory", "0"});
    // n's PING evicts: NOLOOP hides k1 from n.
    fill();
    t.Call(n, "n", {"PING"});
    t.ReadSorted(a, "a", 2);
    t.Read(r, "r");
    t.Read(b, "b");
    t.Call(q, "q", {"CONFIG", "SET", "maxmemory", "0"});
    // c's PING evicts: its key goes to r.
    fill();
    t.Call(c, "c", {"PING"});
    t.Read(r, "r");
    t.ReadSorted(a, "a", 2);
    t.Read(n, "n");
    t.Read(b, "b");
    t.Call(q, "q", {"CONFIG", "SET", "maxmemory", "0"});
    // Evicted inside a's command (CONFIG SET maxmemory): after its reply.
    t.Call(q, "q", {"MSET", "k1", "1", "k2", "2"});
    t.Read(b, "b");
    t.Call(a, "a", {"MGET", "k1", "k2"});
    t.CallSorted(a, "a", {"CONFIG", "SET", "maxmemory", "1"}, 2);
    t.Read(b, "b");
    t.Call(a, "a", {"CONFIG", "SET", "maxmemory", "0"});
  });
}

TEST_F(TrackingOrder, ExpiredKeysInOneCommand) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient q(port), a = Resp3(port), n = Resp3(port), b = Resp3(port), r(port), c(port);
    std::string rid = t.Id(r, "r");
    t.Call(r, "r", {"SUBSCRIBE", "__redis__:invalidate"});
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(n, "n", {"CLIENT", "TRACKING", "ON", "NOLOOP"});
    t.Call(b, "b", {"CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP", "PREFIX", "e"});
    t.Call(c, "c", {"CLIENT", "TRACKING", "ON", "REDIRECT", rid});
    t.Call(q, "q", {"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
    for (const char* k : {"e1", "e2", "e3"}) t.Call(q, "q", {"SET", k, "v", "PX", "500"});
    t.Read(b, "b");
    t.Read(b, "b");
    t.Read(b, "b");
    t.Call(a, "a", {"MGET", "e1", "e2", "e3"});
    t.Call(n, "n", {"MGET", "e1", "e2"});
    t.Call(c, "c", {"MGET", "e2", "e3"});
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    t.Call(n, "n", {"MGET", "e2", "e1"});  // its own reads: nothing for n, at once for a
    t.Read(a, "a");
    t.Read(a, "a");
    t.Read(r, "r");
    t.Read(b, "b");
    t.Call(b, "b", {"EXISTS", "e3"}, 1);  // expired by b's command: b is told all the same
    t.Read(a, "a");
    t.Read(r, "r");
    t.Call(a, "a", {"PING"});
    t.Call(q, "q", {"DEBUG", "SET-ACTIVE-EXPIRE", "1"});
  });
}

// FLUSHALL inside a script: the null is due at the flush, so keys the script writes and reads
// afterwards are tracked anew, not invalidated.
TEST_F(TrackingOrder, FlushInsideScript) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), b = Resp3(port), q(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(b, "b", {"CLIENT", "TRACKING", "ON", "BCAST"});
    t.Call(a, "a", {"GET", "k"});
    t.Call(a, "a",
           {"EVAL",
            "redis.call('flushall') redis.call('set', KEYS[1], 'x') "
            "return redis.call('get', KEYS[1])",
            "1", "k"},
           1);
    t.Read(b, "b");
    t.Read(b, "b");
    t.Call(q, "q", {"SET", "k", "y"});
    t.Read(a, "a");
    t.Read(b, "b");
  });
}

// Serving a blocked BLPOP or BLMOVE pops the list without it counting as a change of the list
// (the destination of BLMOVE does change): a key read again in the transaction that fed the list
// stays tracked, and a BCAST NOLOOP pusher hears nothing of its own push.
TEST_F(TrackingOrder, ServedBlockedPopIsNoChangeOfTheList) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), w = Resp3(port), q(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    w.Send({"BLPOP", "l", "0"});
    WaitBlocked(q, "1");
    t.Call(a, "a", {"MULTI"});
    t.Call(a, "a", {"LPUSH", "l", "x", "y"});
    t.Call(a, "a", {"LRANGE", "l", "0", "-1"});
    t.Call(a, "a", {"EXEC"});
    t.Read(w, "w");
    t.Call(q, "q", {"LPUSH", "l", "z"});
    t.Read(a, "a");
    w.Send({"BLMOVE", "s", "d", "LEFT", "RIGHT", "0"});
    WaitBlocked(q, "1");
    t.Call(a, "a", {"MULTI"});
    t.Call(a, "a", {"LPUSH", "s", "x"});
    t.Call(a, "a", {"LRANGE", "s", "0", "-1"});
    t.Call(a, "a", {"LRANGE", "d", "0", "-1"});
    t.Call(a, "a", {"EXEC"}, 1);  // d
    t.Read(w, "w");
    t.Call(q, "q", {"LPUSH", "s", "z"});
    t.Read(a, "a");
    // BCAST NOLOOP on both sides.
    RespClient b = Resp3(port), p = Resp3(port);
    t.Call(b, "b", {"CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP"});
    t.Call(p, "p", {"CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP"});
    b.Send({"BLMOVE", "s2", "d2", "LEFT", "RIGHT", "0"});
    WaitBlocked(q, "1");
    t.Call(p, "p", {"LPUSH", "s2", "x"}, 1);
    t.Read(b, "b");
    t.Read(b, "b");
    b.Send({"BRPOP", "l2", "0"});
    WaitBlocked(q, "1");
    t.Call(p, "p", {"RPUSH", "l2", "x"});
    t.Read(b, "b");
    t.Read(b, "b");
    t.Call(p, "p", {"PING"});
  });
}

// tracking-table-max-keys lowered while the tracking client is idle: the cron drops keys past
// it, with no command to run before.
TEST_F(TrackingOrder, TableLimitAppliedWhileIdle) {
  ExpectSameAsRedis([](int port, Transcript& t) {
    RespClient a = Resp3(port), q(port);
    t.Call(a, "a", {"CLIENT", "TRACKING", "ON"});
    t.Call(a, "a", {"MGET", "a", "b"});
    t.Call(q, "q", {"CONFIG", "SET", "tracking-table-max-keys", "1"});
    std::string raw = a.Read().raw;
    ReplaceAll(&raw, "$1\r\na\r\n", "$1\r\n?\r\n");
    ReplaceAll(&raw, "$1\r\nb\r\n", "$1\r\n?\r\n");
    t.Note("a <- " + raw);
    t.Note("keys " + InfoField(q, "stats", "tracking_total_keys"));
    t.Call(q, "q", {"CONFIG", "SET", "tracking-table-max-keys", "1000000"});
  });
}

}  // namespace
}  // namespace kv::test
