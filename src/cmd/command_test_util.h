// In-process command tests: runs commands against a real Keyspace through the real command
// table and returns the raw RESP reply, e.g.
//   CommandRunner r;
//   EXPECT_EQ(r.Run({"set", "k", "v"}), "+OK\r\n");
// The server hooks are a recording implementation of ServerHooks (notifications and modified
// keys are kept for assertions).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cmd/command.h"
#include "cmd/context.h"
#include "store/keyspace.h"

namespace kv::cmd {

class RecordingHooks : public ServerHooks {
 public:
  void KeyModified(int db, std::string_view key) override { modified.emplace_back(db, key); }
  void Notify(int klass, std::string_view event, std::string_view key, int db) override {
    events.emplace_back(std::string(event), std::string(key));
  }
  int64_t MaxBulkLen() const override { return max_bulk_len; }
  void DbReplaced(int db, int replaced_with) override { replaced.emplace_back(db, replaced_with); }

  std::vector<std::pair<int, std::string>> modified;
  std::vector<std::pair<int, int>> replaced;  // DbReplaced calls, in order
  std::vector<std::pair<std::string, std::string>> events;
  int64_t max_bulk_len = 512LL * 1024 * 1024;
};

class CommandRunner {
 public:
  CommandRunner();

  // Runs one command and returns its raw RESP reply.
  std::string Run(std::vector<std::string> args);
  // The argv the last write command would propagate (its rewrite, or itself; the first when it
  // propagates several), empty if none.
  const std::vector<std::string>& last_propagated() const { return propagated_; }
  // Every command the last write command would propagate, in order.
  const std::vector<std::vector<std::string>>& last_propagated_all() const {
    return propagated_all_;
  }

  // Time seen by commands; defaults to the real clock. Lets TTL tests move time.
  void set_now_ms(int64_t ms) { fixed_now_ms_ = ms; }

  store::Keyspace ks{16};
  CommandTable table;
  Session session;
  RecordingHooks hooks;
  ExecStats stats;

 private:
  int64_t fixed_now_ms_ = -1;
  std::vector<std::string> propagated_;
  std::vector<std::vector<std::string>> propagated_all_;
};

}  // namespace kv::cmd
