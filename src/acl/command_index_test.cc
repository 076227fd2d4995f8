// Command ids (assigned by cmd::CommandTable), the category helpers of cmd/acl_categories.h,
// and the ACL's command index.
#include "acl/command_index.h"

#include <gtest/gtest.h>

#include <set>

#include "acl/acl_test_util.h"
#include "cmd/acl_categories.h"

namespace kv::acl {
namespace {

TEST(AclCommandIds, DenseUniqueAndCoverSubcommands) {
  AclTestTable t;
  std::set<int> ids;
  int specs = 0;
  for (const cmd::CommandSpec* c : t.table().all()) {
    ids.insert(c->id);
    specs++;
    for (const auto& sub : c->subcommands) {
      ids.insert(sub->id);
      specs++;
      EXPECT_GT(sub->id, c->id);  // registered after their container
    }
  }
  EXPECT_EQ(static_cast<int>(ids.size()), specs);
  EXPECT_EQ(*ids.begin(), 0);
  EXPECT_EQ(*ids.rbegin(), specs - 1);
  EXPECT_EQ(t.table().id_count(), specs);
  EXPECT_EQ(t.index().id_count(), specs);
  for (int id = 0; id < specs; id++) EXPECT_EQ(t.index().ById(id)->id, id);
}

TEST(AclCommandIndex, FindsOriginalNames) {
  AclTestTable t;
  ASSERT_NE(t.index().Find("GET"), nullptr);
  EXPECT_EQ(t.index().Find("GET")->name, "get");
  EXPECT_EQ(t.index().Find("Config|Get")->name, "config|get");
  EXPECT_EQ(t.index().Find("config|nosuch"), nullptr);
  EXPECT_EQ(t.index().Find("get|x"), nullptr);  // GET has no subcommands
  EXPECT_EQ(t.index().Find("config|get|x"), nullptr);
  EXPECT_EQ(t.index().Find("nosuch"), nullptr);
}

TEST(AclCommandIndex, RenameDoesNotAffectRules) {
  AclTestTable t;
  cmd::CommandTable& table = t.mutable_table();
  ASSERT_TRUE(table.Rename("get", "fetch"));
  CommandIndex index(table);
  ASSERT_NE(index.Find("get"), nullptr);
  EXPECT_EQ(index.Find("fetch"), nullptr);
}

TEST(AclCategories, NamesAndLookup) {
  auto names = cmd::AclCategoryNames();
  ASSERT_EQ(names.size(), static_cast<size_t>(cmd::kNumCategories));
  EXPECT_EQ(names[0], "keyspace");
  EXPECT_EQ(names[cmd::kCatSortedSet], "sortedset");
  EXPECT_EQ(names[cmd::kNumCategories - 1], "scripting");
  EXPECT_EQ(cmd::AclCategoryIndex("READ"), cmd::kCatRead);
  EXPECT_EQ(cmd::AclCategoryIndex("all"), -1);  // "all" is a rule, not a category
  EXPECT_EQ(cmd::AclCategoryIndex("nosuch"), -1);
}

TEST(AclCategories, ImpliedByGroupAndFlags) {
  AclTestTable t;
  auto cats = [&](std::string_view name) { return cmd::Categories(*t.index().Find(name)); };
  auto bit = [](cmd::AclCategory c) { return 1u << c; };
  // GET: @read @string @fast.
  EXPECT_EQ(cats("get"), bit(cmd::kCatRead) | bit(cmd::kCatString) | bit(cmd::kCatFast));
  // CONFIG SET: admin implies @admin and @dangerous; not fast, so @slow.
  EXPECT_EQ(cats("config|set"), bit(cmd::kCatAdmin) | bit(cmd::kCatDangerous) | bit(cmd::kCatSlow));
  EXPECT_TRUE(cats("publish") & bit(cmd::kCatPubSub));
  EXPECT_TRUE(cats("blpop") & bit(cmd::kCatBlocking));
  EXPECT_EQ(t.index().CategoriesOf(t.index().Find("get")->id), cats("get"));
}

}  // namespace
}  // namespace kv::acl
