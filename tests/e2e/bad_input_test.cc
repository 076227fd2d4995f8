// Bad input end to end: garbage, absurd lengths, half-sent requests, clients that never read.
// Each must cost only the offending connection; the server keeps serving everyone else and its
// memory stays bounded.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(
        ServerProcess::Kind::kKvstore,
        std::vector<std::string>{"--client-query-buffer-limit", "4mb", "--maxclients", "50"});
    RespClient c(server_->port());
    ASSERT_EQ(c.Raw({"SET", "canary", "alive"}), "+OK\r\n");
  }
  // The server is up and its data intact.
  void ExpectHealthy() {
    ASSERT_TRUE(server_->Alive());
    RespClient c(server_->port());
    EXPECT_EQ(c.Raw({"GET", "canary"}), "$5\r\nalive\r\n");
  }
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(BadInput, RandomGarbageClosesOnlyThatConnection) {
  std::mt19937 rng(7);
  RespClient bystander(server_->port());
  for (int round = 0; round < 50; round++) {
    RespClient bad(server_->port());
    std::string junk(1 + rng() % 4096, '\0');
    for (auto& ch : junk) ch = static_cast<char>(rng());
    if (round % 2) junk[0] = '*';  // make the multibulk parser see it too
    bad.SendRaw(junk);
    EXPECT_EQ(bystander.Raw({"PING"}), "+PONG\r\n");
  }
  ExpectHealthy();
}

TEST_F(BadInput, AbsurdLengthsAreProtocolErrors) {
  struct Case {
    std::string input, reply;
  } cases[] = {
      {"*1\r\n$2147483648\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
      {"*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
      {"*99999999999\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
      {"*2\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'\r\n"},
  };
  for (const auto& c : cases) {
    RespClient bad(server_->port());
    bad.SendRaw(c.input);
    EXPECT_EQ(bad.Read().raw, c.reply);
    EXPECT_TRUE(bad.WaitClosed(2000));
  }
  ExpectHealthy();
}

TEST_F(BadInput, HugeDeclaredBulkDoesNotReserveMemory) {
  int64_t before = RssKb(server_->pid());
  std::vector<std::unique_ptr<RespClient>> clients;
  for (int i = 0; i < 20; i++) {
    clients.push_back(std::make_unique<RespClient>(server_->port()));
    // 500 MB declared (under proto-max-bulk-len), a few bytes sent, then nothing.
    clients.back()->SendRaw("*2\r\n$4\r\nECHO\r\n$524288000\r\nabc");
  }
  RespClient probe(server_->port());
  EXPECT_EQ(probe.Raw({"PING"}), "+PONG\r\n");
  EXPECT_LT(RssKb(server_->pid()) - before, 64 * 1024);
  ExpectHealthy();
}

TEST_F(BadInput, QueryBufferLimitClosesTheClient) {
  RespClient bad(server_->port());
  std::string big = "*2\r\n$4\r\nECHO\r\n$8000000\r\n" + std::string(5 * 1024 * 1024, 'x');
  bad.SendRaw(big);
  EXPECT_TRUE(bad.WaitClosed(5000));
  ExpectHealthy();
}

TEST_F(BadInput, HalfSentRequestThenDisconnect) {
  for (int i = 0; i < 20; i++) {
    RespClient half(server_->port());
    half.SendRaw("*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$10\r\n01234");
  }
  RespClient c(server_->port());
  EXPECT_EQ(c.Raw({"EXISTS", "half"}), ":0\r\n");
  ExpectHealthy();
}

TEST_F(BadInput, ClientThatNeverReadsStaysBounded) {
  RespClient setup(server_->port());
  ASSERT_EQ(setup.Raw({"SET", "big", std::string(1024 * 1024, 'v')}), "+OK\r\n");
  RespClient hog(server_->port(), 200);
  // Keep sending GETs of a 1 MiB value for a while and never read a reply: 1 GiB of replies.
  std::string batch;
  for (int i = 0; i < 64; i++) batch += RespClient::Encode({"GET", "big"});
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    int flags = fcntl(hog.fd(), F_GETFL);
    fcntl(hog.fd(), F_SETFL, flags | O_NONBLOCK);
    for (int i = 0; i < 16 && !stop; i++) {
      size_t off = 0;
      while (off < batch.size() && !stop) {
        ssize_t n = write(hog.fd(), batch.data() + off, batch.size() - off);
        if (n > 0) off += static_cast<size_t>(n);
        else std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // Bounded: a fixed backlog of unsent replies, not the gigabyte asked for.
  EXPECT_LT(RssKb(server_->pid()), 512 * 1024);
  RespClient other(server_->port());
  EXPECT_EQ(other.Raw({"PING"}), "+PONG\r\n");
  stop = true;
  writer.join();
  ExpectHealthy();
}

TEST_F(BadInput, MaxClientsRejectsTheExtraConnection) {
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // SetUp's client is gone
  std::vector<std::unique_ptr<RespClient>> clients;
  for (int i = 0; i < 50; i++) {
    clients.push_back(std::make_unique<RespClient>(server_->port()));
    ASSERT_EQ(clients.back()->Raw({"PING"}), "+PONG\r\n");
  }
  RespClient extra(server_->port());
  EXPECT_EQ(extra.Read().raw, "-ERR max number of clients reached\r\n");
  clients.pop_back();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ExpectHealthy();
}

TEST(BadInputAuth, UnauthenticatedBigMultibulkIsRefused) {
  ServerProcess s(ServerProcess::Kind::kKvstore, {"--requirepass", "pw"});
  RespClient c(s.port());
  c.SendRaw("*20\r\n");
  EXPECT_EQ(c.Read().raw, "-ERR Protocol error: unauthenticated multibulk length\r\n");
  EXPECT_TRUE(c.WaitClosed(2000));
}

}  // namespace
}  // namespace kv::test
