#include "resp/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kv::resp {
namespace {

using Args = std::vector<std::string>;

// Feeds `input` to a fresh parser the way a connection does: bytes arrive in pieces cut at the
// given points, and after each complete request its bytes are dropped from the buffer.
std::vector<Args> FeedSplit(const std::string& input, const std::vector<size_t>& cuts,
                            std::string* error = nullptr) {
  RequestParser p;
  ParserLimits limits;
  std::string buf;
  std::vector<Args> out;
  size_t fed = 0;
  auto deliver = [&](size_t upto) {
    buf.append(input, fed, upto - fed);
    fed = upto;
    while (true) {
      auto r = p.Parse(buf.data(), buf.size(), limits);
      if (r == RequestParser::kIncomplete) return true;
      if (r == RequestParser::kError) {
        if (error) *error = p.error();
        return false;
      }
      if (!p.args().empty()) out.emplace_back(p.args().begin(), p.args().end());
      buf.erase(0, p.request_size());
    }
  };
  for (size_t c : cuts) {
    if (!deliver(c)) return out;
  }
  deliver(input.size());
  return out;
}

const char* kPipeline =
    "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"
    "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
    "PING\r\n"
    "*1\r\n$4\r\nPING\r\n"
    "set \"a b\" 'c'\n"
    "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n";

const std::vector<Args> kExpected = {{"SET", "key", "value"}, {"GET", "key"}, {"PING"},
                                     {"PING"},                {"set", "a b", "c"},
                                     {"ECHO", ""}};

TEST(RequestParser, WholePipeline) { EXPECT_EQ(FeedSplit(kPipeline, {}), kExpected); }

TEST(RequestParser, EverySingleSplitPoint) {
  std::string in = kPipeline;
  for (size_t i = 1; i < in.size(); i++) {
    EXPECT_EQ(FeedSplit(in, {i}), kExpected) << "split at " << i;
  }
}

TEST(RequestParser, EveryPairOfSplitPoints) {
  std::string in = "*3\r\n$3\r\nSET\r\n$10\r\n0123456789\r\n$2\r\nxy\r\n";
  Args want = {"SET", "0123456789", "xy"};
  for (size_t i = 1; i < in.size(); i++) {
    for (size_t j = i; j < in.size(); j++) {
      auto got = FeedSplit(in, {i, j});
      ASSERT_EQ(got.size(), 1u) << i << "," << j;
      EXPECT_EQ(got[0], want);
    }
  }
}

TEST(RequestParser, ByteAtATime) {
  std::string in = kPipeline;
  std::vector<size_t> cuts;
  for (size_t i = 1; i < in.size(); i++) cuts.push_back(i);
  EXPECT_EQ(FeedSplit(in, cuts), kExpected);
}

TEST(RequestParser, BinarySafeBulk) {
  std::string v("a\0b\r\nc", 6);
  std::string in = "*2\r\n$4\r\nECHO\r\n$6\r\n" + v + "\r\n";
  auto got = FeedSplit(in, {});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0][1], v);
}

TEST(RequestParser, BigBulkReportsBytesWanted) {
  RequestParser p;
  std::string in = "*2\r\n$4\r\nECHO\r\n$100000\r\n";
  EXPECT_EQ(p.Parse(in.data(), in.size(), {}), RequestParser::kIncomplete);
  EXPECT_EQ(p.BytesWanted(), in.size() + 100002u);
  EXPECT_TRUE(p.InProgress());
}

TEST(RequestParser, EmptyMultibulkIsSkipped) {
  EXPECT_EQ(FeedSplit("*0\r\n*-1\r\n\r\nPING\r\n", {}), (std::vector<Args>{{"PING"}}));
}

struct BadCase {
  std::string input;
  std::string error;
};

TEST(RequestParser, MalformedInput) {
  const std::vector<BadCase> cases = {
      {"*abc\r\n", "Protocol error: invalid multibulk length"},
      {"*3000000000\r\n", "Protocol error: invalid multibulk length"},
      {"*1\r\n$-5\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$x\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$999999999999\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n:5\r\n", "Protocol error: expected '$', got ':'"},
      {"set \"a\n", "Protocol error: unbalanced quotes in request"},
      {std::string(70000, 'a'), "Protocol error: too big inline request"},
      {"*" + std::string(70000, '1'), "Protocol error: too big mbulk count string"},
      {"*1\r\n$" + std::string(70000, '1'), "Protocol error: too big bulk count string"},
  };
  for (const auto& c : cases) {
    std::string err;
    FeedSplit(c.input, {}, &err);
    EXPECT_EQ(err, c.error) << c.input.substr(0, 40);
  }
}

TEST(RequestParser, UnauthenticatedLimits) {
  RequestParser p;
  ParserLimits l;
  l.authenticated = false;
  std::string big = "*11\r\n";
  EXPECT_EQ(p.Parse(big.data(), big.size(), l), RequestParser::kError);
  EXPECT_EQ(p.error(), "Protocol error: unauthenticated multibulk length");
  std::string bulk = "*1\r\n$20000\r\n";
  EXPECT_EQ(p.Parse(bulk.data(), bulk.size(), l), RequestParser::kError);
  EXPECT_EQ(p.error(), "Protocol error: unauthenticated bulk length");
}

// proto-max-bulk-len may be set past what a value can hold (2^63-1 is accepted, as in Redis):
// an argument longer than 4294967295 bytes is still refused, never stored cut short.
TEST(RequestParser, NoArgumentPastTheLongestValue) {
  RequestParser p;
  ParserLimits l;
  l.max_bulk_len = INT64_MAX;
  std::string over = "*1\r\n$4294967296\r\n";
  EXPECT_EQ(p.Parse(over.data(), over.size(), l), RequestParser::kError);
  EXPECT_EQ(p.error(), "Protocol error: invalid bulk length");
  RequestParser q;
  std::string at = "*1\r\n$4294967295\r\n";
  EXPECT_EQ(q.Parse(at.data(), at.size(), l), RequestParser::kIncomplete);
}

TEST(RequestParser, ConfiguredMaxBulkLen) {
  RequestParser p;
  ParserLimits l;
  l.max_bulk_len = 10;
  std::string in = "*1\r\n$11\r\n";
  EXPECT_EQ(p.Parse(in.data(), in.size(), l), RequestParser::kError);
}

}  // namespace
}  // namespace kv::resp
