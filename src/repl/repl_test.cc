#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "repl/backlog.h"
#include "repl/feed.h"

namespace kv::repl {
namespace {

TEST(Backlog, KeepsTheLastBytesAndAnswersOffsets) {
  Backlog b(10, 100);
  b.Append("abcdef");
  EXPECT_EQ(b.end_offset(), 106);
  EXPECT_EQ(b.first_byte_offset(), 101);
  std::string out;
  ASSERT_TRUE(b.CopySince(102, &out));
  EXPECT_EQ(out, "cdef");
  b.Append("ghijklmno");  // wraps: holds "fghijklmno"
  EXPECT_EQ(b.histlen(), 10u);
  EXPECT_FALSE(b.Covers(104));
  out.clear();
  ASSERT_TRUE(b.CopySince(105, &out));
  EXPECT_EQ(out, "fghijklmno");
  out.clear();
  ASSERT_TRUE(b.CopySince(115, &out));
  EXPECT_EQ(out, "");
  EXPECT_FALSE(b.Covers(116));
  b.Append(std::string(25, 'x') + "END");
  out.clear();
  ASSERT_TRUE(b.CopySince(b.end_offset() - 5, &out));
  EXPECT_EQ(out, "xxEND");
}

TEST(Backlog, MatchesAStringModelUnderRandomAppendsAndResizes) {
  std::mt19937_64 rng(1);
  Backlog b(64, 0);
  std::string all;
  size_t cap = 64;
  for (int i = 0; i < 2000; i++) {
    if (rng() % 50 == 0) {
      cap = 1 + rng() % 200;
      b.Resize(cap);
    }
    std::string chunk(rng() % 90, static_cast<char>('a' + rng() % 26));
    b.Append(chunk);
    all += chunk;
    ASSERT_EQ(b.end_offset(), static_cast<int64_t>(all.size()));
    ASSERT_LE(b.histlen(), cap);
    int64_t from = b.end_offset() - static_cast<int64_t>(b.histlen());
    std::string out;
    ASSERT_TRUE(b.CopySince(from, &out));
    ASSERT_EQ(out, all.substr(static_cast<size_t>(from)));
  }
}

TEST(Feed, SelectsDbsAndWrapsUnitsOfSeveralWrites) {
  Feed f;
  std::string stream;
  f.set_sink([&](std::string_view b) { stream.append(b); });
  std::vector<std::string> set = {"SET", "k", "v"};
  f.Add(0, set);
  f.EndUnit();
  EXPECT_TRUE(stream.empty());  // inactive without a backlog
  f.CreateBacklog(1024, 0);
  f.Add(0, set);
  f.EndUnit();
  EXPECT_EQ(stream, "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  stream.clear();
  std::vector<std::string> del = {"DEL", "x"};
  f.Add(0, set);
  f.Add(2, del);
  f.EndUnit();
  EXPECT_EQ(stream,
            "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
            "*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*2\r\n$3\r\nDEL\r\n$1\r\nx\r\n*1\r\n$4\r\nEXEC\r\n");
  EXPECT_EQ(f.offset(), f.backlog()->end_offset());
  f.EndUnit();  // nothing pending: nothing emitted
  EXPECT_EQ(f.offset(), f.backlog()->end_offset());
}

TEST(Feed, TheAofGetsEveryWriteWithItsOwnSelectedDb) {
  Feed f;
  std::string stream, aof;
  f.set_sink([&](std::string_view b) { stream.append(b); });
  f.SetAofSink([&](std::string_view b) { aof.append(b); }, false);
  std::vector<std::string> set = {"SET", "k", "v"};
  f.Add(3, set);
  f.EndUnit();  // no backlog: the AOF alone
  EXPECT_TRUE(stream.empty());
  EXPECT_EQ(aof, "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  f.CreateBacklog(1024, 0);
  aof.clear();
  f.Add(3, set);
  EXPECT_TRUE(f.EndUnit());
  // The stream selects db 3 for itself; the AOF had selected it already.
  EXPECT_EQ(stream, "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  EXPECT_EQ(aof, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  // A replica's writes from its primary: to the AOF only, wrapped there when they are several.
  stream.clear();
  aof.clear();
  std::vector<std::string> del = {"DEL", "x"};
  f.Add(3, set, false);
  f.Add(3, del, false);
  EXPECT_FALSE(f.EndUnit());
  EXPECT_TRUE(stream.empty());
  EXPECT_EQ(aof,
            "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
            "*2\r\n$3\r\nDEL\r\n$1\r\nx\r\n*1\r\n$4\r\nEXEC\r\n");
  // aof-timestamp-enabled: a unit in a new second starts with its annotation.
  aof.clear();
  f.SetAofTimestamps(true);
  f.Add(3, set);
  f.EndUnit();
  EXPECT_EQ(aof.rfind("#TS:", 0), 0u) << aof;
  f.ForgetAofSelectedDb();
  aof.clear();
  f.Add(3, set);
  f.EndUnit();  // a new file: a SELECT again
  EXPECT_NE(aof.find("*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*3"), std::string::npos) << aof;
}

}  // namespace
}  // namespace kv::repl
