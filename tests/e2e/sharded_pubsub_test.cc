// Sharded pub/sub (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH, PUBSUB SHARDCHANNELS/SHARDNUMSUB) end to
// end in standalone mode: each scenario runs against kvstore (with several poll groups, so
// messages cross threads) and a real redis-server 7.0, in RESP2 and RESP3, and the raw bytes of
// every reply and message must be the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/suite_servers.h"

namespace kv::test {
namespace {

using Args = std::vector<std::string>;

std::string Join(const Args& args) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

// What one scenario saw, in order: each line names the request (or the read) and the bytes.
struct Transcript {
  std::vector<std::string> lines;

  // Sends `args` on `c` and records `replies` frames (a multi-name SSUBSCRIBE answers once per
  // name).
  void Call(RespClient& c, const Args& args, int replies = 1) {
    c.Send(args);
    for (int i = 0; i < replies; i++) lines.push_back(Join(args) + " -> " + c.Read().raw);
  }
  // Records the next frame `c` receives (a published message).
  void Read(RespClient& c, const std::string& who) { lines.push_back(who + " <- " + c.Read().raw); }
  // Records an array reply with its elements sorted (channel lists come in hash order).
  void CallSorted(RespClient& c, const Args& args) {
    Reply r = c.Call(args);
    std::vector<std::string> elems;
    for (const Reply& e : r.elems) elems.push_back(e.raw);
    std::sort(elems.begin(), elems.end());
    std::string line = Join(args) + " -> " + r.raw.substr(0, r.raw.find("\r\n") + 2);
    for (const auto& e : elems) line += e;
    lines.push_back(line);
  }
};

// Switches a connection to `resp` (HELLO's reply names the server, so it is not compared).
void Hello(RespClient& c, int resp) {
  if (resp == 3) ASSERT_EQ(c.Call({"HELLO", "3"}).type, '%');
}

// Waits until the server has dropped every shard subscription of closed connections.
void WaitNoShardChannels(int port) {
  RespClient c(port);
  for (int i = 0; i < 200 && !c.Call({"PUBSUB", "SHARDCHANNELS"}).elems.empty(); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The subscription fields of a client's CLIENT LIST line ("flags=P db=0 sub=1 psub=0 ssub=2").
std::string SubscriptionFields(RespClient& q, int64_t id) {
  std::string line = q.Call({"CLIENT", "LIST", "ID", std::to_string(id)}).str;
  size_t at = line.find("flags=");
  if (at == std::string::npos) return line;
  return line.substr(at, line.find(" multi=") - at);
}

using Scenario = void (*)(int port, int resp, Transcript& t);

class ShardedPubSub : public KvstoreAndRedisSuite {
 protected:
  static void SetUpTestSuite() { StartServers({"--io-threads", "3"}); }

  // Runs the scenario on both servers in both protocols; the transcripts must be identical.
  static void ExpectSameAsRedis(Scenario run) {
    if (!redis_) GTEST_SKIP() << "redis-server is not installed";
    for (int resp : {2, 3}) {
      WaitNoShardChannels(kv_->port());
      WaitNoShardChannels(redis_->port());
      Transcript ours, theirs;
      run(kv_->port(), resp, ours);
      run(redis_->port(), resp, theirs);
      EXPECT_EQ(ours.lines, theirs.lines) << "RESP" << resp;
      EXPECT_FALSE(ours.lines.empty());
    }
  }
};

// Confirmations carry the count of shard subscriptions alone; SUBSCRIBE's carry the others.
TEST_F(ShardedPubSub, ConfirmationsCountShardChannelsApart) {
  ExpectSameAsRedis([](int port, int resp, Transcript& t) {
    RespClient c(port);
    Hello(c, resp);
    t.Call(c, {"SSUBSCRIBE", "a", "b", "a"}, 3);
    t.Call(c, {"SUBSCRIBE", "a"});
    t.Call(c, {"PSUBSCRIBE", "p*"});
    t.Call(c, {"SSUBSCRIBE", "c"});
    t.Call(c, {"SUNSUBSCRIBE", "a", "nosuch"}, 2);
    t.Call(c, {"PING"});
    t.Call(c, {"PING", "hi"});
    t.Call(c, {"UNSUBSCRIBE"});
    t.Call(c, {"PUNSUBSCRIBE"});
    t.Call(c, {"GET", "k"});  // shard channels alone keep a RESP2 client in subscribed context
    t.Call(c, {"SUNSUBSCRIBE", "b"});
    t.Call(c, {"SUNSUBSCRIBE"});  // all that are left (Redis walks several in hash order)
    t.Call(c, {"SUNSUBSCRIBE"});  // none left: one confirmation with a null channel
    t.Call(c, {"SUNSUBSCRIBE", "x", "y"}, 2);
    t.Call(c, {"GET", "k"});
    t.Call(c, {"PING"});
  });
}

// Messages reach subscribers on other connections (other poll groups in kvstore) as smessage
// frames; SPUBLISH counts them.
TEST_F(ShardedPubSub, DeliveryToOtherConnections) {
  ExpectSameAsRedis([](int port, int resp, Transcript& t) {
    RespClient s1(port), s2(port), s3(port), pub(port);
    Hello(s1, resp);
    Hello(s3, 5 - resp);  // the other protocol: each gets its own frame
    t.Call(s1, {"SSUBSCRIBE", "news", "sport"}, 2);
    t.Call(s2, {"SSUBSCRIBE", "news"});
    t.Call(s3, {"SSUBSCRIBE", "news"});
    t.Call(pub, {"SPUBLISH", "news", "hello"});
    t.Read(s1, "s1");
    t.Read(s2, "s2");
    t.Read(s3, "s3");
    t.Call(pub, {"SPUBLISH", "sport", std::string(10000, 'x')});
    t.Read(s1, "s1");
    t.Call(pub, {"SPUBLISH", "nobody", "m"});
    t.Call(s2, {"SUNSUBSCRIBE", "news"});
    t.Call(pub, {"SPUBLISH", "news", "again"});
    t.Read(s1, "s1");
    t.Read(s3, "s3");
    // A RESP3 subscriber publishing to its own channel gets the message before its reply.
    t.Call(resp == 3 ? s1 : s3, {"SPUBLISH", "news", "self"}, 2);
    t.Read(resp == 3 ? s3 : s1, "other");
    t.Call(s2, {"PING"});  // nothing arrived after it left
  });
}

// PUBLISH, patterns and keyspace notifications never reach shard subscribers, and SPUBLISH
// never reaches channel or pattern subscribers.
TEST_F(ShardedPubSub, NamespacesAreKeptApart) {
  ExpectSameAsRedis([](int port, int resp, Transcript& t) {
    RespClient shard(port), plain(port), pat(port), pub(port);
    Hello(shard, resp);
    Hello(plain, resp);
    t.Call(shard, {"SSUBSCRIBE", "x", "__keyspace@0__:nk"}, 2);
    t.Call(plain, {"SUBSCRIBE", "y"});
    t.Call(pat, {"PSUBSCRIBE", "*"});
    t.Call(pub, {"PUBLISH", "x", "plain"});
    t.Read(pat, "pat");
    t.Call(pub, {"SPUBLISH", "y", "shard"});
    t.Call(pub, {"CONFIG", "SET", "notify-keyspace-events", "KA"});
    t.Call(pub, {"SET", "nk", "v"});
    t.Read(pat, "pat");
    t.Call(pub, {"CONFIG", "SET", "notify-keyspace-events", ""});
    t.Call(pub, {"PUBSUB", "NUMSUB", "x", "y"});
    t.Call(pub, {"PUBSUB", "SHARDNUMSUB", "x", "y"});
    t.Call(pub, {"PUBSUB", "CHANNELS", "x"});
    t.Call(pub, {"PUBSUB", "SHARDCHANNELS", "y"});
    t.Call(pub, {"PUBSUB", "NUMPAT"});
    t.Call(pub, {"SPUBLISH", "x", "last"});
    t.Read(shard, "shard");  // the first message the shard subscriber got
    t.Call(plain, {"PING"});
    t.Call(pub, {"DEL", "nk"});
  });
}

// PUBSUB SHARDCHANNELS with and without a pattern, and SHARDNUMSUB.
TEST_F(ShardedPubSub, IntrospectionMatchesRedis) {
  ExpectSameAsRedis([](int port, int resp, Transcript& t) {
    RespClient a(port), b(port), q(port);
    Hello(q, resp);
    t.Call(q, {"PUBSUB", "SHARDCHANNELS"});
    t.Call(q, {"PUBSUB", "SHARDNUMSUB"});
    t.Call(a, {"SSUBSCRIBE", "room:1", "room:2", "hall"}, 3);
    t.Call(b, {"SSUBSCRIBE", "room:1", "Room:3"}, 2);
    t.CallSorted(q, {"PUBSUB", "SHARDCHANNELS"});
    t.CallSorted(q, {"PUBSUB", "SHARDCHANNELS", "room:*"});
    t.CallSorted(q, {"PUBSUB", "SHARDCHANNELS", "[rR]oom:[13]"});
    t.Call(q, {"PUBSUB", "SHARDCHANNELS", "none*"});
    t.Call(q, {"PUBSUB", "SHARDNUMSUB", "room:1", "room:2", "Room:3", "nosuch", "room:1"});
    t.Call(q, {"pubsub", "shardnumsub", "hall"});
    t.Call(b, {"SUNSUBSCRIBE", "room:1", "Room:3"}, 2);
    t.Call(q, {"PUBSUB", "SHARDNUMSUB", "room:1", "Room:3"});
    t.CallSorted(q, {"PUBSUB", "SHARDCHANNELS"});
  });
}

// Arity, SSUBSCRIBE inside MULTI, COMMAND GETKEYS and scripts answer as Redis 7.0 does.
TEST_F(ShardedPubSub, ErrorsMatchRedis) {
  ExpectSameAsRedis([](int port, int resp, Transcript& t) {
    RespClient c(port);
    Hello(c, resp);
    t.Call(c, {"SPUBLISH"});
    t.Call(c, {"SPUBLISH", "ch"});
    t.Call(c, {"SPUBLISH", "ch", "m", "extra"});
    t.Call(c, {"SSUBSCRIBE"});
    t.Call(c, {"PUBSUB", "SHARDCHANNELS", "a", "b"});
    t.Call(c, {"PUBSUB", "SHARDNUMSUB"});
    t.Call(c, {"MULTI"});
    t.Call(c, {"SSUBSCRIBE", "m"});
    t.Call(c, {"SPUBLISH", "m", "x"});
    t.Call(c, {"SUNSUBSCRIBE"});
    t.Call(c, {"EXEC"});
    t.Call(c, {"PUBSUB", "SHARDNUMSUB", "m"});
    t.Call(c, {"COMMAND", "GETKEYS", "SPUBLISH", "ch", "msg"});
    t.Call(c, {"COMMAND", "GETKEYS", "SSUBSCRIBE", "a", "b"});
    t.Call(c, {"COMMAND", "GETKEYSANDFLAGS", "SUNSUBSCRIBE", "a"});
    t.Call(c, {"EVAL", "return redis.call('spublish', 'sc', 'm')", "0"});
  });
}

// RESET and closing the connection drop shard subscriptions; CLIENT INFO counts them.
TEST_F(ShardedPubSub, ResetAndCloseDropSubscriptions) {
  ExpectSameAsRedis([](int port, int resp, Transcript& t) {
    RespClient c(port), q(port);
    Hello(c, resp);
    int64_t id = c.Call({"CLIENT", "ID"}).integer;
    t.Call(c, {"SUBSCRIBE", "n1"});
    t.Call(c, {"SSUBSCRIBE", "r1", "r2"}, 2);
    t.lines.push_back(SubscriptionFields(q, id));
    t.Call(q, {"PUBSUB", "SHARDNUMSUB", "r1", "r2"});
    t.Call(c, {"RESET"});
    t.Call(c, {"GET", "k"});
    t.Call(q, {"PUBSUB", "SHARDNUMSUB", "r1", "r2"});
    t.Call(q, {"SPUBLISH", "r1", "gone"});
    t.Call(q, {"PUBLISH", "n1", "gone"});
    t.lines.push_back(SubscriptionFields(q, id));
    {
      RespClient d(port);
      t.Call(d, {"SSUBSCRIBE", "r3"});
    }
    Reply r;
    for (int i = 0; i < 200; i++) {
      r = q.Call({"PUBSUB", "SHARDNUMSUB", "r3"});
      if (r.elems.size() == 2 && r.elems[1].integer == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    t.lines.push_back("after close -> " + r.raw);
    t.Call(q, {"SPUBLISH", "r3", "gone"});
  });
}

}  // namespace
}  // namespace kv::test
