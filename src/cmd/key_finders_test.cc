// Unit tests of the movable-key finders and of how the command table carries them. The e2e
// CommandTest.GetKeysMovableMatchesRedis compares the same cases with redis-server itself.
#include "cmd/key_finders.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cmd/command_test_util.h"
#include "cmd/key_spec.h"

namespace kv::cmd {
namespace {

using Keys = std::vector<int>;

Keys Find(KeyFinder f, std::vector<std::string_view> args) { return f(args); }

TEST(KeyFinders, NumkeysFirst) {
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "2", "a", "b", "weights", "1", "2"}), (Keys{2, 3}));
  EXPECT_EQ(Find(NumkeysAt1Keys, {"lmpop", "1", "a", "left"}), (Keys{2}));
  EXPECT_EQ(Find(NumkeysAt1Keys, {"lmpop", "3", "a", "b", "c"}), (Keys{2, 3, 4}));
  // numkeys past the end, zero or negative: no keys (the command answers an error).
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "3", "a", "b"}), Keys{});
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "0", "a"}), Keys{});
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "-1", "a"}), Keys{});
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "x", "a"}), Keys{});
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "9223372036854775807", "a"}), Keys{});
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "4294967295", "a"}), Keys{});
  // Redis narrows a string2ll numkeys to int: 2^32 + 1 reads as 1.
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "4294967297", "a", "b"}), (Keys{2}));
  // Not an integer to string2ll but one to atoi: Redis' legacy fallback still finds keys.
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "02", "a", "b"}), (Keys{2, 3}));
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", " 1x", "a", "b"}), (Keys{2}));
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "+2", "a", "b"}), (Keys{2, 3}));
}

TEST(KeyFinders, NumkeysAfterTimeout) {
  EXPECT_EQ(Find(NumkeysAt2Keys, {"blmpop", "0", "2", "a", "b", "left"}), (Keys{3, 4}));
  EXPECT_EQ(Find(NumkeysAt2Keys, {"bzmpop", "1.5", "1", "a", "min"}), (Keys{3}));
  EXPECT_EQ(Find(NumkeysAt2Keys, {"bzmpop", "0", "3", "a", "min"}), Keys{});
}

TEST(KeyFinders, DestinationOrderDependsOnThePath) {
  // Key specs: the destination first.
  EXPECT_EQ(Find(StoreNumkeysKeys, {"zunionstore", "d", "2", "a", "b"}), (Keys{1, 3, 4}));
  // The legacy fallback puts it last, as Redis' genericGetKeys does.
  EXPECT_EQ(Find(StoreNumkeysKeys, {"zunionstore", "d", "02", "a", "b"}), (Keys{3, 4, 1}));
  EXPECT_EQ(Find(StoreNumkeysKeys, {"zunionstore", "d", "0", "a"}), Keys{});
  EXPECT_EQ(Find(StoreNumkeysKeys, {"zunionstore", "d", "2", "a"}), Keys{});
}

TEST(KeyFinders, Sort) {
  EXPECT_EQ(Find(SortKeys, {"sort", "k"}), (Keys{1}));
  EXPECT_EQ(Find(SortKeys, {"sort", "k", "store", "d"}), (Keys{1, 3}));
  EXPECT_EQ(Find(SortKeys, {"sort", "k", "STORE", "d", "store", "e"}), (Keys{1, 5}));
  EXPECT_EQ(Find(SortKeys, {"sort", "k", "get", "store", "by", "store"}), (Keys{1}));
  EXPECT_EQ(Find(SortKeys, {"sort", "k", "limit", "store", "x", "store"}), (Keys{1}));
  EXPECT_EQ(Find(SortKeys, {"sort", "k", "store"}), (Keys{1}));
  EXPECT_EQ(Find(SortRoKeys, {"sort_ro", "k", "store", "d"}), (Keys{1}));
  EXPECT_EQ(Find(GeoradiusKeys, {"georadius", "k", "1", "2", "3", "km"}), (Keys{1}));
  EXPECT_EQ(
      Find(GeoradiusKeys, {"georadius", "k", "1", "2", "3", "km", "STORE", "a", "storedist", "b"}),
      (Keys{1, 9}));
  EXPECT_EQ(Find(GeoradiusKeys, {"georadiusbymember", "k", "m", "3", "km", "store", "a"}),
            (Keys{1, 6}));
  EXPECT_EQ(Find(GeoradiusKeys, {"georadius", "k", "1", "2", "3", "km", "store"}), (Keys{1}));
}

TEST(KeyFinders, TableMarksMovableCommands) {
  CommandRunner r;
  for (const char* name : {"lmpop", "blmpop", "zmpop", "bzmpop", "zunion", "zinter", "zdiff",
                           "zunionstore", "zinterstore", "zdiffstore", "zintercard", "sintercard",
                           "sort", "sort_ro", "georadius", "georadiusbymember"}) {
    const CommandSpec* s = r.table.Find(name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_NE(s->getkeys, nullptr) << name;
    EXPECT_TRUE(s->flags & kMovableKeys) << name;
    EXPECT_TRUE(s->HasKeys()) << name;
  }
  for (const CommandSpec* s : r.table.all()) {
    EXPECT_EQ(s->getkeys != nullptr, (s->flags & kMovableKeys) != 0) << s->name;
  }
  std::vector<std::string_view> args = {"zinterstore", "d", "1", "a"};
  EXPECT_EQ(r.table.Find("zinterstore")->FindKeys(args), (Keys{1, 3}));
  args = {"mset", "a", "1", "b", "2"};
  EXPECT_EQ(r.table.Find("mset")->FindKeys(args), (Keys{1, 3}));
  EXPECT_EQ(FlagNames(kWrite | kNoMulti | kMovableKeys | kAllowBusy),
            (std::vector<std::string_view>{"write", "no_multi", "movablekeys", "allow_busy"}));
}

// Key specs evaluated as Redis' getKeysUsingKeySpecs; every data command's specs find the keys
// its finder or legacy range finds when they answer.
TEST(KeySpecs, EvaluateAsRedis) {
  CommandRunner r;
  auto specs = [&](const char* name) { return std::span(r.table.Find(name)->key_specs); };
  using Refs = std::vector<KeyRef>;
  std::vector<std::string_view> args = {"zunionstore", "d", "2", "a", "b", "weights", "1", "2"};
  EXPECT_EQ(KeysFromSpecs(specs("zunionstore"), args),
            (Refs{{1, kKeyOW | kKeyUpdate}, {3, kKeyRO | kKeyAccess}, {4, kKeyRO | kKeyAccess}}));
  args = {"zunionstore", "d", "02", "a", "b"};  // not an integer to string2ll
  EXPECT_EQ(KeysFromSpecs(specs("zunionstore"), args), std::nullopt);
  args = {"blpop", "a", "b", "0"};
  EXPECT_EQ(KeysFromSpecs(specs("blpop"), args)->size(), 2u);
  args = {"mset", "a", "1", "b", "2"};
  EXPECT_EQ(KeysFromSpecs(specs("mset"), args),
            (Refs{{1, kKeyOW | kKeyUpdate}, {3, kKeyOW | kKeyUpdate}}));
  args = {"sort", "k"};  // incomplete specs: the finder answers
  EXPECT_EQ(KeysFromSpecs(specs("sort"), args), std::nullopt);
  // A keyword search and a range with a limit: XREAD's spec (no command kvstore has uses them).
  const KeySpec kw[] = {{kKeyRO, BeginKeyword("STREAMS", 1), Range(-1, 1, 2)}};
  args = {"xread", "count", "2", "streams", "a", "b", "0", "0"};
  EXPECT_EQ(KeysFromSpecs(kw, args), (Refs{{4, kKeyRO}, {5, kKeyRO}}));
  EXPECT_EQ(KeyFlagNames(kKeyRW | kKeyAccess | kKeyDelete),
            (std::vector<std::string_view>{"RW", "access", "delete"}));
  for (const CommandSpec* s : r.table.all()) {
    if (s->key_specs.empty() || s->getkeys) continue;
    std::vector<std::string> owned = {s->name};
    for (int i = 1; i < std::abs(s->arity); i++) owned.push_back("k" + std::to_string(i));
    std::vector<std::string_view> a(owned.begin(), owned.end());
    auto keys = KeysFromSpecs(s->key_specs, a);
    if (!keys) continue;  // variable flags (SET)
    Keys idx;
    for (const KeyRef& k : *keys) idx.push_back(k.index);
    EXPECT_EQ(idx, s->FindKeys(a)) << s->name;
  }
}

// Counts at the edges of int and int64 (CVE-2023-36824 class: redis-server 7.0.15 itself crashes
// on COMMAND GETKEYS with numkeys 2147483647): never a key past the arguments, nor an overflow.
TEST(KeySpecs, NumkeysAtTheEdgesFindNothingPastTheArguments) {
  const KeySpec eval[] = {{kKeyRW, BeginIndex(2), KeyNum(0, 1, 1)}};  // EVAL script numkeys ...
  using Refs = std::vector<KeyRef>;
  for (const char* n : {"2147483647", "2147483648", "-2147483648", "-2147483647", "4294967295",
                        "4294967296", "9223372036854775807", "-9223372036854775808", "-1", "3"}) {
    std::vector<std::string_view> args = {"eval", "s", n, "a", "b"};
    auto keys = KeysFromSpecs(eval, args);
    EXPECT_EQ(keys, std::nullopt) << n;
    EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", n, "a", "b"}), Keys{}) << n;
    EXPECT_EQ(Find(NumkeysAt2Keys, {"blmpop", "0", n, "a", "left"}), Keys{}) << n;
    EXPECT_EQ(Find(StoreNumkeysKeys, {"zunionstore", "d", n, "a"}), Keys{}) << n;
  }
  // Narrowed to int as Redis does: 2^32 + 2 is 2, -(2^32 - 1) is 1.
  std::vector<std::string_view> args = {"eval", "s", "4294967298", "a", "b"};
  EXPECT_EQ(KeysFromSpecs(eval, args), (Refs{{3, kKeyRW}, {4, kKeyRW}}));
  args = {"eval", "s", "-4294967295", "a", "b"};
  EXPECT_EQ(KeysFromSpecs(eval, args), std::nullopt);  // negative to string2ll: not a count
  EXPECT_EQ(Find(NumkeysAt1Keys, {"zunion", "-4294967295", "a", "b"}), (Keys{2}));  // atoi: 1
}

}  // namespace
}  // namespace kv::cmd
