// Corrupt ziplists, quicklist nodes and zipmaps, from Redis' own corrupt-dump tests: RESTORE must
// refuse each with Redis' reply, whatever sanitize-dump-payload says (Redis converts every
// ziplist it loads and so checks each one entry by entry in both modes), leave no key behind,
// keep serving, and log the check that failed in Redis' words. An RDB file holding such a value
// must not load. Empty collections in an RDB file are skipped, and said so, as Redis does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

struct Payload {
  const char* name;
  std::string key, bytes;  // a DUMP payload: type, value, RDB version, CRC-64
  std::string check;       // the failed check Redis logs ("" where it logs none)
};

#define KV_BYTES(s) std::string(s, sizeof(s) - 1)

const std::vector<Payload>& Payloads() {
  static const std::vector<Payload> kPayloads = {
      // A quicklist ziplist whose second entry states a predecessor of 14 bytes (it is 4).
      {"QuicklistBigPrevLen", "key",
       KV_BYTES("\x0E\x01\x13\x13\x00\x00\x00\x0E\x00\x00\x00\x02\x00\x00\x02\x61\x00\x0E\x02\x62"
                "\x00\xFF\x09\x00\x49\x97\x30\xB2\x0D\xA1\xED\xAA"),
       "Ziplist integrity check failed."},
      // The same, stating 2.
      {"QuicklistSmallPrevLen", "key",
       KV_BYTES("\x0E\x01\x13\x13\x00\x00\x00\x0E\x00\x00\x00\x02\x00\x00\x02\x61\x00\x02\x02\x62"
                "\x00\xFF\x09\x00\xC7\x71\x03\x97\x07\x75\xB0\x63"),
       "Ziplist integrity check failed."},
      // A quicklist-2 plain node of zero bytes.
      {"QuicklistEncodedLenZero", "_list",
       KV_BYTES("\x12\x01\x01\x00\x0a\x00\x8f\xc6\xc0\x57\x1c\x0a\xb3\x3c"), ""},
      // The second node's first entry has a prevlen of 0xF5 bytes, reaching before the blob.
      {"PrevlenReachesOutside", "_listbig",
       KV_BYTES("\x0E\x02\x1B\x1B\x00\x00\x00\x16\x00\x00\x00\x05\x00\x00\x02\x5F\x39\x04\xF9\x02"
                "\x02\x5F\x37\x04\xF7\x02\x02\x5F\x35\xFF\x19\x19\x00\x00\x00\x16\x00\x00\x00\x05"
                "\x00\x00\xF5\x02\x02\x5F\x33\x04\xF3\x95\x02\x5F\x31\x04\xF1\xFF\x09\x00\x0C\xFC"
                "\x99\x2C\x23\x45\x15\x60"),
       "Ziplist integrity check failed."},
      // The first entry has a prevlen (there is no predecessor).
      {"PrevTooBig", "_list",
       KV_BYTES("\x0E\x01\x13\x13\x00\x00\x00\x10\x00\x00\x00\x03\x00\x00\xF3\x02\x02\x5F\x31\xC1"
                "\xF1\xFF\x09\x00\xC9\x4B\x31\xFE\x61\xC0\x96\xFE"),
       "Ziplist integrity check failed."},
      // A sorted set ziplist whose zltail (2) points into its header.
      {"ZsetInvalidTailOffset", "_zset",
       KV_BYTES("\x0C\x19\x19\x00\x00\x00\x02\x00\x00\x00\x06\x00\x00\xF1\x02\xF1\x02\x02\x5F\x31"
                "\x04\xF2\x02\xF3\x02\xF3\xFF\x09\x00\x4D\x72\x7B\x97\xCD\x9A\x70\xC1"),
       "Zset ziplist integrity check failed."},
      // A hash zipmap of no pairs.
      {"HashEmptyZipmap", "_hash",
       KV_BYTES("\x09\x02\x00\xFF\x09\x00\xC0\xF1\xB8\x67\x4C\x16\xAC\xE3"),
       "Zipmap integrity check failed."},
  };
  return kPayloads;
}

// What one server answers to the payload's RESTORE under `sanitize`, then whether the key
// exists, then PING. Some payloads carry a wrong checksum (the fuzzer's), so checksums are off.
std::vector<std::string> Restore(RespClient& c, const Payload& p, const std::string& sanitize) {
  std::vector<std::string> out;
  out.push_back(c.Raw({"CONFIG", "SET", "sanitize-dump-payload", sanitize}));
  out.push_back(c.Raw({"DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"}));
  out.push_back(c.Raw({"RESTORE", p.key, "0", p.bytes, "REPLACE"}));
  out.push_back(c.Raw({"EXISTS", p.key}));
  out.push_back(c.Raw({"PING"}));
  return out;
}

class RestoreCorruptZiplist : public ::testing::TestWithParam<std::string> {};

TEST_P(RestoreCorruptZiplist, RefusedLikeRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  // At verbose level, where Redis logs why a RESTORE's payload is refused.
  ServerProcess kv(Kind::kKvstore, {"--enable-debug-command", "yes", "--loglevel", "verbose"});
  ServerProcess redis(Kind::kRedis, {"--enable-debug-command", "yes", "--loglevel", "verbose"});
  RespClient k(kv.port()), r(redis.port());
  const std::vector<std::string> refused = {"+OK\r\n", "+OK\r\n", "-ERR Bad data format\r\n",
                                            ":0\r\n", "+PONG\r\n"};
  auto count = [](const ServerProcess& s, const std::string& text) {
    std::string log = s.LogText();
    size_t n = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) n++;
    return n;
  };
  for (const Payload& p : Payloads()) {
    SCOPED_TRACE(p.name);
    size_t theirs_logged = p.check.empty() ? 0 : count(redis, p.check);
    size_t ours_logged = p.check.empty() ? 0 : count(kv, p.check);
    std::vector<std::string> theirs = Restore(r, p, GetParam());
    EXPECT_EQ(theirs, refused);  // the oracle agrees with what this test expects
    EXPECT_EQ(Restore(k, p, GetParam()), theirs);
    if (p.check.empty()) continue;
    EXPECT_EQ(count(redis, p.check), theirs_logged + 1) << redis.LogText();
    EXPECT_EQ(count(kv, p.check), ours_logged + 1) << kv.LogText();
  }
  // A sound payload of each encoding goes through on both: the refusals above are the data's.
  for (RespClient* c : {&k, &r}) {
    c->Call({"RPUSH", "l", "a", "b", "7"});
    c->Call({"ZADD", "z", "1", "m", "2", "n"});
    for (const char* key : {"l", "z"}) {
      std::string dump = c->Call({"DUMP", key}).str;
      EXPECT_EQ(c->Raw({"RESTORE", std::string(key) + "2", "0", dump}), "+OK\r\n");
    }
  }
  EXPECT_EQ(k.Raw({"LRANGE", "l2", "0", "-1"}), r.Raw({"LRANGE", "l2", "0", "-1"}));
  EXPECT_EQ(k.Raw({"ZRANGE", "z2", "0", "-1", "WITHSCORES"}),
            r.Raw({"ZRANGE", "z2", "0", "-1", "WITHSCORES"}));
}

INSTANTIATE_TEST_SUITE_P(Sanitize, RestoreCorruptZiplist, ::testing::Values("no", "yes"));

// The payload's value as the one key of an RDB file (checksum 0: not checked, by either server).
std::string RdbWith(const Payload& p) {
  std::string rdb = "REDIS0010";
  rdb += std::string("\xFE\x00", 2);  // SELECTDB 0
  rdb.push_back(p.bytes[0]);          // the value's type
  rdb.push_back(static_cast<char>(p.key.size()));
  rdb += p.key;
  rdb += p.bytes.substr(1, p.bytes.size() - 11);  // less the type, version and CRC
  rdb.push_back('\xFF');
  rdb += std::string(8, '\0');
  return rdb;
}

TEST(RestoreCorruptZiplistRdb, FileWithSuchAValueDoesNotLoad) {
  if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  char tmpl[] = "/tmp/kvstore-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  for (const Payload& p : Payloads()) {
    SCOPED_TRACE(p.name);
    std::ofstream(dir + "/dump.rdb", std::ios::binary | std::ios::trunc) << RdbWith(p);
    std::string theirs = ExpectRefusesToStart(dir, {}, /*redis=*/true);
    std::string ours = ExpectRefusesToStart(dir, {}, /*redis=*/false);
    // As Redis words it: "Internal error in RDB reading offset N (reading key ...) -> <what is
    // wrong>", and "Terminating server after rdb file reading failure." last.
    EXPECT_NE(ours.find("Internal error in RDB reading offset"), std::string::npos) << ours;
    EXPECT_NE(ours.find("Terminating server after rdb file reading failure."), std::string::npos)
        << ours;
    EXPECT_NE(ours.find("reading key '" + p.key + "'"), std::string::npos) << ours;
    EXPECT_NE(theirs.find(p.check), std::string::npos) << theirs;
    EXPECT_NE(ours.find(p.check), std::string::npos) << ours;
    EXPECT_EQ(ReadFile(dir + "/dump.rdb"), RdbWith(p));  // left as it was
  }
}

// Redis 7.0 loads a file with empty collections (older versions could write them), leaving
// those keys out: "skipping empty key: <key>" for each, and the count in the summary line.
TEST(EmptyKeysInRdb, AreSkippedAndLogged) {
  if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server";
  std::string rdb = "REDIS0010";
  rdb += std::string("\xFE\x00", 2);          // SELECTDB 0
  rdb += std::string("\x02\x03set\x00", 6);   // a set of no members
  rdb += std::string("\x04\x04hash\x00", 7);  // a hash of no fields
  rdb += std::string("\x05\x04zset\x00", 7);  // a sorted set (ZSET_2) of no members
  rdb += std::string("\x12\x04list\x00", 7);  // a quicklist of no nodes
  rdb += std::string("\x00\x01k\x01v", 5);    // and one string
  rdb.push_back('\xFF');
  rdb += std::string(8, '\0');
  for (Kind kind : {Kind::kRedis, Kind::kKvstore}) {
    SCOPED_TRACE(kind == Kind::kRedis ? "redis" : "kvstore");
    char tmpl[] = "/tmp/kvstore-test-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::ofstream(dir + "/dump.rdb", std::ios::binary | std::ios::trunc) << rdb;
    ServerProcess s(kind, {"--dir", dir});
    RespClient c(s.port());
    EXPECT_EQ(c.Raw({"DBSIZE"}), ":1\r\n");
    EXPECT_EQ(c.Raw({"GET", "k"}), "$1\r\nv\r\n");
    std::string log = s.LogText();
    for (const char* key : {"set", "hash", "zset", "list"}) {
      EXPECT_NE(log.find("skipping empty key: " + std::string(key)), std::string::npos) << log;
    }
    EXPECT_NE(log.find("keys loaded: 1, keys expired: 0, empty keys skipped: 4."),
              std::string::npos)
        << log;
    s.Stop();
    std::string cmd = "rm -rf '" + dir + "'";
    [[maybe_unused]] int rc = system(cmd.c_str());
  }
}

}  // namespace
}  // namespace kv::test
