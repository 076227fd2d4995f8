#include "store/stream_type.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kv::store {
namespace {

std::vector<std::string> Ids(const StreamValue& s, StreamID from, StreamID to, bool rev) {
  std::vector<std::string> out;
  s.Range(from, to, rev, [&](StreamID id, std::span<const StreamValue::FieldValue>) {
    out.push_back(id.ToString());
    return true;
  });
  return out;
}

void Add(StreamValue& s, StreamID id, std::vector<std::string_view> fv) {
  s.Append(id, fv, 4096, 3);  // three entries a node
}

TEST(StreamType, AppendsRangesAndSplitsNodes) {
  StreamValue s;
  for (uint64_t i = 1; i <= 7; i++) Add(s, {i, 0}, {"f", std::to_string(i), "g", "x"});
  EXPECT_EQ(s.length(), 7u);
  EXPECT_EQ(s.nodes().size(), 3u);  // 3 + 3 + 1
  EXPECT_EQ(Ids(s, {2, 0}, {5, 0}, false), (std::vector<std::string>{"2-0", "3-0", "4-0", "5-0"}));
  EXPECT_EQ(Ids(s, {2, 0}, {5, 0}, true), (std::vector<std::string>{"5-0", "4-0", "3-0", "2-0"}));
  // Fields other than the master's are kept with the entry.
  Add(s, {8, 0}, {"other", "1"});
  std::vector<std::string> fields;
  s.Range({8, 0}, {8, 0}, false, [&](StreamID, std::span<const StreamValue::FieldValue> f) {
    for (const auto& [k, v] : f) fields.push_back(std::string(k) + "=" + std::string(v));
    return true;
  });
  EXPECT_EQ(fields, (std::vector<std::string>{"other=1"}));
  for (const auto& [master, lp] : s.nodes())
    EXPECT_TRUE(StreamValue::ValidateNode(master, lp.view()));
}

TEST(StreamType, DeletesAndTrims) {
  StreamValue s;
  for (uint64_t i = 1; i <= 9; i++) Add(s, {i, 0}, {"f", "v"});
  EXPECT_TRUE(s.Delete({2, 0}));
  EXPECT_FALSE(s.Delete({2, 0}));   // already a tombstone
  EXPECT_FALSE(s.Delete({20, 0}));  // never there
  EXPECT_EQ(s.length(), 8u);
  // A node whose last live entry goes is removed.
  EXPECT_TRUE(s.Delete({7, 0}) && s.Delete({8, 0}) && s.Delete({9, 0}));
  EXPECT_EQ(s.nodes().size(), 2u);
  StreamValue::TrimArgs t;
  t.strategy = StreamValue::TrimStrategy::kMaxLen;
  t.maxlen = 3;
  EXPECT_EQ(s.Trim(t), 2);  // 1, 3 (2 is a tombstone) ... leaving 4 5 6
  EXPECT_EQ(Ids(s, StreamID::Min(), StreamID::Max(), false),
            (std::vector<std::string>{"4-0", "5-0", "6-0"}));
  EXPECT_EQ(s.first_id().ToString(), "4-0");
  t.strategy = StreamValue::TrimStrategy::kMinId;
  t.minid = {6, 0};
  t.approx = true;  // only whole nodes: 4 5 6 share one
  EXPECT_EQ(s.Trim(t), 0);
  t.approx = false;
  EXPECT_EQ(s.Trim(t), 2);
  EXPECT_EQ(s.length(), 1u);
}

TEST(StreamType, ValidationRefusesDamagedNodes) {
  StreamValue s;
  Add(s, {5, 0}, {"f", "v"});
  Add(s, {6, 0}, {"f", "w"});
  const auto& [master, lp] = *s.nodes().begin();
  std::string bytes(lp.view());
  EXPECT_TRUE(StreamValue::ValidateNode(master, bytes));
  for (size_t i = 0; i < bytes.size(); i++) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    StreamValue::ValidateNode(master, bad);  // must not crash, whatever it answers
  }
  EXPECT_FALSE(StreamValue::ValidateNode(master, bytes.substr(0, bytes.size() - 1)));
  std::string count = bytes;
  count[6] = 3;  // master count 3, but two entries
  EXPECT_FALSE(StreamValue::ValidateNode(master, count));
}

TEST(StreamType, IdsStepAcrossTheirParts) {
  StreamID id{1, UINT64_MAX};
  EXPECT_TRUE(id.Incr());
  EXPECT_EQ(id.ToString(), "2-0");
  EXPECT_TRUE(id.Decr());
  EXPECT_EQ(id, (StreamID{1, UINT64_MAX}));
  StreamID max = StreamID::Max(), min = StreamID::Min();
  EXPECT_FALSE(max.Incr());
  EXPECT_FALSE(min.Decr());
}

}  // namespace
}  // namespace kv::store
