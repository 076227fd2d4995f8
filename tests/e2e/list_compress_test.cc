// list-compress-depth end to end, against Debian's redis-server: lists with
// LZF-compressed inner nodes answer every list command as plain ones do, report
// themselves in DEBUG OBJECT and MEMORY USAGE as Redis does, and travel
// compressed (DUMP/RESTORE, RDB files, replication) in a form each server reads
// from the other.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

// A compressible element: a counter and a long run.
std::string Elem(int i) { return "element:" + std::to_string(i) + std::string(40, 'x'); }

// RPUSHes Elem(from) .. Elem(to - 1) onto `key`, 1,000 at a time.
void Fill(RespClient &c, const std::string &key, int from, int to) {
  for (int i = from; i < to;) {
    Cmd push = {"RPUSH", key};
    for (int end = std::min(to, i + 1000); i < end; i++) push.push_back(Elem(i));
    ASSERT_FALSE(c.Call(push).is_error());
  }
}

// DEBUG OBJECT's fields from `from` on ("ql_nodes:" ...), without
// ql_uncompressed_size (which counts each server's own node bytes).
std::string QuicklistFields(RespClient &c, const std::string &key) {
  std::string s = c.Call({"DEBUG", "OBJECT", key}).str;
  size_t at = s.find(" ql_nodes:");
  size_t end = s.find(" ql_uncompressed_size:");
  if (at == std::string::npos || end == std::string::npos) return "missing in: " + s;
  return s.substr(at, end - at);
}

bool HasCompressedFlag(RespClient &c, const std::string &key) {
  return c.Call({"DEBUG", "OBJECT", key}).str.find("ql_compressed:1") != std::string::npos;
}

class ListCompress : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

// The same commands on both servers give the same bytes: every list command on
// a list whose inner nodes are compressed (5 elements a node, so the lists have
// hundreds of nodes).
TEST_F(ListCompress, CommandsAnswerAsRedis) {
  Cmd args = {"--list-compress-depth", "2", "--list-max-listpack-size", "5"};
  ServerProcess kv(Kind::kKvstore, args), redis(Kind::kRedis, args);
  RespClient k(kv.port()), r(redis.port());
  Fill(k, "l", 0, 2000);
  Fill(r, "l", 0, 2000);
  EXPECT_EQ(QuicklistFields(k, "l"), QuicklistFields(r, "l"));
  std::vector<Cmd> script = {
      {"LINDEX", "l", "1000"},
      {"LINDEX", "l", "-777"},
      {"LRANGE", "l", "990", "1010"},
      {"LRANGE", "l", "-1500", "-1400"},
      {"LPOS", "l", Elem(1234)},
      {"LPOS", "l", Elem(7), "RANK", "-1"},
      {"LSET", "l", "1001", "changed"},
      {"LINDEX", "l", "1001"},
      {"LINSERT", "l", "BEFORE", Elem(500), "inserted"},
      {"LINSERT", "l", "AFTER", Elem(1500), "x"},
      {"LREM", "l", "0", Elem(600)},
      {"LRANGE", "l", "495", "505"},
      {"LPUSH", "l", "head"},
      {"RPUSH", "l", "tail"},
      {"LPOP", "l", "3"},
      {"RPOP", "l", "3"},
      {"LMOVE", "l", "m", "LEFT", "RIGHT"},
      {"LMOVE", "l", "l", "RIGHT", "LEFT"},
      {"LTRIM", "l", "100", "-100"},
      {"LLEN", "l"},
      {"LRANGE", "l", "0", "-1"},
      {"DEBUG", "DIGEST-VALUE", "l"},
      {"OBJECT", "ENCODING", "l"},
  };
  for (const Cmd &cmd : script) {
    EXPECT_EQ(k.Raw(cmd), r.Raw(cmd)) << cmd[0] << " " << cmd[1];
  }
  EXPECT_TRUE(HasCompressedFlag(k, "l"));
}

// DEBUG OBJECT reports the depth a list was made with: CONFIG SET applies to
// new lists only.
TEST_P(ListCompress, DebugObjectReportsDepthOfCreation) {
  ServerProcess s(GetParam(), {"--list-max-listpack-size", "5"});
  RespClient c(s.port());
  Fill(c, "before", 0, 100);
  ASSERT_EQ(c.Call({"CONFIG", "SET", "list-compress-depth", "1"}).str, "OK");
  Fill(c, "after", 0, 100);
  Fill(c, "before", 100, 200);
  EXPECT_EQ(QuicklistFields(c, "before"),
            " ql_nodes:40 ql_avg_node:5.00 ql_listpack_max:5 ql_compressed:0");
  EXPECT_EQ(QuicklistFields(c, "after"),
            " ql_nodes:20 ql_avg_node:5.00 ql_listpack_max:5 ql_compressed:1");
  EXPECT_EQ(c.Call({"OBJECT", "ENCODING", "after"}).str, "quicklist");
  // SORT ... STORE makes its list with the defaults, whatever the settings.
  ASSERT_EQ(c.Call({"SORT", "after", "ALPHA", "STORE", "sorted"}).integer, 100);
  EXPECT_EQ(QuicklistFields(c, "sorted"),
            " ql_nodes:1 ql_avg_node:100.00 ql_listpack_max:-2 ql_compressed:0");
  // Compressed or not, the same elements digest alike.
  ASSERT_EQ(c.Call({"LTRIM", "before", "0", "99"}).str, "OK");
  EXPECT_EQ(c.Call({"DEBUG", "DIGEST-VALUE", "before"}).raw,
            c.Call({"DEBUG", "DIGEST-VALUE", "after"}).raw);
}

// Compression saves memory (MEMORY USAGE counts the compressed nodes) and DUMP
// payloads: a compressed node is dumped as its LZF blob even with
// rdbcompression off.
TEST_P(ListCompress, SmallerInMemoryAndInDumps) {
  ServerProcess s(GetParam(), {"--rdbcompression", "no"});
  RespClient c(s.port());
  Fill(c, "plain", 0, 10000);
  ASSERT_EQ(c.Call({"CONFIG", "SET", "list-compress-depth", "1"}).str, "OK");
  Fill(c, "packed", 0, 10000);
  int64_t plain_mem = c.Call({"MEMORY", "USAGE", "plain"}).integer;
  int64_t packed_mem = c.Call({"MEMORY", "USAGE", "packed"}).integer;
  EXPECT_LT(packed_mem * 2, plain_mem) << packed_mem << " vs " << plain_mem;
  size_t plain_dump = c.Call({"DUMP", "plain"}).str.size();
  size_t packed_dump = c.Call({"DUMP", "packed"}).str.size();
  EXPECT_LT(packed_dump * 2, plain_dump) << packed_dump << " vs " << plain_dump;
}

INSTANTIATE_TEST_SUITE_P(Servers, ListCompress, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto &info) {
                           return info.param == Kind::kKvstore ? "Kvstore" : "Redis";
                         });

TEST_F(ListCompress, DumpRestoresAcrossServers) {
  Cmd args = {"--list-compress-depth", "1", "--rdbcompression", "no"};
  ServerProcess kv(Kind::kKvstore, args), redis(Kind::kRedis, args);
  RespClient k(kv.port()), r(redis.port());
  Fill(k, "l", 0, 5000);
  std::string digest = k.Call({"DEBUG", "DIGEST-VALUE", "l"}).raw;
  Reply dump = k.Call({"DUMP", "l"});
  ASSERT_EQ(r.Call({"RESTORE", "l", "0", dump.str}).str, "OK");
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST-VALUE", "l"}).raw, digest);
  EXPECT_TRUE(HasCompressedFlag(r, "l"));
  Reply back = r.Call({"DUMP", "l"});
  ASSERT_EQ(k.Call({"RESTORE", "copy", "0", back.str}).str, "OK");
  EXPECT_EQ(k.Call({"DEBUG", "DIGEST-VALUE", "copy"}).raw, digest);
  EXPECT_EQ(k.Call({"LINDEX", "copy", "2500"}).str, Elem(2500));
  EXPECT_TRUE(HasCompressedFlag(k, "copy"));
}

// An RDB file kvstore saved with compressed lists loads into redis-server, and
// the reverse.
TEST_F(ListCompress, RdbFilesLoadAcrossServers) {
  Cmd args = {"--list-compress-depth", "1", "--list-max-listpack-size", "16"};
  std::string digest;
  {
    ServerProcess kv(Kind::kKvstore, args);
    RespClient k(kv.port());
    Fill(k, "l", 0, 5000);
    ASSERT_EQ(k.Call({"DEBUG", "RELOAD"}).str,
              "OK");  // kvstore reads back its own file
    EXPECT_TRUE(HasCompressedFlag(k, "l"));
    ASSERT_EQ(k.Call({"SAVE"}).str, "OK");
    digest = k.Call({"DEBUG", "DIGEST"}).str;
    Cmd on_kv_file = args;
    on_kv_file.insert(on_kv_file.end(), {"--dir", kv.dir()});
    ServerProcess redis(Kind::kRedis, on_kv_file);
    RespClient r(redis.port());
    EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, digest) << redis.LogText();
    EXPECT_EQ(r.Call({"LINDEX", "l", "2500"}).str, Elem(2500));
  }
  ServerProcess redis(Kind::kRedis, args);
  RespClient r(redis.port());
  Fill(r, "l", 0, 5000);
  ASSERT_EQ(r.Call({"SAVE"}).str, "OK");
  Cmd on_redis_file = args;
  on_redis_file.insert(on_redis_file.end(), {"--dir", redis.dir()});
  ServerProcess kv(Kind::kKvstore, on_redis_file);
  RespClient k(kv.port());
  EXPECT_EQ(k.Call({"DEBUG", "DIGEST"}).str, digest) << kv.LogText();
  EXPECT_TRUE(HasCompressedFlag(k, "l"));
  EXPECT_EQ(k.Call({"LRANGE", "l", "2000", "2010"}).raw,
            r.Call({"LRANGE", "l", "2000", "2010"}).raw);
}

// Full syncs carry compressed lists both ways: a redis-server replica of
// kvstore, and a kvstore replica of redis-server.
TEST_F(ListCompress, ReplicasSyncCompressedLists) {
  Cmd args = {"--list-compress-depth", "1", "--repl-diskless-sync-delay", "0"};
  ServerProcess kv(Kind::kKvstore, args);
  RespClient k(kv.port());
  Fill(k, "l", 0, 5000);
  {
    Cmd follow_kv = args;
    follow_kv.insert(follow_kv.end(), {"--replicaof", "127.0.0.1 " + std::to_string(kv.port())});
    ServerProcess redis(Kind::kRedis, follow_kv);
    RespClient r(redis.port());
    ASSERT_TRUE(InSync(k, r)) << redis.LogText();
    EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, k.Call({"DEBUG", "DIGEST"}).str);
    EXPECT_TRUE(HasCompressedFlag(r, "l"));
    // Changes after the sync reach the replica too.
    k.Call({"LSET", "l", "2500", "changed"});
    ASSERT_TRUE(InSync(k, r));
    EXPECT_EQ(r.Call({"LINDEX", "l", "2500"}).str, "changed");
  }

  ServerProcess primary(Kind::kRedis, args);
  RespClient p(primary.port());
  Fill(p, "l2", 0, 5000);
  ASSERT_EQ(k.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  ASSERT_TRUE(InSync(p, k)) << kv.LogText();
  EXPECT_EQ(k.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_TRUE(HasCompressedFlag(k, "l2"));
}

}  // namespace
}  // namespace kv::test
