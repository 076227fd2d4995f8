// Which data-plane providers the parameterized tests run over. The everyday ones (tcp, shm)
// run everywhere; the Soft-RoCE guest (tests/softroce/) sets KV_TEST_VERBS=1 to add libfabric's
// verbs provider, which needs an RDMA device. Header-only: transport, server and end-to-end
// tests share it (test code only: it includes gtest).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

namespace kv::transport::test {

inline bool VerbsTestsEnabled() {
  const char* v = std::getenv("KV_TEST_VERBS");
  return v != nullptr && *v != 0 && std::string(v) != "0";
}

// `base`, followed by `verbs` when VerbsTestsEnabled().
inline std::vector<std::string> WithVerbs(std::vector<std::string> base,
                                          std::initializer_list<const char*> verbs) {
  if (VerbsTestsEnabled()) base.insert(base.end(), verbs.begin(), verbs.end());
  return base;
}

// A test name for a configuration: every character that is not alphanumeric becomes '_'.
inline std::string ConfigName(const std::string& config) {
  std::string n = config;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

// The name generator for INSTANTIATE_TEST_SUITE_P over configurations.
struct ConfigNamer {
  std::string operator()(const ::testing::TestParamInfo<std::string>& info) const {
    return ConfigName(info.param);
  }
};

}  // namespace kv::transport::test
