// Plain list nodes (DEBUG QUICKLIST-PACKED-THRESHOLD) against Debian's redis-server: the
// scenarios of Redis' tests/unit/type/list.tcl for plain nodes run on both servers, every reply
// compared byte for byte, and at each step DEBUG OBJECT's quicklist figures and the DUMP
// payload (which saves plain nodes as PLAIN containers) compared too.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

std::string Rep(char c, size_t n) { return std::string(n, c); }

// The field `name` ("ql_nodes" ...) of a DEBUG OBJECT reply, with its name.
std::string Field(const std::string& s, const std::string& name) {
  size_t at = s.find(" " + name + ":");
  if (at == std::string::npos) return "no " + name + " in: " + s;
  size_t end = s.find(' ', at + 1);
  return s.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
}

class ListPlainNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    // rdbcompression off: DUMP payloads without LZF are comparable byte for byte.
    Cmd args = {"--rdbcompression", "no"};
    kv_ = std::make_unique<ServerProcess>(Kind::kKvstore, args);
    redis_ = std::make_unique<ServerProcess>(Kind::kRedis, args);
    k_ = std::make_unique<RespClient>(kv_->port());
    r_ = std::make_unique<RespClient>(redis_->port());
  }

  // Runs `cmd` on both servers; the replies must be the same bytes. Returns kvstore's.
  Reply Both(const Cmd& cmd) {
    Reply k = k_->Call(cmd), r = r_->Call(cmd);
    std::string what;
    for (const std::string& a : cmd) what += (a.size() > 40 ? a.substr(0, 40) + "..." : a) + " ";
    EXPECT_EQ(k.raw, r.raw) << what;
    return k;
  }
  void All(const std::vector<Cmd>& cmds) {
    for (const Cmd& c : cmds) Both(c);
  }

  // DEBUG OBJECT's quicklist figures the same on both servers (ql_uncompressed_size counts
  // each server's own packed-node bytes, so it is compared only for a list of plain nodes
  // alone, where both count the elements' bytes), and the DUMP payloads alike.
  void SameShape(const std::string& key, bool only_plain = false) {
    std::string k = QuicklistFields(*k_, key, only_plain);
    EXPECT_EQ(k, QuicklistFields(*r_, key, only_plain)) << key;
    std::string kd = k_->Call({"DUMP", key}).str, rd = r_->Call({"DUMP", key}).str;
    if (k.find("ql_compressed:0") != std::string::npos) {
      // Without LZF (rdbcompression is off; no node compression) the bytes are Redis'.
      EXPECT_EQ(kd, rd) << "DUMP " << key;
      return;
    }
    // kvstore's LZF coder emits other (valid) bytes than Redis' liblzf, so compressed nodes
    // are compared by their layout: each server restores the other's payload, and a Redis
    // RESTORE keeps the payload's nodes as they are.
    ASSERT_EQ(r_->Call({"RESTORE", "from-kv", "0", kd, "REPLACE"}).str, "OK");
    ASSERT_EQ(k_->Call({"RESTORE", "from-redis", "0", rd, "REPLACE"}).str, "OK");
    EXPECT_EQ(QuicklistFields(*r_, "from-kv", only_plain), k) << "kvstore's DUMP of " << key;
    EXPECT_EQ(QuicklistFields(*k_, "from-redis", only_plain), k) << "Redis' DUMP of " << key;
    Cmd all = {"LRANGE", key, "0", "-1"};
    std::string want = r_->Call(all).raw;
    EXPECT_EQ(r_->Call({"LRANGE", "from-kv", "0", "-1"}).raw, want);
    EXPECT_EQ(k_->Call({"LRANGE", "from-redis", "0", "-1"}).raw, want);
    r_->Call({"DEL", "from-kv"});
    k_->Call({"DEL", "from-redis"});
  }
  static std::string QuicklistFields(RespClient& c, const std::string& key, bool only_plain) {
    std::string s = c.Call({"DEBUG", "OBJECT", key}).str, out;
    std::vector<std::string> fields = {"ql_nodes", "ql_avg_node", "ql_listpack_max",
                                       "ql_compressed"};
    if (only_plain) fields.push_back("ql_uncompressed_size");
    for (const std::string& f : fields) out += Field(s, f) + " ";
    return out;
  }
  std::string Nodes(const std::string& key) {
    return Field(k_->Call({"DEBUG", "OBJECT", key}).str, "ql_nodes");
  }

  // Each scenario ends as Redis' does: the threshold back to its default (it is process-wide).
  void ResetThreshold() { EXPECT_EQ(Both({"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"}).str, "OK"); }

  // The LSET sequence of "Test LSET with packed / plain combinations" (plain to packed, packed
  // to plain, plain to plain, packed to packed) under `threshold`.
  void LsetCombinations(const std::string& threshold) {
    All({{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", threshold},
         {"RPUSH", "lst", "aa"},
         {"RPUSH", "lst", "bb"},
         {"LSET", "lst", "0", Rep('d', 50001)}});
    SameShape("lst");
    All({{"LPOP", "lst"},
         {"RPUSH", "lst", Rep('f', 50001)},
         {"LSET", "lst", "0", Rep('e', 50001)}});
    SameShape("lst", true);
    All({{"LPOP", "lst"}, {"RPUSH", "lst", Rep('m', 50001)}, {"LSET", "lst", "0", "bb"}});
    SameShape("lst");
    All({{"LPOP", "lst"}, {"RPUSH", "lst", "bb"}, {"LSET", "lst", "0", "cc"}});
    SameShape("lst");
    All({{"LPOP", "lst"}, {"LRANGE", "lst", "0", "-1"}});
    ResetThreshold();
  }

  std::unique_ptr<ServerProcess> kv_, redis_;
  std::unique_ptr<RespClient> k_, r_;
};

// "plain node check compression" and its "with ltrim" and "using lset" variants (and the
// packed-node runs before them), under list-compress-depth 2 with one element a node.
TEST_F(ListPlainNodes, CompressionWithInsertTrimAndSet) {
  All({{"CONFIG", "SET", "list-compress-depth", "2"},
       {"CONFIG", "SET", "list-max-ziplist-size", "1"}});
  for (const char* list : {"list1", "list4"}) {
    bool plain = std::string(list) == "list4";
    if (plain) Both({"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"});
    for (char c : {'a', 'b', 'c', 'd'}) Both({"LPUSH", list, Rep(c, 500)});
    for (char c : {'e', 'f', 'g', 'j'})
      Both({"LINSERT", list, "after", Rep('d', 500), Rep(c, 500)});
    SameShape(list, plain);
    EXPECT_EQ(Nodes(list), "ql_nodes:8");
    for (int i = 0; i < 8; i++) {
      Both({"LPOP", list});
      if (i == 3) SameShape(list, plain);
    }
    if (plain) ResetThreshold();
  }
  for (const char* list : {"list2", "list5"}) {
    bool plain = std::string(list) == "list5";
    if (plain) Both({"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"});
    All({{"LPUSH", list, Rep('a', 500)},
         {"LINSERT", list, "after", Rep('a', 500), Rep('b', 500)},
         {"RPUSH", list, Rep('c', 500)},
         {"LINDEX", list, "1"}});
    SameShape(list, plain);
    All({{"LTRIM", list, "1", "-1"}, {"LLEN", list}});
    SameShape(list, plain);
    if (plain) ResetThreshold();
  }
  for (const char* list : {"list3", "list6"}) {
    bool plain = std::string(list) == "list6";
    if (plain) Both({"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"});
    All({{"LPUSH", list, Rep('a', 500)},
         {"LSET", list, "0", Rep('b', 500)},
         {"LINDEX", list, "0"},
         {"LPUSH", list, Rep('c', 500)},
         {"LSET", list, "0", Rep('d', 500)},
         {"LINDEX", list, "0"}});
    SameShape(list, plain);
    if (plain) ResetThreshold();
  }
  Both({"CONFIG", "SET", "list-compress-depth", "0"});
}

// "Test LPUSH and LPOP on plain nodes", with its DEBUG RELOAD: the plain nodes come back plain.
TEST_F(ListPlainNodes, PushPopAndReload) {
  All({{"FLUSHDB"},
       {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
       {"LPUSH", "lst", "9"},
       {"LPUSH", "lst", "xxxxxxxxxx"},
       {"LPUSH", "lst", "xxxxxxxxxx"},
       {"LLEN", "lst"}});
  SameShape("lst", true);
  EXPECT_EQ(Nodes("lst"), "ql_nodes:3");
  All({{"RPOP", "lst"},
       {"RPOP", "lst"},
       {"LLEN", "lst"},
       {"LPOP", "lst"},
       {"LPUSH", "lst", "xxxxxxxxxx"},
       {"LPUSH", "lst", "bb"}});
  SameShape("lst", true);
  Both({"DEBUG", "RELOAD"});
  SameShape("lst", true);
  EXPECT_EQ(Nodes("lst"), "ql_nodes:2");
  Both({"RPOP", "lst"});
  ResetThreshold();
  // Loaded under the default threshold, saved plain nodes stay plain.
  All({{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"}, {"RPUSH", "lst", "cc", "dd"}});
  ResetThreshold();
  All({{"RPUSH", "lst", "ee", "ff"}, {"DEBUG", "RELOAD"}});
  SameShape("lst");
  EXPECT_EQ(Nodes("lst"), "ql_nodes:4");
  Both({"LRANGE", "lst", "0", "-1"});
}

// "Test LINDEX and LINSERT on plain nodes", "Test LTRIM ...", "Test LREM ...", "Test LPOS ...".
TEST_F(ListPlainNodes, IndexInsertTrimRemPos) {
  All({{"FLUSHDB"},
       {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
       {"LPUSH", "lst", "xxxxxxxxxxx"},
       {"LPUSH", "lst", "9"},
       {"LPUSH", "lst", "xxxxxxxxxxx"},
       {"LINSERT", "lst", "before", "9", "8"},
       {"LINDEX", "lst", "1"},
       {"LINSERT", "lst", "BEFORE", "9", "7"},
       {"LINSERT", "lst", "BEFORE", "9", "xxxxxxxxxxx"},
       {"LINDEX", "lst", "3"},
       {"LRANGE", "lst", "0", "-1"}});
  SameShape("lst", true);
  ResetThreshold();

  All({{"FLUSHDB"},
       {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
       {"LPUSH", "lst1", "9"},
       {"LPUSH", "lst1", "xxxxxxxxxxx"},
       {"LPUSH", "lst1", "9"},
       {"LTRIM", "lst1", "1", "-1"},
       {"LLEN", "lst1"}});
  SameShape("lst1", true);
  ResetThreshold();

  All({{"FLUSHDB"},
       {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
       {"LPUSH", "lst", "one"},
       {"LPUSH", "lst", "xxxxxxxxxxx"},
       {"LPUSH", "lst", "9"},
       {"LREM", "lst", "-2", "one"},
       {"LLEN", "lst"}});
  SameShape("lst", true);
  ResetThreshold();

  All({{"FLUSHDB"},
       {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
       {"RPUSH", "lst", "aa"},
       {"RPUSH", "lst", "bb"},
       {"RPUSH", "lst", "cc"},
       {"LSET", "lst", "0", "xxxxxxxxxxx"},
       {"LPOS", "lst", "xxxxxxxxxxx"}});
  SameShape("lst", true);
  ResetThreshold();
}

// "Test LMOVE on plain nodes".
TEST_F(ListPlainNodes, Lmove) {
  All({{"FLUSHDB"},
       {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
       {"RPUSH", "lst2{t}", "aa"},
       {"RPUSH", "lst2{t}", "bb"},
       {"LSET", "lst2{t}", "0", "xxxxxxxxxxx"},
       {"RPUSH", "lst2{t}", "cc"},
       {"RPUSH", "lst2{t}", "dd"},
       {"LMOVE", "lst2{t}", "lst{t}", "RIGHT", "LEFT"},
       {"LMOVE", "lst2{t}", "lst{t}", "LEFT", "RIGHT"},
       {"LLEN", "lst{t}"},
       {"LLEN", "lst2{t}"}});
  SameShape("lst{t}", true);
  SameShape("lst2{t}", true);
  All({{"LPOP", "lst2{t}"}, {"LPOP", "lst2{t}"}, {"LPOP", "lst{t}"}, {"LPOP", "lst{t}"}});
  ResetThreshold();
}

TEST_F(ListPlainNodes, LsetPackedPlainCombinations) { LsetCombinations("5b"); }

// "Test LSET with packed consist only one item": the same with one element a node.
TEST_F(ListPlainNodes, LsetOneItemNodes) {
  All({{"FLUSHDB"}, {"CONFIG", "SET", "list-max-ziplist-size", "1"}});
  LsetCombinations("1b");
  Both({"CONFIG", "SET", "list-max-ziplist-size", "-2"});
}

// "Test LSET with packed is split in the middle".
TEST_F(ListPlainNodes, LsetSplitsPackedNode) {
  All({{"FLUSHDB"},
       {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5b"},
       {"RPUSH", "lst", "aa"},
       {"RPUSH", "lst", "bb"},
       {"RPUSH", "lst", "cc"},
       {"RPUSH", "lst", "dd"},
       {"RPUSH", "lst", "ee"},
       {"LSET", "lst", "2", Rep('e', 10)}});
  SameShape("lst");
  EXPECT_EQ(Nodes("lst"), "ql_nodes:3");
  for (int i = 0; i < 5; i++) Both({"LPOP", "lst"});
  ResetThreshold();
}

// "Crash due to delete entry from a compress quicklist node" and "Crash due to split quicklist
// node wrongly".
TEST_F(ListPlainNodes, CrashRegressions) {
  std::string small(32, 'x'), large(100, 'x');
  All({{"FLUSHDB"},
       {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100b"},
       {"CONFIG", "SET", "list-compress-depth", "1"},
       {"RPUSH", "lst", large},
       {"RPUSH", "lst", small},
       {"RPUSH", "lst", small},
       {"LSET", "lst", "-1", large},
       {"LRANGE", "lst", "0", "-1"}});
  SameShape("lst");
  EXPECT_EQ(Nodes("lst"), "ql_nodes:3");
  ResetThreshold();
  Both({"CONFIG", "SET", "list-compress-depth", "0"});

  All({{"FLUSHDB"},
       {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "10b"},
       {"LPUSH", "lst", "aa"},
       {"LPUSH", "lst", "bb"},
       {"LSET", "lst", "-2", Rep('x', 10)},
       {"RPOP", "lst"},
       {"LRANGE", "lst", "0", "-1"}});
  SameShape("lst", true);
  ResetThreshold();
}

// Plain nodes among packed ones, compressed or not, travel as Redis writes them, and a payload
// from either server restores with its node forms kept whatever the threshold.
TEST_F(ListPlainNodes, DumpAndRestoreKeepForms) {
  for (const char* depth : {"0", "1"}) {
    std::string l = std::string("l") + depth, copy = std::string("copy") + depth;
    All({{"CONFIG", "SET", "list-compress-depth", depth},
         {"CONFIG", "SET", "list-max-listpack-size", "4"},
         {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "64b"}});
    for (int i = 0; i < 30; i++) {
      std::string e = i % 4 == 0 ? Rep(static_cast<char>('a' + i % 26), 64 + i) : std::to_string(i);
      Both({i % 3 ? "RPUSH" : "LPUSH", l, e});
    }
    All({{"LINSERT", l, "AFTER", "7", Rep('Z', 80)},
         {"LSET", l, "12", Rep('Y', 90)},
         {"LSET", l, "-1", "small"},
         {"LRANGE", l, "0", "-1"}});
    SameShape(l);
    std::string payload = r_->Call({"DUMP", l}).str;
    ResetThreshold();
    All({{"RESTORE", copy, "0", payload}, {"LRANGE", copy, "0", "-1"}});
    SameShape(copy);
    EXPECT_EQ(Nodes(copy), Nodes(l));
    // DEBUG RELOAD: the RDB file keeps them too.
    Both({"DEBUG", "RELOAD"});
    SameShape(l);
  }
  // With rdbcompression on, uncompressed nodes of long elements are LZF strings.
  All({{"CONFIG", "SET", "rdbcompression", "yes"}, {"LRANGE", "l0", "0", "-1"}});
}

// Redis' argument parsing (memtoull) and error text.
TEST_F(ListPlainNodes, ThresholdArguments) {
  for (const char* arg : {"1b",
                          "1",
                          "1K",
                          "1kb",
                          "2MB",
                          "1g",
                          "1gb",
                          "4095mb",
                          "4096mb",
                          "4gb",
                          "4294967296",
                          "4293918720",
                          "4293918721",
                          "-1",
                          "+1",
                          " 1",
                          "1 ",
                          "1.5",
                          "abc",
                          "",
                          "b",
                          "kb",
                          "1bb",
                          "18014398509481984kb",
                          "99999999999999999999999",
                          "0"}) {
    Both({"DEBUG", "QUICKLIST-PACKED-THRESHOLD", arg});
  }
  All({{"DEBUG", "QUICKLIST-PACKED-THRESHOLD"}, {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1", "2"}});
  // "18014398509481984kb" wraps to 0 in Redis' arithmetic: the default, so 500 bytes are packed.
  All({{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "18014398509481984kb"},
       {"RPUSH", "w", Rep('a', 500), Rep('b', 500)}});
  EXPECT_EQ(Nodes("w"), "ql_nodes:1");
  ResetThreshold();
}

}  // namespace
}  // namespace kv::test
