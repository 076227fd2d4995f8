#include "common/config_parser.h"

#include <gtest/gtest.h>

namespace kv {
namespace {

TEST(ConfigParser, ParsesDirectivesAndComments) {
  auto r = ParseConfigText("# comment\nport 7000\n\nsave 900 1\nsave \"\"\nBIND 127.0.0.1 ::1\n", "t");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].name, "port");
  EXPECT_EQ((*r)[0].args, std::vector<std::string>{"7000"});
  EXPECT_EQ((*r)[1].args, (std::vector<std::string>{"900", "1"}));
  EXPECT_EQ((*r)[2].args, std::vector<std::string>{""});
  EXPECT_EQ((*r)[3].name, "bind");
}

TEST(ConfigParser, ReportsUnbalancedQuotes) {
  auto r = ParseConfigText("port 1\nrequirepass \"abc\n", "f.conf");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("f.conf:2"), std::string::npos);
}

TEST(ConfigParser, CommandLineOverrides) {
  const char* argv[] = {"kvstore-server", "--port", "7000", "--save", "900", "1", "--dir", "./d"};
  auto r = ParseCommandLine(8, argv);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[1].args, (std::vector<std::string>{"900", "1"}));
  EXPECT_EQ((*r)[2].args, std::vector<std::string>{"./d"});
}

// The command-line forms Redis 7.0 reads (its introspection tests): a value starting with "--"
// after a name alone, name and value in one argument, "--save" with no value.
TEST(ConfigParser, CommandLineFormsAsRedisReadsThem) {
  auto parse = [](std::vector<const char*> args) {
    args.insert(args.begin(), "kvstore-server");
    auto r = ParseCommandLine(static_cast<int>(args.size()), args.data());
    EXPECT_TRUE(r.ok()) << r.status().message();
    std::vector<std::string> lines;
    if (!r.ok()) return std::vector<std::string>{};
    for (const auto& d : *r) {
      std::string l = d.name;
      for (const auto& a : d.args) l += "|" + a;
      lines.push_back(l);
    }
    return lines;
  };
  using L = std::vector<std::string>;
  EXPECT_EQ(parse({"--maxmemory 700mb", "--maxmemory-policy volatile-lru"}),
            (L{"maxmemory|700mb", "maxmemory-policy|volatile-lru"}));
  EXPECT_EQ(parse({"--maxmemory '700mb'"}), L{"maxmemory|700mb"});
  EXPECT_EQ(parse({"--proc-title-template", "--my--title--template", "--loglevel", "verbose"}),
            (L{"proc-title-template|--my--title--template", "loglevel|verbose"}));
  EXPECT_EQ(parse({"--save", "--loglevel", "verbose"}), (L{"save|", "loglevel|verbose"}));
  EXPECT_EQ(parse({"--loglevel", "verbose", "--save"}), (L{"loglevel|verbose", "save|"}));
  EXPECT_EQ(parse({"--proc-title-template", "--save", "--save", "", "--loglevel", "verbose"}),
            (L{"proc-title-template|--save", "save|", "loglevel|verbose"}));
  EXPECT_EQ(parse({"--shutdown-on-sigterm", "nosave force"}),
            L{"shutdown-on-sigterm|nosave force"});
  // Values keep their bytes through the quoting.
  EXPECT_EQ(parse({"--requirepass", "a \"b\"\n'c"}), L{"requirepass|a \"b\"\n'c"});
  auto r = ParseCommandLine(4, std::vector<const char*>{"s", "--port", "6379", "6380"}.data());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at(0).line, "port \"6379\" \"6380\"");  // quoted as Redis' error quotes it
}

TEST(ConfigParser, MissingFileIsAnError) {
  const char* argv[] = {"kvstore-server", "/nonexistent/kvstore.conf"};
  EXPECT_FALSE(ParseCommandLine(2, argv).ok());
}

}  // namespace
}  // namespace kv
