// Streams saved by Redis <= 6.2 (RDB type 15: no first ID, tombstone ID, entries-added or per-group
// entries-read), loaded through RESTORE and from an RDB file by kvstore-server and Debian's
// redis-server: XINFO STREAM FULL and XINFO GROUPS must be the same bytes, so the counters kvstore
// derives on load (entries-added from the length, each group's entries-read estimated from its
// last-delivered ID) are Redis 7.0's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

using Cmd = std::vector<std::string>;
using Kind = ServerProcess::Kind;

#define KV_BYTES(s) std::string(s, sizeof(s) - 1)

// Redis' own legacy payload (tests/unit/type/stream-cgroups.tcl), DUMPed from a v5 instance after
// XADD 1-0 .. 6-0, XDEL 3-0, groups g1 and g2 at 0, g1 reading four entries as c11, and XTRIM
// MAXLEN = 2.
const std::string& RedisV5Payload() {
  static const std::string kPayload = KV_BYTES(
      "\x0F\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
      "\x00\xC3\x40\x4A"
      "\x40\x57\x16\x57\x00\x00\x00\x23\x00\x02\x01\x04\x01\x01\x01\x84\x64\x61"
      "\x74\x61\x05\x00"
      "\x01\x03\x01\x00\x20\x01\x03\x81\x61\x02\x04\x20\x0A\x00\x01\x40\x0A\x00"
      "\x62\x60\x0A\x00"
      "\x02\x40\x0A\x00\x63\x60\x0A\x40\x22\x01\x81\x64\x20\x0A\x40\x39\x20\x0A"
      "\x00\x65\x60\x0A"
      "\x00\x05\x40\x0A\x00\x66\x20\x0A\x00\xFF\x02\x06\x00\x02\x02\x67\x31\x05"
      "\x00\x04\x00\x00"
      "\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43"
      "\x7A\x01\x00\x00"
      "\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x3E"
      "\xF7\x83\x43\x7A"
      "\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00"
      "\x00\x00\x3E\xF7"
      "\x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00"
      "\x00\x00\x00\x00"
      "\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x01\x03\x63\x31\x31\x3E\xF7\x83"
      "\x43\x7A\x01\x00"
      "\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"
      "\x00\x00\x00\x00"
      "\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
      "\x00\x04\x00\x00"
      "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00"
      "\x00\x00\x00\x00"
      "\x02\x67\x32\x00\x00\x00\x00\x09\x00\x3D\x52\xEF\x68\x67\x52\x1D\xFA");
  return kPayload;
}

// Rewrites a Redis 7.0 stream DUMP (type 19, saved with rdbcompression off, so every string is
// plain) as Redis 6.2 would have saved the same stream: type 15, without the first ID, the
// tombstone ID, entries-added and each group's entries-read, RDB version 9. The checksum is left 0:
// the servers are told not to check it.
class LegacyRewriter {
 public:
  explicit LegacyRewriter(const std::string& dump) : in_(dump), pos_(1) {}

  std::string Run() {
    if (in_.size() < 11 || in_[0] != '\x13') return "not a type 19 dump";
    out_ = "\x0F";
    for (uint64_t nodes = CopyLen(); nodes > 0; nodes--) {
      CopyString();  // master ID
      CopyString();  // listpack
    }
    CopyLen();  // length
    CopyLen();  // last ID
    CopyLen();
    for (int i = 0; i < 5; i++) ReadLen(false);  // first ID, tombstone ID, entries-added
    for (uint64_t groups = CopyLen(); groups > 0; groups--) {
      CopyString();  // name
      CopyLen();     // last-delivered ID
      CopyLen();
      ReadLen(false);  // entries-read
      for (uint64_t pel = CopyLen(); pel > 0; pel--) {
        CopyRaw(16 + 8);  // ID, delivery time
        CopyLen();        // delivery count
      }
      for (uint64_t consumers = CopyLen(); consumers > 0; consumers--) {
        CopyString();             // name
        CopyRaw(8);               // seen time
        CopyRaw(16 * CopyLen());  // its PEL's IDs
      }
    }
    if (pos_ != in_.size() - 10) return "trailing bytes";
    out_ += std::string("\x09\x00", 2) + std::string(8, '\0');
    return out_;
  }

 private:
  uint64_t ReadLen(bool copy) {
    size_t start = pos_;
    auto byte = [&]() { return static_cast<uint8_t>(in_.at(pos_++)); };
    uint8_t b = byte();
    uint64_t v = 0;
    if ((b >> 6) == 0) {
      v = b & 0x3F;
    } else if ((b >> 6) == 1) {
      v = (uint64_t{b & 0x3Fu} << 8) | byte();
    } else if (b == 0x80 || b == 0x81) {
      for (int i = 0; i < (b == 0x80 ? 4 : 8); i++) v = (v << 8) | byte();
    } else {
      ADD_FAILURE() << "an encoded string in the dump at " << start;
    }
    if (copy) out_ += in_.substr(start, pos_ - start);
    return v;
  }
  uint64_t CopyLen() { return ReadLen(true); }
  void CopyRaw(uint64_t n) {
    out_ += in_.substr(pos_, n);
    pos_ += n;
  }
  void CopyString() { CopyRaw(CopyLen()); }

  const std::string& in_;
  size_t pos_;
  std::string out_;
};

// What a client sees of the stream at `key` after the load.
std::vector<std::string> Inspect(RespClient& c, const std::string& key) {
  return {c.Raw({"XINFO", "STREAM", key, "FULL"}), c.Raw({"XINFO", "GROUPS", key}),
          c.Raw({"XLEN", key})};
}

std::vector<std::string> RestoreAndInspect(RespClient& c, const std::string& key,
                                           const std::string& payload) {
  std::vector<std::string> out = {c.Raw({"DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"}),
                                  c.Raw({"RESTORE", key, "0", payload, "REPLACE"})};
  for (std::string& r : Inspect(c, key)) out.push_back(std::move(r));
  return out;
}

class StreamLegacyLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server";
    kv_ = std::make_unique<ServerProcess>(Kind::kKvstore, Cmd{"--enable-debug-command", "yes"});
    redis_ = std::make_unique<ServerProcess>(Kind::kRedis, Cmd{"--enable-debug-command", "yes"});
    k_ = std::make_unique<RespClient>(kv_->port());
    r_ = std::make_unique<RespClient>(redis_->port());
  }

  // Builds a stream on redis-server with `setup` and returns its DUMP as a legacy payload.
  std::string LegacyFromRedis(const std::vector<Cmd>& setup) {
    r_->Call({"CONFIG", "SET", "rdbcompression", "no"});
    r_->Call({"DEL", "src"});
    for (const Cmd& cmd : setup) {
      Reply reply = r_->Call(cmd);
      EXPECT_NE(reply.type, '-') << reply.Debug();
    }
    std::string legacy = LegacyRewriter(r_->Call({"DUMP", "src"}).str).Run();
    r_->Call({"DEL", "src"});
    return legacy;
  }

  std::unique_ptr<ServerProcess> kv_, redis_;
  std::unique_ptr<RespClient> k_, r_;
};

// Redis' test: g1 read up to 5-0, now the first entry (entries-read 1, lag 1); g2 at 0-0, before it
// (entries-read 0, lag 2).
TEST_F(StreamLegacyLoad, RedisV5PayloadMatches) {
  std::vector<std::string> theirs = RestoreAndInspect(*r_, "x", RedisV5Payload());
  ASSERT_EQ(theirs[1], "+OK\r\n");
  ASSERT_NE(theirs[3].find("$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n:1\r\n"), std::string::npos)
      << theirs[3];
  std::vector<std::string> ours = RestoreAndInspect(*k_, "x", RedisV5Payload());
  EXPECT_EQ(ours, theirs);
}

// Groups at every kind of place a last-delivered ID can be, in streams with tombstones, trimmed
// heads, several nodes, and no entries left.
TEST_F(StreamLegacyLoad, RewrittenStreamsMatch) {
  auto create = [](const std::string& group, const std::string& id) -> Cmd {
    return {"XGROUP", "CREATE", "src", group, id};
  };
  auto add = [](int from, int to) {
    std::vector<Cmd> cmds;
    for (int i = from; i <= to; i++)
      cmds.push_back({"XADD", "src", std::to_string(i) + "-0", "f", "v" + std::to_string(i)});
    return cmds;
  };
  auto plus = [](std::vector<Cmd> a, const std::vector<Cmd>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<Cmd> at_each_place = {
      create("zero", "0"),
      create("first", "1-0"),
      create("second", "2-0"),
      create("tomb", "3-0"),
      create("last", "6-0"),
      create("future", "9-0"),
      {"XREADGROUP", "GROUP", "second", "alice", "COUNT", "2", "STREAMS", "src", ">"}};
  struct Case {
    const char* name;
    std::vector<Cmd> setup;
  };
  const std::vector<Case> cases = {
      {"Plain", plus(add(1, 6), at_each_place)},
      {"Tombstone", plus(plus(add(1, 6), {{"XDEL", "src", "3-0"}}), at_each_place)},
      {"FirstDeleted", plus(plus(add(1, 6), {{"XDEL", "src", "1-0"}}), at_each_place)},
      {"LastDeleted", plus(plus(add(1, 6), {{"XDEL", "src", "6-0"}}), at_each_place)},
      {"Trimmed", plus(plus(add(1, 6), {{"XTRIM", "src", "MAXLEN", "=", "3"}}),
                       {create("before", "2-0"), create("atfirst", "4-0"), create("mid", "5-0"),
                        create("last", "6-0")})},
      {"ManyNodes", plus(plus({{"CONFIG", "SET", "stream-node-max-entries", "2"}}, add(1, 9)),
                         {{"XDEL", "src", "4-0"},
                          {"XTRIM", "src", "MINID", "3-0"},
                          create("zero", "0"),
                          create("atfirst", "3-0"),
                          create("mid", "5-0"),
                          create("last", "9-0"),
                          {"CONFIG", "SET", "stream-node-max-entries", "100"}})},
      {"Emptied", plus(add(1, 2), {{"XDEL", "src", "1-0", "2-0"},
                                   create("zero", "0"),
                                   create("last", "2-0"),
                                   create("future", "5-0")})},
      {"NoGroups", add(1, 3)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string legacy = LegacyFromRedis(c.setup);
    std::vector<std::string> theirs = RestoreAndInspect(*r_, "s", legacy);
    ASSERT_EQ(theirs[1], "+OK\r\n") << legacy.size();
    ASSERT_EQ(theirs[2].rfind("*", 0), 0u) << theirs[2];
    EXPECT_EQ(RestoreAndInspect(*k_, "s", legacy), theirs);
  }
}

// Such values as keys of an RDB file of version 9 that both servers start from.
TEST_F(StreamLegacyLoad, RdbFileMatches) {
  std::vector<std::pair<std::string, std::string>> keys = {{"x", RedisV5Payload()}};
  keys.emplace_back("t", LegacyFromRedis({{"XADD", "src", "1-0", "a", "1"},
                                          {"XADD", "src", "2-0", "a", "2"},
                                          {"XADD", "src", "3-0", "a", "3"},
                                          {"XDEL", "src", "1-0"},
                                          {"XGROUP", "CREATE", "src", "g", "2-0"},
                                          {"XGROUP", "CREATE", "src", "h", "0"},
                                          {"XGROUP", "CREATE", "src", "i", "3-0"}}));
  // Emptied by XDEL: Redis keeps the key.
  keys.emplace_back("e", LegacyFromRedis({{"XADD", "src", "1-0", "a", "1"},
                                          {"XDEL", "src", "1-0"},
                                          {"XGROUP", "CREATE", "src", "g", "0"}}));
  std::string rdb = "REDIS0009";
  rdb += std::string("\xFE\x00", 2);  // SELECTDB 0
  for (const auto& [key, payload] : keys) {
    rdb.push_back(payload[0]);  // the value's type
    rdb.push_back(static_cast<char>(key.size()));
    rdb += key;
    rdb += payload.substr(1, payload.size() - 11);  // less the type, version and CRC
  }
  rdb.push_back('\xFF');
  rdb += std::string(8, '\0');  // checksum 0: not checked, by either server
  char tmpl[] = "/tmp/kvstore-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/dump.rdb", std::ios::binary | std::ios::trunc) << rdb;
  ServerProcess kv(Kind::kKvstore, {"--dir", dir});
  ServerProcess redis(Kind::kRedis, {"--dir", dir});
  RespClient k(kv.port()), r(redis.port());
  ASSERT_EQ(r.Raw({"DBSIZE"}), ":3\r\n");
  EXPECT_EQ(k.Raw({"DBSIZE"}), ":3\r\n");
  for (const auto& [key, payload] : keys) {
    SCOPED_TRACE(key);
    std::vector<std::string> theirs = Inspect(r, key);
    EXPECT_EQ(theirs[0].rfind("*", 0), 0u) << theirs[0];
    EXPECT_EQ(Inspect(k, key), theirs);
  }
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace kv::test
