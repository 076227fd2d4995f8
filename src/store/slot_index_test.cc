// The cluster-mode index of keys by hash slot (Db::EnableSlotIndex): kept exact through every
// way a key enters or leaves a db, checked against a scan of the key table.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/hash.h"
#include "common/key_slot.h"
#include "store/keyspace.h"

namespace kv::store {
namespace {

// The index agrees with the table: every key listed once, under its own slot, at its position.
void ExpectIndexExact(Db& db) {
  ASSERT_TRUE(db.slot_indexed());
  std::map<int, std::set<std::string>> want;
  db.table().ForEach([&](Entry* e) { want[KeyHashSlot(e->key())].insert(std::string(e->key())); });
  size_t total = 0;
  for (int slot = 0; slot < kClusterSlots; slot++) {
    auto keys = db.SlotKeys(slot);
    ASSERT_EQ(keys.size(), db.KeysInSlot(slot));
    std::set<std::string> got;
    for (size_t i = 0; i < keys.size(); i++) {
      EXPECT_EQ(keys[i]->slot_pos, i);
      got.insert(std::string(keys[i]->key()));
    }
    EXPECT_EQ(got.size(), keys.size()) << "a key listed twice in slot " << slot;
    EXPECT_EQ(got, want[slot]) << "slot " << slot;
    total += keys.size();
  }
  EXPECT_EQ(total, db.size());
}

TEST(SlotIndex, FollowsAddsDeletesAndAdoptions) {
  Db db;
  for (int i = 0; i < 200; i++) db.Add("before:" + std::to_string(i), Value::String("v"));
  db.EnableSlotIndex();  // indexes what is there
  ExpectIndexExact(db);
  // Hash tags put many keys in one slot: removals from the middle of its list.
  for (int i = 0; i < 300; i++) db.Add("{tag}" + std::to_string(i), Value::String("v"));
  EXPECT_EQ(db.KeysInSlot(KeyHashSlot("tag")), 300u);
  for (int i = 0; i < 300; i += 3) ASSERT_TRUE(db.Delete("{tag}" + std::to_string(i)));
  EXPECT_EQ(db.AddIfAbsent("{tag}1", Value::String("x")), nullptr);  // present: not added
  ASSERT_NE(db.AddIfAbsent("{tag}0", Value::String("x")), nullptr);
  ExpectIndexExact(db);
  // Unlink and Adopt (MOVE, RENAME): out of the index and back in.
  Entry* e = db.Unlink("before:7");
  ASSERT_NE(e, nullptr);
  ExpectIndexExact(db);
  db.Adopt(e);
  ExpectIndexExact(db);
  // Random adds and deletes.
  std::vector<std::string> live;
  for (int i = 0; i < 5000; i++) {
    if (!live.empty() && RandomBelow(3) == 0) {
      size_t at = RandomBelow(live.size());
      ASSERT_TRUE(db.Delete(live[at]));
      live[at] = live.back();
      live.pop_back();
    } else {
      std::string k = "r" + std::to_string(i);
      db.Add(k, Value::String("v"));
      live.push_back(k);
    }
  }
  ExpectIndexExact(db);
  db.Clear();
  EXPECT_TRUE(db.slot_indexed());
  EXPECT_EQ(db.KeysInSlot(KeyHashSlot("tag")), 0u);
  db.Add("after", Value::String("v"));
  ExpectIndexExact(db);
}

TEST(SlotIndex, KeyspaceKeepsItOnDbZeroThroughFlushesAndSwaps) {
  Keyspace ks(4);
  ks.Set(0, "a", Value::String("1"));
  ks.EnableSlotIndex();
  EXPECT_TRUE(ks.db(0).slot_indexed());
  EXPECT_FALSE(ks.db(1).slot_indexed());
  EXPECT_EQ(ks.db(0).KeysInSlot(KeyHashSlot("a")), 1u);
  ks.FlushAll(/*async=*/true);
  EXPECT_TRUE(ks.db(0).slot_indexed());
  ks.Set(0, "b", Value::String("2"));
  ks.FlushDb(0, /*async=*/true);
  EXPECT_TRUE(ks.db(0).slot_indexed());
  EXPECT_EQ(ks.db(0).KeysInSlot(KeyHashSlot("b")), 0u);
  // A loaded keyspace swapped in (a replica's diskless load) gets indexed.
  Keyspace loaded(4);
  loaded.Set(0, "c", Value::String("3"));
  loaded.Set(1, "d", Value::String("4"));
  ks.SwapData(loaded);
  ASSERT_TRUE(ks.db(0).slot_indexed());
  EXPECT_EQ(ks.db(0).KeysInSlot(KeyHashSlot("c")), 1u);
  EXPECT_FALSE(loaded.db(0).slot_indexed());
  ks.SwapDb(0, 1);
  ExpectIndexExact(ks.db(0));
  EXPECT_FALSE(ks.db(1).slot_indexed());
  ks.FreeDbsAsync(loaded);
}

}  // namespace
}  // namespace kv::store
