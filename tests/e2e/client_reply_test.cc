// CLIENT REPLY end to end, against Debian's redis-server byte for byte: ON answered right after
// SKIP, pipelines mixing ON, OFF and SKIP (in MULTI/EXEC too), the silencing of blocked
// commands' replies, and the pushes (pub/sub confirmations and messages) that a silenced client
// still gets in both protocols. kvstore runs several poll groups, so the publisher and the
// subscriber are on different threads.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/suite_servers.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Cmds = std::vector<std::vector<std::string>>;

class ClientReply : public KvstoreAndRedisSuite {
 protected:
  static void SetUpTestSuite() { StartServers({"--io-threads", "3"}); }
  void SetUp() override {
    RespClient(kv_->port()).Call({"FLUSHALL"});
    if (redis_) RespClient(redis_->port()).Call({"FLUSHALL"});
  }
};

// The bytes on `fd` until they end with `suffix` (what arrived when it timed out otherwise).
std::string ReadUntil(int fd, const std::string& suffix, int timeout_ms = 10000) {
  std::string got;
  while (got.size() < suffix.size() ||
         got.compare(got.size() - suffix.size(), suffix.size(), suffix) != 0) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) break;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

// Sends `cmds` as one pipeline in protocol `resp`, then RESET (answered unless a SKIP is
// pending; it turns replies back on) and ECHO, and returns every byte up to ECHO's reply.
std::string Pipeline(int port, int resp, const Cmds& cmds) {
  RespClient c(port);
  if (resp == 3) c.Call({"HELLO", "3"});
  std::string bytes;
  for (const auto& cmd : cmds) bytes += RespClient::Encode(cmd);
  bytes += RespClient::Encode({"RESET"}) + RespClient::Encode({"ECHO", "end-of-pipeline"});
  c.SendRaw(bytes);
  return ReadUntil(c.fd(), "$15\r\nend-of-pipeline\r\n");
}

TEST_F(ClientReply, OnAfterSkipIsAnswered) {
  RespClient c(kv_->port());
  c.Send({"CLIENT", "REPLY", "SKIP"});
  c.Send({"CLIENT", "REPLY", "ON"});
  EXPECT_EQ(c.Read().raw, "+OK\r\n");  // SKIP's skip is cancelled, and ON answers
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
}

TEST_F(ClientReply, PipelinesMatchRedis) {
  if (!redis_) GTEST_SKIP() << "redis-server is not installed";
  const std::vector<Cmds> cases = {
      {{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"PING"}},
      {{"CLIENT", "REPLY", "SKIP"},
       {"CLIENT", "REPLY", "OFF"},
       {"PING"},
       {"CLIENT", "REPLY", "ON"},
       {"PING"}},
      {{"CLIENT", "REPLY", "OFF"},
       {"CLIENT", "REPLY", "SKIP"},
       {"PING"},
       {"CLIENT", "REPLY", "ON"},
       {"PING"}},
      {{"CLIENT", "REPLY", "SKIP"},
       {"CLIENT", "REPLY", "SKIP"},
       {"ECHO", "a"},
       {"ECHO", "b"},
       {"ECHO", "c"}},
      {{"CLIENT", "REPLY", "SKIP"}, {"SET", "k", "v"}, {"GET", "k"}},
      {{"CLIENT", "REPLY", "OFF"}, {"SET", "k", "v"}, {"NOSUCHCOMMAND"}, {"GET", "k"}},
      {{"CLIENT", "REPLY", "SKIP"}, {"RESET"}, {"PING"}},
      {{"CLIENT", "REPLY", "OFF"}, {"RESET"}, {"PING"}},
      {{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "FOO"}, {"PING"}},
      {{"CLIENT", "REPLY", "OFF"}, {"CLIENT", "REPLY", "FOO"}, {"PING"}},
      {{"CLIENT", "REPLY", "ON"}, {"CLIENT", "REPLY", "ON"}},
      // A skipped MULTI queues as usual; a SKIP inside EXEC skips what follows EXEC.
      {{"CLIENT", "REPLY", "SKIP"}, {"MULTI"}, {"PING"}, {"EXEC"}, {"ECHO", "x"}},
      {{"MULTI"}, {"CLIENT", "REPLY", "SKIP"}, {"PING"}, {"ECHO", "z"}, {"EXEC"}, {"ECHO", "x"}},
      // Inside EXEC each reply goes by the mode it is written under (Redis' array header stays).
      {{"MULTI"},
       {"CLIENT", "REPLY", "OFF"},
       {"PING"},
       {"CLIENT", "REPLY", "ON"},
       {"ECHO", "z"},
       {"EXEC"},
       {"ECHO", "x"}},
      {{"MULTI"}, {"CLIENT", "REPLY", "OFF"}, {"PING"}, {"EXEC"}, {"ECHO", "x"}},
      // A blocked command's timeout is silenced like any reply.
      {{"CLIENT", "REPLY", "SKIP"}, {"BLPOP", "nolist", "0.05"}, {"PING"}},
      {{"CLIENT", "REPLY", "OFF"}, {"BLPOP", "nolist", "0.05"}, {"CLIENT", "REPLY", "ON"}},
  };
  for (int resp : {2, 3}) {
    for (const Cmds& cmds : cases) {
      std::string what = "RESP" + std::to_string(resp) + ":";
      for (const auto& cmd : cmds) {
        what += " [";
        for (const auto& a : cmd) what += a + " ";
        what += "]";
      }
      EXPECT_EQ(Pipeline(kv_->port(), resp, cmds), Pipeline(redis_->port(), resp, cmds)) << what;
    }
  }
}

// Subscribe confirmations and messages are pushes whatever the reply mode, in RESP2 too.
TEST_F(ClientReply, SilencedSubscriberStillGetsPushes) {
  if (!redis_) GTEST_SKIP() << "redis-server is not installed";
  for (int resp : {2, 3}) {
    for (const char* mode : {"OFF", "SKIP"}) {
      std::string what = std::string("RESP") + std::to_string(resp) + " " + mode;
      std::string got[2];
      int ports[2] = {kv_->port(), redis_->port()};
      for (int s = 0; s < 2; s++) {
        RespClient sub(ports[s]), pub(ports[s]);
        if (resp == 3) sub.Call({"HELLO", "3"});
        sub.Send({"CLIENT", "REPLY", mode});
        sub.Send({"SUBSCRIBE", "ch"});
        sub.Send({"PSUBSCRIBE", "c*"});
        got[s] = ReadUntil(sub.fd(), "c*\r\n:2\r\n");
        // The publisher's count says the subscription is in place before it publishes.
        EXPECT_EQ(pub.Raw({"PUBLISH", "ch", "hi"}), ":2\r\n") << what;
        // The message, then the pattern's pmessage.
        got[s] += ReadUntil(sub.fd(), "pmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$2\r\nhi\r\n");
        sub.Send({"UNSUBSCRIBE"});  // from every channel
        sub.Send({"PUNSUBSCRIBE", "c*"});
        sub.Send({"PUNSUBSCRIBE"});  // none left: a frame with a null name
        got[s] += ReadUntil(
            sub.fd(), "punsubscribe\r\n" + std::string(resp == 3 ? "_" : "$-1") + "\r\n:0\r\n");
      }
      EXPECT_EQ(got[0], got[1]) << what;
      EXPECT_NE(got[0].find("message"), std::string::npos) << what;
    }
  }
}

// A RESP3 client publishing to a channel it listens to gets the message, not PUBLISH's reply.
TEST_F(ClientReply, SilencedPublisherGetsItsOwnMessage) {
  if (!redis_) GTEST_SKIP() << "redis-server is not installed";
  const Cmds cmds = {{"SUBSCRIBE", "ch"},
                     {"CLIENT", "REPLY", "OFF"},
                     {"PUBLISH", "ch", "m"},
                     {"CLIENT", "REPLY", "ON"},
                     {"PUBLISH", "ch", "n"},
                     {"CLIENT", "REPLY", "OFF"},
                     {"MULTI"},
                     {"SUBSCRIBE", "c2"},
                     {"PUBLISH", "c2", "o"},
                     {"EXEC"},
                     {"CLIENT", "REPLY", "ON"}};
  EXPECT_EQ(Pipeline(kv_->port(), 3, cmds), Pipeline(redis_->port(), 3, cmds));
}

// A blocked client's reply, when another client serves it or CLIENT UNBLOCK ends the wait,
// follows the mode the client was in.
TEST_F(ClientReply, SilencedBlockedClientGetsNoReply) {
  RespClient waiter(kv_->port()), other(kv_->port());
  int64_t id = waiter.Call({"CLIENT", "ID"}).integer;
  waiter.Send({"CLIENT", "REPLY", "OFF"});
  waiter.Send({"BLPOP", "q", "0"});
  ASSERT_TRUE(WaitFor([&] { return InfoField(other, "clients", "blocked_clients") == "1"; }));
  EXPECT_EQ(other.Raw({"RPUSH", "q", "a"}), ":1\r\n");
  waiter.Send({"BLPOP", "q", "0"});
  ASSERT_TRUE(WaitFor([&] { return InfoField(other, "clients", "blocked_clients") == "1"; }));
  EXPECT_EQ(other.Raw({"CLIENT", "UNBLOCK", std::to_string(id), "ERROR"}), ":1\r\n");
  waiter.Send({"CLIENT", "REPLY", "SKIP"});  // silenced anyway: OFF is on
  waiter.Send({"CLIENT", "REPLY", "ON"});
  EXPECT_EQ(waiter.Read().raw, "+OK\r\n");  // nothing came before it
  EXPECT_EQ(other.Raw({"LLEN", "q"}), ":0\r\n");
  // A skipped blocking command: the SKIP lasts until it is served, then the next is answered.
  waiter.Send({"CLIENT", "REPLY", "SKIP"});
  waiter.Send({"BLPOP", "q", "0"});
  ASSERT_TRUE(WaitFor([&] { return InfoField(other, "clients", "blocked_clients") == "1"; }));
  EXPECT_EQ(other.Raw({"RPUSH", "q", "b"}), ":1\r\n");
  EXPECT_EQ(waiter.Raw({"ECHO", "next"}), "$4\r\nnext\r\n");
}

}  // namespace
}  // namespace kv::test
