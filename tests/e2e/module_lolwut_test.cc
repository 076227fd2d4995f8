// End-to-end tests of MODULE and LOLWUT against Debian's redis-server (7.0.15).
//
// MODULE: kvstore loads no modules, so its replies match Redis' with no module loaded, byte for
// byte, but for MODULE LOAD / LOADEX, which kvstore refuses with its own message. The
// enable-module-command setting protects LOAD, LOADEX and UNLOAD as in Redis 7.0.
//
// LOLWUT: the art is random, so the tests compare its shape (lines and their widths) and the
// argument errors; the closing line names kvstore ("kvstore ver. ... (Redis ver. 7.0.15
// compatible)" where Redis writes "Redis ver. 7.0.15").
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/version.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/suite_servers.h"

namespace kv::test {
namespace {

using Cmd = std::vector<std::string>;

const std::string kProtectedError =
    "-ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", "
    "you can run it from a local connection, otherwise you need to set this option in the "
    "configuration file, and then restart the server.\r\n";

// The pair of servers with enable-module-command set to `mode`.
struct ModulePair {
  explicit ModulePair(const std::string& mode)
      : kv(ServerProcess::Kind::kKvstore, {"--enable-module-command", mode}),
        redis(ServerProcess::Kind::kRedis, {"--enable-module-command", mode}) {}
  ServerProcess kv, redis;
};

// Replies that do not depend on the setting, nor on kvstore having no modules.
const std::vector<Cmd> kSameAlways = {
    {"MODULE", "HELP"},
    {"module", "help"},
    {"MODULE", "LIST"},
    {"MODULE", "FOO"},
    {"MODULE"},
    {"MODULE", "LOAD"},
    {"MODULE", "LOADEX"},
    {"MODULE", "UNLOAD"},
    {"MODULE", "HELP", "x"},
    {"MODULE", "LIST", "x"},
    {"MODULE", "UNLOAD", "a", "b"},
};

// What only enable-module-command decides.
const std::vector<Cmd> kProtected = {
    {"MODULE", "LOAD", "/no/such/module.so"},
    {"MODULE", "LOAD", "/no/such/module.so", "arg1", "arg2"},
    {"MODULE", "LOADEX", "/no/such/module.so", "CONFIG", "a", "b", "ARGS", "x"},
    {"MODULE", "UNLOAD", "nosuchmodule"},
};

TEST(ModuleTest, RepliesMatchRedisWhateverTheSetting) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (const std::string mode : {"no", "yes", "local"}) {
    ModulePair p(mode);
    RespClient c(p.kv.port()), r(p.redis.port());
    for (const char* resp : {"2", "3"}) {
      c.Call({"HELLO", resp});
      r.Call({"HELLO", resp});
      for (const Cmd& cmd : kSameAlways) {
        EXPECT_EQ(c.Raw(cmd), r.Raw(cmd)) << mode << " " << cmd[0] << " " << cmd.size();
      }
    }
    EXPECT_EQ(c.Raw({"MODULE", "LIST"}), "*0\r\n");
  }
}

TEST(ModuleTest, ProtectedSubcommandsRefusedByDefault) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ModulePair p("no");
  RespClient c(p.kv.port()), r(p.redis.port());
  for (const Cmd& cmd : kProtected) {
    EXPECT_EQ(c.Raw(cmd), kProtectedError) << cmd[1];
    EXPECT_EQ(r.Raw(cmd), kProtectedError) << cmd[1];
  }
  // Nothing was attempted, so nothing was logged.
  EXPECT_EQ(p.kv.LogText().find("failed to load"), std::string::npos);
}

TEST(ModuleTest, DefaultIsNo) {
  ServerProcess kv(ServerProcess::Kind::kKvstore);
  RespClient c(kv.port());
  EXPECT_EQ(c.Call({"CONFIG", "GET", "enable-module-command"}).elems[1].str, "no");
  EXPECT_EQ(c.Raw({"MODULE", "UNLOAD", "m"}), kProtectedError);
  EXPECT_EQ(c.Raw({"MODULE", "LIST"}), "*0\r\n");
}

// With yes, and with local (the tests connect over loopback, a local connection for both).
TEST(ModuleTest, AllowedLoadIsRefusedHonestlyAndUnloadFindsNothing) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (const std::string mode : {"yes", "local"}) {
    ModulePair p(mode);
    RespClient c(p.kv.port()), r(p.redis.port());
    EXPECT_EQ(c.Raw({"MODULE", "UNLOAD", "nosuchmodule"}),
              "-ERR Error unloading module: no such module with that name\r\n");
    EXPECT_EQ(c.Raw({"MODULE", "UNLOAD", "nosuchmodule"}),
              r.Raw({"MODULE", "UNLOAD", "nosuchmodule"}));
    for (size_t i = 0; i < 3; i++) {
      EXPECT_EQ(c.Raw(kProtected[i]), "-ERR kvstore does not load Redis modules\r\n") << mode;
      EXPECT_EQ(r.Raw(kProtected[i]),
                "-ERR Error loading the extension. Please check the server logs.\r\n")
          << mode;
    }
    EXPECT_NE(p.kv.LogText().find("Module /no/such/module.so failed to load"), std::string::npos);
    EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
  }
}

// ---- LOLWUT ----------------------------------------------------------------------------------

class LolwutTest : public KvstoreAndRedisSuite {
 protected:
  void SetUp() override {
    if (!redis_) GTEST_SKIP() << "redis-server is not installed";
  }
};

const std::string kRedisLine = std::string("Redis ver. ") + kRedisCompatVersion + "\n";
const std::string kOurLine = std::string("kvstore ver. ") + kKvstoreVersion + " (Redis ver. " +
                             kRedisCompatVersion + " compatible)\n";

// Redis' reply text with its version line replaced by kvstore's.
std::string AsKvstore(std::string s) {
  size_t at = s.rfind(kRedisLine);
  if (at != std::string::npos) s.replace(at, kRedisLine.size(), kOurLine);
  return s;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1) {
    out.push_back(s.substr(start, nl - start));
  }
  out.push_back(s.substr(start));  // after the final '\n': empty
  return out;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) n++;
  return n;
}

TEST_F(LolwutTest, ArgumentErrorsMatchRedis) {
  RespClient c(kv_->port()), r(redis_->port());
  const std::vector<Cmd> kCases = {
      {"LOLWUT", "VERSION", "x"},
      {"LOLWUT", "version", "5.5"},
      {"LOLWUT", "VERSION", "99999999999999999999"},
      {"LOLWUT", "VERSION", "5", "x"},
      {"LOLWUT", "VERSION", "5", "10", "x"},
      {"LOLWUT", "VERSION", "5", "10", "2", "x"},
      {"LOLWUT", "VERSION", "6", "x"},
      {"LOLWUT", "VERSION", "6", "10", "x"},
  };
  for (const Cmd& cmd : kCases) {
    Reply ours = c.Call(cmd);
    EXPECT_TRUE(ours.is_error()) << cmd.back();
    EXPECT_EQ(ours.raw, r.Raw(cmd)) << cmd.back();
  }
}

// Every version without art of its own (7.0.15's default among them) answers the version line.
TEST_F(LolwutTest, OtherVersionsAnswerTheVersionLine) {
  RespClient c(kv_->port()), r(redis_->port());
  const std::vector<Cmd> kCases = {
      {"LOLWUT"},
      {"LOLWUT", "foo"},
      {"LOLWUT", "10", "20"},
      {"LOLWUT", "VERSION"},
      {"LOLWUT", "VERSION", "7"},
      {"LOLWUT", "VERSION", "-1"},
      {"LOLWUT", "VERSION", "4"},
      {"LOLWUT", "VERSION", "0", "x"},
      {"LOLWUT", "VERSION", "49"},
      {"LOLWUT", "VERSION", "4294967296"},
  };
  for (const char* resp : {"2", "3"}) {
    c.Call({"HELLO", resp});
    r.Call({"HELLO", resp});
    for (const Cmd& cmd : kCases) {
      Reply ours = c.Call(cmd), theirs = r.Call(cmd);
      EXPECT_EQ(ours.type, theirs.type) << cmd.back();
      EXPECT_EQ(ours.str, AsKvstore(theirs.str)) << cmd.back() << " RESP" << resp;
      EXPECT_EQ(ours.str, (resp == std::string("3") ? "txt:" : "") + kOurLine);  // RESP3: verbatim
    }
  }
}

// VERSION 5: braille rows as many and as wide as Redis', then a blank line and the credit.
TEST_F(LolwutTest, Version5HasRedisShape) {
  RespClient c(kv_->port()), r(redis_->port());
  const std::vector<Cmd> kParams = {{},
                                    {"1", "1", "1"},
                                    {"3", "1", "1"},
                                    {"10", "2", "3"},
                                    {"0", "-5", "0"},
                                    {"20", "200", "1"},
                                    {"4"},
                                    {"40", "3"},
                                    {"7", "7", "7"}};
  for (const Cmd& params : kParams) {
    Cmd cmd = {"LOLWUT", "VERSION", "5"};
    cmd.insert(cmd.end(), params.begin(), params.end());
    Reply ours = c.Call(cmd), theirs = r.Call(cmd);
    ASSERT_EQ(ours.type, '$') << ours.Debug();
    std::vector<std::string> a = Lines(ours.str), b = Lines(AsKvstore(theirs.str));
    ASSERT_EQ(a.size(), b.size()) << cmd.size();
    for (size_t i = 0; i < a.size(); i++) {
      EXPECT_EQ(a[i].size(), b[i].size()) << "line " << i;
      if (i + 3 < a.size()) {
        EXPECT_EQ(a[i].size() % 3, 0u);  // three-byte braille characters
      }
    }
    ASSERT_GE(a.size(), 3u);
    EXPECT_EQ(a[a.size() - 3], "");
    EXPECT_EQ(a[a.size() - 2] + "\n", "Georg Nees - schotter, plotter on paper, 1968. " + kOurLine);
    EXPECT_EQ(a.back(), "");
  }
  // The default: 66 columns of 8 x 12 squares, 49 rows of art.
  std::vector<std::string> a = Lines(c.Call({"LOLWUT", "VERSION", "5"}).str);
  EXPECT_EQ(a.size(), 52u);
  EXPECT_EQ(a[0].size(), 66u * 3);
  // Redis formats the version with %u of an unsigned int: 2^32 + 5 is version 5.
  for (RespClient* cl : {&c, &r}) {
    Cmd wrapped = {"LOLWUT", "VERSION", "4294967301", "1", "1", "1"};
    EXPECT_NE(cl->Call(wrapped).str.find("Georg Nees"), std::string::npos);
  }
}

// VERSION 6: rows of colour cells as Redis', then two lines of credits.
TEST_F(LolwutTest, Version6HasRedisShape) {
  RespClient c(kv_->port()), r(redis_->port());
  const std::vector<Cmd> kParams = {{}, {"3", "2"}, {"1", "1"}, {"0", "0"}, {"120"}, {"33", "7"}};
  for (const Cmd& params : kParams) {
    Cmd cmd = {"LOLWUT", "VERSION", "6"};
    cmd.insert(cmd.end(), params.begin(), params.end());
    Reply ours = c.Call(cmd), theirs = r.Call(cmd);
    ASSERT_EQ(ours.type, '$') << ours.Debug();
    std::vector<std::string> a = Lines(ours.str), b = Lines(AsKvstore(theirs.str));
    ASSERT_EQ(a.size(), b.size()) << cmd.size();
    ASSERT_GE(a.size(), 4u);
    for (size_t i = 0; i + 3 < a.size(); i++) {
      EXPECT_EQ(Count(a[i], "\033[0m"), Count(b[i], "\033[0m")) << "line " << i;
    }
    EXPECT_EQ(a[a.size() - 3], "Dedicated to the 8 bit game developers of past and present.");
    EXPECT_EQ(a[a.size() - 2] + "\n",
              "Original 8 bit image from Plaguemon by hikikomori. " + kOurLine);
    EXPECT_EQ(b[b.size() - 2], a[a.size() - 2]);
  }
  std::vector<std::string> a = Lines(c.Call({"LOLWUT", "VERSION", "6"}).str);
  EXPECT_EQ(a.size(), 23u);  // 20 rows, two credits, and the empty rest after the last '\n'
  EXPECT_EQ(Count(a[0], "\033[0m"), 80u);
}

// RESP3 answers a verbatim string of format txt, as Redis does.
TEST_F(LolwutTest, Resp3IsVerbatimText) {
  RespClient c(kv_->port()), r(redis_->port());
  c.Call({"HELLO", "3"});
  r.Call({"HELLO", "3"});
  for (const Cmd& cmd : std::vector<Cmd>{{"LOLWUT"},
                                         {"LOLWUT", "VERSION", "5", "1", "1", "1"},
                                         {"LOLWUT", "VERSION", "6", "2", "1"}}) {
    Reply ours = c.Call(cmd), theirs = r.Call(cmd);
    EXPECT_EQ(ours.type, '=');
    EXPECT_EQ(ours.type, theirs.type);
    EXPECT_EQ(ours.raw.find("txt:"), ours.raw.find("\r\n") + 2) << ours.raw.substr(0, 20);
  }
}

}  // namespace
}  // namespace kv::test
