// A dataset of every type in each of its encodings, and what two servers' copies of it must
// agree on (DEBUG DIGEST, and each key's encoding and TTL presence): the persistence tests (RDB
// and AOF, kvstore and redis-server in both directions) fill one server and compare another.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {

// A server answers (-LOADING) before its dataset is loaded; waits until it is.
inline void WaitLoaded(RespClient& c) {
  ASSERT_TRUE(WaitFor([&] { return InfoField(c, "persistence", "loading") == "0"; }, 30000));
}

inline std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& ch : s) ch = static_cast<char>(rng());
  return s;
}

// Every type in its compact and its general encoding, integers, binary values, expiries and
// several databases; `big` adds a 64 MiB value.
inline void PopulateAllTypes(RespClient& c, bool big) {
  std::mt19937_64 rng(42);
  auto ok = [&](const std::vector<std::string>& cmd) {
    Reply r = c.Call(cmd);
    ASSERT_FALSE(r.is_error()) << r.str;
  };
  for (int db : {0, 3, 15}) {
    ok({"SELECT", std::to_string(db)});
    std::string p = "db" + std::to_string(db) + ":";
    ok({"SET", p + "str", "hello world"});
    ok({"SET", p + "int", "12345"});
    ok({"SET", p + "negint", "-9223372036854775808"});
    ok({"SET", p + "float", "3.14159"});
    ok({"SET", p + "bin", RandomBytes(rng, 300)});
    ok({"SET", p + "compressible", std::string(10000, 'z')});
    ok({"SET", p + "ttl", "v", "PX", "3600000"});
    ok({"SET", p + "empty", ""});
    for (int size : {5, 700}) {
      std::string n = std::to_string(size);
      std::vector<std::string> rpush = {"RPUSH", p + "list" + n}, sadd_i = {"SADD", p + "iset" + n},
                               sadd_s = {"SADD", p + "sset" + n}, zadd = {"ZADD", p + "zset" + n},
                               hset = {"HSET", p + "hash" + n};
      for (int i = 0; i < size; i++) {
        std::string s = std::to_string(i);
        rpush.push_back(i % 2 ? s : "elem-" + s);
        sadd_i.push_back(std::to_string(i * 1000003 - 50000));
        sadd_s.push_back("m" + s);
        zadd.push_back(i % 3 ? std::to_string(i * 0.25) : s);
        zadd.push_back("member-" + s);
        hset.push_back("field-" + s);
        hset.push_back(i % 2 ? s : RandomBytes(rng, 20));
      }
      for (const auto& cmd : {rpush, sadd_i, sadd_s, zadd, hset}) ok(cmd);
    }
    ok({"HSET", p + "hash-long", "f", std::string(200, 'x')});
    ok({"ZADD", p + "zset-long", "1", std::string(100, 'y')});
    ok({"RPUSH", p + "list-bigelem", std::string(20000, 'q'), "small"});
    ok({"ZADD", p + "zset-inf", "inf", "a", "-inf", "b", "0", "c"});
    ok({"EXPIRE", p + "hash5", "100000"});
  }
  if (big) {
    ok({"SELECT", "0"});
    ok({"SET", "big", RandomBytes(rng, 64 << 20)});
  }
  ok({"SELECT", "0"});
}

// Every key's OBJECT ENCODING and TTL presence, db by db: loaded datasets must choose the
// encodings Redis chooses.
inline std::string Shape(RespClient& c) {
  std::string out;
  for (int db : {0, 3, 15}) {
    c.Call({"SELECT", std::to_string(db)});
    Reply keys = c.Call({"KEYS", "*"});
    std::vector<std::string> lines;
    for (const auto& k : keys.elems) {
      lines.push_back(std::to_string(db) + " " + k.str + " " +
                      c.Call({"OBJECT", "ENCODING", k.str}).str + " " +
                      (c.Call({"PTTL", k.str}).integer > 0 ? "ttl" : "persistent"));
    }
    std::sort(lines.begin(), lines.end());
    for (auto& l : lines) out += l + "\n";
  }
  c.Call({"SELECT", "0"});
  return out;
}

struct Snapshot {
  std::string digest, shape;
};

inline Snapshot Capture(RespClient& c) { return {c.Call({"DEBUG", "DIGEST"}).str, Shape(c)}; }

}  // namespace kv::test
