// Helpers shared by the INFO tests and the CONFIG, COMMAND and TIME tests: an INFO parser,
// reply helpers and the fixture whose suite shares one kvstore and one redis-server.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/suite_servers.h"

namespace kv::test {

using Fields = std::map<std::string, std::string>;

// An INFO reply: section titles in order and each section's fields.
struct Info {
  std::vector<std::string> titles;
  std::map<std::string, Fields> sections;  // by title: "Server", "Stats", ...
};

// Parses INFO text, checking the framing: "# Title" headers, "name:value" lines ending in
// \r\n, one blank line between sections.
inline Info ParseInfo(const std::string& text) {
  Info info;
  size_t pos = 0;
  bool expect_header = true;
  while (pos < text.size()) {
    size_t eol = text.find("\r\n", pos);
    EXPECT_NE(eol, std::string::npos) << "line without \\r\\n at " << pos;
    if (eol == std::string::npos) break;
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 2;
    if (line.empty()) {
      EXPECT_FALSE(expect_header) << "two blank lines in a row";
      expect_header = true;
      continue;
    }
    if (expect_header) {
      EXPECT_EQ(line.rfind("# ", 0), 0u) << "expected a section header: " << line;
      info.titles.push_back(line.substr(2));
      info.sections[info.titles.back()];
      expect_header = false;
      continue;
    }
    EXPECT_EQ(line.find('\n'), std::string::npos);
    size_t colon = line.find(':');
    EXPECT_NE(colon, std::string::npos) << line;
    if (colon == std::string::npos || info.titles.empty()) continue;
    info.sections[info.titles.back()][line.substr(0, colon)] = line.substr(colon + 1);
  }
  return info;
}

inline Info CallInfo(RespClient& c, std::vector<std::string> sections = {}) {
  sections.insert(sections.begin(), "INFO");
  Reply r = c.Call(sections);
  EXPECT_EQ(r.type, '$') << r.Debug();
  return ParseInfo(r.str);
}

inline Fields InfoSection(RespClient& c, const std::string& name, const std::string& title) {
  return CallInfo(c, {name}).sections[title];
}

inline std::vector<std::string> Strings(const Reply& r) {
  std::vector<std::string> out;
  for (const auto& e : r.elems) out.push_back(e.str);
  return out;
}

inline std::string RunShell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

class Servers : public KvstoreAndRedisSuite {
 protected:
  static int port() { return kv_->port(); }
};
#define REQUIRE_REDIS() \
  if (!redis_) GTEST_SKIP() << "redis-server is not installed"

}  // namespace kv::test
