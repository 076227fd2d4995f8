// Client libraries' scripting helpers against kvstore, as applications use them: redis-py's
// lock() (whose extend, reacquire and release are EVALSHA scripts), register_script and its
// function API (function_load, fcall, fcall_ro, function_dump/restore), and ioredis' defineCommand
// (EVALSHA with EVAL on NOSCRIPT, in pipelines and transactions). The programs are under
// tests/clients/; scripts/setup.sh installs the libraries (Debian's python3-redis, ioredis from
// npm).
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/process.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

// Runs `cmd`; its output (stdout and stderr) and exit status.
std::string RunProgram(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

const std::string kClients = std::string(KV_SOURCE_DIR) + "/tests/clients/";

TEST(ClientLibraries, RedisPyLockAndRegisterScript) {
  ServerProcess kv(Kind::kKvstore);
  int status;
  // Debian's interpreter, where python3-redis is installed (a python3 earlier on PATH may not
  // have it).
  std::string out = RunProgram(
      "/usr/bin/python3 " + kClients + "redis_py_scripts.py " + std::to_string(kv.port()), &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "ok\n");
}

TEST(ClientLibraries, IoredisDefineCommand) {
  ServerProcess kv(Kind::kKvstore);
  int status;
  std::string out =
      RunProgram("node " + kClients + "ioredis_scripts.js " + std::to_string(kv.port()), &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "ok\n");
}

}  // namespace
}  // namespace kv::test
