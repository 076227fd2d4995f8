// In-process tests of SORT and SORT_RO with nothing to sort (BY a pattern without '*'), where a
// list or sorted set is read over the LIMIT range only, in its own order (from the tail for
// DESC). Expected replies were taken from Redis 7.0's redis-server for the same dataset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/command_test_util.h"

namespace kv::cmd {
namespace {

using Argv = std::vector<std::string>;

constexpr std::string_view kNil = "$-1\r\n";
const std::string kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
// An array of bulk strings; kNil stands for a null element.
std::string Arr(std::vector<std::string_view> elems) {
  std::string out = "*" + std::to_string(elems.size()) + "\r\n";
  for (std::string_view e : elems) out += e.data() == kNil.data() ? std::string(kNil) : Bulk(e);
  return out;
}

Argv Split(std::string_view line) {
  std::istringstream in{std::string(line)};
  Argv args;
  for (std::string w; in >> w;) args.push_back(w);
  return args;
}

struct Case {
  const char* cmd;
  std::string want;
};

class SortNoSortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    r.Run({"rpush", "l", "5", "3", "9", "1", "7", "2", "8", "4", "6", "0"});
    r.Run({"zadd", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"});
    r.Run({"sadd", "s", "5", "3", "9", "1", "7"});
    r.Run({"sadd", "hs", "pear", "apple", "fig", "kiwi", "plum"});
    r.Run({"mset", "w_5", "five", "w_3", "three", "w_9", "nine", "w_a", "A", "w_b", "B", "w_e", "E",
           "str", "x"});
    for (int i = 0; i < 200; i++) {
      char m[8];
      snprintf(m, sizeof(m), "m%03d", i);
      r.Run({"zadd", "bigz", std::to_string(i), m});
    }
  }
  void Check(const std::vector<Case>& cases) {
    for (const Case& c : cases) EXPECT_EQ(r.Run(Split(c.cmd)), c.want) << c.cmd;
  }
  CommandRunner r;
};

TEST_F(SortNoSortTest, ListsReadTheLimitRangeInListOrder) {
  Check({
      {"SORT l BY nokey LIMIT 0 5", Arr({"5", "3", "9", "1", "7"})},
      {"SORT l BY nokey LIMIT 2 3", Arr({"9", "1", "7"})},
      {"SORT l BY nokey LIMIT 8 10", Arr({"6", "0"})},
      {"SORT l BY nokey LIMIT 10 1", Arr({})},
      {"SORT l BY nokey LIMIT -3 2", Arr({"5", "3"})},
      {"SORT l BY nokey LIMIT 3 -1", Arr({"1", "7", "2", "8", "4", "6", "0"})},
      {"SORT l BY nokey LIMIT 3 0", Arr({})},
      {"SORT l BY nokey LIMIT 1 9223372036854775807",
       Arr({"3", "9", "1", "7", "2", "8", "4", "6", "0"})},
      // DESC with nothing to sort walks the list from its tail.
      {"SORT l BY nokey DESC LIMIT 0 3", Arr({"0", "6", "4"})},
      {"SORT l BY nokey DESC LIMIT 7 10", Arr({"9", "3", "5"})},
      {"SORT l BY nokey DESC", Arr({"0", "6", "4", "8", "2", "7", "1", "9", "3", "5"})},
      {"SORT l BY nokey ALPHA DESC LIMIT 1 2", Arr({"6", "4"})},
      {"SORT l BY nokey GET # GET w_* LIMIT 0 4",
       Arr({"5", "five", "3", "three", "9", "nine", "1", kNil})},
      {"SORT l BY nokey DESC LIMIT 1 3 STORE dst", Int(3)},
      {"LRANGE dst 0 -1", Arr({"6", "4", "8"})},
      {"SORT l BY nokey LIMIT 20 3 STORE dst", Int(0)},
      {"EXISTS dst", Int(0)},
      {"SORT_RO l BY nokey DESC LIMIT 2 3", Arr({"4", "8", "2"})},
      // Sorting proper is unchanged.
      {"SORT l LIMIT 0 3", Arr({"0", "1", "2"})},
      {"SORT l DESC LIMIT 1 3", Arr({"8", "7", "6"})},
  });
}

TEST_F(SortNoSortTest, SortedSetsReadTheLimitRangeInRankOrder) {
  Check({
      {"SORT z BY nokey LIMIT 1 2", Arr({"b", "c"})},
      {"SORT z BY nokey DESC LIMIT 1 2", Arr({"d", "c"})},
      {"SORT z BY nokey DESC LIMIT 0 -1", Arr({"e", "d", "c", "b", "a"})},
      {"SORT z BY nokey DESC LIMIT 4 5", Arr({"a"})},
      {"SORT z BY nokey LIMIT 5 1", Arr({})},
      {"OBJECT ENCODING z", Bulk("skiplist")},
      {"SORT bigz BY nokey LIMIT 100 3", Arr({"m100", "m101", "m102"})},
      {"SORT bigz BY nokey DESC LIMIT 100 3", Arr({"m099", "m098", "m097"})},
      {"SORT bigz BY nokey DESC LIMIT 198 5", Arr({"m001", "m000"})},
      {"SORT_RO z BY nokey GET # GET w_* DESC LIMIT 0 2", Arr({"e", "E", "d", kNil})},
      {"SORT z BY nokey LIMIT 0 2 STORE dst", Int(2)},
      {"LRANGE dst 0 -1", Arr({"a", "b"})},
  });
}

// Sets have no order of their own: without STORE they come out in table order (an intset's is
// ascending); with STORE Redis sorts them (ALPHA) so replicas get the same list.
TEST_F(SortNoSortTest, SetsAreSortedWhenStored) {
  Check({
      {"SORT s BY nokey LIMIT 1 2", Arr({"3", "5"})},
      {"SORT s BY nokey DESC LIMIT 1 2", Arr({"3", "5"})},
      {"SORT s BY nokey LIMIT 1 2 STORE dst", Int(2)},
      {"LRANGE dst 0 -1", Arr({"3", "5"})},
      {"SORT hs BY nokey STORE dst", Int(5)},
      {"LRANGE dst 0 -1", Arr({"apple", "fig", "kiwi", "pear", "plum"})},
      {"SORT hs BY nokey DESC LIMIT 1 3 STORE dst", Int(3)},
      {"LRANGE dst 0 -1", Arr({"pear", "kiwi", "fig"})},
      {"SORT missing BY nokey LIMIT 0 5", Arr({})},
      {"SORT missing BY nokey LIMIT 0 5 STORE dst", Int(0)},
      {"EXISTS dst", Int(0)},
      {"SORT str BY nokey LIMIT 0 5", kWrongType},
  });
}

// The elements of a RESP2 array of bulk strings.
std::vector<std::string> Elems(const std::string& reply) {
  std::vector<std::string> out;
  size_t pos = reply.find("\r\n") + 2;
  while (pos < reply.size()) {
    size_t eol = reply.find("\r\n", pos);
    size_t len = std::stoul(reply.substr(pos + 1, eol - pos - 1));
    out.push_back(reply.substr(eol + 2, len));
    pos = eol + 2 + len + 2;
  }
  return out;
}

// A list of many nodes: every LIMIT window matches LRANGE of the same range, and with DESC the
// same window counted from the tail, reversed.
TEST_F(SortNoSortTest, LongListWindowsMatchLrange) {
  Argv push = {"rpush", "long"};
  for (int i = 0; i < 5000; i++) push.push_back("e" + std::to_string(i * 7 % 5000));
  r.Run(push);
  for (int start : {0, 1, 127, 2500, 4990, 4999, 5000}) {
    for (int count : {1, 5, 300}) {
      SCOPED_TRACE("LIMIT " + std::to_string(start) + " " + std::to_string(count));
      std::string s = std::to_string(start), n = std::to_string(count);
      EXPECT_EQ(r.Run({"sort", "long", "by", "nokey", "limit", s, n}),
                r.Run({"lrange", "long", s, std::to_string(start + count - 1)}));
      std::vector<std::string> from_tail = Elems(
          r.Run({"lrange", "long", std::to_string(-start - count), std::to_string(-start - 1)}));
      std::reverse(from_tail.begin(), from_tail.end());
      EXPECT_EQ(Elems(r.Run({"sort", "long", "by", "nokey", "desc", "limit", s, n})), from_tail);
    }
  }
}

}  // namespace
}  // namespace kv::cmd
