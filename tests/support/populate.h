// The small mixed dataset the replication tests start from: `keys` strings of 100-149 bytes in
// db 0, and a list, a set, a sorted set, a hash and a key with a TTL in dbs 0 and 5.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/resp_client.h"

namespace kv::test {

inline void Populate(RespClient& c, int keys) {
  std::vector<std::string> mset = {"MSET"};
  for (int i = 0; i < keys; i++) {
    mset.push_back("key:" + std::to_string(i));
    mset.push_back(std::string(100 + i % 50, static_cast<char>('a' + i % 26)));
  }
  ASSERT_EQ(c.Call(mset).str, "OK");
  for (int db : {0, 5}) {
    c.Call({"SELECT", std::to_string(db)});
    c.Call({"RPUSH", "list", "a", "b", "c"});
    c.Call({"SADD", "set", "1", "2", "x"});
    c.Call({"ZADD", "zset", "1", "a", "2.5", "b"});
    c.Call({"HSET", "hash", "f", "v", "g", "12"});
    c.Call({"SET", "volatile", "v", "EX", "1000"});
  }
  c.Call({"SELECT", "0"});
}

}  // namespace kv::test
