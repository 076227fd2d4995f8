#include "net/event_loop.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "common/clock.h"
#include "net/socket.h"

namespace kv::net {
namespace {

TEST(EventLoop, TimersFireInOrderAndRepeat) {
  EventLoop loop;
  std::vector<int> order;
  int repeats = 0;
  loop.AddTimer(20, [&] { order.push_back(2); return -1; });
  loop.AddTimer(5, [&] { order.push_back(1); return -1; });
  loop.AddTimer(1, [&] { return ++repeats < 3 ? 1 : -1; });
  auto cancelled = loop.AddTimer(10, [&] { order.push_back(99); return -1; });
  loop.CancelTimer(cancelled);
  loop.AddTimer(40, [&] { loop.Stop(); return -1; });
  loop.Run();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(repeats, 3);
}

TEST(EventLoop, PostFromAnotherThreadWakesTheLoop) {
  EventLoop loop;
  std::atomic<int> ran{0};
  std::thread t([&] {
    for (int i = 0; i < 1000; i++) loop.Post([&] { ran++; });
    loop.Post([&] { loop.Stop(); });
  });
  loop.Run();
  t.join();
  EXPECT_EQ(ran.load(), 1000);
}

// A task that keeps posting itself from the loop thread (a link driver spinning) runs once per
// round: the loop does not sleep while it is queued, and fd events and timers still get their
// turn in between.
TEST(EventLoop, TasksPostedFromTheLoopThreadRunEachRoundWithoutStarvingFds) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  Fd a(sv[0]), b(sv[1]);
  EventLoop loop;
  struct Counter : FdHandler {
    int fd = -1, events = 0, posts_seen = 0;
    int* posts = nullptr;
    void OnEvents(uint32_t) override {
      char c;
      while (read(fd, &c, 1) == 1) {
      }
      events++;
      posts_seen = *posts;
    }
  } counter;
  int posts = 0;
  counter.fd = b.get();
  counter.posts = &posts;
  ASSERT_TRUE(loop.AddFd(b.get(), EventLoop::kReadable, &counter).ok());
  std::function<void()> spin = [&] {
    if (++posts == 3) (void)!write(a.get(), "x", 1);
    if (posts < 1000) {
      loop.Post(spin);
    } else {
      loop.Stop();
    }
  };
  int64_t start = MonoMs();
  // Only a far timer: a loop that slept while a task is queued would take a minute.
  loop.AddTimer(60000, [&] { return -1; });
  loop.AddTimer(0, [&] {
    loop.Post(spin);
    return -1;
  });
  loop.Run();
  EXPECT_EQ(posts, 1000);
  EXPECT_EQ(counter.events, 1);
  EXPECT_LT(counter.posts_seen, 10);  // the fd's event came within a few rounds of the write
  EXPECT_LT(MonoMs() - start, 5000);
  loop.RemoveFd(b.get(), &counter);
}

class Reader : public FdHandler {
 public:
  Reader(EventLoop* loop, int fd) : loop_(loop), fd_(fd) {}
  void OnEvents(uint32_t) override {
    char buf[64];
    ssize_t n = read(fd_, buf, sizeof(buf));
    if (n > 0) got.append(buf, n);
    if (got.size() >= 5) loop_->Stop();
  }
  std::string got;

 private:
  EventLoop* loop_;
  int fd_;
};

TEST(EventLoop, FdReadiness) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  Fd a(sv[0]), b(sv[1]);
  EventLoop loop;
  Reader r(&loop, b.get());
  ASSERT_TRUE(loop.AddFd(b.get(), EventLoop::kReadable, &r).ok());
  loop.AddTimer(1, [&] { (void)!write(a.get(), "hello", 5); return -1; });
  loop.Run();
  EXPECT_EQ(r.got, "hello");
  loop.RemoveFd(b.get(), &r);
}

// Echoes a byte back to the peer (a request and its reply): one per round, so that a peer's
// next request is always another round's event.
struct Echo : FdHandler {
  int fd = -1, replies = 0;
  void OnEvents(uint32_t) override {
    char c;
    if (read(fd, &c, 1) == 1 && write(fd, &c, 1) == 1) replies++;
  }
};

// A peer that sends its next request as soon as the reply to the last one arrives, `n` times,
// waiting `gap_ms` in between, then `tail_ms` before it stops the loop.
void PingPong(EventLoop& loop, int peer, int n, int gap_ms, int tail_ms) {
  for (int i = 0; i < n; i++) {
    if (gap_ms > 0) usleep(gap_ms * 1000);
    char c = 'x';
    if (write(peer, &c, 1) != 1 || read(peer, &c, 1) != 1) {
      ADD_FAILURE() << "the exchange failed at request " << i;
      break;
    }
  }
  usleep(tail_ms * 1000);
  loop.Stop();
}

struct BusyPollRun {
  int replies;
  uint64_t hits, misses;
};

// busy_poll_us < 0: the loop keeps its default.
BusyPollRun RunPingPong(int busy_poll_us, int n, int gap_ms, int tail_ms) {
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  Fd served(sv[0]), peer(sv[1]);
  (void)SetNonBlocking(served.get());
  EventLoop loop;
  if (busy_poll_us >= 0) loop.SetBusyPollUs(busy_poll_us);
  Echo echo;
  echo.fd = served.get();
  EXPECT_TRUE(loop.AddFd(served.get(), EventLoop::kReadable, &echo).ok());
  std::thread t([&] { PingPong(loop, peer.get(), n, gap_ms, tail_ms); });
  loop.Run();
  t.join();
  loop.RemoveFd(served.get(), &echo);
  return {echo.replies, loop.busy_poll_hits(), loop.busy_poll_misses()};
}

// Requests that follow their replies at once are found by the busy poll after each round that
// served one, instead of by a wake-up; once the peer goes quiet the poll runs out and the loop
// sleeps.
TEST(EventLoop, BusyPollFindsRequestsThatFollowTheirReplies) {
  BusyPollRun r = RunPingPong(100000, 200, 0, 300);
  EXPECT_EQ(r.replies, 200);
  // Every round after the first request polled; a poll that lasts 100 ms misses only when the
  // peer's thread is kept off the CPU that long.
  EXPECT_GE(r.hits, 190u);
  EXPECT_GE(r.misses, 1u);  // the quiet tail
  EXPECT_LE(r.hits + r.misses, 201u);
}

// A peer slower than the poll: after four empty polls in a row the loop polls one busy round in
// sixteen, so it sleeps almost as it would without busy polling.
TEST(EventLoop, BusyPollBacksOffWhenRequestsComeFurtherApartThanItLasts) {
  BusyPollRun r = RunPingPong(1000, 40, 40, 5);
  EXPECT_EQ(r.replies, 40);
  // Rounds that served a request: 40. Polled: the first four, then the 20th and the 36th, all
  // empty. A loop thread kept off the CPU for the 40 ms gap could find one request in a poll
  // (and start over with four).
  EXPECT_LE(r.hits, 1u);
  EXPECT_GE(r.misses, 6u);
  EXPECT_LE(r.misses, 10u);
}

// A poll that runs out does not delay a timer: the wait after it lasts only what is left.
TEST(EventLoop, BusyPollKeepsTimersOnTime) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  Fd served(sv[0]), peer(sv[1]);
  EventLoop loop;
  loop.SetBusyPollUs(1000000);  // longer than the timer: the poll stops at the timer's due time
  Echo echo;
  echo.fd = served.get();
  ASSERT_TRUE(loop.AddFd(served.get(), EventLoop::kReadable, &echo).ok());
  int64_t start = MonoMs(), fired = -1;
  loop.AddTimer(150, [&] {
    fired = MonoMs() - start;
    loop.Stop();
    return -1;
  });
  ASSERT_EQ(write(peer.get(), "x", 1), 1);  // a busy round first: the next wait polls
  loop.Run();
  loop.RemoveFd(served.get(), &echo);
  EXPECT_EQ(echo.replies, 1);
  EXPECT_EQ(loop.busy_poll_misses(), 1u);
  // A wait of the whole timeout after the poll would fire it at ~300 ms.
  EXPECT_GE(fired, 150);
  EXPECT_LT(fired, 260);
}

TEST(EventLoop, BusyPollOffByDefaultAndAtZero) {
  for (int us : {-1, 0}) {
    BusyPollRun r = RunPingPong(us, 50, 0, 0);
    EXPECT_EQ(r.replies, 50);
    EXPECT_EQ(r.hits + r.misses, 0u) << us;
  }
}

TEST(Socket, ListenOnFreePortAndConnect) {
  auto l = ListenTcp("127.0.0.1", 0, 16);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  int port = LocalPort(l->get());
  EXPECT_GT(port, 0);
  auto c = ConnectTcp("127.0.0.1", port, 1000);
  ASSERT_TRUE(c.ok());
  Result<Fd> a = Status(Code::kAgain, "");
  for (int i = 0; i < 100 && !a.ok(); i++) {
    a = AcceptTcp(l->get());
    if (!a.ok()) usleep(1000);
  }
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(PeerName(a->get()), SockName(c->get()));
}

}  // namespace
}  // namespace kv::net
