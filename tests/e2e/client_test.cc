// CLIENT, RESET and redis-cli end to end, across poll groups.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

class ClientCmd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess(ServerProcess::Kind::kKvstore, {"--io-threads", "3"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static int port() { return server_->port(); }
  static ServerProcess* server_;
};
ServerProcess* ClientCmd::server_ = nullptr;

// The value of `field` in a CLIENT LIST/INFO line.
std::string Field(const std::string& line, const std::string& field) {
  size_t at = line.find(" " + field + "=");
  if (line.rfind(field + "=", 0) == 0) at = static_cast<size_t>(-1);
  size_t start = at + field.size() + 2;
  return line.substr(start, line.find_first_of(" \n", start) - start);
}

TEST_F(ClientCmd, IdNameAndInfo) {
  RespClient c(port());
  int64_t id = c.Call({"CLIENT", "ID"}).integer;
  EXPECT_GT(id, 0);
  EXPECT_EQ(c.Raw({"CLIENT", "GETNAME"}), "$-1\r\n");
  EXPECT_EQ(c.Raw({"CLIENT", "SETNAME", "worker-1"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"CLIENT", "GETNAME"}), "$8\r\nworker-1\r\n");
  EXPECT_EQ(c.Raw({"CLIENT", "SETNAME", "has space"}),
            "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
  EXPECT_EQ(c.Raw({"SELECT", "3"}), "+OK\r\n");
  std::string info = c.Call({"CLIENT", "INFO"}).str;
  EXPECT_EQ(Field(info, "id"), std::to_string(id));
  EXPECT_EQ(Field(info, "name"), "worker-1");
  EXPECT_EQ(Field(info, "db"), "3");
  EXPECT_EQ(Field(info, "cmd"), "client|info");
  EXPECT_EQ(Field(info, "resp"), "2");
  EXPECT_EQ(c.Raw({"CLIENT", "SETINFO", "LIB-NAME", "kvtest"}), "+OK\r\n");
  EXPECT_EQ(Field(c.Call({"CLIENT", "INFO"}).str, "lib-name"), "kvtest");
  EXPECT_EQ(c.Raw({"CLIENT", "SETINFO", "BOGUS", "x"}), "-ERR Unrecognized option 'BOGUS'\r\n");
}

TEST_F(ClientCmd, ListShowsEveryConnectionOnEveryThread) {
  std::vector<std::unique_ptr<RespClient>> clients;
  std::vector<int64_t> ids;
  for (int i = 0; i < 6; i++) {
    clients.push_back(std::make_unique<RespClient>(port()));
    ids.push_back(clients.back()->Call({"CLIENT", "ID"}).integer);
  }
  std::string list = clients[0]->Call({"CLIENT", "LIST"}).str;
  for (int64_t id : ids) {
    EXPECT_NE(list.find("id=" + std::to_string(id) + " "), std::string::npos) << id;
  }
  std::string one = clients[0]->Call({"CLIENT", "LIST", "ID", std::to_string(ids[3])}).str;
  EXPECT_EQ(Field(one, "id"), std::to_string(ids[3]));
  EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 1);
  EXPECT_EQ(clients[0]->Raw({"CLIENT", "LIST", "TYPE", "bogus"}),
            "-ERR Unknown client type 'bogus'\r\n");
}

TEST_F(ClientCmd, KillByIdAddrAndFilters) {
  RespClient admin(port());
  // Victims land on different poll groups (round-robin); kills cross threads.
  std::vector<std::unique_ptr<RespClient>> victims;
  for (int i = 0; i < 4; i++) victims.push_back(std::make_unique<RespClient>(port()));
  int64_t id0 = victims[0]->Call({"CLIENT", "ID"}).integer;
  EXPECT_EQ(admin.Raw({"CLIENT", "KILL", "ID", std::to_string(id0)}), ":1\r\n");
  EXPECT_TRUE(victims[0]->WaitClosed(2000));

  std::string addr = Field(victims[1]->Call({"CLIENT", "INFO"}).str, "addr");
  EXPECT_EQ(admin.Raw({"CLIENT", "KILL", addr}), "+OK\r\n");
  EXPECT_TRUE(victims[1]->WaitClosed(2000));
  EXPECT_EQ(admin.Raw({"CLIENT", "KILL", "127.0.0.1:1"}), "-ERR No such client\r\n");

  EXPECT_EQ(admin.Raw({"CLIENT", "KILL", "ID", "0"}),
            "-ERR client-id should be greater than 0\r\n");
  // Three arguments are the old form (an address), as in Redis: "ID" is no client's address.
  EXPECT_EQ(admin.Raw({"CLIENT", "KILL", "ID"}), "-ERR No such client\r\n");
  EXPECT_EQ(admin.Raw({"CLIENT", "KILL", "ID", "1", "TYPE"}), "-ERR syntax error\r\n");
  // SKIPME yes (the default) spares the caller.
  int64_t killed = admin.Call({"CLIENT", "KILL", "TYPE", "normal"}).integer;
  EXPECT_GE(killed, 2);
  EXPECT_TRUE(victims[2]->WaitClosed(2000));
  EXPECT_TRUE(victims[3]->WaitClosed(2000));
  EXPECT_EQ(admin.Raw({"PING"}), "+PONG\r\n");
  // SKIPME no: the caller gets its reply, then is closed.
  EXPECT_EQ(admin.Call({"CLIENT", "KILL", "ID", std::to_string(admin.Call({"CLIENT", "ID"}).integer),
                        "SKIPME", "no"}).integer, 1);
  EXPECT_TRUE(admin.WaitClosed(2000));
}

// CLIENT KILL USER names a user that must exist, as in Redis; the default user's connections go.
TEST(ClientKillUser, AnUnknownUserIsAnError) {
  for (auto kind : {ServerProcess::Kind::kKvstore, ServerProcess::Kind::kRedis}) {
    if (kind == ServerProcess::Kind::kRedis && !HaveRedisServer()) continue;
    ServerProcess s(kind);
    RespClient admin(s.port()), victim(s.port());
    EXPECT_EQ(admin.Raw({"CLIENT", "KILL", "USER", "wrong_user"}),
              "-ERR No such user 'wrong_user'\r\n");
    EXPECT_EQ(admin.Raw({"CLIENT", "KILL", "USER", "default"}), ":1\r\n");
    EXPECT_TRUE(victim.WaitClosed(2000));
  }
}

// The asking client's query buffer still holds the command it runs (26 bytes for CLIENT INFO,
// and its pipelined successors too), as Redis shows it.
TEST(ClientQbuf, TheAskingClientSeesItsOwnCommand) {
  for (auto kind : {ServerProcess::Kind::kKvstore, ServerProcess::Kind::kRedis}) {
    if (kind == ServerProcess::Kind::kRedis && !HaveRedisServer()) continue;
    ServerProcess s(kind);
    RespClient c(s.port());
    EXPECT_EQ(Field(c.Call({"CLIENT", "INFO"}).str, "qbuf"), "26");
    std::string list =
        c.Call({"CLIENT", "LIST", "ID", std::to_string(c.Call({"CLIENT", "ID"}).integer)}).str;
    EXPECT_EQ(Field(list, "qbuf"), "41") << list;
  }
}

TEST_F(ClientCmd, ReplyOffSkipOn) {
  RespClient c(port());
  c.Send({"CLIENT", "REPLY", "OFF"});
  c.Send({"SET", "r1", "x"});
  c.Send({"NOSUCHCOMMAND"});  // errors are silenced too
  c.Send({"CLIENT", "REPLY", "ON"});
  EXPECT_EQ(c.Read().raw, "+OK\r\n");  // the ON itself is answered
  c.Send({"CLIENT", "REPLY", "SKIP"});
  c.Send({"GET", "r1"});
  c.Send({"ECHO", "after"});
  EXPECT_EQ(c.Read().raw, "$5\r\nafter\r\n");
  EXPECT_EQ(c.Raw({"GET", "r1"}), "$1\r\nx\r\n");
}

TEST_F(ClientCmd, ResetRestoresDefaults) {
  RespClient c(port());
  ASSERT_EQ(c.Call({"HELLO", "3", "SETNAME", "n"}).type, '%');
  ASSERT_EQ(c.Raw({"SELECT", "5"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"RESET"}), "+RESET\r\n");
  std::string info = c.Call({"CLIENT", "INFO"}).str;
  EXPECT_EQ(Field(info, "db"), "0");
  EXPECT_EQ(Field(info, "resp"), "2");
  EXPECT_EQ(Field(info, "name"), "");
}

// Runs redis-cli with `args` against the test server and returns its stdout.
std::string RedisCli(int port, const std::string& args, const std::string& input = "") {
  std::string cmd = "redis-cli -p " + std::to_string(port) + " " + args;
  if (!input.empty()) cmd = "printf '%s' '" + input + "' | " + cmd;
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST_F(ClientCmd, RedisCliWorks) {
  EXPECT_EQ(RedisCli(port(), "SET cli:k hello"), "OK\n");
  EXPECT_EQ(RedisCli(port(), "GET cli:k"), "hello\n");
  EXPECT_EQ(RedisCli(port(), "--no-raw INCR cli:n"), "(integer) 1\n");
  EXPECT_EQ(RedisCli(port(), "-3 --no-raw GET cli:missing"), "(nil)\n");
  EXPECT_EQ(RedisCli(port(), "--no-raw NOSUCH"),
            "(error) ERR unknown command 'NOSUCH', with args beginning with: \n");
}

TEST_F(ClientCmd, RedisCliPipeMassInsertion) {
  // redis-cli --pipe sends raw protocol and checks every reply, ending with an ECHO marker.
  std::string proto;
  for (int i = 0; i < 1000; i++) {
    proto += RespClient::Encode({"SET", "pipe:" + std::to_string(i), std::to_string(i)});
  }
  char path[] = "/tmp/kvstore-pipe-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_EQ(write(fd, proto.data(), proto.size()), static_cast<ssize_t>(proto.size()));
  close(fd);
  std::string out = RedisCli(port(), std::string("--pipe < ") + path + " 2>&1");
  unlink(path);
  EXPECT_NE(out.find("errors: 0, replies: 1000"), std::string::npos) << out;
  RespClient c(port());
  EXPECT_EQ(c.Raw({"GET", "pipe:999"}), "$3\r\n999\r\n");
}

// redis-cli --replica speaks SYNC and expects the snapshot payload with no status line before
// it, then prints the command stream.
TEST_F(ClientCmd, RedisCliReplicaFollowsTheStream) {
  RespClient c(port());
  ASSERT_EQ(c.Call({"CONFIG", "SET", "repl-diskless-sync-delay", "0"}).str, "OK");
  std::string out;
  std::thread cli([&] { out = RedisCli(port(), "--replica 2>&1 & sleep 3; kill $!"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  c.Call({"SET", "cli:replica", "streamed"});
  cli.join();
  c.Call({"CONFIG", "SET", "repl-diskless-sync-delay", "5"});
  EXPECT_NE(out.find("SYNC done"), std::string::npos) << out;
  EXPECT_NE(out.find("\"SET\",\"cli:replica\",\"streamed\""), std::string::npos) << out;
  EXPECT_EQ(out.find("FULLRESYNC"), std::string::npos) << out;
}

}  // namespace
}  // namespace kv::test
