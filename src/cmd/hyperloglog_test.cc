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

}  // namespace
}  // namespace kv::cmd
