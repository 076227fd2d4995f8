// Helpers shared by the in-process STRING command tests: reply builders, the replies they are
// compared with, a non-string value for WRONGTYPE cases and the StringsTest fixture.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/command_test_util.h"

namespace kv::cmd::strings_test_util {

using store::Entry;
using store::ObjType;
using store::Value;
using Argv = std::vector<std::string>;
using Events = std::vector<std::pair<std::string, std::string>>;  // (event, key)

// ---- Reply builders ----------------------------------------------------------------------------

inline std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
inline std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
inline std::string Err(std::string_view msg) { return "-ERR " + std::string(msg) + "\r\n"; }
inline std::string Arity(std::string_view cmd) {
  return Err("wrong number of arguments for '" + std::string(cmd) + "' command");
}

inline const std::string kOk = "+OK\r\n";
inline const std::string kNull = "$-1\r\n";
inline const std::string kNull3 = "_\r\n";
inline const std::string kEmpty = "$0\r\n\r\n";
inline const std::string kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
inline const std::string kSyntax = Err("syntax error");
inline const std::string kNotInt = Err("value is not an integer or out of range");
inline const std::string kNotFloat = Err("value is not a valid float");
inline const std::string kTooLong = Err("string exceeds maximum allowed size (proto-max-bulk-len)");

// A non-string value for WRONGTYPE tests (no collection family is linked into cmd_test).
class FakeList : public store::Collection {
 public:
  std::unique_ptr<Collection> Clone() const override { return std::make_unique<FakeList>(); }
  size_t MemoryUsage() const override { return 0; }
  const char* EncodingName() const override { return "quicklist"; }
  size_t Size() const override { return 0; }
  void ForEach(const Visitor&) const override {}
};

class StringsTest : public ::testing::Test {
 protected:
  static constexpr int64_t kNow = 1'700'000'000'000;  // whole seconds, so EXAT maths is exact

  void SetUp() override { r.set_now_ms(kNow); }

  void PutList(const std::string& key) {
    r.ks.Set(0, key, Value::Object(ObjType::kList, std::make_unique<FakeList>()));
  }
  bool IsList(const std::string& key) {
    Entry* e = r.ks.db(0).Find(key);
    return e && e->value.type() == ObjType::kList;
  }
  // Absolute expire time in ms of a stored key, -1 without TTL, -2 when not stored (raw view:
  // no lazy expiry).
  int64_t ExpireOf(const std::string& key) {
    Entry* e = r.ks.db(0).Find(key);
    return e ? r.ks.db(0).GetExpire(e) : -2;
  }
  std::string Encoding(const std::string& key) {
    Entry* e = r.ks.db(0).Find(key);
    return e ? e->value.EncodingName() : "absent";
  }
  Events TakeEvents() {
    Events out = std::move(r.hooks.events);
    r.hooks.events.clear();
    return out;
  }
  std::string Ms(int64_t v) { return std::to_string(v); }

  CommandRunner r;
};

}  // namespace kv::cmd::strings_test_util
