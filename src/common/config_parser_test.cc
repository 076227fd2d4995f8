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

TEST(ConfigParser, MissingFileIsAnError) {
  const char* argv[] = {"kvstore-server", "/nonexistent/kvstore.conf"};
  EXPECT_FALSE(ParseCommandLine(2, argv).ok());
}

}  // namespace
}  // namespace kv
