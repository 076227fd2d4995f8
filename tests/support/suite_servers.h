// A test fixture whose suite shares one kvstore server and, when Debian's redis-server is
// installed, one redis-server (the oracle of the differential tests): started before the
// suite's first test, stopped after its last. Fixtures derive from it; tests that need Redis
// skip when redis_ is null.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/process.h"

namespace kv::test {

class KvstoreAndRedisSuite : public ::testing::Test {
 protected:
  static void StartServers(std::vector<std::string> kvstore_args = {}) {
    kv_ = new ServerProcess(ServerProcess::Kind::kKvstore, std::move(kvstore_args));
    if (HaveRedisServer()) redis_ = new ServerProcess(ServerProcess::Kind::kRedis);
  }
  static void SetUpTestSuite() { StartServers(); }
  static void TearDownTestSuite() {
    delete kv_;
    delete redis_;
    kv_ = redis_ = nullptr;
  }

  inline static ServerProcess* kv_ = nullptr;
  inline static ServerProcess* redis_ = nullptr;
};

}  // namespace kv::test
