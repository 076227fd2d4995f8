// Geo searches: known answers (Redis' documented Sicily examples), then a differential run over
// dense sets in both encodings, where every search reply and every stored result must match
// redis-server byte for byte, and a STORE search reaching a replica.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/e2e/diff/gen.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

std::vector<std::string> Strings(const Reply& r) {
  std::vector<std::string> out;
  for (const Reply& e : r.elems) out.push_back(e.str);
  return out;
}

void AddSicily(RespClient& c) {
  ASSERT_EQ(
      c.Call({"GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
              "Catania", "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2"})
          .integer,
      4);
}

TEST(Geo, SearchesGiveTheDocumentedAnswers) {
  ServerProcess kv(Kind::kKvstore);
  RespClient c(kv.port());
  AddSicily(c);
  Reply r = c.Call({"GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "ASC"});
  ASSERT_EQ(r.elems.size(), 2u);
  EXPECT_EQ(Strings(r.elems[0]), (std::vector<std::string>{"Catania", "56.4413"}));
  EXPECT_EQ(Strings(r.elems[1]), (std::vector<std::string>{"Palermo", "190.4424"}));
  r = c.Call({"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC",
              "WITHCOORD", "WITHDIST"});
  ASSERT_EQ(r.elems.size(), 4u);
  EXPECT_EQ(r.elems[3].elems[0].str, "edge1");
  EXPECT_EQ(r.elems[3].elems[1].str, "279.7405");
  EXPECT_EQ(Strings(r.elems[3].elems[2]),
            (std::vector<std::string>{"12.7584877610206604", "38.78813451624225195"}));
  EXPECT_EQ(Strings(c.Call({"GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "ASC"})),
            (std::vector<std::string>{"Palermo", "edge1", "Catania"}));
  // The box of 400 km holds all four; a circle of 200 km around the same centre only two.
  EXPECT_EQ(c.Call({"GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200",
                    "km", "STOREDIST"})
                .integer,
            2);
  EXPECT_EQ(
      Strings(c.Call({"ZRANGE", "dst", "0", "-1", "WITHSCORES"})),
      (std::vector<std::string>{"Catania", "56.441257870158204", "Palermo", "190.44242984775784"}));
  EXPECT_EQ(c.Call({"GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "dst"}).integer, 0);
  EXPECT_EQ(c.Call({"EXISTS", "dst"}).integer, 0);  // an empty result deletes the destination
  EXPECT_EQ(c.Call({"GEORADIUS_RO", "Sicily", "15", "37", "1", "km", "STORE", "dst"}).str,
            "ERR syntax error");
  EXPECT_EQ(c.Call({"GEOSEARCH", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST"}).str,
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH");
  EXPECT_EQ(c.Call({"GEORADIUS", "Sicily", "15", "37", "1", "km", "ANY"}).str,
            "ERR the ANY argument requires COUNT argument");
}

// Dense sets (one small enough for a listpack) and random searches of every form, compared with
// redis-server reply by reply, then the whole datasets (stored results included) by digest.
class GeoDifferential : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GeoDifferential, SearchesMatchRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh)";
  ServerProcess kv(Kind::kKvstore), redis(Kind::kRedis);
  RespClient k(kv.port()), r(redis.port());
  uint32_t seed = GetParam();
  if (seed % 2 == 0) {  // even seeds run in RESP3
    ASSERT_EQ(k.Call({"HELLO", "3"}).type, '%');
    ASSERT_EQ(r.Call({"HELLO", "3"}).type, '%');
  }
  Gen gen(seed);
  const int kPoints[] = {400, 1000, 60};  // geo0 and geo1 skiplists, geo2 a listpack
  for (int key = 0; key < 3; key++) {
    Args add = {"GEOADD", "geo" + std::to_string(key)};
    for (int i = 0; i < kPoints[key]; i++) {
      RandomGeoPosition(gen, &add, true);
      add.push_back("m" + std::to_string(i));
    }
    Reply want = r.Call(add);
    ASSERT_EQ(k.Call(add).raw, want.raw);
  }
  ASSERT_EQ(k.Call({"OBJECT", "ENCODING", "geo2"}).str, "listpack");
  ASSERT_EQ(k.Call({"ZCARD", "geo1"}).integer, 1000);
  int mismatches = 0, found = 0;
  for (int i = 0; i < 1500 && mismatches < 10; i++) {
    Args cmd = RandomGeoSearch(gen);
    Reply want = r.Call(cmd);
    Reply got = k.Call(cmd);
    if (want.type == '*' && !want.elems.empty()) found++;
    if (want.raw != got.raw) {
      mismatches++;
      std::string shown;
      for (const auto& a : cmd) shown += "'" + a + "' ";
      ADD_FAILURE() << "step " << i << ": " << shown << "\n  redis:   " << want.raw
                    << "\n  kvstore: " << got.raw;
    }
  }
  EXPECT_GT(found, 100);  // the searches do find things
  EXPECT_EQ(k.Call({"DEBUG", "DIGEST"}).str, r.Call({"DEBUG", "DIGEST"}).str);
}

// GEORADIUS ... STORE and GEOSEARCHSTORE reach a kvstore replica and a redis-server replica of
// kvstore, which end with the primary's data.
TEST(Geo, StoredSearchesReachReplicas) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-delay", "0"});
  const std::string of = "127.0.0.1 " + std::to_string(primary.port());
  ServerProcess replica(Kind::kKvstore, {"--replicaof", of});
  RespClient p(primary.port()), r(replica.port());
  AddSicily(p);
  EXPECT_EQ(p.Call({"GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "near"}).integer, 2);
  EXPECT_EQ(p.Call({"GEOSEARCHSTORE", "box", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "500",
                    "300", "km", "STOREDIST", "COUNT", "3"})
                .integer,
            3);
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(Strings(r.Call({"ZRANGE", "box", "0", "-1"})),
            (std::vector<std::string>{"Palermo", "edge1", "Catania"}));
  if (!HaveRedisServer()) return;
  ServerProcess redis(Kind::kRedis, {"--replicaof", of});
  RespClient rr(redis.port());
  ASSERT_TRUE(InSync(p, rr));
  EXPECT_EQ(rr.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
}

INSTANTIATE_TEST_SUITE_P(Seeds, GeoDifferential, ::testing::Values(1u, 2u, 3u, 4u, 5u, 6u));

}  // namespace
}  // namespace kv::test
