// The manifest redis-server writes for its multi-part AOF parses, and formats back to the same
// bytes, with kvstore's reader (src/persist/aof_manifest.h): after start-up (a base and an
// increment) and after rewrites (new sequence numbers).
#include <gtest/gtest.h>

#include <string>

#include "persist/aof_manifest.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

TEST(AofManifestInterop, RedisManifestsParseAndFormatByteForByte) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess redis(ServerProcess::Kind::kRedis, {"--appendonly", "yes"});
  RespClient c(redis.port());
  const std::string manifest = redis.dir() + "/appendonlydir/appendonly.aof.manifest";
  for (int rewrite = 0; rewrite < 3; rewrite++) {
    SCOPED_TRACE("after " + std::to_string(rewrite) + " rewrites");
    ASSERT_EQ(c.Call({"SET", "k" + std::to_string(rewrite), "v"}).str, "OK");
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(c, "persistence", "aof_rewrite_in_progress") == "0" &&
             InfoField(c, "persistence", "aof_rewrite_scheduled") == "0";
    }));
    std::string text = ReadFile(manifest);
    ASSERT_FALSE(text.empty()) << manifest;
    auto m = persist::ParseAofManifest(text);
    ASSERT_TRUE(m.ok()) << m.status().message() << "\n" << text;
    EXPECT_EQ(persist::FormatAofManifest(*m), text);
    ASSERT_TRUE(m->base.has_value()) << text;
    EXPECT_EQ(m->base->name, persist::AofBaseName("appendonly.aof", m->curr_base_seq, true));
    ASSERT_FALSE(m->incrs.empty()) << text;
    EXPECT_EQ(m->incrs.back().name, persist::AofIncrName("appendonly.aof", m->curr_incr_seq));
    EXPECT_EQ(m->curr_base_seq, rewrite + 1);
    ASSERT_FALSE(c.Call({"BGREWRITEAOF"}).is_error());
  }
}

}  // namespace
}  // namespace kv::test
