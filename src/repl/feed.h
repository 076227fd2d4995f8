// The propagation feed: turns executed writes into the replication stream, the exact bytes a
// Redis 7.0 primary sends its replicas (handed to the backlog and to the replicas), and into the
// records of the append-only file (handed to the AOF), as Redis' propagateNow feeds both.
//
// Writes are collected per execution unit (a command, an EXEC, one expired key) and emitted when
// the unit ends: a unit with more than one write is wrapped in MULTI/EXEC, so replicas apply it
// atomically (Redis 7.0's also_propagate rule). A SELECT precedes a write whose database differs
// from the previous one in that target's stream: the replication stream and the AOF keep their
// own selected database. Each write is encoded once, whatever the targets. Not thread-safe (the
// keyspace lock covers it).
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
  // The AOF's records: every unit, as the AOF writes it (null: the AOF is off). With
  // `timestamps` (aof-timestamp-enabled) a unit in a new second starts with "#TS:<unix time>".
  void SetAofSink(Sink sink, bool timestamps) {
    aof_sink_ = std::move(sink);
    aof_timestamps_ = timestamps;
    aof_selected_db_ = -1;
  }
  bool aof_on() const { return aof_sink_ != nullptr; }
  void SetAofTimestamps(bool on) { aof_timestamps_ = on; }
  // The next AOF record starts with SELECT (a new AOF file).
  void ForgetAofSelectedDb() { aof_selected_db_ = -1; }
  // Propagation is on once a backlog exists (the first replica creates it), as in Redis.
  bool active() const { return backlog_ != nullptr; }
  // A third target beside the replicas and the AOF: a slot migration's stream. `wants` says
  // which writes it takes (those of the slots already sent); each unit's writes it took are
  // handed to `sink`, encoded as for the replicas (MULTI/EXEC around several, a SELECT first).
  // Writes that do not reach the replicas (a replica's own) do not reach the tap either.
  using TapFilter = std::function<bool(int db, std::span<const std::string_view> argv)>;
  void SetTap(TapFilter wants, Sink sink) {
    tap_wants_ = std::move(wants);
    tap_sink_ = std::move(sink);
    tap_selected_db_ = -1;
  }
  void ClearTap() { SetTap(nullptr, nullptr); }
  bool tapped() const { return tap_sink_ != nullptr; }
  void CreateBacklog(size_t capacity, int64_t start_offset);
  void FreeBacklog();
  Backlog* backlog() { return backlog_.get(); }
  // master_repl_offset: the bytes emitted so far (0 before any backlog existed).
  int64_t offset() const { return backlog_ ? backlog_->end_offset() : offset_; }

  // Records a write of the current unit, for the replicas and the AOF, or (`to_replicas`
  // false: a replica applying its primary's stream, which it passes on verbatim) for the AOF
  // alone; `to_aof` false keeps it from the AOF (a script's redis.set_repl(REPL_REPLICA)).
  void Add(int db, std::span<const std::string> argv, bool to_replicas = true,
           bool to_aof = true);
  void Add(int db, std::span<const std::string_view> argv, bool to_replicas = true,
           bool to_aof = true);
  // The unit's writes so far go to the AOF alone (the server became a replica meanwhile).
  void KeepFromReplicas() {
    for (Op& op : ops_) op.to_replicas = false;
  }
  // Ends the unit: emits its writes (wrapped in MULTI/EXEC when more than one, unless `wrap` is
  // false) to each target. Returns whether anything went to the replication stream.
  bool EndUnit(bool wrap = true);
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
  enum class Target { kReplicas, kAof, kTap };
  void Emit(std::string_view bytes);
  template <typename Str>
  void Record(int db, std::span<const Str> argv, bool to_replicas, bool to_aof);
  // The unit's writes for one target (the replicas, or the AOF), with its SELECTs, wrapped
  // when more than one and `wrap`.
  void EncodeUnit(Target target, bool wrap, int* selected_db, std::string* out) const;

  struct Op {
    int db;
    size_t off, len;  // its encoding in unit_
    bool to_replicas, to_aof, to_tap;
    bool to(Target t) const {
      return t == Target::kReplicas ? to_replicas : t == Target::kAof ? to_aof : to_tap;
    }
  };
  std::vector<Op> ops_;
  std::string unit_;
  std::unique_ptr<Backlog> backlog_;
  int64_t offset_ = 0;
  int selected_db_ = -1;
  Sink sink_;
  std::string scratch_;
  Sink aof_sink_;
  bool aof_timestamps_ = false;
  int aof_selected_db_ = -1;
  int64_t aof_timestamp_s_ = 0;
  TapFilter tap_wants_;
  Sink tap_sink_;
  int tap_selected_db_ = -1;
  std::vector<std::string_view> tap_argv_;
};

}  // namespace kv::repl
