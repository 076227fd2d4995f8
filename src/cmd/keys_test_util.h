// Helpers shared by the in-process keyspace command tests: a fixed time, a stand-in list, reply
// builders and the KeysFixture fixture that puts keys straight into the keyspace.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/command_test_util.h"

namespace kv::cmd::keys_test_util {

inline constexpr int64_t kNow = 1'700'000'000'000;  // a fixed "current" time in ms

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

inline store::Value List(std::vector<std::string> items) {
  return store::Value::Object(store::ObjType::kList, std::make_unique<FakeList>(std::move(items)));
}

inline std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
inline std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
inline std::string Err(std::string_view msg) { return "-ERR " + std::string(msg) + "\r\n"; }
inline const std::string kNull = "$-1\r\n";

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

}  // namespace kv::cmd::keys_test_util
