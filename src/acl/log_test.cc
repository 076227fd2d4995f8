#include "acl/log.h"

#include <gtest/gtest.h>

namespace kv::acl {
namespace {

LogEntry Event(std::string object, int64_t t, std::string user = "u",
               LogReason reason = LogReason::kCommand) {
  LogEntry e;
  e.reason = reason;
  e.object = std::move(object);
  e.username = std::move(user);
  e.time_ms = t;
  e.client_info = "id=" + std::to_string(t);
  return e;
}

TEST(AclLog, LikeEventsWithinAMinuteShareAnEntry) {
  Log log;
  log.Add(Event("get", 1000), 128);
  log.Add(Event("set", 2000), 128);
  log.Add(Event("get", 3000), 128);  // bumps the first, which moves to the front
  ASSERT_EQ(log.entries().size(), 2u);
  EXPECT_EQ(log.entries()[0].object, "get");
  EXPECT_EQ(log.entries()[0].count, 2u);
  EXPECT_EQ(log.entries()[0].time_ms, 3000);
  EXPECT_EQ(log.entries()[0].client_info, "id=3000");  // the latest client
  EXPECT_EQ(log.entries()[1].object, "set");
}

TEST(AclLog, EventsThatDifferStartTheirOwnEntry) {
  Log log;
  log.Add(Event("get", 0), 128);
  log.Add(Event("get", 0, "other"), 128);
  log.Add(Event("get", 0, "u", LogReason::kKey), 128);
  LogEntry lua = Event("get", 0);
  lua.context = LogContext::kLua;
  log.Add(lua, 128);
  log.Add(Event("get", Log::kGroupingWindowMs + 1), 128);  // over a minute after the first
  EXPECT_EQ(log.entries().size(), 5u);
  for (const LogEntry& e : log.entries()) EXPECT_EQ(e.count, 1u);
}

TEST(AclLog, OnlyTheTenNewestEntriesAreGrouped) {
  Log log;
  log.Add(Event("k0", 0), 128);
  for (int i = 1; i <= 10; i++) log.Add(Event("k" + std::to_string(i), 0), 128);
  log.Add(Event("k0", 0), 128);  // k0 is the 11th newest: a new entry
  EXPECT_EQ(log.entries().size(), 12u);
  log.Add(Event("k2", 0), 128);  // within the ten newest: grouped
  EXPECT_EQ(log.entries().size(), 12u);
  EXPECT_EQ(log.entries()[0].object, "k2");
  EXPECT_EQ(log.entries()[0].count, 2u);
}

TEST(AclLog, HoldsAtMostMaxLenDroppingTheOldest) {
  Log log;
  for (int i = 0; i < 5; i++) log.Add(Event("k" + std::to_string(i), 0), 3);
  ASSERT_EQ(log.entries().size(), 3u);
  EXPECT_EQ(log.entries()[0].object, "k4");
  EXPECT_EQ(log.entries()[2].object, "k2");
  log.Add(Event("k5", 0), 0);  // acllog-max-len 0 keeps nothing
  EXPECT_TRUE(log.entries().empty());
  log.Add(Event("k6", 0), 3);
  log.Reset();
  EXPECT_TRUE(log.entries().empty());
}

TEST(AclLog, Names) {
  EXPECT_EQ(LogReasonName(LogReason::kAuth), "auth");
  EXPECT_EQ(LogReasonName(LogReason::kChannel), "channel");
  EXPECT_EQ(LogContextName(LogContext::kMulti), "multi");
  EXPECT_EQ(LogContextName(LogContext::kLua), "lua");
}

}  // namespace
}  // namespace kv::acl
