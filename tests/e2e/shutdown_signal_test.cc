// End-to-end tests of the shutdown's edges as Redis 7.0 has them: a signal only schedules the
// shutdown (the cron begins it, so DEBUG PAUSE-CRON holds it and SHUTDOWN ABORT cancels it), a
// second SIGINT during the final save exits at once and removes the save's temp file, a final
// save that fails on a signal logs Redis' line and the server goes on, and once a shutdown
// finishes no connection is accepted any more. Each case runs on kvstore and on redis-server.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

bool Has(const std::string& log, const std::string& what) {
  return log.find(what) != std::string::npos;
}

// The temp-*.rdb files in `dir`.
std::vector<std::string> TempFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("temp-", 0) == 0) out.push_back(name);
  }
  return out;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

class ShutdownSignal : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  }
  // 20 keys that take 100 ms each to save: a save lasts about two seconds.
  static void SlowSave(RespClient& c) {
    for (int i = 0; i < 20; i++) c.Call({"SET", std::to_string(i), std::to_string(i)});
    ASSERT_EQ(c.Call({"CONFIG", "SET", "rdb-key-save-delay", "100000"}).str, "OK");
  }
};

TEST_P(ShutdownSignal, AbortCancelsASigtermTheCronHasNotBegun) {
  ServerProcess s(GetParam(), {"--save", "3600 1"});
  RespClient c(s.port());
  ASSERT_EQ(c.Call({"DEBUG", "PAUSE-CRON", "1"}).str, "OK");
  kill(s.pid(), SIGTERM);
  ASSERT_TRUE(WaitFor([&] { return Has(s.LogText(), "Received SIGTERM scheduling shutdown"); }));
  EXPECT_EQ(c.Raw({"SHUTDOWN", "ABORT"}), "+OK\r\n");
  EXPECT_TRUE(Has(s.LogText(), "Shutdown manually aborted.")) << s.LogText();
  ASSERT_EQ(c.Call({"DEBUG", "PAUSE-CRON", "0"}).str, "OK");
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  EXPECT_EQ(c.Raw({"SHUTDOWN", "ABORT"}), "-ERR No shutdown in progress.\r\n");
  EXPECT_TRUE(s.Alive());
  EXPECT_FALSE(Has(s.LogText(), "User requested shutdown")) << s.LogText();
}

TEST_P(ShutdownSignal, ASecondSigintDuringTheSaveExitsAndRemovesTheTempFile) {
  ServerProcess s(GetParam(), {"--save", "3600 1"});
  RespClient c(s.port());
  SlowSave(c);
  std::string temp = s.dir() + "/temp-" + std::to_string(s.pid()) + ".rdb";
  kill(s.pid(), SIGINT);
  ASSERT_TRUE(WaitFor([&] { return Exists(temp); })) << s.LogText();
  kill(s.pid(), SIGINT);
  ASSERT_TRUE(WaitFor([&] { return !s.Alive(); })) << s.LogText();
  EXPECT_FALSE(Exists(temp));
  EXPECT_TRUE(Has(s.LogText(), "You insist... exiting now.")) << s.LogText();
}

TEST_P(ShutdownSignal, AFailedSaveOnASignalKeepsTheServerRunning) {
  ServerProcess s(GetParam(), {"--save", "3600 1"});
  RespClient c(s.port());
  ASSERT_EQ(c.Call({"SET", "k", "v"}).str, "OK");
  // A directory where the file goes: the temp file cannot be renamed to it.
  ASSERT_EQ(mkdir((s.dir() + "/dump.rdb").c_str(), 0755), 0);
  kill(s.pid(), SIGINT);
  ASSERT_TRUE(WaitFor([&] { return Has(s.LogText(), "Error trying to save the DB, can't exit."); }))
      << s.LogText();
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  EXPECT_TRUE(s.Alive());
  // The failed shutdown is over: a SIGINT now is a new one, not "you insist".
  EXPECT_EQ(c.Raw({"SHUTDOWN", "ABORT"}), "-ERR No shutdown in progress.\r\n");
  EXPECT_TRUE(Has(c.Call({"SHUTDOWN"}).str, "Errors trying to SHUTDOWN"));
  c.Send({"SHUTDOWN", "NOSAVE"});
  EXPECT_TRUE(WaitFor([&] { return !s.Alive(); }));
  rmdir((s.dir() + "/dump.rdb").c_str());
}

// SHUTDOWN NOSAVE during a BGSAVE: by the time the connection closes, the port refuses new
// connections; the child's temp file goes with it.
TEST_P(ShutdownSignal, NoConnectionIsAcceptedOnceTheShutdownIsDone) {
  ServerProcess s(GetParam());
  RespClient c(s.port());
  SlowSave(c);
  ASSERT_TRUE(Has(c.Call({"BGSAVE"}).str, "Background saving started"));
  ASSERT_TRUE(WaitFor([&] { return !TempFiles(s.dir()).empty(); }));
  c.Send({"SHUTDOWN", "NOSAVE"});
  std::string got;
  ASSERT_TRUE(c.WaitClosed(10000, &got));
  EXPECT_EQ(got, "");
  EXPECT_FALSE(net::ConnectTcp("127.0.0.1", s.port(), 1000).ok());
  EXPECT_TRUE(WaitFor([&] { return !s.Alive() && TempFiles(s.dir()).empty(); }));
}

INSTANTIATE_TEST_SUITE_P(Servers, ShutdownSignal, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return std::string(info.param == Kind::kKvstore ? "kvstore" : "redis");
                         });

}  // namespace
}  // namespace kv::test
