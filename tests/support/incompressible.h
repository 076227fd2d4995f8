// Bulk that does not compress, for snapshots and transfers that must take their time.
#pragma once

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/resp_client.h"

namespace kv::test {

// `megabytes` MB of values that do not compress, 1000 bytes each, under big:<n>.
inline void PopulateIncompressible(RespClient& c, int megabytes) {
  std::mt19937_64 rng(7);
  for (int batch = 0; batch < megabytes; batch++) {
    std::vector<std::string> mset = {"MSET"};
    for (int i = 0; i < 1000; i++) {
      std::string v(1000, '\0');
      for (char& ch : v) ch = static_cast<char>(rng());
      mset.push_back("big:" + std::to_string(batch * 1000 + i));
      mset.push_back(std::move(v));
    }
    ASSERT_EQ(c.Call(mset).str, "OK");
  }
}

}  // namespace kv::test
