// What the command-level hardening tests share (hardening_cmds_test.cc, hardening_counts_test.cc):
// the replies they expect, and a fixture with kvstore and redis-server in the default
// configuration and with proto-max-bulk-len at 2^63-1, which checks after each test that
// kvstore is alive, answers PING and has not grown by more than a few hundred megabytes.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test::hardening {

using Cmd = std::vector<std::string>;
using Kind = ServerProcess::Kind;

inline const std::string kI64Max = "9223372036854775807";
inline const std::string kI64Min = "-9223372036854775808";
inline const std::string kBitOffsetError = "-ERR bit offset is not an integer or out of range\r\n";
inline const std::string kOverValueMax =
    "-ERR string exceeds maximum allowed size (4294967295 bytes)\r\n";
inline const std::string kOverBulkMax =
    "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n";
inline const std::string kInvalidHll = "-INVALIDOBJ Corrupted HLL object detected\r\n";
inline const std::string kLcsTooBig =
    "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n";

inline std::string Describe(const Cmd& cmd) {
  std::string out;
  for (const std::string& a : cmd) out += (out.empty() ? "" : " ") + a.substr(0, 40);
  return out.substr(0, 200);
}

inline std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; i++) out += s;
  return out;
}

// One configuration: a kvstore and a redis-server, both with the default proto-max-bulk-len or
// both with 2^63-1, each with one connection.
struct Config {
  explicit Config(bool huge_bulk)
      : huge(huge_bulk),
        kv(Kind::kKvstore, Args()),
        redis(Kind::kRedis, Args()),
        k(kv.port()),
        r(redis.port()) {}
  std::vector<std::string> Args() const {
    if (!huge) return {};
    return {"--proto-max-bulk-len", kI64Max};
  }
  const char* name() const { return huge ? "proto-max-bulk-len 2^63-1" : "default config"; }

  bool huge;
  ServerProcess kv, redis;
  RespClient k, r;
};

// Both configurations, shared by the suite; each test starts from empty databases.
class HardeningCmds : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!HaveRedisServer()) return;
    configs_ = new std::vector<std::unique_ptr<Config>>;
    configs_->push_back(std::make_unique<Config>(false));
    configs_->push_back(std::make_unique<Config>(true));
  }
  static void TearDownTestSuite() {
    delete configs_;
    configs_ = nullptr;
  }
  void SetUp() override {
    if (!configs_) GTEST_SKIP() << "redis-server is not installed";
    for (auto& c : *configs_) {
      ASSERT_EQ(c->k.Raw({"FLUSHALL"}), "+OK\r\n");
      ASSERT_EQ(c->r.Raw({"FLUSHALL"}), "+OK\r\n");
      rss_before_.push_back(RssKb(c->kv.pid()));
    }
  }
  // After each class: alive, answering, and no gigabytes of memory kept or leaked.
  void TearDown() override {
    if (!configs_) return;
    for (size_t i = 0; i < configs_->size(); i++) {
      Config& c = *(*configs_)[i];
      SCOPED_TRACE(c.name());
      ASSERT_TRUE(c.kv.Alive()) << c.kv.LogText();
      EXPECT_EQ(c.k.Raw({"PING"}), "+PONG\r\n");
      EXPECT_EQ(RespClient(c.kv.port()).Raw({"PING"}), "+PONG\r\n");
      EXPECT_LT(RssKb(c.kv.pid()) - rss_before_[i], 256 * 1024) << "RSS grew by gigabytes";
    }
  }

  // Runs `cmds` on both servers of `c` in order, expecting kvstore to answer redis-server's
  // bytes, and kvstore to be alive after each.
  static void Same(Config& c, const std::vector<Cmd>& cmds) {
    SCOPED_TRACE(c.name());
    for (const Cmd& cmd : cmds) {
      SCOPED_TRACE(Describe(cmd));
      Reply want = c.r.Call(cmd);
      ASSERT_NE(want.type, 0) << "redis-server did not answer";
      Reply got = c.k.Call(cmd);
      ASSERT_NE(got.type, 0) << "kvstore did not answer; alive: " << c.kv.Alive();
      EXPECT_EQ(got.raw, want.raw);
    }
    ASSERT_EQ(c.k.Raw({"PING"}), "+PONG\r\n");
  }
  // kvstore alone (redis-server would crash, abort or never finish): the exact reply, then PING.
  static void Expect(Config& c, const Cmd& cmd, const std::string& reply) {
    SCOPED_TRACE(std::string(c.name()) + ": " + Describe(cmd));
    EXPECT_EQ(c.k.Raw(cmd), reply);
    ASSERT_TRUE(c.kv.Alive()) << c.kv.LogText();
    ASSERT_EQ(c.k.Raw({"PING"}), "+PONG\r\n");
  }
  static std::vector<std::unique_ptr<Config>>& configs() { return *configs_; }
  static Config& huge() { return *(*configs_)[1]; }

  inline static std::vector<std::unique_ptr<Config>>* configs_ = nullptr;
  std::vector<int64_t> rss_before_;
};

// ---- CVE-2025-32023: sparse HyperLogLogs whose runs do not cover the 16384 registers -----------

}  // namespace kv::test::hardening
