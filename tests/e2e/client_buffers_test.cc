// The cron's sizing of a client's buffers, on kvstore and on redis-server (the suite's
// unit/replybufsize and unit/querybuf, and what they rest on):
// - the reply buffer (CLIENT LIST rbs) of an idle client shrinks to 1 KiB once its peak is
//   reset (DEBUG REPLYBUFFER PEAK-RESET-TIME), grows back to 16 KiB while big replies fill it,
//   and stays as it is with DEBUG REPLYBUFFER RESIZING 0; INFO counts the shrinks and expands.
// - the query buffer (qbuf + qbuf-free) of a fresh client is 16 KiB, given back once the client
//   has been idle three seconds; after a 400 KB argument it shrinks, while the client sends
//   small commands, to their peak (not to nothing).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

class ClientBuffers : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

// A numeric field of the CLIENT LIST line of the client named `name`; -1 if there is none.
int64_t ClientField(RespClient& c, const std::string& name, const std::string& field) {
  std::string list = c.Call({"CLIENT", "LIST"}).str;
  size_t at = list.find("name=" + name + " ");
  if (at == std::string::npos) return -1;
  size_t line = list.rfind('\n', at);
  line = line == std::string::npos ? 0 : line + 1;
  size_t f = list.find(" " + field + "=", line);
  if (f == std::string::npos || f > list.find('\n', at)) return -1;
  return std::stoll(list.substr(f + field.size() + 2));
}

TEST_P(ClientBuffers, ReplyBufferShrinksWhenIdleAndGrowsForBigReplies) {
  ServerProcess s(GetParam(), {"--enable-debug-command", "yes"});
  RespClient r(s.port()), tc(s.port());
  ASSERT_EQ(tc.Call({"CLIENT", "SETNAME", "test_client"}).str, "OK");
  EXPECT_EQ(ClientField(r, "test_client", "rbs"), 16384);  // a fresh client's
  ASSERT_EQ(r.Call({"DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100"}).str, "OK");
  auto rbs = [&] { return ClientField(r, "test_client", "rbs"); };
  EXPECT_TRUE(WaitFor([&] { return rbs() >= 1024 && rbs() < 2046; })) << rbs();
  EXPECT_GT(InfoInt(r, "stats", "reply_buffer_shrinks"), 0);

  ASSERT_EQ(r.Call({"SET", "bigval", std::string(32768, 'x')}).str, "OK");
  ASSERT_EQ(r.Call({"DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] {
    EXPECT_EQ(tc.Call({"GET", "bigval"}).str.size(), 32768u);
    return rbs() >= 16384 && rbs() < 32768;
  })) << rbs();
  EXPECT_GT(InfoInt(r, "stats", "reply_buffer_expands"), 0);
  // The peak is what the buffer held since its last reset: a big reply now fills it.
  EXPECT_EQ(tc.Call({"GET", "bigval"}).str.size(), 32768u);
  EXPECT_EQ(ClientField(r, "test_client", "rbp"), 16384);

  ASSERT_EQ(r.Call({"DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] { return rbs() >= 1024 && rbs() < 2046; })) << rbs();

  // With the resizing off, big replies leave the small buffer as it is.
  ASSERT_EQ(r.Call({"DEBUG", "REPLYBUFFER", "RESIZING", "0"}).str, "OK");
  const int64_t small = rbs();
  const int64_t expands = InfoInt(r, "stats", "reply_buffer_expands");
  for (int i = 0; i < 5; i++) {
    EXPECT_EQ(tc.Call({"GET", "bigval"}).str.size(), 32768u);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // two cron ticks
  }
  EXPECT_EQ(rbs(), small);
  EXPECT_EQ(InfoInt(r, "stats", "reply_buffer_expands"), expands);
  ASSERT_EQ(r.Call({"DEBUG", "REPLYBUFFER", "RESIZING", "1"}).str, "OK");
  EXPECT_TRUE(WaitFor([&] {
    EXPECT_EQ(tc.Call({"GET", "bigval"}).str.size(), 32768u);
    return rbs() >= 16384;
  })) << rbs();
  ASSERT_EQ(r.Call({"CONFIG", "RESETSTAT"}).str, "OK");
  EXPECT_EQ(InfoInt(r, "stats", "reply_buffer_expands"), 0);
}

TEST_P(ClientBuffers, QueryBufferIsGivenBackWhenIdleOrPastItsPeak) {
  ServerProcess s(GetParam());
  RespClient r(s.port());
  auto qbuf = [&] {
    return ClientField(r, "test_client", "qbuf") + ClientField(r, "test_client", "qbuf-free");
  };
  {
    RespClient rd(s.port());
    ASSERT_EQ(rd.Call({"CLIENT", "SETNAME", "test_client"}).str, "OK");
    const int64_t orig = qbuf();
    EXPECT_GE(orig, 16384);
    EXPECT_LT(orig, 32768);
    EXPECT_TRUE(
        WaitFor([&] { return ClientField(r, "test_client", "idle") >= 3 && qbuf() == 0; }, 20000))
        << qbuf();
  }
  RespClient rd(s.port());
  ASSERT_EQ(rd.Call({"CLIENT", "SETNAME", "test_client"}).str, "OK");
  ASSERT_EQ(rd.Call({"SET", "x", std::string(400000, 'A')}).str, "OK");
  const int64_t orig = qbuf();
  EXPECT_GT(orig, 32768);
  EXPECT_TRUE(WaitFor([&] {
    EXPECT_EQ(rd.Call({"SET", "x", std::string(100, 'A')}).str, "OK");
    return qbuf() < orig;
  })) << qbuf();
  EXPECT_GT(qbuf(), 0);
}

// A client over its soft output limit is closed once the limit's seconds are up even when no
// more output comes for it (Redis' clientsCron checks the limits too): a subscriber that
// stopped reading, and a client that asked for a big reply and does not read it.
TEST_P(ClientBuffers, ASoftLimitClosesAnIdleClientOnceItsTimeIsUp) {
  ServerProcess s(GetParam());
  RespClient r(s.port());
  ASSERT_EQ(
      r.Call({"CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 100000 2 normal 0 100000 2"})
          .str,
      "OK");
  auto gone = [&](const std::string& name) {
    return WaitFor([&] { return ClientField(r, name, "omem") < 0; });
  };

  RespClient sub(s.port());
  ASSERT_EQ(sub.Call({"CLIENT", "SETNAME", "subscriber"}).str, "OK");
  sub.Call({"SUBSCRIBE", "news"});
  std::string msg(10000, 'x');
  // The sockets' buffers take the first megabytes; then the server holds the rest.
  for (int i = 0; i < 5000 && ClientField(r, "subscriber", "omem") <= 100000; i++) {
    ASSERT_EQ(r.Call({"PUBLISH", "news", msg}).integer, 1);
  }
  ASSERT_GT(ClientField(r, "subscriber", "omem"), 100000);
  EXPECT_TRUE(gone("subscriber"));

  // 20 MB in one reply: more than the sockets' buffers take.
  ASSERT_EQ(r.Call({"SET", "big", std::string(20000000, 'x')}).str, "OK");
  RespClient reader(s.port());
  ASSERT_EQ(reader.Call({"CLIENT", "SETNAME", "reader"}).str, "OK");
  reader.Send({"GET", "big"});
  ASSERT_TRUE(WaitFor([&] { return ClientField(r, "reader", "omem") > 100000; }));
  EXPECT_TRUE(gone("reader"));
  EXPECT_EQ(r.Call({"PING"}).str, "PONG");
}

INSTANTIATE_TEST_SUITE_P(Servers, ClientBuffers, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
