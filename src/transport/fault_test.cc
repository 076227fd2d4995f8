// Faults between two real processes: this test binary re-executes itself as the peer
// (TransportFaultHelper.* below, which only run when KV_FAULT_ROLE is set), the control link is a TCP
// socket on loopback, and the parent kills the peer with SIGKILL mid-transfer.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "common/clock.h"
#include "net/socket.h"
#include "transport/channel.h"
#include "transport/test_util.h"
#include "transport/wire.h"

namespace kv::transport {
namespace {

constexpr size_t kStreamSize = 48 << 20;
constexpr uint64_t kSeed = 77;

ChannelOptions FaultOptions(const std::string& config) {
  ChannelOptions o = test::OptionsFor(config);
  o.stall_timeout_ms = 2000;
  return o;
}

// Starts this binary as the peer: role "sender" or "receiver", connecting to our control port.
pid_t SpawnPeer(const std::string& role, int port, const std::string& config) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("KV_FAULT_ROLE", role.c_str(), 1);
    setenv("KV_FAULT_PORT", std::to_string(port).c_str(), 1);
    setenv("KV_FAULT_CONFIG", config.c_str(), 1);
    std::string filter = "--gtest_filter=TransportFaultHelper.Peer";
    execl("/proc/self/exe", "transport_fault_test", filter.c_str(), nullptr);
    _exit(127);
  }
  return pid;
}

Result<net::Fd> AcceptControl(int listen_fd) {
  pollfd p{listen_fd, POLLIN, 0};
  if (::poll(&p, 1, 20000) != 1) return Status::Closed("peer process never connected");
  auto fd = net::AcceptTcp(listen_fd);
  if (!fd.ok()) return fd.status();
  return fd;
}

// Sets up a link over the control socket.
Status SetUpLink(Link& link, int control_fd) {
  auto mine = link.LocalBlob();
  if (!mine.ok()) return mine.status();
  auto peer = ExchangeBlobs(control_fd, *mine, 20000);
  if (!peer.ok()) return peer.status();
  return link.Connect(*peer);
}

bool ControlClosed(int fd) {
  pollfd p{fd, POLLIN, 0};
  char c;
  return ::poll(&p, 1, 0) == 1 && ::recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

// The peer process. Sender: streams the reproducible data from wherever the receiver wants to
// resume, then waits for the parent to hang up. Receiver: consumes forever.
TEST(TransportFaultHelper, Peer) {
  const char* role = std::getenv("KV_FAULT_ROLE");
  if (role == nullptr) GTEST_SKIP() << "only runs as a child of the fault tests";
  int port = std::atoi(std::getenv("KV_FAULT_PORT"));
  ChannelOptions o = FaultOptions(std::getenv("KV_FAULT_CONFIG"));
  auto control = net::ConnectTcp("127.0.0.1", port, 10000);
  ASSERT_TRUE(control.ok());
  if (std::string(role) == "sender") {
    auto s = CreateSender(o);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(SetUpLink(**s, control->get()).ok());
    auto data = test::RandomBytes(kStreamSize, kSeed);
    Status st = test::SendAndDrain(**s, std::span(data).subspan((*s)->start_offset()), 60000);
    EXPECT_TRUE(st.ok()) << st.ToString();
    while (!ControlClosed(control->get())) (void)(*s)->Wait(10);
  } else {
    auto r = CreateReceiver(o, 0);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(SetUpLink(**r, control->get()).ok());
    test::Checksum sum;
    (void)test::ReceiveAll(**r, &sum, 60000);
  }
}

class FaultTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto l = net::ListenTcp("127.0.0.1", 0, 4);
    ASSERT_TRUE(l.ok());
    listen_ = std::move(*l);
  }
  void TearDown() override {
    if (child_ > 0) {
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
  }
  void Kill() {
    kill(child_, SIGKILL);
    waitpid(child_, nullptr, 0);
    child_ = -1;
  }

  net::Fd listen_;
  pid_t child_ = -1;
};

// The receiver process dies mid-transfer: the sender reports an error within its stall
// timeout (plus slack for a loaded machine) instead of hanging.
TEST_P(FaultTest, ReceiverKilledMidTransferSenderFailsPromptly) {
  ChannelOptions o = FaultOptions(GetParam());
  child_ = SpawnPeer("receiver", net::LocalPort(listen_.get()), GetParam());
  auto control = AcceptControl(listen_.get());
  ASSERT_TRUE(control.ok()) << control.status().ToString();
  auto s = CreateSender(o);
  ASSERT_TRUE(s.ok());
  Status st = SetUpLink(**s, control->get());
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto block = test::RandomBytes(1 << 20, 1);
  int64_t killed_at = 0;
  int64_t deadline = MonoMs() + 60000;
  while (st.ok() && MonoMs() < deadline) {
    auto w = (*s)->Write(block);
    if (!w.ok()) {
      st = w.status();
      break;
    }
    if (killed_at == 0 && (*s)->acked_offset() >= (8 << 20)) {
      Kill();
      killed_at = MonoMs();
    }
    auto r = (*s)->Wait(50);
    if (!r.ok()) st = r.status();
  }
  ASSERT_NE(killed_at, 0) << "the transfer never got going: " << st.ToString();
  EXPECT_FALSE(st.ok()) << "sender did not notice the dead receiver";
  int64_t took = MonoMs() - killed_at;
  RecordProperty("detect_ms", static_cast<int>(took));
  RecordProperty("error", st.ToString());
  EXPECT_LT(took, o.stall_timeout_ms + 13000) << st.ToString();
  EXPECT_GE((*s)->acked_offset(), 8u << 20);
}

// The sender process dies mid-transfer; the receiver notices (its link, or the control link on
// providers that cannot tell, like shm), a new sender process resumes from the receiver's
// consumed offset, and the whole stream arrives byte-identical.
TEST_P(FaultTest, SenderKilledThenNewLinkResumesIdentically) {
  ChannelOptions o = FaultOptions(GetParam());
  int port = net::LocalPort(listen_.get());
  test::Checksum sum;
  uint64_t resume = 0;
  {
    child_ = SpawnPeer("sender", port, GetParam());
    auto control = AcceptControl(listen_.get());
    ASSERT_TRUE(control.ok());
    auto r = CreateReceiver(o, 0);
    ASSERT_TRUE(r.ok());
    Status st = SetUpLink(**r, control->get());
    ASSERT_TRUE(st.ok()) << st.ToString();
    int64_t deadline = MonoMs() + 60000;
    while ((*r)->consumed_offset() < (6u << 20) && st.ok() && MonoMs() < deadline) {
      auto in = (*r)->Peek();
      if (in.empty()) {
        auto w = (*r)->Wait(50);
        if (!w.ok()) st = w.status();
        continue;
      }
      sum.Update(in);
      st = (*r)->Consume(in.size());
    }
    ASSERT_TRUE(st.ok()) << st.ToString();
    Kill();
    // Notice the failure: on the link itself, or through the control link.
    int64_t t0 = MonoMs();
    bool noticed = false;
    while (MonoMs() - t0 < 15000 && !noticed) {
      auto w = (*r)->Wait(20);
      noticed = !w.ok() || ControlClosed(control->get());
    }
    EXPECT_TRUE(noticed);
    RecordProperty("link_error", (*r)->status().ToString());
    resume = (*r)->consumed_offset();  // unconsumed slots are dropped with the dead link
  }
  child_ = SpawnPeer("sender", port, GetParam());
  auto control = AcceptControl(listen_.get());
  ASSERT_TRUE(control.ok());
  auto r = CreateReceiver(o, resume);
  ASSERT_TRUE(r.ok());
  Status st = SetUpLink(**r, control->get());
  ASSERT_TRUE(st.ok()) << st.ToString();
  st = test::ReceiveAll(**r, &sum, 60000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ((*r)->consumed_offset(), kStreamSize);
  auto data = test::RandomBytes(kStreamSize, kSeed);
  EXPECT_EQ(sum.value(), test::ChecksumOf(data));
}

INSTANTIATE_TEST_SUITE_P(Transport, FaultTest,
                         ::testing::ValuesIn(test::Configs({"fabric/tcp", "fabric/shm", "tcp"})),
                         [](const auto& info) { return test::ConfigName(info.param); });

}  // namespace
}  // namespace kv::transport
