#include "store/digest.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace kv::store {
namespace {

// The expected digests below are facts about Redis: each was printed by a real redis-server
// 7.0.15 started as
//   redis-server --port $P --save '' --appendonly no --daemonize no --enable-debug-command yes
// and fed the commands quoted above each block through `redis-cli -p $P` (one command per line
// on stdin, so that "\x00"-style escapes in double quotes reach the server as raw bytes).

constexpr char kZeros[] = "0000000000000000000000000000000000000000";

// FLUSHALL
// DEBUG DIGEST                 -> 0000000000000000000000000000000000000000
// DEBUG DIGEST-VALUE nokey     -> 0000000000000000000000000000000000000000
TEST(Digest, EmptyDatasetIsAllZeros) {
  Keyspace ks(16);
  EXPECT_EQ(DatasetDigest(ks), kZeros);
  EXPECT_EQ(ValueDigest(ks.db(0), ks.db(0).Find("nokey")), kZeros);
}

// FLUSHALL
// SET foo bar
// DEBUG DIGEST                 -> d2ab4820c1be0580ea28efbfe8bfa1dc05bb802a
// DEBUG DIGEST-VALUE foo nokey -> 68467c70ae30376e7ce005bcc8827f5ba7fd67dc
//                                 0000000000000000000000000000000000000000
TEST(Digest, OneStringKey) {
  Keyspace ks(16);
  Entry* e = ks.Set(0, "foo", Value::String("bar"));
  EXPECT_EQ(DatasetDigest(ks), "d2ab4820c1be0580ea28efbfe8bfa1dc05bb802a");
  EXPECT_EQ(ValueDigest(ks.db(0), e), "68467c70ae30376e7ce005bcc8827f5ba7fd67dc");
  EXPECT_EQ(ValueDigest(ks.db(0), nullptr), kZeros);
}

// FLUSHALL
// SET n 12345                  (OBJECT ENCODING n -> int)
// DEBUG DIGEST                 -> b5c1d2e75e149529637440c6cd7a1e5c770fb1a3
// DEBUG DIGEST-VALUE n         -> e1cf90774e995ae03de66e8109dc5cb9d9c2dc83
// APPEND n ""                  (OBJECT ENCODING n -> raw)
// DEBUG DIGEST                 -> b5c1d2e75e149529637440c6cd7a1e5c770fb1a3
TEST(Digest, IntegerEncodedDigestsAsDecimalText) {
  Keyspace ks(16);
  Entry* e = ks.Set(0, "n", Value::String("12345"));
  ASSERT_TRUE(e->value.is_int());
  EXPECT_EQ(DatasetDigest(ks), "b5c1d2e75e149529637440c6cd7a1e5c770fb1a3");
  EXPECT_EQ(ValueDigest(ks.db(0), e), "e1cf90774e995ae03de66e8109dc5cb9d9c2dc83");

  e = ks.Set(0, "n", Value::String("12345", /*raw=*/true));
  ASSERT_FALSE(e->value.is_int());
  EXPECT_EQ(DatasetDigest(ks), "b5c1d2e75e149529637440c6cd7a1e5c770fb1a3");
}

// FLUSHALL
// SELECT 0
// SET k1 hello
// SET k2 -9223372036854775808          (int-encoded)
// SET empty ""
// SET "bin\x00key" "a\x00b\xffc\r\n"
// SET long "aaaa...a"                  (100 times 'a')
// SELECT 3
// SET k1 hello
// SET x 42
// SET y 007                            (not an integer: leading zero)
// DEBUG DIGEST                         -> ee5ceb5b3175f2d0a2c2b8b75ec87effa6004dcf
// DEBUG DIGEST-VALUE k1 x y nokey      (in db 3)
// SELECT 0
// DEBUG DIGEST-VALUE k1 k2 empty "bin\x00key" long
TEST(Digest, SeveralKeysInTwoDbs) {
  Keyspace ks(16);
  const std::string bin_key("bin\0key", 7);
  const std::string bin_val = std::string("a\0b\xff", 4) + "c\r\n";
  ks.Set(0, "k1", Value::String("hello"));
  ks.Set(0, "k2", Value::String("-9223372036854775808"));
  ks.Set(0, "empty", Value::String(""));
  ks.Set(0, bin_key, Value::String(bin_val));
  ks.Set(0, "long", Value::String(std::string(100, 'a')));
  ks.Set(3, "k1", Value::String("hello"));
  ks.Set(3, "x", Value::String("42"));
  ks.Set(3, "y", Value::String("007"));
  ASSERT_TRUE(ks.db(0).Find("k2")->value.is_int());
  ASSERT_FALSE(ks.db(3).Find("y")->value.is_int());

  EXPECT_EQ(DatasetDigest(ks), "ee5ceb5b3175f2d0a2c2b8b75ec87effa6004dcf");

  Db& d3 = ks.db(3);
  EXPECT_EQ(ValueDigest(d3, d3.Find("k1")), "36b23a1456b2dce2c3ed252c456761301dba8060");
  EXPECT_EQ(ValueDigest(d3, d3.Find("x")), "547a004a370bc71c2d611f010c52f2e7b64c77a4");
  EXPECT_EQ(ValueDigest(d3, d3.Find("y")), "8e00a8fb3b4e9d75e4004709d98cda64c3823457");
  EXPECT_EQ(ValueDigest(d3, d3.Find("nokey")), kZeros);

  Db& d0 = ks.db(0);
  EXPECT_EQ(ValueDigest(d0, d0.Find("k1")), "36b23a1456b2dce2c3ed252c456761301dba8060");
  EXPECT_EQ(ValueDigest(d0, d0.Find("k2")), "4191566616a6d8b974bba999f8e82b3f2c8dcce0");
  EXPECT_EQ(ValueDigest(d0, d0.Find("empty")), "8b3447c33a834b810e3e181b6fd6a2ee1020921c");
  EXPECT_EQ(ValueDigest(d0, d0.Find(bin_key)), "1be5f109ef037885566b41a174cce1de472dcd4c");
  EXPECT_EQ(ValueDigest(d0, d0.Find("long")), "ee6fc3a95843eb8b4bcad41a55f6b922e267675a");
}

// FLUSHALL
// SELECT 1
// SET foo bar
// DEBUG DIGEST                 -> ca1ca3c163c25b0650d3afe1417fd35e01ab7498
// DEBUG DIGEST-VALUE foo       -> 68467c70ae30376e7ce005bcc8827f5ba7fd67dc
TEST(Digest, DbIndexIsPartOfTheDatasetDigestOnly) {
  Keyspace ks(16);
  Entry* e = ks.Set(1, "foo", Value::String("bar"));
  EXPECT_EQ(DatasetDigest(ks), "ca1ca3c163c25b0650d3afe1417fd35e01ab7498");
  EXPECT_EQ(ValueDigest(ks.db(1), e), "68467c70ae30376e7ce005bcc8827f5ba7fd67dc");
}

// FLUSHALL
// SET plain v
// SET t v
// DEBUG DIGEST                 -> 815e2f40ff79197e4a3f20234cd4d8f6ea2ec496
// EXPIRE t 1000
// DEBUG DIGEST                 -> e806089eaac871e1375855b53c149012022b3546
// DEBUG DIGEST-VALUE t plain   -> 311b17018163335616e089f6b951c82c477335ac
//                                 d79ee9fe5d5ad902d7f6620efc3b07b75ddd742f
// PEXPIREAT t 99999999999999
// DEBUG DIGEST                 -> e806089eaac871e1375855b53c149012022b3546
// DEBUG DIGEST-VALUE t         -> 311b17018163335616e089f6b951c82c477335ac
TEST(Digest, TtlPresenceCountsNotItsValue) {
  Keyspace ks(16);
  Db& d = ks.db(0);
  Entry* plain = ks.Set(0, "plain", Value::String("v"));
  Entry* t = ks.Set(0, "t", Value::String("v"));
  EXPECT_EQ(DatasetDigest(ks), "815e2f40ff79197e4a3f20234cd4d8f6ea2ec496");

  d.SetExpire(t, 1'700'000'000'000);
  EXPECT_EQ(DatasetDigest(ks), "e806089eaac871e1375855b53c149012022b3546");
  EXPECT_EQ(ValueDigest(d, t), "311b17018163335616e089f6b951c82c477335ac");
  EXPECT_EQ(ValueDigest(d, plain), "d79ee9fe5d5ad902d7f6620efc3b07b75ddd742f");

  d.SetExpire(t, 99'999'999'999'999);
  EXPECT_EQ(DatasetDigest(ks), "e806089eaac871e1375855b53c149012022b3546");
  EXPECT_EQ(ValueDigest(d, t), "311b17018163335616e089f6b951c82c477335ac");

  // A TTL already in the past still only counts as present: digests skip lazy expiry.
  d.SetExpire(t, 1);
  EXPECT_EQ(DatasetDigest(ks), "e806089eaac871e1375855b53c149012022b3546");

  d.RemoveExpire(t);
  EXPECT_EQ(DatasetDigest(ks), "815e2f40ff79197e4a3f20234cd4d8f6ea2ec496");
}

TEST(Digest, IndependentOfInsertionOrderAndTableSize) {
  Keyspace a(16), b(16);
  for (int i = 0; i < 500; i++) a.Set(2, "key:" + std::to_string(i), Value::Int(i));
  for (int i = 499; i >= 0; i--) b.Set(2, "key:" + std::to_string(i), Value::Int(i));
  for (int i = 500; i < 1000; i++) b.Set(2, "key:" + std::to_string(i), Value::Int(i));
  for (int i = 500; i < 1000; i++) b.Delete(2, "key:" + std::to_string(i));
  EXPECT_EQ(DatasetDigest(a), DatasetDigest(b));
  b.Set(2, "key:7", Value::Int(8));
  EXPECT_NE(DatasetDigest(a), DatasetDigest(b));
}

// A collection with given (first, second) pairs, to check the per-type digest rules against
// Redis before (and independently of) the real collection types.
class FakeCollection : public Collection {
 public:
  explicit FakeCollection(std::vector<std::pair<std::string, std::string>> items)
      : items_(std::move(items)) {}
  std::unique_ptr<Collection> Clone() const override {
    return std::make_unique<FakeCollection>(items_);
  }
  size_t Size() const override { return items_.size(); }
  void ForEach(const Visitor& fn) const override {
    for (const auto& [a, b] : items_) fn(a, b);
  }
  size_t MemoryUsage() const override { return 0; }
  const char* EncodingName() const override { return "fake"; }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// Expected values from redis-server 7.0.15:
//   RPUSH l a b c; SADD s x y 12; HSET h f1 v1 f2 v2; ZADD z 1.5 m1 2 m2 0.1 m3
//   DEBUG DIGEST-VALUE l s h z
TEST(Digest, CollectionsMatchRedis) {
  Keyspace ks(16);
  auto add = [&](const char* key, ObjType t, std::vector<std::pair<std::string, std::string>> v) {
    return ks.Set(0, key, Value::Object(t, std::make_unique<FakeCollection>(std::move(v))));
  };
  Entry* l = add("l", ObjType::kList, {{"a", ""}, {"b", ""}, {"c", ""}});
  Entry* st = add("s", ObjType::kSet, {{"12", ""}, {"y", ""}, {"x", ""}});  // any order
  Entry* h = add("h", ObjType::kHash, {{"f2", "v2"}, {"f1", "v1"}});
  Entry* z = add("z", ObjType::kZSet, {{"m3", "0.10000000000000001"}, {"m1", "1.5"}, {"m2", "2"}});
  EXPECT_EQ(ValueDigest(ks.db(0), l), "8bf72d812571eea9b927f3c11beb0c4165a6ff89");
  EXPECT_EQ(ValueDigest(ks.db(0), st), "4dd66f11f6066141cbaaab167ff96bcb8c2c5b8a");
  EXPECT_EQ(ValueDigest(ks.db(0), h), "047cc60ea73a34cde6d08a2721a4a26d19ee6570");
  EXPECT_EQ(ValueDigest(ks.db(0), z), "7e9f1d7902d2a777ed82c190d877423e7ee5211f");
}

}  // namespace
}  // namespace kv::store
