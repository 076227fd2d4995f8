// In-process tests of the generic keyspace commands (keys.cc, expire.cc). Keys are created
// directly in the keyspace so that these tests depend on no other command family; time is fixed
// with set_now_ms so that TTL arithmetic is exact.
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
#include "common/clock.h"

namespace kv::cmd {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;  // a fixed "current" time in ms

// A stand-in collection so that TYPE, SCAN TYPE, OBJECT ENCODING and COPY can be tested before
// the collection families exist.
class FakeList : public store::Collection {
 public:
  explicit FakeList(std::vector<std::string> items) : items(std::move(items)) {}
  std::unique_ptr<store::Collection> Clone() const override {
    return std::make_unique<FakeList>(items);
  }
  size_t MemoryUsage() const override { return 0; }
  const char* EncodingName() const override { return "quicklist"; }
  size_t Size() const override { return items.size(); }
  void ForEach(const Visitor& fn) const override {
    for (const auto& i : items) fn(i, "");
  }
  std::vector<std::string> items;
};

store::Value List(std::vector<std::string> items) {
  return store::Value::Object(store::ObjType::kList, std::make_unique<FakeList>(std::move(items)));
}

std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
std::string Err(std::string_view msg) { return "-ERR " + std::string(msg) + "\r\n"; }
const std::string kOk = "+OK\r\n";
const std::string kNull = "$-1\r\n";

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

class KeysFixture : public ::testing::Test {
 protected:
  KeysFixture() { r.set_now_ms(kNow); }

  store::Entry* Put(std::string_view key, std::string_view value, int db = 0) {
    return r.ks.Set(db, key, store::Value::String(value));
  }
  store::Entry* PutWithTtl(std::string_view key, std::string_view value, int64_t when_ms,
                           int db = 0) {
    store::Entry* e = Put(key, value, db);
    r.ks.db(db).SetExpire(e, when_ms);
    return e;
  }
  // Raw TTL of a key, ignoring expiry: -2 absent, -1 none, else the absolute ms.
  int64_t ExpireOf(std::string_view key, int db = 0) {
    store::Entry* e = r.ks.db(db).Find(key);
    return e ? r.ks.db(db).GetExpire(e) : -2;
  }
  std::string ValueOf(std::string_view key, int db = 0) {
    store::Entry* e = r.ks.db(db).Find(key);
    return e ? e->value.ToString() : "<absent>";
  }
  std::vector<std::string> Props() const { return r.last_propagated(); }

  CommandRunner r;
};

using Event = std::pair<std::string, std::string>;

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
  // Watchers of either db are invalidated for keys of both.
  std::set<std::pair<int, std::string>> modified(r.hooks.modified.begin(), r.hooks.modified.end());
  EXPECT_TRUE(modified.count({0, "a"}) && modified.count({1, "a"}) && modified.count({0, "b"}) &&
              modified.count({1, "b"}));
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
  EXPECT_EQ(r.hooks.modified.size(), 2u);
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
      {"scan", -2, 0, 0, 0, kReadOnly},
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

// ---- EXPIRE family -------------------------------------------------------------------------

using ExpireCommands = KeysFixture;

TEST_F(ExpireCommands, RelativeExpiresSetTtlAndPropagateAbsolutePexpireat) {
  Put("k", "v");
  EXPECT_EQ(r.Run({"expire", "k", "100"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 100'000);
  EXPECT_EQ(Props(), (std::vector<std::string>{"PEXPIREAT", "k", std::to_string(kNow + 100'000)}));
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"expire", "k"}}));
  EXPECT_EQ(r.Run({"pexpire", "k", "1500", "xx"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 1500);
  EXPECT_EQ(Props(),
            (std::vector<std::string>{"PEXPIREAT", "k", std::to_string(kNow + 1500), "xx"}));
}

TEST_F(ExpireCommands, AbsoluteExpires) {
  Put("k", "v");
  int64_t at_s = kNow / 1000 + 50;
  EXPECT_EQ(r.Run({"expireat", "k", std::to_string(at_s)}), Int(1));
  EXPECT_EQ(ExpireOf("k"), at_s * 1000);
  EXPECT_EQ(Props(), (std::vector<std::string>{"PEXPIREAT", "k", std::to_string(at_s * 1000)}));
  EXPECT_EQ(r.Run({"pexpireat", "k", std::to_string(kNow + 1)}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 1);
  EXPECT_EQ(Props(), (std::vector<std::string>{"pexpireat", "k", std::to_string(kNow + 1)}));
  EXPECT_EQ(r.Run({"expire", "missing", "10"}), Int(0));
  EXPECT_TRUE(Props().empty());
}

TEST_F(ExpireCommands, TimeInThePastDeletesAndPropagatesDel) {
  Put("a", "v");
  Put("b", "v");
  Put("c", "v");
  EXPECT_EQ(r.Run({"expire", "a", "-1"}), Int(1));
  EXPECT_EQ(r.ks.db(0).Find("a"), nullptr);
  EXPECT_EQ(Props(), (std::vector<std::string>{"DEL", "a"}));
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"del", "a"}}));
  EXPECT_EQ(r.Run({"expireat", "b", "0"}), Int(1));
  EXPECT_EQ(r.ks.db(0).Find("b"), nullptr);
  EXPECT_EQ(r.Run({"pexpireat", "c", std::to_string(kNow)}), Int(1));  // now counts as past
  EXPECT_EQ(r.ks.db(0).Find("c"), nullptr);
  EXPECT_EQ(Props(), (std::vector<std::string>{"DEL", "c"}));
}

TEST_F(ExpireCommands, NxXxGtLtConditions) {
  Put("k", "v");  // no TTL: NX and LT succeed, XX and GT fail
  EXPECT_EQ(r.Run({"expire", "k", "100", "xx"}), Int(0));
  EXPECT_EQ(r.Run({"expire", "k", "100", "gt"}), Int(0));
  EXPECT_TRUE(Props().empty());
  EXPECT_EQ(r.Run({"expire", "k", "100", "lt"}), Int(1));
  EXPECT_EQ(r.Run({"expire", "k", "200", "NX"}), Int(0));  // now it has a TTL
  EXPECT_EQ(ExpireOf("k"), kNow + 100'000);
  EXPECT_EQ(r.Run({"expire", "k", "100", "gt"}), Int(0));  // equal is not greater
  EXPECT_EQ(r.Run({"expire", "k", "100", "lt"}), Int(0));  // equal is not less
  EXPECT_EQ(r.Run({"expire", "k", "200", "gt", "xx"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 200'000);
  EXPECT_EQ(r.Run({"expire", "k", "300", "lt"}), Int(0));
  EXPECT_EQ(r.Run({"expire", "k", "50", "LT", "XX"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 50'000);
  Put("n", "v");
  EXPECT_EQ(r.Run({"expire", "n", "10", "nx"}), Int(1));
  EXPECT_EQ(ExpireOf("n"), kNow + 10'000);
}

TEST_F(ExpireCommands, OptionAndNumberErrors) {
  Put("k", "v");
  const std::string incompatible =
      "NX and XX, GT or LT options at the same time are not compatible";
  EXPECT_EQ(r.Run({"expire", "k", "10", "nx", "xx"}), Err(incompatible));
  EXPECT_EQ(r.Run({"expire", "k", "10", "gt", "nx"}), Err(incompatible));
  EXPECT_EQ(r.Run({"expire", "k", "10", "nx", "lt"}), Err(incompatible));
  EXPECT_EQ(r.Run({"expire", "k", "10", "gt", "lt"}),
            Err("GT and LT options at the same time are not compatible"));
  EXPECT_EQ(r.Run({"expire", "k", "10", "foo"}), Err("Unsupported option foo"));
  EXPECT_EQ(r.Run({"expire", "k", "x", "foo"}), Err("Unsupported option foo"));  // options first
  EXPECT_EQ(r.Run({"expire", "k", "1.5"}), Err("value is not an integer or out of range"));
  EXPECT_EQ(r.Run({"expire", "nokey", "x"}), Err("value is not an integer or out of range"));
  EXPECT_EQ(r.Run({"expire", "k", "9223372036854775807"}),
            Err("invalid expire time in 'expire' command"));
  EXPECT_EQ(r.Run({"expire", "k", "-9223372036854775808"}),
            Err("invalid expire time in 'expire' command"));
  EXPECT_EQ(r.Run({"pexpire", "k", "9223372036854775807"}),
            Err("invalid expire time in 'pexpire' command"));
  EXPECT_EQ(r.Run({"expireat", "k", "9223372036854775807"}),
            Err("invalid expire time in 'expireat' command"));
  EXPECT_EQ(r.Run({"expire", "k"}), Err("wrong number of arguments for 'expire' command"));
  EXPECT_EQ(ExpireOf("k"), -1);
  EXPECT_EQ(r.Run({"pexpireat", "k", "9223372036854775807"}), Int(1));  // no overflow
  EXPECT_EQ(ExpireOf("k"), INT64_MAX);
}

TEST_F(ExpireCommands, TtlFamilyAndTimePassing) {
  EXPECT_EQ(r.Run({"ttl", "missing"}), Int(-2));
  EXPECT_EQ(r.Run({"pttl", "missing"}), Int(-2));
  EXPECT_EQ(r.Run({"expiretime", "missing"}), Int(-2));
  EXPECT_EQ(r.Run({"pexpiretime", "missing"}), Int(-2));
  Put("p", "v");
  EXPECT_EQ(r.Run({"ttl", "p"}), Int(-1));
  EXPECT_EQ(r.Run({"pttl", "p"}), Int(-1));
  EXPECT_EQ(r.Run({"expiretime", "p"}), Int(-1));
  EXPECT_EQ(r.Run({"pexpiretime", "p"}), Int(-1));
  PutWithTtl("k", "v", kNow + 1500);
  EXPECT_EQ(r.Run({"pttl", "k"}), Int(1500));
  EXPECT_EQ(r.Run({"ttl", "k"}), Int(2));  // rounded to the nearest second
  EXPECT_EQ(r.Run({"pexpiretime", "k"}), Int(kNow + 1500));
  EXPECT_EQ(r.Run({"expiretime", "k"}), Int((kNow + 1500 + 500) / 1000));
  r.set_now_ms(kNow + 1);
  EXPECT_EQ(r.Run({"ttl", "k"}), Int(1));  // 1499 ms rounds down
  r.set_now_ms(kNow + 1499);
  EXPECT_EQ(r.Run({"pttl", "k"}), Int(1));
  r.set_now_ms(kNow + 1500);
  EXPECT_EQ(r.Run({"pttl", "k"}), Int(-2));
  EXPECT_EQ(r.ks.db(0).Find("k"), nullptr);
  EXPECT_EQ(r.Run({"ttl"}), Err("wrong number of arguments for 'ttl' command"));
}

TEST_F(ExpireCommands, PersistRemovesTtl) {
  PutWithTtl("k", "v", kNow + 100);
  Put("p", "v");
  PutWithTtl("gone", "v", kNow - 1);
  EXPECT_EQ(r.Run({"persist", "k"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), -1);
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"persist", "k"}}));
  EXPECT_EQ(Props(), (std::vector<std::string>{"persist", "k"}));
  EXPECT_EQ(r.Run({"persist", "k"}), Int(0));
  EXPECT_TRUE(Props().empty());
  EXPECT_EQ(r.Run({"persist", "p"}), Int(0));
  EXPECT_EQ(r.Run({"persist", "missing"}), Int(0));
  EXPECT_EQ(r.Run({"persist", "gone"}), Int(0));
  EXPECT_EQ(r.ks.db(0).Find("gone"), nullptr);
}

// ---- OBJECT --------------------------------------------------------------------------------

using ObjectCommand = KeysFixture;

TEST_F(ObjectCommand, EncodingOfEachRepresentation) {
  Put("i", "12345");
  Put("e", "short string");
  Put("r", std::string(45, 'x'));
  r.ks.Set(0, "l", List({}));
  EXPECT_EQ(r.Run({"object", "encoding", "i"}), Bulk("int"));
  EXPECT_EQ(r.Run({"OBJECT", "ENCODING", "e"}), Bulk("embstr"));
  EXPECT_EQ(r.Run({"object", "encoding", "r"}), Bulk("raw"));
  EXPECT_EQ(r.Run({"object", "encoding", "l"}), Bulk("quicklist"));
  EXPECT_EQ(r.Run({"object", "encoding", "missing"}), kNull);
  EXPECT_TRUE(r.hooks.events.empty());  // OBJECT raises no keymiss event
}

TEST_F(ObjectCommand, RefCountReportsSharedIntegers) {
  Put("zero", "0");
  Put("small", "9999");
  Put("big", "10000");
  Put("neg", "-1");
  Put("str", "abc");
  EXPECT_EQ(r.Run({"object", "refcount", "zero"}), Int(INT_MAX));
  EXPECT_EQ(r.Run({"object", "refcount", "small"}), Int(INT_MAX));
  EXPECT_EQ(r.Run({"object", "refcount", "big"}), Int(1));
  EXPECT_EQ(r.Run({"object", "refcount", "neg"}), Int(1));
  EXPECT_EQ(r.Run({"object", "refcount", "str"}), Int(1));
  EXPECT_EQ(r.Run({"object", "refcount", "missing"}), kNull);
}

TEST_F(ObjectCommand, IdleTimeIsNotResetByIntrospection) {
  store::Entry* e = Put("k", "v");
  e->access = static_cast<uint32_t>(WallMs() / 1000 - 100);
  auto idle = [&] { return std::stoll(r.Run({"object", "idletime", "k"}).substr(1)); };
  EXPECT_GE(idle(), 100);
  EXPECT_LE(idle(), 101);
  r.Run({"type", "k"});
  r.Run({"exists", "k"});
  r.Run({"ttl", "k"});
  r.Run({"object", "encoding", "k"});
  EXPECT_GE(idle(), 100);
  r.Run({"touch", "k"});
  EXPECT_LE(idle(), 1);
  EXPECT_EQ(r.Run({"object", "idletime", "missing"}), kNull);
  r.ks.set_lfu(true, 10, 0);
  EXPECT_EQ(r.Run({"object", "idletime", "k"}),
            Err("An LFU maxmemory policy is selected, idle time not tracked. Please note that "
                "when switching between policies at runtime LRU and LFU data will take some "
                "time to adjust."));
}

TEST_F(ObjectCommand, FreqNeedsLfuAndIsNotBumpedByIntrospection) {
  Put("k", "v");
  EXPECT_EQ(r.Run({"object", "freq", "k"}),
            Err("An LFU maxmemory policy is not selected, access frequency not tracked. Please "
                "note that when switching between policies at runtime LRU and LFU data will "
                "take some time to adjust."));
  EXPECT_EQ(r.Run({"object", "freq", "missing"}), kNull);  // the lookup comes first
  // No decay, so the counter is exact; new keys start at LFU_INIT_VAL (5).
  r.ks.set_lfu(true, 10, 0);
  Put("f", "v");
  EXPECT_EQ(r.Run({"object", "freq", "f"}), Int(5));
  r.Run({"type", "f"});
  r.Run({"object", "freq", "f"});
  EXPECT_EQ(r.Run({"object", "freq", "f"}), Int(5));
  r.Run({"touch", "f"});  // at the initial value the first hit always counts
  EXPECT_EQ(r.Run({"object", "freq", "f"}), Int(6));
}

TEST_F(ObjectCommand, HelpAndErrors) {
  std::string help = r.Run({"object", "help"});
  EXPECT_EQ(help.substr(0, help.find("\r\n", 5) + 2),
            "*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n");
  EXPECT_NE(help.find("+REFCOUNT <key>\r\n"), std::string::npos);
  const std::string footer = "+HELP\r\n+    Prints this help.\r\n";
  EXPECT_EQ(help.substr(help.size() - footer.size()), footer);
  EXPECT_EQ(r.Run({"object"}), Err("wrong number of arguments for 'object' command"));
  EXPECT_EQ(r.Run({"object", "foo", "k"}), Err("unknown subcommand 'foo'. Try OBJECT HELP."));
  EXPECT_EQ(r.Run({"object", "encoding"}),
            Err("wrong number of arguments for 'object|encoding' command"));
  EXPECT_EQ(r.Run({"object", "help", "x"}),
            Err("wrong number of arguments for 'object|help' command"));
}

}  // namespace
}  // namespace kv::cmd
