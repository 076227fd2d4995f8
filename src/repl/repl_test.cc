#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "repl/backlog.h"
#include "repl/feed.h"

namespace kv::repl {
namespace {

TEST(Backlog, KeepsWholeBlocksPastTheCapacityAndAnswersOffsets) {
  Backlog b(10, 100, /*block_bytes=*/4);
  b.Append("abcdef");  // blocks "abcd" "ef"
  EXPECT_EQ(b.end_offset(), 106);
  EXPECT_EQ(b.first_byte_offset(), 101);
  std::string out;
  ASSERT_TRUE(b.CopySince(102, &out));
  EXPECT_EQ(out, "cdef");
  // "abcd" "efgh" "ijkl" "mno": the first block goes (11 > 10 without it), the next stays.
  b.Append("ghijklmno");
  EXPECT_EQ(b.histlen(), 11u);
  EXPECT_TRUE(b.Covers(104));
  EXPECT_FALSE(b.Covers(103));
  b.Append("pq");  // 13 bytes held: without "efgh" only 9 would be
  EXPECT_EQ(b.histlen(), 13u);
  out.clear();
  ASSERT_TRUE(b.CopySince(104, &out));
  EXPECT_EQ(out, "efghijklmnopq");
  out.clear();
  ASSERT_TRUE(b.CopySince(117, &out));
  EXPECT_EQ(out, "");
  EXPECT_FALSE(b.Covers(118));
}

// A cursor keeps its blocks: the backlog grows past its capacity for a reader that lags, and
// shrinks back once the reader moves on or goes.
// What one block of 4 bytes takes from the allocator (its data and its shared state).
size_t FourByteBlock() {
  Backlog probe(8, 0, 4);
  size_t empty = probe.memory();
  probe.Append("abcd");
  return probe.memory() - empty;
}

TEST(Backlog, ACursorKeepsTheHistoryItHasNotRead) {
  const size_t block = FourByteBlock();
  Backlog b(8, 0, 4);
  b.Append("0123");
  Backlog::Cursor lagging = b.CursorAt(2);
  b.set_needed_from(2);
  for (int i = 0; i < 100; i++) b.Append("abcd");
  EXPECT_EQ(b.histlen(), 404u);  // everything from the reader's block on
  EXPECT_GE(b.memory(), 101 * block);
  EXPECT_TRUE(b.Covers(2));
  std::string got;
  for (std::string_view s = lagging.Readable(); !s.empty(); s = lagging.Readable()) {
    got.append(s);
    lagging.Consume(s.size());
  }
  EXPECT_EQ(got.size(), 402u);
  EXPECT_EQ(got.substr(0, 6), "23abcd");
  EXPECT_EQ(lagging.offset(), b.end_offset());
  b.set_needed_from(lagging.offset());
  b.Trim();  // the reader is at the end now
  EXPECT_LE(b.histlen(), 12u);
  EXPECT_LE(b.memory(), 4 * block);
  Backlog::Cursor at_end = b.CursorAt(b.end_offset());
  lagging = Backlog::Cursor();
  b.Append("x");
  EXPECT_TRUE(at_end.Readable() == "x");
  // A reader that is cut off needs nothing: its blocks leave the backlog, and live on with it.
  Backlog::Cursor cut = b.CursorAt(b.end_offset());
  b.set_needed_from(INT64_MAX);
  for (int i = 0; i < 100; i++) b.Append("abcd");
  EXPECT_LE(b.histlen(), 12u);
  EXPECT_FALSE(b.Covers(cut.offset()));
  std::string rest;
  for (std::string_view v = cut.Readable(); !v.empty(); v = cut.Readable()) {
    rest.append(v);
    cut.Consume(v.size());
  }
  EXPECT_EQ(rest.size(), 400u);
}

// memory() is what the blocks take until they are freed: blocks trimmed from the backlog that a
// cursor still holds count until the cursor lets them go, and count past the capacity for
// maxmemory's sake (MemoryPastCapacity) whether a reader is attached or not.
TEST(Backlog, CountsBlocksUntilFreedAndWhatIsPastTheCapacity) {
  const size_t block = FourByteBlock();
  Backlog b(8, 0, 4);
  EXPECT_EQ(b.MemoryPastCapacity(), 0u);
  b.Append("0123");
  Backlog::Cursor lagging = b.CursorAt(0);
  b.set_needed_from(0);
  for (int i = 0; i < 100; i++) b.Append("abcd");
  size_t held = b.memory();
  EXPECT_GE(held, 101 * block);
  // The capacity (8 bytes) and the overhead of its blocks are the backlog's; the rest is past it.
  EXPECT_GE(b.MemoryPastCapacity(), held - 8 - 3 * (block - 4));
  EXPECT_LE(b.MemoryPastCapacity(), held - 8);
  // The reader is cut off: the blocks leave the backlog but live on with the cursor.
  b.set_needed_from(INT64_MAX);
  b.Trim();
  EXPECT_LE(b.histlen(), 12u);
  EXPECT_EQ(b.memory(), held);
  EXPECT_GT(b.MemoryPastCapacity(), 90 * block);
  lagging = Backlog::Cursor();
  EXPECT_LE(b.memory(), 4 * block);
  EXPECT_LE(b.MemoryPastCapacity(), block);  // whole blocks: up to one past the capacity
}

TEST(Backlog, MatchesAStringModelUnderRandomAppendsResizesAndCursors) {
  std::mt19937_64 rng(1);
  Backlog b(64, 0, 16);
  std::string all;
  std::vector<Backlog::Cursor> cursors;
  size_t at_least = 0;  // what the backlog must hold: a bigger capacity fills up as it goes
  for (int i = 0; i < 4000; i++) {
    if (rng() % 50 == 0) {
      b.Resize(1 + rng() % 200);
      at_least = b.histlen();
    }
    if (rng() % 40 == 0 && cursors.size() < 4) {
      cursors.push_back(
          b.CursorAt(b.end_offset() - static_cast<int64_t>(rng() % 10 % (b.histlen() + 1))));
    }
    int64_t needed = INT64_MAX;
    for (auto& c : cursors) needed = std::min(needed, c.offset());
    b.set_needed_from(needed);
    std::string chunk(rng() % 90, static_cast<char>('a' + rng() % 26));
    b.Append(chunk);
    all += chunk;
    at_least += chunk.size();
    ASSERT_EQ(b.end_offset(), static_cast<int64_t>(all.size()));
    // Whole blocks: at least the capacity is held (or all there is, when less was written).
    ASSERT_GE(b.histlen(), std::min(b.capacity(), at_least));
    // And no more than a block past it, unless a reader needs more.
    if (cursors.empty()) ASSERT_LE(b.histlen(), b.capacity() + 16);
    int64_t from = b.end_offset() - static_cast<int64_t>(b.histlen());
    std::string out;
    ASSERT_TRUE(b.CopySince(from, &out));
    ASSERT_EQ(out, all.substr(static_cast<size_t>(from)));
    for (auto& c : cursors) {  // a reader reads some of what it has, and gets the model's bytes
      ASSERT_TRUE(b.Covers(c.offset()));
      std::string_view s = c.Readable();
      size_t n = s.empty() ? 0 : rng() % s.size() + 1;
      ASSERT_EQ(std::string(s.substr(0, n)), all.substr(static_cast<size_t>(c.offset()), n));
      c.Consume(n);
    }
    if (rng() % 60 == 0 && !cursors.empty()) cursors.erase(cursors.begin());
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
