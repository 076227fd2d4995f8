// End-to-end tests of a server loading its RDB or its AOF at startup, as Redis 7.0 serves then: it
// listens while it loads, answers -LOADING to what may not run yet, INFO shows loading:1 with
// the loading_* progress fields, CONFIG SET of a DENY_LOADING parameter (dir) is refused with
// -LOADING while others apply, and a SIGTERM or SHUTDOWN ends the process without saving over
// the file being loaded. Each case runs on kvstore and on redis-server (key-load-delay slows
// the load down so that it can be watched).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "net/socket.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

extern char** environ;

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

class StartupLoading : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
    // A snapshot of 20,000 keys, made by the server under test.
    seed_ = std::make_unique<ServerProcess>(GetParam(), std::vector<std::string>{"--save", ""});
    RespClient c(seed_->port());
    ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "20000", "key", "100"}).str, "OK");
    ASSERT_EQ(c.Call({"SAVE"}).str, "OK");
    ASSERT_EQ(seed_->Stop(), 0);
    rdb_ = ReadFile(seed_->dir() + "/dump.rdb");
    ASSERT_GT(rdb_.size(), 100000u);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // Starts the server on the snapshot, 100 us per key (two seconds for the load), and waits
  // until it accepts connections.
  void SpawnLoading() {
    port_ = FreePort();
    std::vector<std::string> args = {
        GetParam() == Kind::kKvstore ? BuildPath("kvstore-server") : "/usr/bin/redis-server",
        "--port",
        std::to_string(port_),
        "--dir",
        seed_->dir(),
        "--save",
        "900 1",
        "--logfile",
        log(),
        "--key-load-delay",
        "100",
        "--loading-process-events-interval-bytes",
        "1024",
        "--enable-protected-configs",
        "yes",
        "--enable-debug-command",
        "yes"};
    if (aof_) {
      args.insert(args.end(), {"--appendonly", "yes", "--aof-use-rdb-preamble", "no"});
    } else if (GetParam() == Kind::kRedis) {
      args.insert(args.end(), {"--appendonly", "no"});
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    ASSERT_TRUE(WaitFor([&] { return net::ConnectTcp("127.0.0.1", port_, 200).ok(); }))
        << ReadFile(log());
  }
  bool Exited(int* status) {
    if (pid_ <= 0) return true;
    if (waitpid(pid_, status, WNOHANG) != pid_) return false;
    pid_ = -1;
    return true;
  }
  std::string log() const { return seed_->dir() + "/loading.log"; }
  // Starts the loading server, stops it with SIGTERM (else SHUTDOWN SAVE) while it loads, and
  // checks that it exited cleanly (what it left behind is the test's to check).
  void StopDuringTheLoad(bool sigterm) {
    SpawnLoading();
    RespClient c(port_);
    ASSERT_EQ(InfoField(c, "persistence", "loading"), "1");
    if (sigterm) {
      kill(pid_, SIGTERM);
    } else {
      c.Send({"SHUTDOWN", "SAVE"});
    }
    int status = 0;
    ASSERT_TRUE(WaitFor([&] { return Exited(&status); }, 30000)) << ReadFile(log());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    if (sigterm) {
      EXPECT_NE(ReadFile(log()).find("Received shutdown signal during loading"), std::string::npos)
          << ReadFile(log());
    }
  }

  std::unique_ptr<ServerProcess> seed_;
  std::string rdb_;
  bool aof_ = false;  // the server loads its AOF (StartupLoadingAof)
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST_P(StartupLoading, ClientsAreAnsweredWhileTheDataLoads) {
  SpawnLoading();
  RespClient c(port_);
  EXPECT_EQ(InfoField(c, "persistence", "loading"), "1");
  EXPECT_EQ(c.Raw({"GET", "key:1"}), "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(c.Raw({"DBSIZE"}), "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "loglevel", "debug"}), "+OK\r\n");
  EXPECT_EQ(c.Call({"CONFIG", "GET", "loglevel"}).elems.at(1).str, "debug");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "dir", "/tmp"}),
            "-LOADING Redis is loading the dataset in memory\r\n");
  std::string info = c.Call({"INFO", "persistence"}).str;
  EXPECT_EQ(InfoField(c, "persistence", "loading_total_bytes"), std::to_string(rdb_.size()))
      << info;
  EXPECT_NE(info.find("loading_loaded_perc:"), std::string::npos) << info;
  EXPECT_NE(info.find("loading_eta_seconds:"), std::string::npos) << info;
  // Once loaded, everything is there and the fields are gone.
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "loading") == "0"; }, 60000));
  EXPECT_EQ(c.Call({"DBSIZE"}).integer, 20000);
  EXPECT_EQ(c.Call({"STRLEN", "key:1"}).integer, 100);
  EXPECT_EQ(c.Call({"INFO", "persistence"}).str.find("loading_total_bytes"), std::string::npos);
}

TEST_P(StartupLoading, ASigtermDuringTheLoadExitsWithoutSaving) {
  ASSERT_NO_FATAL_FAILURE(StopDuringTheLoad(/*sigterm=*/true));
  EXPECT_EQ(ReadFile(seed_->dir() + "/dump.rdb"), rdb_);
}

TEST_P(StartupLoading, AShutdownDuringTheLoadDoesNotSave) {
  ASSERT_NO_FATAL_FAILURE(StopDuringTheLoad(/*sigterm=*/false));
  EXPECT_EQ(ReadFile(seed_->dir() + "/dump.rdb"), rdb_);
}

// The same with the dataset in an AOF of commands (aof-use-rdb-preamble no): clients are let in
// between the commands replayed.
class StartupLoadingAof : public StartupLoading {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP() << "no redis-server";
    aof_ = true;
    seed_ = std::make_unique<ServerProcess>(
        GetParam(), std::vector<std::string>{"--save", "", "--appendonly", "yes",
                                             "--aof-use-rdb-preamble", "no"});
    RespClient c(seed_->port());
    ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "20000", "key", "100"}).str, "OK");
    ASSERT_EQ(c.Call({"BGREWRITEAOF"}).type, '+');
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(c, "persistence", "aof_rewrite_in_progress") == "0" &&
             InfoField(c, "persistence", "aof_rewrite_scheduled") == "0";
    }));
    ASSERT_EQ(c.Call({"SET", "after", "rewrite"}).str, "OK");  // one command in the increment
    ASSERT_EQ(seed_->Stop(), 0);
    // The manifest's lines: "file <name> seq <n> type <b|i>", the base first.
    std::istringstream manifest(ReadFile(seed_->dir() + "/appendonlydir/appendonly.aof.manifest"));
    for (std::string word, name; manifest >> word;) {
      if (word != "file" || !(manifest >> name)) continue;
      names_.push_back(name);
      files_.push_back(ReadFile(seed_->dir() + "/appendonlydir/" + name));
      aof_size_ += files_.back().size();
    }
    ASSERT_EQ(files_.size(), 2u);
    ASSERT_GT(files_[0].size(), 100000u);
    ASSERT_NE(files_[1].find("rewrite"), std::string::npos);
  }
  // The AOF's files are as they were before the start.
  void ExpectFilesUntouched() {
    for (size_t i = 0; i < names_.size(); i++) {
      EXPECT_EQ(ReadFile(seed_->dir() + "/appendonlydir/" + names_[i]), files_[i]) << names_[i];
    }
  }

  std::vector<std::string> names_, files_;
  size_t aof_size_ = 0;
};

TEST_P(StartupLoadingAof, ClientsAreAnsweredWhileTheAofLoads) {
  SpawnLoading();
  RespClient c(port_);
  EXPECT_EQ(InfoField(c, "persistence", "loading"), "1");
  EXPECT_EQ(c.Raw({"GET", "key:1"}), "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "loglevel", "debug"}), "+OK\r\n");
  EXPECT_EQ(InfoField(c, "persistence", "loading_total_bytes"), std::to_string(aof_size_));
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "loading") == "0"; }, 60000));
  EXPECT_EQ(c.Call({"DBSIZE"}).integer, 20001);
  EXPECT_EQ(c.Call({"GET", "after"}).str, "rewrite");
}

TEST_P(StartupLoadingAof, ASigtermDuringTheLoadExitsLeavingTheFiles) {
  ASSERT_NO_FATAL_FAILURE(StopDuringTheLoad(/*sigterm=*/true));
  ExpectFilesUntouched();
}

TEST_P(StartupLoadingAof, AShutdownDuringTheLoadLeavesTheFiles) {
  ASSERT_NO_FATAL_FAILURE(StopDuringTheLoad(/*sigterm=*/false));
  ExpectFilesUntouched();
  EXPECT_NE(access((seed_->dir() + "/dump.rdb").c_str(), F_OK), 0);  // nothing saved
}

INSTANTIATE_TEST_SUITE_P(Servers, StartupLoadingAof,
                         ::testing::Values(Kind::kKvstore, Kind::kRedis), [](const auto& info) {
                           return std::string(info.param == Kind::kKvstore ? "kvstore" : "redis");
                         });

INSTANTIATE_TEST_SUITE_P(Servers, StartupLoading, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return std::string(info.param == Kind::kKvstore ? "kvstore" : "redis");
                         });

}  // namespace
}  // namespace kv::test
