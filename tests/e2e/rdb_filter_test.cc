// redis-cli --rdb and --functions-rdb against both servers: the snapshot a client asks for with
// REPLCONF rdb-only and rdb-filter-only (everything, or the function libraries alone), read by
// redis-server afterwards; and the REPLCONF errors, byte for byte.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

constexpr const char* kLibrary =
    "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return 1 end)";

class RdbFilter : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

// Runs redis-cli with `mode` (--rdb or --functions-rdb) into `path`; true on success.
bool Fetch(int port, const std::string& mode, const std::string& path) {
  std::string cmd = "timeout 60 redis-cli -p " + std::to_string(port) + " " + mode + " '" + path +
                    "' >/dev/null 2>&1";
  return system(cmd.c_str()) == 0;
}

// What a redis-server started on `file` holds: its DBSIZE and its libraries' names.
std::pair<int64_t, std::string> Contents(const ServerProcess& donor, const std::string& file) {
  std::string copy = "cp '" + file + "' '" + donor.dir() + "/dump.rdb'";
  EXPECT_EQ(system(copy.c_str()), 0);
  ServerProcess reader(Kind::kRedis, {"--dir", donor.dir()});
  RespClient r(reader.port());
  Reply libs = r.Call({"FUNCTION", "LIST"});
  std::string names;
  for (const Reply& lib : libs.elems) {
    if (lib.elems.size() >= 2) names += lib.elems[1].str + " ";
  }
  return {r.Call({"DBSIZE"}).integer, names};
}

TEST_P(RdbFilter, RedisCliGetsTheWholeSnapshotOrItsFunctionsAlone) {
  ServerProcess server(GetParam(), {"--repl-diskless-sync-delay", "0"});
  RespClient c(server.port());
  ASSERT_EQ(c.Call({"FUNCTION", "LOAD", kLibrary}).str, "mylib");
  ASSERT_EQ(c.Call({"DEBUG", "POPULATE", "100"}).str, "OK");
  ServerProcess donor(Kind::kRedis);  // a directory for the files
  std::string whole = donor.dir() + "/whole.rdb", functions = donor.dir() + "/functions.rdb";
  ASSERT_TRUE(Fetch(server.port(), "--rdb", whole));
  ASSERT_TRUE(Fetch(server.port(), "--functions-rdb", functions));
  donor.Stop();
  EXPECT_EQ(Contents(donor, whole), std::make_pair(int64_t{100}, std::string("mylib ")));
  EXPECT_EQ(Contents(donor, functions), std::make_pair(int64_t{0}, std::string("mylib ")));
  // The server goes on serving, with nothing of those syncs left behind as replicas.
  EXPECT_EQ(c.Call({"DBSIZE"}).integer, 100);
}

INSTANTIATE_TEST_SUITE_P(Servers, RdbFilter, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return std::string(info.param == Kind::kKvstore ? "kvstore" : "redis");
                         });

TEST(RdbFilterErrors, ReplconfRepliesMatchRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess kv(Kind::kKvstore), redis(Kind::kRedis);
  RespClient k(kv.port()), r(redis.port());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"REPLCONF", "rdb-only", "1"},
           {"REPLCONF", "rdb-only", "0"},
           {"REPLCONF", "rdb-only", "2"},
           {"REPLCONF", "rdb-only", "x"},
           {"REPLCONF", "rdb-filter-only", ""},
           {"REPLCONF", "rdb-filter-only", "functions"},
           {"REPLCONF", "rdb-filter-only", "keys"},
           {"REPLCONF", "rdb-filter-only", "functions \"unclosed"}}) {
    EXPECT_EQ(k.Raw(args), r.Raw(args)) << args[1] << " " << args[2];
  }
}

}  // namespace
}  // namespace kv::test
