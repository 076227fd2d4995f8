#include "persist/aof_file.h"

#include <gtest/gtest.h>

#include "store/list_type.h"
#include "store/zset_type.h"

namespace kv::persist {
namespace {

using Next = AofCommandReader::Next;

std::vector<std::string> Strs(const std::vector<std::string_view>& v) {
  return {v.begin(), v.end()};
}

TEST(AofCommandReader, ReadsCommandsAndSkipsAnnotations) {
  std::string data = "#TS:1700000000\r\n";
  AppendAofCommand(&data, {"SELECT", "0"});
  AppendAofCommand(&data, {"SET", "k", std::string_view("a\r\nb\0c", 6)});
  data += "#TS:1700000001\r\n";
  AppendAofCommand(&data, {"DEL", ""});
  AofCommandReader r(data);
  std::vector<std::string_view> argv;
  ASSERT_EQ(r.Read(&argv), Next::kCommand);
  EXPECT_EQ(Strs(argv), (std::vector<std::string>{"SELECT", "0"}));
  ASSERT_EQ(r.Read(&argv), Next::kCommand);
  EXPECT_EQ(Strs(argv), (std::vector<std::string>{"SET", "k", std::string("a\r\nb\0c", 6)}));
  ASSERT_EQ(r.Read(&argv), Next::kCommand);
  EXPECT_EQ(Strs(argv), (std::vector<std::string>{"DEL", ""}));
  EXPECT_EQ(r.Read(&argv), Next::kEnd);
  EXPECT_EQ(r.offset(), data.size());
}

TEST(AofCommandReader, EveryCutInsideACommandIsATruncationAtTheLastWholeOne) {
  std::string first;
  AppendAofCommand(&first, {"SET", "key", "value"});
  std::string data = first;
  AppendAofCommand(&data, {"RPUSH", "list", "a", "bb"});
  for (size_t cut = first.size() + 1; cut < data.size(); cut++) {
    AofCommandReader r(std::string_view(data).substr(0, cut));
    std::vector<std::string_view> argv;
    ASSERT_EQ(r.Read(&argv), Next::kCommand);
    ASSERT_EQ(r.Read(&argv), Next::kTruncated) << "cut at " << cut;
    EXPECT_EQ(r.offset(), first.size());
  }
}

TEST(AofCommandReader, GarbageIsAFormatErrorWithItsOffset) {
  std::string data;
  AppendAofCommand(&data, {"SET", "k", "v"});
  size_t at = data.size();
  data += "+OK\r\n";
  AofCommandReader r(data);
  std::vector<std::string_view> argv;
  ASSERT_EQ(r.Read(&argv), Next::kCommand);
  EXPECT_EQ(r.Read(&argv), Next::kFormatError);
  EXPECT_EQ(r.offset(), at);
  EXPECT_NE(r.error().find("offset " + std::to_string(at)), std::string::npos) << r.error();
  // A count that is not a positive number, and an argument without its '$'.
  for (std::string bad : {"*0\r\n", "*x\r\n", "*2\r\n$3\r\nSET\r\n:1\r\n"}) {
    AofCommandReader b(bad);
    EXPECT_EQ(b.Read(&argv), Next::kFormatError) << bad;
  }
}

TEST(AofCommands, WritesTheDatasetAsRedisRewritesIt) {
  store::Keyspace ks(2);
  store::Entry* e = ks.db(0).Add("s", store::Value::String("hello"));
  ks.db(0).SetExpire(e, 1234567890123);
  auto list = std::make_unique<store::ListValue>();
  for (int i = 0; i < 70; i++) list->PushBack("e" + std::to_string(i));
  ks.db(1).Add("l", store::Value::Object(store::ObjType::kList, std::move(list)));
  auto z = std::make_unique<store::ZSetValue>();
  z->Insert("m", 1.5, ks.limits());
  ks.db(1).Add("z", store::Value::Object(store::ObjType::kZSet, std::move(z)));
  StringSink sink;
  uint64_t keys = 0;
  AofCommandsOptions opts;
  ASSERT_TRUE(WriteAofCommands(ks, sink, opts, &keys).ok());
  EXPECT_EQ(keys, 3u);
  // Read it back: the commands, in their batches of at most 64 items.
  AofCommandReader r(sink.str());
  std::vector<std::vector<std::string>> cmds;
  std::vector<std::string_view> argv;
  while (r.Read(&argv) == Next::kCommand) cmds.push_back(Strs(argv));
  ASSERT_EQ(r.offset(), sink.str().size());
  std::vector<std::vector<std::string>> db0 = {
      {"SELECT", "0"}, {"SET", "s", "hello"}, {"PEXPIREAT", "s", "1234567890123"}};
  ASSERT_GE(cmds.size(), 6u);
  EXPECT_EQ(std::vector(cmds.begin(), cmds.begin() + 3), db0);
  EXPECT_EQ(cmds[3], (std::vector<std::string>{"SELECT", "1"}));
  size_t rpush_items = 0, rpushes = 0;
  bool zadd = false;
  for (size_t i = 4; i < cmds.size(); i++) {
    if (cmds[i][0] == "RPUSH") {
      rpushes++;
      rpush_items += cmds[i].size() - 2;
      EXPECT_LE(cmds[i].size() - 2, kAofRewriteItemsPerCmd);
    }
    if (cmds[i] == std::vector<std::string>{"ZADD", "z", "1.5", "m"}) zadd = true;
  }
  EXPECT_EQ(rpushes, 2u);
  EXPECT_EQ(rpush_items, 70u);
  EXPECT_TRUE(zadd);
}

}  // namespace
}  // namespace kv::persist
