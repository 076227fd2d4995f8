// In-process tests of the generic keyspace commands (keys.cc): DEL and its neighbours, RENAME,
// MOVE, COPY, KEYS, RANDOMKEY, DBSIZE, SWAPDB, FLUSHDB/FLUSHALL and SCAN. Keys are created
// directly in the keyspace so that these tests depend on no other command family; time is
// fixed with set_now_ms so that TTL arithmetic is exact. EXPIRE and OBJECT are in
// keys_expire_object_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/command_test_util.h"
#include "cmd/errors.h"
#include "cmd/keys_test_util.h"
#include "common/clock.h"

namespace kv::cmd {
namespace {

using namespace keys_test_util;

const std::string kOk = "+OK\r\n";

// Every bulk string of a reply, in order (array headers and other types are skipped).
std::vector<std::string> BulksOf(std::string_view reply) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < reply.size()) {
    size_t eol = reply.find("\r\n", i);
    if (eol == std::string_view::npos) break;
    if (reply[i] == '$') {
      int64_t len = std::stoll(std::string(reply.substr(i + 1, eol - i - 1)));
      if (len >= 0) {
        out.emplace_back(reply.substr(eol + 2, len));
        i = eol + 2 + len + 2;
        continue;
      }
    }
    i = eol + 2;
  }
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Runs SCAN from cursor 0 until it returns 0; every key returned, in order.
std::vector<std::string> ScanAll(CommandRunner& r, const std::vector<std::string>& opts,
                                 int* calls = nullptr) {
  std::vector<std::string> keys;
  std::string cursor = "0";
  int n = 0;
  do {
    std::vector<std::string> cmd = {"scan", cursor};
    cmd.insert(cmd.end(), opts.begin(), opts.end());
    std::vector<std::string> bulks = BulksOf(r.Run(cmd));
    if (bulks.empty()) break;  // an error reply
    cursor = bulks[0];
    keys.insert(keys.end(), bulks.begin() + 1, bulks.end());
  } while (cursor != "0" && ++n < 1'000'000);
  if (calls) *calls = n + 1;
  return keys;
}

// ---- DEL UNLINK EXISTS TYPE TOUCH --------------------------------------------------------

using KeyCommands = KeysFixture;

TEST_F(KeyCommands, DelCountsDeletedKeysNotifiesAndPropagates) {
  Put("a", "1");
  Put("b", "2");
  EXPECT_EQ(r.Run({"del", "a", "b", "c", "a"}), Int(2));
  EXPECT_EQ(r.ks.db(0).size(), 0u);
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"del", "a"}, {"del", "b"}}));
  EXPECT_EQ(Props(), (std::vector<std::string>{"del", "a", "b", "c", "a"}));
  EXPECT_EQ(r.Run({"del", "a"}), Int(0));
  EXPECT_TRUE(Props().empty());  // nothing changed: not propagated
  EXPECT_EQ(r.Run({"del"}), Err("wrong number of arguments for 'del' command"));
}

TEST_F(KeyCommands, UnlinkDeletesLikeDel) {
  Put("a", "1");
  Put("b", "2", 1);
  EXPECT_EQ(r.Run({"UNLINK", "a", "b"}), Int(1));  // b lives in db 1
  EXPECT_EQ(r.ks.db(0).size(), 0u);
  EXPECT_EQ(r.ks.db(1).size(), 1u);
  EXPECT_EQ(r.Run({"unlink"}), Err("wrong number of arguments for 'unlink' command"));
}

TEST_F(KeyCommands, DelTreatsExpiredKeyAsAbsent) {
  PutWithTtl("old", "v", kNow);  // expires exactly now
  EXPECT_EQ(r.Run({"del", "old"}), Int(0));
  EXPECT_EQ(r.ks.db(0).Find("old"), nullptr);  // removed lazily
  EXPECT_TRUE(r.hooks.events.empty());
}

TEST_F(KeyCommands, ExistsCountsRepeatsHidesExpiredAndCountsStats) {
  Put("a", "1");
  PutWithTtl("gone", "v", kNow - 1);
  PutWithTtl("live", "v", kNow + 1);
  EXPECT_EQ(r.Run({"exists", "a", "a", "nope", "gone", "live"}), Int(3));
  EXPECT_EQ(r.stats.keyspace_hits, 3u);
  EXPECT_EQ(r.stats.keyspace_misses, 2u);
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"keymiss", "nope"}, {"keymiss", "gone"}}));
  EXPECT_EQ(r.Run({"exists"}), Err("wrong number of arguments for 'exists' command"));
}

TEST_F(KeyCommands, TypeNamesEachTypeAndNoneForMissingOrExpired) {
  Put("s", "hello");
  Put("n", "42");
  r.ks.Set(0, "l", List({"x"}));
  PutWithTtl("e", "v", kNow);
  EXPECT_EQ(r.Run({"type", "s"}), "+string\r\n");
  EXPECT_EQ(r.Run({"type", "n"}), "+string\r\n");
  EXPECT_EQ(r.Run({"TYPE", "l"}), "+list\r\n");
  EXPECT_EQ(r.Run({"type", "missing"}), "+none\r\n");
  EXPECT_EQ(r.Run({"type", "e"}), "+none\r\n");
  EXPECT_EQ(r.Run({"type", "a", "b"}), Err("wrong number of arguments for 'type' command"));
}

TEST_F(KeyCommands, TouchCountsExistingKeysAndResetsIdleTime) {
  store::Entry* e = Put("a", "1");
  PutWithTtl("gone", "v", kNow - 5);
  e->access -= 1000;
  EXPECT_EQ(r.Run({"touch", "a", "b", "gone", "a"}), Int(2));
  EXPECT_LE(r.ks.IdleSeconds(e), 1);
  EXPECT_EQ(r.Run({"touch"}), Err("wrong number of arguments for 'touch' command"));
}

// ---- RENAME RENAMENX ---------------------------------------------------------------------

TEST_F(KeyCommands, RenameMovesValueKeepsTtlAndNotifies) {
  PutWithTtl("a", "va", kNow + 5000);
  EXPECT_EQ(r.Run({"rename", "a", "b"}), kOk);
  EXPECT_EQ(ValueOf("a"), "<absent>");
  EXPECT_EQ(ValueOf("b"), "va");
  EXPECT_EQ(ExpireOf("b"), kNow + 5000);
  EXPECT_EQ(r.ks.db(0).expires_size(), 1u);
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"rename_from", "a"}, {"rename_to", "b"}}));
  EXPECT_EQ(r.hooks.modified, (std::vector<std::pair<int, std::string>>{{0, "a"}, {0, "b"}}));
  EXPECT_EQ(Props(), (std::vector<std::string>{"rename", "a", "b"}));
  EXPECT_EQ(r.Run({"pttl", "b"}), Int(5000));
}

TEST_F(KeyCommands, RenameOverwritesTargetAndItsTtl) {
  Put("src", "new");
  PutWithTtl("dst", "old", kNow + 1000);
  EXPECT_EQ(r.Run({"rename", "src", "dst"}), kOk);
  EXPECT_EQ(ValueOf("dst"), "new");
  EXPECT_EQ(ExpireOf("dst"), -1);  // the source had no TTL
  EXPECT_EQ(r.ks.db(0).expires_size(), 0u);
  EXPECT_EQ(r.ks.db(0).size(), 1u);
}

TEST_F(KeyCommands, RenameErrorsAndSameKey) {
  EXPECT_EQ(r.Run({"rename", "nope", "x"}), Err("no such key"));
  EXPECT_EQ(r.Run({"rename", "nope", "nope"}), Err("no such key"));
  PutWithTtl("gone", "v", kNow - 1);
  EXPECT_EQ(r.Run({"rename", "gone", "x"}), Err("no such key"));
  EXPECT_EQ(r.ks.db(0).Find("x"), nullptr);
  PutWithTtl("k", "v", kNow + 100);
  EXPECT_EQ(r.Run({"rename", "k", "k"}), kOk);  // Redis 7.0: allowed, a no-op
  EXPECT_EQ(ValueOf("k"), "v");
  EXPECT_EQ(ExpireOf("k"), kNow + 100);
  EXPECT_TRUE(Props().empty());
  EXPECT_EQ(r.Run({"rename", "k"}), Err("wrong number of arguments for 'rename' command"));
}

TEST_F(KeyCommands, RenameNxOnlyWhenTargetIsAbsent) {
  Put("a", "va");
  Put("b", "vb");
  EXPECT_EQ(r.Run({"renamenx", "a", "b"}), Int(0));
  EXPECT_EQ(ValueOf("a"), "va");
  EXPECT_EQ(ValueOf("b"), "vb");
  EXPECT_TRUE(Props().empty());
  EXPECT_EQ(r.Run({"renamenx", "a", "a"}), Int(0));
  PutWithTtl("stale", "x", kNow - 1);  // an expired target counts as absent
  EXPECT_EQ(r.Run({"renamenx", "a", "stale"}), Int(1));
  EXPECT_EQ(ValueOf("stale"), "va");
  EXPECT_EQ(ExpireOf("stale"), -1);
  EXPECT_EQ(r.Run({"renamenx", "nope", "c"}), Err("no such key"));
}

// ---- MOVE COPY -----------------------------------------------------------------------------

TEST_F(KeyCommands, MoveTransfersKeyWithTtlToOtherDb) {
  PutWithTtl("k", "v", kNow + 9000);
  EXPECT_EQ(r.Run({"move", "k", "3"}), Int(1));
  EXPECT_EQ(r.ks.db(0).size(), 0u);
  EXPECT_EQ(r.ks.db(0).expires_size(), 0u);
  EXPECT_EQ(ValueOf("k", 3), "v");
  EXPECT_EQ(ExpireOf("k", 3), kNow + 9000);
  EXPECT_EQ(r.ks.db(3).expires_size(), 1u);
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"move_from", "k"}, {"move_to", "k"}}));
  EXPECT_EQ(r.hooks.modified, (std::vector<std::pair<int, std::string>>{{0, "k"}, {3, "k"}}));
  EXPECT_EQ(Props(), (std::vector<std::string>{"move", "k", "3"}));
}

TEST_F(KeyCommands, MoveRefusesExistingTargetAndMissingSource) {
  Put("k", "here");
  Put("k", "there", 1);
  EXPECT_EQ(r.Run({"move", "k", "1"}), Int(0));
  EXPECT_EQ(ValueOf("k", 0), "here");
  EXPECT_EQ(ValueOf("k", 1), "there");
  EXPECT_EQ(r.Run({"move", "nope", "1"}), Int(0));
  PutWithTtl("gone", "v", kNow);
  EXPECT_EQ(r.Run({"move", "gone", "1"}), Int(0));
  EXPECT_EQ(r.ks.db(1).Find("gone"), nullptr);
}

TEST_F(KeyCommands, MoveDbIndexErrors) {
  Put("k", "v");
  EXPECT_EQ(r.Run({"move", "k", "0"}), Err("source and destination objects are the same"));
  EXPECT_EQ(r.Run({"move", "k", "16"}), Err("DB index is out of range"));
  EXPECT_EQ(r.Run({"move", "k", "-1"}), Err("DB index is out of range"));
  EXPECT_EQ(r.Run({"move", "k", "x"}), Err("value is not an integer or out of range"));
  EXPECT_EQ(r.Run({"move", "k", "99999999999"}),
            Err("value is out of range, value must between -2147483648 and 2147483647"));
  EXPECT_EQ(r.Run({"move", "k"}), Err("wrong number of arguments for 'move' command"));
  EXPECT_EQ(ValueOf("k"), "v");
}

TEST_F(KeyCommands, CopyClonesValueAndTtl) {
  r.ks.db(0).SetExpire(r.ks.Set(0, "src", List({"a", "b"})), kNow + 7000);
  EXPECT_EQ(r.Run({"copy", "src", "dst"}), Int(1));
  store::Entry* src = r.ks.db(0).Find("src");
  store::Entry* dst = r.ks.db(0).Find("dst");
  ASSERT_NE(dst, nullptr);
  EXPECT_NE(src->value.object(), dst->value.object());  // a deep copy
  src->value.As<FakeList>()->items.push_back("c");
  EXPECT_EQ(dst->value.As<FakeList>()->items, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ExpireOf("dst"), kNow + 7000);
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"copy_to", "dst"}}));
  EXPECT_EQ(Props(), (std::vector<std::string>{"copy", "src", "dst"}));
}

TEST_F(KeyCommands, CopyReplaceAndTargetDb) {
  Put("src", "new");
  PutWithTtl("dst", "old", kNow + 100);
  EXPECT_EQ(r.Run({"copy", "src", "dst"}), Int(0));
  EXPECT_EQ(ValueOf("dst"), "old");
  EXPECT_EQ(r.Run({"copy", "src", "dst", "REPLACE"}), Int(1));
  EXPECT_EQ(ValueOf("dst"), "new");
  EXPECT_EQ(ExpireOf("dst"), -1);  // the source has no TTL
  EXPECT_EQ(r.Run({"copy", "src", "src", "db", "5"}), Int(1));
  EXPECT_EQ(ValueOf("src", 5), "new");
  EXPECT_EQ(r.Run({"copy", "src", "src", "db", "5"}), Int(0));
  EXPECT_EQ(r.Run({"copy", "src", "x", "replace", "db", "5", "replace"}), Int(1));
  EXPECT_EQ(ValueOf("x", 5), "new");
  EXPECT_EQ(r.ks.db(0).Find("x"), nullptr);
  EXPECT_EQ(r.hooks.modified.back(), (std::pair<int, std::string>{5, "x"}));
  EXPECT_EQ(r.Run({"copy", "nope", "y"}), Int(0));
}

TEST_F(KeyCommands, CopyErrors) {
  Put("src", "v");
  EXPECT_EQ(r.Run({"copy", "src", "src"}), Err("source and destination objects are the same"));
  EXPECT_EQ(r.Run({"copy", "src", "src", "db", "0"}),
            Err("source and destination objects are the same"));
  EXPECT_EQ(r.Run({"copy", "src", "d", "db"}), Err("syntax error"));
  EXPECT_EQ(r.Run({"copy", "src", "d", "foo"}), Err("syntax error"));
  EXPECT_EQ(r.Run({"copy", "src", "d", "db", "16"}), Err("DB index is out of range"));
  EXPECT_EQ(r.Run({"copy", "src", "d", "db", "x"}), Err("value is not an integer or out of range"));
  EXPECT_EQ(r.Run({"copy", "src"}), Err("wrong number of arguments for 'copy' command"));
  EXPECT_EQ(r.ks.db(0).size(), 1u);
}

// ---- KEYS RANDOMKEY DBSIZE ---------------------------------------------------------------

TEST_F(KeyCommands, KeysMatchesPatternAndHidesExpiredKeys) {
  Put("user:1", "a");
  Put("user:2", "b");
  Put("item:1", "c");
  PutWithTtl("user:3", "d", kNow);
  EXPECT_EQ(Sorted(BulksOf(r.Run({"keys", "*"}))),
            (std::vector<std::string>{"item:1", "user:1", "user:2"}));
  EXPECT_EQ(Sorted(BulksOf(r.Run({"keys", "user:*"}))),
            (std::vector<std::string>{"user:1", "user:2"}));
  EXPECT_EQ(r.Run({"keys", "item:?"}), "*1\r\n" + Bulk("item:1"));
  EXPECT_EQ(r.Run({"keys", "nomatch*"}), "*0\r\n");
  EXPECT_EQ(r.ks.db(0).size(), 4u);  // hidden, not deleted
  EXPECT_EQ(r.Run({"keys"}), Err("wrong number of arguments for 'keys' command"));
}

TEST_F(KeyCommands, RandomKeySkipsAndDeletesExpiredKeys) {
  EXPECT_EQ(r.Run({"randomkey"}), kNull);
  for (int i = 0; i < 20; i++) PutWithTtl("dead" + std::to_string(i), "v", kNow - 1);
  EXPECT_EQ(r.Run({"randomkey"}), kNull);
  EXPECT_EQ(r.ks.db(0).size(), 0u);
  Put("only", "v");
  for (int i = 0; i < 5; i++) PutWithTtl("dead" + std::to_string(i), "v", kNow - 1);
  EXPECT_EQ(r.Run({"randomkey"}), Bulk("only"));
  EXPECT_EQ(r.Run({"randomkey", "x"}), Err("wrong number of arguments for 'randomkey' command"));
}

TEST_F(KeyCommands, RandomKeyOnReplicaReturnsStaleKeyInsteadOfLooping) {
  r.ks.set_expire_deletes(false);
  PutWithTtl("stale", "v", kNow - 1);
  EXPECT_EQ(r.Run({"randomkey"}), Bulk("stale"));
  EXPECT_EQ(r.ks.db(0).size(), 1u);
}

TEST_F(KeyCommands, DbSizeCountsCurrentDb) {
  EXPECT_EQ(r.Run({"dbsize"}), Int(0));
  Put("a", "1");
  Put("b", "1");
  Put("c", "1", 2);
  EXPECT_EQ(r.Run({"dbsize"}), Int(2));
  r.session.db = 2;
  EXPECT_EQ(r.Run({"DBSIZE"}), Int(1));
}

// ---- SWAPDB FLUSHDB FLUSHALL -------------------------------------------------------------

TEST_F(KeyCommands, SwapDbExchangesContents) {
  PutWithTtl("a", "in0", kNow + 50);
  Put("b", "in1", 1);
  EXPECT_EQ(r.Run({"swapdb", "0", "1"}), kOk);
  EXPECT_EQ(r.session.db, 0);
  EXPECT_EQ(ValueOf("b", 0), "in1");
  EXPECT_EQ(ValueOf("a", 1), "in0");
  EXPECT_EQ(ExpireOf("a", 1), kNow + 50);
  EXPECT_EQ(Props(), (std::vector<std::string>{"swapdb", "0", "1"}));
  EXPECT_EQ(r.Run({"swapdb", "1", "1"}), kOk);
  EXPECT_EQ(Props(), (std::vector<std::string>{"swapdb", "1", "1"}));
  // The server hears of both dbs taking the other's keys, before the swap (its watchers of
  // either are invalidated as Redis' touchAllWatchedKeysInDb decides), and of db 1 once.
  EXPECT_EQ(r.hooks.replaced, (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}, {1, 1}}));
}

TEST_F(KeyCommands, SwapDbErrors) {
  EXPECT_EQ(r.Run({"swapdb", "x", "1"}), Err("invalid first DB index"));
  EXPECT_EQ(r.Run({"swapdb", "99999999999", "1"}), Err("invalid first DB index"));
  EXPECT_EQ(r.Run({"swapdb", "0", "y"}), Err("invalid second DB index"));
  EXPECT_EQ(r.Run({"swapdb", "0", "16"}), Err("DB index is out of range"));
  EXPECT_EQ(r.Run({"swapdb", "-1", "0"}), Err("DB index is out of range"));
  EXPECT_EQ(r.Run({"swapdb", "0"}), Err("wrong number of arguments for 'swapdb' command"));
}

TEST_F(KeyCommands, FlushDbClearsOnlyCurrentDb) {
  Put("a", "1");
  PutWithTtl("b", "1", kNow + 10);
  Put("c", "1", 1);
  EXPECT_EQ(r.Run({"flushdb"}), kOk);
  EXPECT_EQ(r.ks.db(0).size(), 0u);
  EXPECT_EQ(r.ks.db(0).expires_size(), 0u);
  EXPECT_EQ(r.ks.db(1).size(), 1u);
  EXPECT_EQ(r.hooks.replaced, (std::vector<std::pair<int, int>>{{0, -1}}));
  EXPECT_EQ(Props(), (std::vector<std::string>{"flushdb"}));
  EXPECT_EQ(r.Run({"flushdb", "ASYNC"}), kOk);  // an empty db is still propagated
  EXPECT_EQ(Props(), (std::vector<std::string>{"flushdb", "ASYNC"}));
  EXPECT_EQ(r.Run({"flushdb", "sync"}), kOk);
  EXPECT_EQ(r.Run({"flushdb", "now"}), Err("syntax error"));
  EXPECT_EQ(r.Run({"flushdb", "async", "sync"}), Err("syntax error"));
}

TEST_F(KeyCommands, FlushAllClearsEveryDb) {
  Put("a", "1");
  Put("c", "1", 15);
  EXPECT_EQ(r.Run({"flushall", "async"}), kOk);
  EXPECT_EQ(r.ks.TotalKeys(), 0u);
  EXPECT_EQ(Props(), (std::vector<std::string>{"flushall", "async"}));
  EXPECT_EQ(r.Run({"flushall"}), kOk);
  EXPECT_EQ(Props(), (std::vector<std::string>{"flushall"}));
  EXPECT_EQ(r.Run({"flushall", "x"}), Err("syntax error"));
}

// ---- the command table ---------------------------------------------------------------------

TEST_F(KeyCommands, RegisteredWithRedisKeySpecsAndFlags) {
  struct Want {
    const char* name;
    int arity, first, last, step;
    uint32_t flags;
  };
  const Want wants[] = {
      {"del", -2, 1, -1, 1, kWrite},
      {"unlink", -2, 1, -1, 1, kWrite | kFast},
      {"exists", -2, 1, -1, 1, kReadOnly | kFast},
      {"rename", 3, 1, 2, 1, kWrite},
      {"renamenx", 3, 1, 2, 1, kWrite | kFast},
      {"copy", -3, 1, 2, 1, kWrite | kDenyOom},
      {"move", 3, 1, 1, 1, kWrite | kFast},
      {"keys", 2, 0, 0, 0, kReadOnly},
      {"scan", -2, 0, 0, 0, kReadOnly | kTouchesArbitraryKeys},
      {"swapdb", 3, 0, 0, 0, kWrite | kFast},
      {"expire", -3, 1, 1, 1, kWrite | kFast},
      {"pexpiretime", 2, 1, 1, 1, kReadOnly | kFast},
      {"flushall", -1, 0, 0, 0, kWrite},
      {"touch", -2, 1, -1, 1, kReadOnly | kFast},
  };
  for (const Want& w : wants) {
    const CommandSpec* s = r.table.Find(w.name);
    ASSERT_NE(s, nullptr) << w.name;
    EXPECT_EQ(s->arity, w.arity) << w.name;
    EXPECT_EQ(s->first_key, w.first) << w.name;
    EXPECT_EQ(s->last_key, w.last) << w.name;
    EXPECT_EQ(s->key_step, w.step) << w.name;
    EXPECT_EQ(s->flags, w.flags) << w.name;
    EXPECT_FALSE(s->summary.empty()) << w.name;
  }
  EXPECT_EQ(r.table.Find("flushdb")->group, "server");
  EXPECT_EQ(r.table.Find("ttl")->group, "keyspace");
  EXPECT_EQ(r.table.Find("del")->KeyIndexes(4), (std::vector<int>{1, 2, 3}));
  const CommandSpec* obj = r.table.Find("object");
  ASSERT_NE(obj, nullptr);
  EXPECT_EQ(obj->subcommands.size(), 5u);
  const CommandSpec* enc = obj->FindSub("ENCODING");
  ASSERT_NE(enc, nullptr);
  EXPECT_EQ(enc->name, "object|encoding");
  EXPECT_EQ(enc->KeyIndexes(3), (std::vector<int>{2}));
}

// ---- SCAN ----------------------------------------------------------------------------------

using ScanCommand = KeysFixture;

TEST_F(ScanCommand, FullIterationReturnsEveryKeyExactlyOnceLikeKeys) {
  for (int i = 0; i < 1000; i++) Put("key:" + std::to_string(i), "v");
  int calls = 0;
  std::vector<std::string> scanned = Sorted(ScanAll(r, {"count", "7"}, &calls));
  EXPECT_EQ(scanned, Sorted(BulksOf(r.Run({"keys", "*"}))));
  EXPECT_EQ(scanned.size(), 1000u);
  EXPECT_EQ(std::adjacent_find(scanned.begin(), scanned.end()), scanned.end());
  EXPECT_GT(calls, 10);  // COUNT bounds each call
}

TEST_F(ScanCommand, KeysPresentThroughoutAreReturnedDespiteGrowth) {
  for (int i = 0; i < 100; i++) Put("orig:" + std::to_string(i), "v");
  std::set<std::string> seen;
  std::string cursor = "0";
  size_t buckets_before = r.ks.db(0).table().bucket_count();
  int added = 0;
  bool saw_rehash = false;
  do {
    std::vector<std::string> bulks = BulksOf(r.Run({"scan", cursor, "COUNT", "5"}));
    ASSERT_FALSE(bulks.empty());
    cursor = bulks[0];
    seen.insert(bulks.begin() + 1, bulks.end());
    // Grow the table between the first calls so that it resizes (and rehashes) mid-scan.
    for (int j = 0; j < 40 && added < 600; j++) Put("new:" + std::to_string(added++), "v");
    saw_rehash |= r.ks.db(0).table().rehashing();
  } while (cursor != "0");
  EXPECT_TRUE(saw_rehash);
  EXPECT_GT(r.ks.db(0).table().bucket_count(), buckets_before);
  for (int i = 0; i < 100; i++) EXPECT_TRUE(seen.count("orig:" + std::to_string(i))) << i;
}

TEST_F(ScanCommand, MatchAndTypeFilter) {
  for (int i = 0; i < 30; i++) Put("user:" + std::to_string(i), "v");
  for (int i = 0; i < 10; i++) r.ks.Set(0, "list:" + std::to_string(i), List({"x"}));
  Put("other", "v");
  std::vector<std::string> users = ScanAll(r, {"match", "user:*"});
  EXPECT_EQ(users.size(), 30u);
  for (const std::string& k : users) EXPECT_EQ(k.rfind("user:", 0), 0u) << k;
  EXPECT_EQ(Sorted(ScanAll(r, {"TYPE", "list"})), Sorted(BulksOf(r.Run({"keys", "list:*"}))));
  EXPECT_EQ(ScanAll(r, {"type", "LIST", "match", "list:1*"}), std::vector<std::string>{"list:1"});
  EXPECT_EQ(ScanAll(r, {"type", "string", "count", "1000"}).size(), 31u);
  EXPECT_TRUE(ScanAll(r, {"type", "nosuchtype"}).empty());
  EXPECT_EQ(ScanAll(r, {"match", "*", "count", "1000"}).size(), 41u);
  EXPECT_TRUE(ScanAll(r, {"match", ""}).empty());  // an empty pattern matches only ""
  Put("", "v");
  EXPECT_EQ(ScanAll(r, {"match", ""}), std::vector<std::string>{""});
}

TEST_F(ScanCommand, ExpiredKeysAreNotReturnedAndAreDeleted) {
  Put("live", "v");
  for (int i = 0; i < 10; i++) PutWithTtl("dead" + std::to_string(i), "v", kNow - 1);
  EXPECT_EQ(ScanAll(r, {"count", "100"}), std::vector<std::string>{"live"});
  EXPECT_EQ(r.ks.db(0).size(), 1u);
}

TEST_F(ScanCommand, EmptyDbAndReplyShape) {
  EXPECT_EQ(r.Run({"scan", "0"}), "*2\r\n" + Bulk("0") + "*0\r\n");
  Put("k", "v");
  EXPECT_EQ(r.Run({"scan", "0"}), "*2\r\n" + Bulk("0") + "*1\r\n" + Bulk("k"));
  // strtoul-like cursors are accepted, as in Redis.
  EXPECT_EQ(r.Run({"scan", "+0"}), "*2\r\n" + Bulk("0") + "*1\r\n" + Bulk("k"));
  EXPECT_EQ(r.Run({"scan", "00"}), "*2\r\n" + Bulk("0") + "*1\r\n" + Bulk("k"));
}

TEST_F(ScanCommand, Errors) {
  EXPECT_EQ(r.Run({"scan", "abc"}), Err("invalid cursor"));
  EXPECT_EQ(r.Run({"scan", " 1"}), Err("invalid cursor"));
  EXPECT_EQ(r.Run({"scan", "1x"}), Err("invalid cursor"));
  EXPECT_EQ(r.Run({"scan", "99999999999999999999999"}), Err("invalid cursor"));
  EXPECT_EQ(r.Run({"scan", "x", "count", "0"}), Err("invalid cursor"));  // the cursor first
  EXPECT_EQ(r.Run({"scan", "0", "count", "0"}), Err("syntax error"));
  EXPECT_EQ(r.Run({"scan", "0", "count", "-5"}), Err("syntax error"));
  EXPECT_EQ(r.Run({"scan", "0", "count", "x"}), Err("value is not an integer or out of range"));
  EXPECT_EQ(r.Run({"scan", "0", "match"}), Err("syntax error"));
  EXPECT_EQ(r.Run({"scan", "0", "type"}), Err("syntax error"));
  EXPECT_EQ(r.Run({"scan", "0", "foo", "bar"}), Err("syntax error"));
  EXPECT_EQ(r.Run({"scan"}), Err("wrong number of arguments for 'scan' command"));
}

}  // namespace
}  // namespace kv::cmd
