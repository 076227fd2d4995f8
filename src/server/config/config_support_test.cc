// No silent settings: every parameter of the table is read by the code, refused when set to
// anything but its default, or inert with a stated reason (config_support.cc). "Read by the
// code" means its name, quoted, appears in a source file of src/ other than the table itself:
// a parameter nothing names cannot be acted on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "server/config/config.h"

namespace kv::server {
namespace {

// Every quoted string in src/ outside the parameter table, its support table and the tests.
std::set<std::string> QuotedNamesInTheCode() {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::recursive_directory_iterator(KV_SOURCE_DIR "/src")) {
    std::string path = e.path().string();
    std::string file = e.path().filename().string();
    if (!e.is_regular_file() || file == "config_table.cc" || file == "config_support.cc" ||
        file.ends_with("_test.cc") || !(file.ends_with(".cc") || file.ends_with(".h"))) {
      continue;
    }
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    for (size_t at = text.find('"'); at != std::string::npos; at = text.find('"', at + 1)) {
      size_t end = text.find('"', at + 1);
      if (end == std::string::npos) break;
      names.insert(text.substr(at + 1, end - at - 1));
      at = end;
    }
  }
  return names;
}

// A canonical value of `p` other than its default (empty when none can be made).
std::vector<std::string> OtherValue(const ParamSpec& p) {
  switch (p.type) {
    case ParamType::kBool:
      return {p.default_value == "yes" ? "no" : "yes"};
    case ParamType::kInt:
    case ParamType::kMemory: {
      int64_t d = std::stoll(p.default_value);
      if (p.name == "unixsocketperm") return {"700"};
      return {std::to_string(d < p.max ? d + 1 : d - 1)};
    }
    case ParamType::kEnum:
      for (const auto& v : p.enum_values) {
        if (v != p.default_value) return {v};
      }
      return {};
    case ParamType::kString:
      return {p.default_value + "x"};
    case ParamType::kMultiArg:
      return {"1", "2"};
  }
  return {};
}

TEST(ConfigSupport, EveryParameterIsReadRefusedOrInert) {
  std::set<std::string> quoted = QuotedNamesInTheCode();
  ASSERT_GT(quoted.size(), 100u) << "the source tree was not found at " << KV_SOURCE_DIR;
  for (const ParamSpec& p : DefaultParams()) {
    int kinds = (p.refused != nullptr) + (p.inert != nullptr) + (quoted.count(p.name) > 0);
    EXPECT_GE(kinds, 1) << p.name << ": nothing reads it; implement it, or refuse it "
                        << "(config_support.cc)";
    EXPECT_FALSE(p.refused && p.inert) << p.name << " is both refused and inert";
  }
}

TEST(ConfigSupport, RefusedParametersRefuseAnythingButTheirDefault) {
  for (const ParamSpec& p : DefaultParams()) {
    if (!p.refused) continue;
    SCOPED_TRACE(p.name);
    Config c;
    EXPECT_TRUE(c.Load({{p.name, {p.default_value}, "t"}}).ok()) << "the default is accepted";
    std::vector<std::string> other = OtherValue(p);
    ASSERT_FALSE(other.empty());
    Status s = c.Load({{p.name, other, "t"}});
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(*p.refused), std::string::npos) << s.message();
    EXPECT_EQ(c.GetString(p.name), p.default_value);
    if (!p.immutable) {
      Status set = c.SetMany({{p.name, other.size() == 1 ? other[0] : "1 2"}});
      EXPECT_FALSE(set.ok());
      EXPECT_NE(set.message().find(*p.refused), std::string::npos) << set.message();
    }
  }
}

// What kvstore cannot do is refused, with a reason that says so; cluster mode is accepted.
TEST(ConfigSupport, MissingFeaturesAreRefused) {
  Config c;
  {
    Status s = c.Load({{"activedefrag", {"yes"}, "t"}});
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("FATAL CONFIG FILE ERROR"), std::string::npos) << s.message();
  }
  EXPECT_TRUE(c.Load({{"cluster-enabled", {"yes"}, "t"}}).ok());
  // Debian's redis.conf sets these to their defaults: accepted; and the AOF's settings, which
  // kvstore acts on (aof.h), take any valid value.
  for (auto [name, value] : {std::pair{"appendonly", "no"},
                             {"appendfsync", "everysec"},
                             {"lazyfree-lazy-eviction", "no"},
                             {"jemalloc-bg-thread", "yes"},
                             {"auto-aof-rewrite-min-size", "64mb"},
                             {"appendonly", "yes"},
                             {"appendfsync", "always"},
                             {"aof-use-rdb-preamble", "no"},
                             {"aof-timestamp-enabled", "yes"},
                             {"aof-load-truncated", "no"}}) {
    EXPECT_TRUE(c.Load({{name, {value}, "t"}}).ok()) << name;
  }
}

// maxmemory-clients exists now (client_eviction.h): bytes with units or a percentage of
// maxmemory, in the config file and CONFIG SET alike, shown as Redis shows it.
TEST(ConfigSupport, MaxmemoryClientsTakesBytesOrAPercentage) {
  Config c;
  EXPECT_EQ(RefusedReason("maxmemory-clients"), nullptr);
  for (auto [value, shown] : {std::pair{"10mb", "10485760"},
                              {"1k", "1000"},
                              {"10%", "10%"},
                              {"100%", "100%"},
                              {"0%", "0"},
                              {"0", "0"}}) {
    ASSERT_TRUE(c.Load({{"maxmemory-clients", {value}, "t"}}).ok()) << value;
    EXPECT_EQ(c.GetString("maxmemory-clients"), shown) << value;
    ASSERT_TRUE(c.SetMany({{"maxmemory-clients", value}}).ok()) << value;
    EXPECT_EQ(c.GetString("maxmemory-clients"), shown) << value;
  }
  for (auto [value, why] : {std::pair{"101%", "percentage argument must be less or equal to 100"},
                            {"-1", "argument must be a memory or percent value"},
                            {"-5%", "argument must be a memory or percent value"},
                            {"1.5%", "argument must be a memory or percent value"},
                            {"abc%", "argument must be a memory or percent value"},
                            {"%", "argument must be a memory or percent value"}}) {
    Status s = c.SetMany({{"maxmemory-clients", value}});
    EXPECT_FALSE(s.ok()) << value;
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
    EXPECT_FALSE(c.Load({{"maxmemory-clients", {value}, "t"}}).ok()) << value;
  }
  EXPECT_EQ(c.GetString("maxmemory-clients"), "0");
}

TEST(ConfigSupport, UnixsocketpermIsOctal) {
  Config c;
  EXPECT_TRUE(c.Load({{"unixsocketperm", {"0"}, "t"}}).ok());
  EXPECT_TRUE(c.Load({{"unixsocketperm", {"000"}, "t"}}).ok());
  // 700 is octal (448), within range; 1000 (512) is not.
  EXPECT_TRUE(c.Load({{"unixsocketperm", {"700"}, "t"}}).ok());
  EXPECT_EQ(c.GetString("unixsocketperm"), "700");
  EXPECT_FALSE(c.Load({{"unixsocketperm", {"1000"}, "t"}}).ok());
  Status s = c.Load({{"unixsocketperm", {"800"}, "t"}});
  EXPECT_NE(s.message().find("octal"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kv::server
