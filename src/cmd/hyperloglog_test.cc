// In-process tests of the HyperLogLog commands: the empty HLL's bytes, sparse to dense at the
// register value and size limits, the cached count, and corrupt values (the differential test
// compares random use with redis-server byte for byte).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cmd/command_test_util.h"

namespace kv::cmd {
namespace {

std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

std::vector<std::string> AddArgs(const std::string& key, int from, int to) {
  std::vector<std::string> a = {"pfadd", key};
  for (int i = from; i < to; i++) a.push_back("x" + std::to_string(i));
  return a;
}

TEST(HyperLogLog, EmptyAndSmallHllsAreSparse) {
  CommandRunner r;
  EXPECT_EQ(r.Run({"pfadd", "h"}), Int(1));  // created
  EXPECT_EQ(r.Run({"pfadd", "h"}), Int(0));
  EXPECT_EQ(r.Run({"pfdebug", "decode", "h"}), Bulk("Z:16384"));
  // Magic, sparse, the cached count marked stale, one XZERO run of 16384.
  EXPECT_EQ(r.Run({"get", "h"}), Bulk(std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x7f\xff", 18)));
  EXPECT_EQ(r.Run({"pfcount", "h"}), Int(0));
  EXPECT_EQ(r.Run(AddArgs("h", 0, 100)), Int(1));
  EXPECT_EQ(r.Run({"pfdebug", "encoding", "h"}), "+sparse\r\n");
  EXPECT_EQ(r.Run({"pfcount", "h"}), Int(99));  // what redis-server answers for x0..x99
  // The count is cached in the value: the header's last byte loses its stale bit.
  std::string v = r.Run({"get", "h"});
  EXPECT_EQ(static_cast<uint8_t>(v[v.find("HYLL") + 15]) & 0x80, 0);
  EXPECT_EQ(r.Run(AddArgs("h", 0, 100)), Int(0));  // nothing new
}

TEST(HyperLogLog, SparseTurnsDenseAtTheSizeLimit) {
  CommandRunner r;
  r.Run(AddArgs("h", 0, 2000));
  EXPECT_EQ(r.Run({"pfdebug", "encoding", "h"}), "+dense\r\n");
  EXPECT_EQ(r.Run({"strlen", "h"}), Int(16 + 12288));
  int64_t count = std::stoll(r.Run({"pfcount", "h"}).substr(1));
  EXPECT_NEAR(count, 2000, 2000 * 0.0081 * 3);
  r.Run(AddArgs("s", 0, 100));
  EXPECT_EQ(r.Run({"pfdebug", "todense", "s"}), Int(1));
  EXPECT_EQ(r.Run({"pfdebug", "todense", "s"}), Int(0));
  EXPECT_EQ(r.Run({"pfcount", "s"}), Int(99));  // dense counts as sparse did
}

TEST(HyperLogLog, NonHllValuesAreRefused) {
  CommandRunner r;
  r.Run({"set", "str", "hello"});
  r.Run({"set", "int", "12345678901234567890123"});
  r.Run({"rpush", "l", "a"});
  const std::string kNotHll = "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n";
  EXPECT_EQ(r.Run({"pfadd", "str", "a"}), kNotHll);
  EXPECT_EQ(r.Run({"pfcount", "int"}), kNotHll);
  EXPECT_EQ(r.Run({"pfmerge", "d", "str"}), kNotHll);
  EXPECT_EQ(r.Run({"pfcount", "l"}).substr(0, 10), "-WRONGTYPE");
  // A dense header on a value of the wrong length, and sparse runs that do not add up.
  r.Run({"pfadd", "h", "a"});
  r.Run({"setrange", "h", "4", std::string(1, '\0')});
  EXPECT_EQ(r.Run({"pfcount", "h"}), kNotHll);
  r.Run({"pfadd", "g", "a"});
  r.Run({"append", "g", std::string(1, '\x10')});
  EXPECT_EQ(r.Run({"pfcount", "g"}), "-INVALIDOBJ Corrupted HLL object detected\r\n");
  EXPECT_EQ(r.Run({"pfdebug", "getreg", "missing"}), "-ERR The specified key does not exist\r\n");
}

// ---- Corrupt sparse values (CVE-2025-32023 class) ---------------------------------------------

// A sparse HLL's header (the cached count marked stale, so every command reads the registers)
// followed by `ops`.
std::string Sparse(const std::string& ops) {
  return std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80", 16) + ops;
}
std::string XZero(int n) {
  return {static_cast<char>(0x40 | ((n - 1) >> 8)), static_cast<char>((n - 1) & 0xff)};
}
std::string Zero(int n) { return std::string(1, static_cast<char>(n - 1)); }
std::string Val(int v, int n) {
  return std::string(1, static_cast<char>(0x80 | (v - 1) << 2 | (n - 1)));
}
std::string Times(const std::string& op, int n) {
  std::string out;
  for (int i = 0; i < n; i++) out += op;
  return out;
}

const std::string kInvalid = "-INVALIDOBJ Corrupted HLL object detected\r\n";

// Every HLL command refuses a value whose runs cover more or fewer than the 16384 registers,
// and leaves it as it was: nothing is written past the registers when it turns dense.
TEST(HyperLogLog, SparseRunsNotCoveringTheRegistersAreCorrupt) {
  const std::string values[] = {
      Sparse(Times(XZero(16384), 3) + Val(5, 4)),  // XZERO runs far past the end
      Sparse(Times(Val(32, 4), 4097)),             // VAL runs 4 registers past the end
      Sparse(XZero(16383) + Zero(2) + Val(7, 2)),  // a ZERO run crossing the end
      Sparse(XZero(16383) + Val(7, 4)),            // a VAL run crossing the end
      Sparse(XZero(16000)),                        // short of the end
      Sparse(""),                                  // no runs at all
  };
  for (const std::string& v : values) {
    SCOPED_TRACE(v.size());
    CommandRunner r;
    r.Run({"set", "h", v});
    r.Run({"pfadd", "ok", "a", "b"});
    EXPECT_EQ(r.Run({"pfcount", "h"}), kInvalid);
    EXPECT_EQ(r.Run({"pfcount", "h", "ok"}), kInvalid);
    EXPECT_EQ(r.Run({"pfcount", "ok", "h"}), kInvalid);
    EXPECT_EQ(r.Run({"pfmerge", "dst", "ok", "h"}), kInvalid);
    EXPECT_EQ(r.Run({"pfmerge", "h", "ok"}), kInvalid);
    EXPECT_EQ(r.Run({"pfdebug", "getreg", "h"}), kInvalid);
    EXPECT_EQ(r.Run({"pfdebug", "todense", "h"}), kInvalid);
    EXPECT_EQ(r.Run({"pfdebug", "encoding", "h"}), "+sparse\r\n");
    EXPECT_EQ(r.Run({"get", "h"}), Bulk(v));  // unchanged
    EXPECT_EQ(r.Run({"exists", "dst"}), Int(0));
  }
}

// VAL runs past the end used to be counted as if the last register ended them (PFCOUNT of
// several keys answered 50760319129350); runs adding up exactly are a valid HLL.
TEST(HyperLogLog, RunsEndingExactlyAtTheLastRegisterAreValid) {
  CommandRunner r;
  r.Run({"set", "full", Sparse(Times(Val(32, 4), 4096))});
  EXPECT_EQ(r.Run({"pfcount", "full", "nokey"}), Int(50760319129350));
  EXPECT_EQ(r.Run({"pfdebug", "todense", "full"}), Int(1));
  r.Run({"set", "over", Sparse(Times(Val(32, 4), 4097))});
  EXPECT_EQ(r.Run({"pfcount", "over", "nokey"}), kInvalid);
  r.Run({"set", "mixed", Sparse(XZero(16000) + Val(3, 4) + Times(Zero(64), 5) + Zero(60))});
  EXPECT_EQ(r.Run({"pfcount", "mixed"}), Int(4));
  EXPECT_EQ(r.Run({"pfcount", "mixed", "mixed"}), Int(4));
  EXPECT_EQ(r.Run({"pfdebug", "decode", "mixed"}),
            Bulk("Z:16000 v:3,4 z:64 z:64 z:64 z:64 z:64 z:60"));
}

// An XZERO cut short by the end of the value reads its second byte as 0, as Redis reads the
// string's terminator there: one more register, so 16383 + 1 adds up.
TEST(HyperLogLog, TruncatedXzeroAtTheEndReadsItsSecondByteAsZero) {
  CommandRunner r;
  const std::string v = Sparse(XZero(16383) + std::string(1, '\x40'));
  r.Run({"set", "h", v});
  EXPECT_EQ(r.Run({"pfdebug", "decode", "h"}), Bulk("Z:16383 Z:1"));
  EXPECT_EQ(r.Run({"pfcount", "h"}), Int(0));
  r.Run({"set", "h", v});
  EXPECT_EQ(r.Run({"pfcount", "h", "h"}), Int(0));
  EXPECT_EQ(r.Run({"pfmerge", "h", "h"}), "+OK\r\n");
  // Setting the register the cut XZERO covers: Redis counts the terminator in the old length,
  // so the value ends up one byte short of the VAL it wrote (redis-server 7.0.15's bytes).
  r.Run({"set", "h", v});
  EXPECT_EQ(r.Run({"pfadd", "h", "e1674"}), Int(1));  // register 16383
  EXPECT_EQ(r.Run({"get", "h"}), Bulk(Sparse(XZero(16383))));
  EXPECT_EQ(r.Run({"pfcount", "h"}), kInvalid);
}

}  // namespace
}  // namespace kv::cmd
