// Helpers of the client-side caching differential tests (client_tracking_test.cc,
// client_tracking_order_test.cc): a transcript of what each connection got, in order, with client
// ids by name, and a fixture that runs one scenario against kvstore (several poll groups, so the
// clients live on different threads) and redis-server and compares the transcripts.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/suite_servers.h"
#include "tests/support/wait.h"

namespace kv::test::tracking {

using Args = std::vector<std::string>;

inline std::string Join(const Args& args) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

inline void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size())) {
    s->replace(at, from.size(), to);
  }
}

// What one scenario saw, in order, with client ids replaced by their names.
struct Transcript {
  std::vector<std::string> lines;
  std::vector<std::pair<std::string, std::string>> ids;  // (id, name)

  std::string Named(std::string s) const {
    for (const auto& [id, name] : ids) {
      ReplaceAll(&s, ":" + id + "\r\n", ":<" + name + ">\r\n");
      ReplaceAll(&s, "redir=" + id + " ", "redir=<" + name + "> ");
    }
    return s;
  }
  // The client's id, remembered under `name`.
  std::string Id(RespClient& c, const std::string& name) {
    std::string id = std::to_string(c.Call({"CLIENT", "ID"}).integer);
    ids.emplace_back(id, name);
    return id;
  }
  // Sends `args` on `c` (named `who`) and records its reply and `pushes` frames after it.
  void Call(RespClient& c, const std::string& who, const Args& args, int pushes = 0) {
    Args shown = args;  // ids by name
    for (auto& a : shown) {
      for (const auto& [id, name] : ids) {
        if (a == id) a = "<" + name + ">";
      }
    }
    std::string line = who + ": " + Join(shown) + " -> " + c.Call(args).raw;
    for (int i = 0; i < pushes; i++) line += c.Read().raw;
    lines.push_back(Named(line));
  }
  // As Call, where `pushes` invalidations come before or after the reply in an order the server
  // leaves to chance (eviction picks keys at random): each run of pushes is recorded sorted.
  void CallSorted(RespClient& c, const std::string& who, const Args& args, int pushes) {
    c.Send(args);
    std::string line = who + ": " + Join(args) + " ->";
    std::vector<std::string> run;
    auto end_run = [&] {
      std::sort(run.begin(), run.end());
      for (const auto& r : run) line += " " + r;
      run.clear();
    };
    for (bool replied = false; !replied || pushes > 0;) {
      Reply r = c.Read();
      if (r.type == 0) break;  // timed out: the transcript shows what is missing
      if (r.type == '>') {
        run.push_back(r.raw);
        pushes--;
      } else {
        end_run();
        line += " " + r.raw;
        replied = true;
      }
    }
    end_run();
    lines.push_back(Named(line));
  }
  // Records the next `n` frames `c` receives, sorted (see CallSorted).
  void ReadSorted(RespClient& c, const std::string& who, int n) {
    std::vector<std::string> got;
    for (int i = 0; i < n; i++) got.push_back(c.Read().raw);
    std::sort(got.begin(), got.end());
    std::string line = who + " <-";
    for (const auto& g : got) line += " " + g;
    lines.push_back(Named(line));
  }
  // Records the next frame `c` receives (an invalidation).
  void Read(RespClient& c, const std::string& who) {
    lines.push_back(Named(who + " <- " + c.Read().raw));
  }
  // Records the client's tracking fields of CLIENT INFO (flags and redir).
  void Info(RespClient& c, const std::string& who) {
    std::string line = c.Call({"CLIENT", "INFO"}).str;
    size_t f = line.find(" flags="), r = line.find(" redir=");
    std::string fields = line.substr(f + 1, line.find(' ', f + 1) - f - 1) + " " +
                         line.substr(r + 1, line.find(' ', r + 1) - r);
    lines.push_back(Named(who + " info: " + fields));
  }
  void Note(const std::string& s) { lines.push_back(s); }
};

inline RespClient Resp3(int port) {
  RespClient c(port);
  EXPECT_EQ(c.Call({"HELLO", "3"}).type, '%');
  return c;
}

// Waits until the server has closed client `id` (its close runs on its own thread).
inline void WaitGone(int port, const std::string& id) {
  RespClient q(port);
  ASSERT_TRUE(WaitFor([&] {
    return q.Call({"CLIENT", "LIST", "ID", id}).str.find("id=") == std::string::npos;
  }));
}

using Scenario = void (*)(int port, Transcript& t);

class TrackingDiffSuite : public KvstoreAndRedisSuite {
 protected:
  static void SetUpTestSuite() { StartServers({"--io-threads", "3"}); }

  // Runs the scenario on both servers (from no tracking client and an empty table); the transcripts
  // must be identical.
  static void ExpectSameAsRedis(Scenario run) {
    if (!redis_) GTEST_SKIP() << "redis-server is not installed";
    std::vector<std::string> got[2];
    int ports[2] = {kv_->port(), redis_->port()};
    for (int i = 0; i < 2; i++) {
      RespClient q(ports[i]);
      q.Call({"FLUSHALL"});
      ASSERT_TRUE(WaitFor([&] { return InfoField(q, "clients", "tracking_clients") == "0"; }));
      Transcript t;
      run(ports[i], t);
      got[i] = t.lines;
    }
    ASSERT_EQ(got[0].size(), got[1].size());
    for (size_t i = 0; i < got[0].size(); i++) {
      EXPECT_EQ(got[0][i], got[1][i]) << "line " << i << " (kvstore first, redis-server second)";
    }
  }
};

}  // namespace kv::test::tracking
