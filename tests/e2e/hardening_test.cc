// Hardening end to end (docs/security.md): the glob patterns of CVE-2022-36021 and
// CVE-2024-31228 through every command that matches patterns, the glob rules compared with
// redis-server's, and an unauthenticated client that never reads its replies (CVE-2025-21605).
// Each attack costs only the attacker's connection; everyone else keeps being served.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; i++) out += s;
  return out;
}

// The patterns whose cost grows exponentially with their stars in a backtracking matcher,
// against a key of 75 'a's: none matches.
std::vector<std::string> AdversarialPatterns() {
  return {Repeat("a*", 48) + "b",   Repeat("[a-z]*", 48) + "b", Repeat("[^b]*", 48) + "b",
          Repeat("\\a*", 48) + "b", Repeat("?*", 48) + "b",     Repeat("a*", 500000) + "b"};
}

// Another client is answered while (and after) the attacker's command runs: its PING gets
// PONG, which a server busy for hours in one match could not send.
void ExpectOthersServed(int port) {
  RespClient other(port);
  EXPECT_EQ(other.Raw({"PING"}), "+PONG\r\n");
}

TEST(Hardening, AdversarialGlobPatternsAnswerEverywhere) {
  ServerProcess s(ServerProcess::Kind::kKvstore);
  RespClient c(s.port());
  const std::string key(75, 'a');
  ASSERT_EQ(c.Raw({"SET", key, "v"}), "+OK\r\n");
  ASSERT_EQ(c.Raw({"HSET", "h", key, "v"}), ":1\r\n");
  ASSERT_EQ(c.Raw({"SADD", "st", key, "x"}), ":2\r\n");
  ASSERT_EQ(c.Raw({"ZADD", "z", "1", key}), ":1\r\n");
  RespClient sub(s.port());
  for (const std::string& p : AdversarialPatterns()) {
    SCOPED_TRACE("pattern of " + std::to_string(p.size()) + " bytes");
    EXPECT_EQ(c.Raw({"KEYS", p}), "*0\r\n");
    EXPECT_EQ(c.Raw({"SCAN", "0", "MATCH", p, "COUNT", "1000"}), "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT_EQ(c.Raw({"HSCAN", "h", "0", "MATCH", p}), "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT_EQ(c.Raw({"SSCAN", "st", "0", "MATCH", p}), "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT_EQ(c.Raw({"ZSCAN", "z", "0", "MATCH", p}), "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT_EQ(c.Call({"CONFIG", "GET", p}).elems.size(), 0u);
    EXPECT_EQ(c.Call({"COMMAND", "LIST", "FILTERBY", "PATTERN", p}).elems.size(), 0u);
    EXPECT_EQ(c.Raw({"FUNCTION", "LIST", "LIBRARYNAME", p}), "*0\r\n");
    // A subscriber to the pattern, and a message to a channel named like the key.
    Reply r = sub.Call({"PSUBSCRIBE", p});
    ASSERT_EQ(r.elems.size(), 3u);
    EXPECT_EQ(c.Raw({"PUBLISH", key, "m"}), ":0\r\n");
    EXPECT_EQ(c.Raw({"PUBSUB", "CHANNELS", p}), "*0\r\n");
    ASSERT_EQ(sub.Call({"PUNSUBSCRIBE", p}).elems.size(), 3u);
    ExpectOthersServed(s.port());
  }
  // The matcher still matches: the same patterns without their final 'b' (but the longest,
  // which needs more 'a's than the key has).
  EXPECT_EQ(c.Call({"KEYS", Repeat("a*", 48)}).elems.size(), 1u);
  EXPECT_EQ(c.Call({"KEYS", Repeat("[a-z]*", 48)}).elems.size(), 1u);
  EXPECT_TRUE(s.Alive());
}

// While one client's KEYS runs over a large pattern, another's PING is answered: the match
// is cheap enough not to hold the keyspace for long.
TEST(Hardening, PingAnsweredWhileAnAdversarialKeysRuns) {
  ServerProcess s(ServerProcess::Kind::kKvstore);
  RespClient c(s.port());
  for (int i = 0; i < 200; i++) {
    ASSERT_EQ(c.Raw({"SET", std::string(75, 'a') + std::to_string(i), "v"}), "+OK\r\n");
  }
  RespClient attacker(s.port());
  for (int i = 0; i < 20; i++) attacker.Send({"KEYS", Repeat("a*", 48) + "b"});
  ExpectOthersServed(s.port());
  for (int i = 0; i < 20; i++) EXPECT_EQ(attacker.Read().raw, "*0\r\n");
}

// The glob rules, redis-server's against kvstore's: the same KEYS over the same tricky keys
// with thousands of random patterns over the bytes that matter (stars, sets, ranges, escapes,
// bytes past 0x7f), compared as sets of keys.
TEST(Hardening, GlobRulesMatchRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess redis(ServerProcess::Kind::kRedis);
  ServerProcess ours(ServerProcess::Kind::kKvstore);
  RespClient r(redis.port()), k(ours.port());
  const std::vector<std::string> keys = {"",   "a",  "b",   "ab",   "ba",   "aab",   "A",
                                         "]",  "[",  "^",   "-",    "\\",   "*",     "?",
                                         "a]", "[a", "a-b", "\xff", "\x80", "a\xff", "AbA"};
  for (const std::string& key : keys) {
    ASSERT_EQ(r.Raw({"SET", key, "v"}), "+OK\r\n");
    ASSERT_EQ(k.Raw({"SET", key, "v"}), "+OK\r\n");
  }
  const char alphabet[] = {'a', 'b', 'A', '*', '?', '[', ']', '^', '-', '\\', '\xff', '\x80'};
  std::mt19937 rng(36021);
  auto sorted = [](const Reply& reply) {
    std::vector<std::string> out;
    for (const Reply& e : reply.elems) out.push_back(e.str);
    std::sort(out.begin(), out.end());
    return out;
  };
  int matched = 0;
  for (int i = 0; i < 3000; i++) {
    std::string p;
    size_t len = 1 + rng() % 7;
    for (size_t j = 0; j < len; j++) p.push_back(alphabet[rng() % sizeof(alphabet)]);
    if (p == "*") continue;  // KEYS * takes a path of its own in both servers
    std::vector<std::string> want = sorted(r.Call({"KEYS", p}));
    ASSERT_EQ(sorted(k.Call({"KEYS", p})), want) << "pattern " << p;
    if (!want.empty()) matched++;
  }
  EXPECT_GT(matched, 300);  // the patterns exercised matches, not just misses
}

// CVE-2025-21605: with requirepass, a client that sends commands and never reads the -NOAUTH
// replies is closed once a few KiB of them wait, as Redis closes it; it does not grow the
// server by its 64 MiB of pending replies.
TEST(Hardening, UnauthenticatedClientThatNeverReadsIsClosed) {
  ServerProcess s(ServerProcess::Kind::kKvstore, {"--requirepass", "secret"});
  RespClient attacker(s.port());
  int fd = attacker.fd();
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  const std::string chunk = Repeat("PING\r\n", 10000);
  size_t sent = 0;
  bool closed = false;
  // Writes until the server closes the connection (or 256 MiB went out without that).
  while (!closed && sent < 256u * 1024 * 1024) {
    ssize_t n = write(fd, chunk.data(), chunk.size());
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, 10000) <= 0) break;  // the server stopped reading and did not close
      closed = p.revents & (POLLERR | POLLHUP);
    } else {
      closed = true;  // EPIPE / ECONNRESET
    }
  }
  EXPECT_TRUE(closed || attacker.WaitClosed(10000)) << "sent " << sent << " bytes";
  EXPECT_TRUE(WaitFor([&] {
    return s.LogText().find(
               "scheduled to be closed ASAP for overcoming of output buffer "
               "limits") != std::string::npos;
  }));
  RespClient c(s.port());
  EXPECT_EQ(c.Raw({"AUTH", "secret"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  // An authenticated client that pipelines as much is not held to that limit.
  std::string pipeline = Repeat("*1\r\n$4\r\nPING\r\n", 5000);
  c.SendRaw(pipeline);
  for (int i = 0; i < 5000; i++) ASSERT_EQ(c.Read().raw, "+PONG\r\n");
  // Nor is a client that reads its -NOAUTH replies as they come.
  RespClient polite(s.port());
  for (int i = 0; i < 2000; i++) {
    ASSERT_EQ(polite.Raw({"PING"}), "-NOAUTH Authentication required.\r\n");
  }
}

// CPU seconds (user + system) a process has used so far.
double CpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; i++) {
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Out of file descriptors, accept fails while connections wait: the listener pauses instead of
// spinning the poll group that serves the connected clients (which kept the CPU busy and the
// log flooded), and accepts again once descriptors are free.
TEST(Hardening, AcceptingPausesWhenOutOfDescriptors) {
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  auto s = std::make_unique<ServerProcess>(ServerProcess::Kind::kKvstore,
                                           std::vector<std::string>{"--maxclients", "10000"});
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  RespClient first(s->port());
  ASSERT_EQ(first.Raw({"PING"}), "+PONG\r\n");
  std::vector<std::unique_ptr<RespClient>> flood;
  for (int i = 0; i < 120; i++) flood.push_back(std::make_unique<RespClient>(s->port()));
  ASSERT_TRUE(WaitFor([&] {
    return s->LogText().find("Accepting client connection: accept: Too many open files") !=
           std::string::npos;
  }));
  // While connections wait that cannot be accepted, the server idles and serves its clients.
  double before = CpuSeconds(s->pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_LT(CpuSeconds(s->pid()) - before, 0.5) << "the server spun on its listener";
  EXPECT_EQ(first.Raw({"PING"}), "+PONG\r\n");
  flood.clear();
  RespClient later(s->port());
  EXPECT_EQ(later.Raw({"PING"}), "+PONG\r\n");
}

}  // namespace
}  // namespace kv::test
