#include "repl/feed.h"

#include "common/clock.h"

namespace kv::repl {

void Feed::CreateBacklog(size_t capacity, int64_t start_offset) {
  backlog_ = std::make_unique<Backlog>(capacity, start_offset);
  selected_db_ = -1;
}

void Feed::FreeBacklog() {
  if (backlog_) offset_ = backlog_->end_offset();
  backlog_.reset();
}

template <typename Str>
void Feed::Record(int db, std::span<const Str> argv, bool to_replicas, bool to_aof) {
  bool to_tap = false;
  if (to_replicas && tap_sink_) {
    tap_argv_.assign(argv.begin(), argv.end());
    to_tap = tap_wants_(db, tap_argv_);
  }
  to_replicas = to_replicas && active();
  to_aof = to_aof && aof_on();
  if (!to_replicas && !to_aof && !to_tap) return;
  size_t off = unit_.size();
  unit_.append("*").append(std::to_string(argv.size())).append("\r\n");
  for (const auto& a : argv) {
    unit_.append("$").append(std::to_string(a.size())).append("\r\n");
    unit_.append(a).append("\r\n");
  }
  ops_.push_back({db, off, unit_.size() - off, to_replicas, to_aof, to_tap});
}

void Feed::Add(int db, std::span<const std::string> argv, bool to_replicas, bool to_aof) {
  Record(db, argv, to_replicas, to_aof);
}

void Feed::Add(int db, std::span<const std::string_view> argv, bool to_replicas, bool to_aof) {
  Record(db, argv, to_replicas, to_aof);
}

void Feed::EncodeCommand(std::span<const std::string_view> argv, std::string* out) {
  out->append("*").append(std::to_string(argv.size())).append("\r\n");
  for (auto a : argv) {
    out->append("$").append(std::to_string(a.size())).append("\r\n");
    out->append(a).append("\r\n");
  }
}

void Feed::Emit(std::string_view bytes) {
  if (backlog_) backlog_->Append(bytes);
  if (sink_) sink_(bytes);
}

void Feed::EncodeUnit(Target target, bool wrap, int* selected_db, std::string* out) const {
  size_t n = 0;
  const Op* first = nullptr;
  for (const Op& op : ops_) {
    if (!op.to(target)) continue;
    if (!first) first = &op;
    n++;
  }
  if (n == 0) return;
  if (!wrap) n = 1;  // each write on its own, as if it were the only one
  auto select = [&](int db) {
    if (db == *selected_db) return;
    std::string num = std::to_string(db);
    std::string_view argv[] = {"SELECT", num};
    EncodeCommand(argv, out);
    *selected_db = db;
  };
  if (n > 1) {
    select(first->db);
    out->append("*1\r\n$5\r\nMULTI\r\n");
  }
  for (const Op& op : ops_) {
    if (!op.to(target)) continue;
    select(op.db);
    out->append(unit_, op.off, op.len);
  }
  if (n > 1) out->append("*1\r\n$4\r\nEXEC\r\n");
}

bool Feed::EndUnit(bool wrap) {
  if (ops_.empty()) return false;
  bool to_replicas = false;
  for (const Op& op : ops_) to_replicas |= op.to_replicas;
  if (to_replicas) {
    scratch_.clear();
    EncodeUnit(Target::kReplicas, wrap, &selected_db_, &scratch_);
    Emit(scratch_);
  }
  bool to_tap = false;
  for (const Op& op : ops_) to_tap |= op.to_tap;
  if (to_tap && tap_sink_) {
    scratch_.clear();
    EncodeUnit(Target::kTap, wrap, &tap_selected_db_, &scratch_);
    tap_sink_(scratch_);
  }
  bool to_aof = false;
  for (const Op& op : ops_) to_aof |= op.to_aof;
  if (to_aof) {
    scratch_.clear();
    if (aof_timestamps_) {
      int64_t now_s = WallMs() / 1000;
      if (now_s > aof_timestamp_s_) {
        aof_timestamp_s_ = now_s;
        scratch_.append("#TS:").append(std::to_string(now_s)).append("\r\n");
      }
    }
    EncodeUnit(Target::kAof, wrap, &aof_selected_db_, &scratch_);
    aof_sink_(scratch_);
  }
  ops_.clear();
  unit_.clear();
  if (unit_.capacity() > (1u << 20)) std::string().swap(unit_);  // after a big value
  if (scratch_.capacity() > (1u << 20)) std::string().swap(scratch_);
  return to_replicas;
}

void Feed::EmitRaw(std::span<const std::string_view> argv) {
  if (!active()) return;
  scratch_.clear();
  EncodeCommand(argv, &scratch_);
  Emit(scratch_);
}

}  // namespace kv::repl
