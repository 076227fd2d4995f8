#include "persist/aof_manifest.h"

#include <gtest/gtest.h>

namespace kv::persist {
namespace {

using Type = AofFileInfo::Type;

TEST(AofManifest, ParsesAndFormatsWhatRedisWrites) {
  const std::string text =
      "file appendonly.aof.3.base.rdb seq 3 type b\n"
      "file appendonly.aof.2.base.rdb seq 2 type h\n"
      "file appendonly.aof.5.incr.aof seq 5 type h\n"
      "file appendonly.aof.6.incr.aof seq 6 type i\n"
      "file appendonly.aof.7.incr.aof seq 7 type i\n";
  auto m = ParseAofManifest(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_TRUE(m->base.has_value());
  EXPECT_EQ(*m->base, (AofFileInfo{"appendonly.aof.3.base.rdb", 3, Type::kBase}));
  ASSERT_EQ(m->history.size(), 2u);
  EXPECT_EQ(m->history[1].name, "appendonly.aof.5.incr.aof");
  ASSERT_EQ(m->incrs.size(), 2u);
  EXPECT_EQ(m->curr_base_seq, 3);
  EXPECT_EQ(m->curr_incr_seq, 7);
  EXPECT_EQ(FormatAofManifest(*m), text);
}

TEST(AofManifest, ToleratesWhatRedisTolerates) {
  // Comments, keys in any case and order, unknown keys (forward compatibility), surrounding
  // blanks, a quoted name.
  auto m = ParseAofManifest(
      "# written by hand\n"
      "  TYPE b SEQ 1 FILE \"a b.rdb\" future x  \r\n"
      "file appendonly.aof.1.incr.aof seq 1 type i\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->base->name, "a b.rdb");
  // A name with a space is written quoted, as Redis' sdscatrepr does.
  EXPECT_EQ(FormatAofManifest(*m),
            "file \"a b.rdb\" seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n");
  // Increments alone (no base yet) are a valid manifest.
  EXPECT_TRUE(ParseAofManifest("file x.1.incr.aof seq 1 type i\n").ok());
}

TEST(AofManifest, RefusesWhatRedisRefusesWithItsMessages) {
  const std::pair<const char*, const char*> kCases[] = {
      {"", "Found an empty AOF manifest"},
      {"\n", "Invalid AOF manifest file format"},
      {"file a seq 1 type b", "The AOF manifest file contains too long line"},  // no newline
      {"file a seq 1\n", "Invalid AOF manifest file format"},
      {"file a seq 1 type\n", "Invalid AOF manifest file format"},
      {"file a seq 0 type b\n", "Invalid AOF manifest file format"},
      {"file a seq x type b\n", "Invalid AOF manifest file format"},
      {"file dir/a seq 1 type b\n", "File can't be a path, just a filename"},
      {"file a seq 1 type b\nfile b seq 2 type b\n", "Found duplicate base file information"},
      {"file a seq 2 type i\nfile b seq 2 type i\n", "Found a non-monotonic sequence number"},
      {"file a seq 1 type z\n", "Unknown AOF file type"},
      {"file \"a seq 1 type b\n", "Invalid AOF manifest file format"},
  };
  for (const auto& [text, why] : kCases) {
    auto m = ParseAofManifest(text);
    EXPECT_FALSE(m.ok()) << text;
    if (!m.ok()) EXPECT_EQ(m.status().message(), why) << text;
  }
  std::string long_line = "file " + std::string(1100, 'a') + " seq 1 type b\n";
  EXPECT_EQ(ParseAofManifest(long_line).status().message(),
            "The AOF manifest file contains too long line");
}

// The log names the line as Redis counts lines (comments included), with its trimmed text;
// errors of no single line name none.
TEST(AofManifest, ErrorsSayWhereAsRedisLogsIt) {
  AofManifestErrorAt at;
  EXPECT_FALSE(ParseAofManifest("# c\nfile a seq 1 type b\n  file b seq 2 type b \r\n", &at).ok());
  EXPECT_EQ(at.line, 3);
  EXPECT_EQ(at.text, "file b seq 2 type b");
  at = {};
  EXPECT_FALSE(ParseAofManifest("file a seq 1 type i\n\n", &at).ok());
  EXPECT_EQ(at.line, 2);
  EXPECT_EQ(at.text, "");
  at = {7, "x"};
  EXPECT_FALSE(ParseAofManifest("file a seq 1 type i\nfile b seq 2 type i", &at).ok());
  EXPECT_EQ(at.line, 0);
  at = {7, "x"};
  EXPECT_FALSE(ParseAofManifest("", &at).ok());
  EXPECT_EQ(at.line, 0);
}

// fgets into 1025 bytes: a line of 1024 bytes with its newline fits, one more does not; the
// rest of a comment past 1024 bytes is read as a line of its own (and is no valid line).
TEST(AofManifest, LinesAreReadAsRedisReadsThem) {
  auto line_of = [](size_t total) {
    std::string head = "file a seq 1 type i pad ";
    return head + std::string(total - head.size() - 1, 'x') + "\n";
  };
  EXPECT_TRUE(ParseAofManifest(line_of(1024)).ok());
  EXPECT_EQ(ParseAofManifest(line_of(1025)).status().message(),
            "The AOF manifest file contains too long line");
  AofManifestErrorAt at;
  auto m = ParseAofManifest("#" + std::string(1500, 'c') + "\nfile a seq 1 type i\n", &at);
  EXPECT_EQ(m.status().message(), "Invalid AOF manifest file format");
  EXPECT_EQ(at.line, 2);
  EXPECT_EQ(at.text, std::string(1500 - 1023, 'c'));
  EXPECT_TRUE(ParseAofManifest("file a seq 1 type i\n# no newline").ok());
  // An empty name passes the parse, as in Redis.
  EXPECT_TRUE(ParseAofManifest("file \"\" seq 1 type i\n").ok());
}

TEST(AofManifest, FileNamesAreRedis) {
  EXPECT_EQ(AofBaseName("appendonly.aof", 1, true), "appendonly.aof.1.base.rdb");
  EXPECT_EQ(AofBaseName("appendonly.aof", 2, false), "appendonly.aof.2.base.aof");
  EXPECT_EQ(AofIncrName("appendonly.aof", 3), "appendonly.aof.3.incr.aof");
  EXPECT_EQ(AofManifestName("appendonly.aof"), "appendonly.aof.manifest");
  EXPECT_EQ(AofTempManifestName("appendonly.aof"), "temp-appendonly.aof.manifest");
}

}  // namespace
}  // namespace kv::persist
