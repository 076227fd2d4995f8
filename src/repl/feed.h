// The replication feed: turns executed writes into the replication stream, the exact bytes a
// Redis 7.0 primary sends its replicas, and hands them to the backlog and to the replicas.
//
// Writes are collected per execution unit (a command, an EXEC, one expired key) and emitted when
// the unit ends: a unit with more than one write is wrapped in MULTI/EXEC, so replicas apply it
// atomically (Redis 7.0's also_propagate rule). A SELECT precedes a write whose database differs
// from the previous one in the stream. Not thread-safe (the keyspace lock covers it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "repl/backlog.h"

namespace kv::repl {

class Feed {
 public:
  // Receives every emitted stream chunk (the server fans it out to replicas).
  using Sink = std::function<void(std::string_view bytes)>;

  void set_sink(Sink sink) { sink_ = std::move(sink); }
  // Propagation is on once a backlog exists (the first replica creates it), as in Redis.
  bool active() const { return backlog_ != nullptr; }
  void CreateBacklog(size_t capacity, int64_t start_offset);
  void FreeBacklog();
  Backlog* backlog() { return backlog_.get(); }
  // master_repl_offset: the bytes emitted so far (0 before any backlog existed).
  int64_t offset() const { return backlog_ ? backlog_->end_offset() : offset_; }

  // Records a write of the current unit.
  void Add(int db, std::span<const std::string> argv);
  void Add(int db, std::span<const std::string_view> argv);
  // Ends the unit: emits its writes (wrapped in MULTI/EXEC when more than one). Returns whether
  // anything was emitted.
  bool EndUnit();
  // Emits a command outside any unit and outside MULTI wrapping (PING to replicas).
  void EmitRaw(std::span<const std::string_view> argv);
  // Emits stream bytes as they are (a replica passing its primary's stream on). The db they
  // select is unknown, so the next own write starts with SELECT.
  void EmitBytes(std::string_view bytes) {
    Emit(bytes);
    selected_db_ = -1;
  }
  // The next write must be preceded by SELECT (a new replica or stream).
  void ForgetSelectedDb() { selected_db_ = -1; }

  static void EncodeCommand(std::span<const std::string_view> argv, std::string* out);

 private:
  void Emit(std::string_view bytes);

  struct Op {
    int db;
    std::vector<std::string> argv;
  };
  std::vector<Op> pending_;
  std::unique_ptr<Backlog> backlog_;
  int64_t offset_ = 0;
  int selected_db_ = -1;
  Sink sink_;
  std::string scratch_;
};

}  // namespace kv::repl
