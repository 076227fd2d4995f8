// A transaction in the primary's stream counts toward the replica's offset only once its EXEC
// is applied, as Redis' reploff: a link lost between the MULTI and the EXEC resumes (PSYNC)
// from before the MULTI, and the primary's resent transaction runs whole. (A replica that
// counted the MULTI asked to continue after it, then answered the resent EXEC with "EXEC
// without MULTI": its transaction ran command by command, no longer atomic.) The primary is
// played by the test on a raw socket; the replicas are kvstore and redis-server.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

class ReplicationMultiOffset : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  }
};

std::string Cmd(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// Reads one request (an array of bulk strings) from `fd`, within 10 s; empty on EOF or timeout.
std::vector<std::string> ReadRequest(int fd, std::string* buf) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    // Parse what is buffered: *N\r\n then N × $len\r\ndata\r\n.
    std::vector<std::string> args;
    size_t pos = 0;
    auto line = [&](std::string* out) {
      size_t e = buf->find("\r\n", pos);
      if (e == std::string::npos) return false;
      *out = buf->substr(pos, e - pos);
      pos = e + 2;
      return true;
    };
    std::string head;
    bool complete = false;
    if (line(&head) && !head.empty() && head[0] == '*') {
      size_t n = std::stoul(head.substr(1));
      complete = true;
      for (size_t i = 0; i < n && complete; i++) {
        std::string len;
        if (!line(&len)) {
          complete = false;
          break;
        }
        size_t l = std::stoul(len.substr(1));
        if (buf->size() < pos + l + 2) {
          complete = false;
          break;
        }
        args.push_back(buf->substr(pos, l));
        pos += l + 2;
      }
    }
    if (complete) {
      buf->erase(0, pos);
      return args;
    }
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    if (left <= 0) return {};
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) return {};
    char tmp[4096];
    ssize_t n = read(fd, tmp, sizeof(tmp));
    if (n <= 0) return {};
    buf->append(tmp, static_cast<size_t>(n));
  }
}

void Send(int fd, const std::string& bytes) {
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

// Answers the handshake up to PSYNC, whose arguments it returns.
std::vector<std::string> Handshake(int fd, std::string* buf) {
  for (;;) {
    std::vector<std::string> req = ReadRequest(fd, buf);
    if (req.empty()) return req;
    std::string name = req[0];
    for (auto& ch : name) ch = static_cast<char>(toupper(ch));
    if (name == "PSYNC") return req;
    Send(fd, name == "PING" ? "+PONG\r\n" : "+OK\r\n");
  }
}

TEST_P(ReplicationMultiOffset, ALinkLostInsideATransactionResumesBeforeItsMulti) {
  // An empty snapshot, as the replica under test writes it.
  std::string rdb;
  {
    ServerProcess src(GetParam());
    RespClient c(src.port());
    ASSERT_EQ(c.Call({"SAVE"}).str, "OK");
    rdb = ReadFile(src.dir() + "/dump.rdb");
  }
  ASSERT_GT(rdb.size(), 8u);
  const int port = FreePort();
  auto listener = net::ListenTcp("127.0.0.1", port, 4);
  ASSERT_TRUE(listener.ok());
  const std::string replid(40, 'c');
  const std::string before = Cmd({"SELECT", "0"}) + Cmd({"SET", "k0", "v0"});
  const std::string multi = Cmd({"MULTI"}) + Cmd({"SET", "k1", "v1"});
  const std::string rest = Cmd({"INCR", "n"}) + Cmd({"EXEC"});

  // The replica's next connection, within 30 s.
  auto accept = [&] {
    auto conn = net::AcceptTcp(listener->get());
    for (int i = 0; !conn.ok() && i < 3000; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      conn = net::AcceptTcp(listener->get());
    }
    return conn;
  };
  ServerProcess replica(GetParam(), {"--replicaof", "127.0.0.1 " + std::to_string(port)});
  RespClient r(replica.port());
  {
    auto conn = accept();
    ASSERT_TRUE(conn.ok());
    std::string buf;
    std::vector<std::string> psync = Handshake(conn->get(), &buf);
    ASSERT_FALSE(psync.empty());
    Send(conn->get(),
         "+FULLRESYNC " + replid + " 0\r\n$" + std::to_string(rdb.size()) + "\r\n" + rdb);
    Send(conn->get(), before + multi);
    // Applied before the MULTI: the offset counts it; the MULTI and its SET are not counted.
    ASSERT_TRUE(WaitFor([&] { return r.Call({"GET", "k0"}).str == "v0"; }));
    ASSERT_TRUE(WaitFor([&] {  // the MULTI and its SET read too
      return InfoField(r, "replication", "slave_read_repl_offset") ==
             std::to_string(before.size() + multi.size());
    }));
    EXPECT_EQ(InfoField(r, "replication", "master_repl_offset"), std::to_string(before.size()));
    EXPECT_EQ(r.Call({"EXISTS", "k1"}).integer, 0);
  }  // the link breaks inside the transaction
  auto conn = accept();
  ASSERT_TRUE(conn.ok());
  std::string buf;
  std::vector<std::string> psync = Handshake(conn->get(), &buf);
  ASSERT_EQ(psync.size(), 3u);
  EXPECT_EQ(psync[1], replid);
  EXPECT_EQ(psync[2], std::to_string(before.size() + 1));  // the MULTI is sent again
  Send(conn->get(), "+CONTINUE\r\n" + multi + rest);
  ASSERT_TRUE(WaitFor([&] { return r.Call({"GET", "n"}).str == "1"; }));
  EXPECT_EQ(r.Call({"GET", "k1"}).str, "v1");
  EXPECT_EQ(InfoField(r, "replication", "master_repl_offset"),
            std::to_string(before.size() + multi.size() + rest.size()));
  EXPECT_EQ(replica.LogText().find("This replica is sending an error to its master"),
            std::string::npos)
      << replica.LogText();
}

INSTANTIATE_TEST_SUITE_P(Servers, ReplicationMultiOffset,
                         ::testing::Values(Kind::kKvstore, Kind::kRedis), [](const auto& info) {
                           return std::string(info.param == Kind::kKvstore ? "kvstore" : "redis");
                         });

}  // namespace
}  // namespace kv::test
