#include "repl/feed.h"

namespace kv::repl {

void Feed::CreateBacklog(size_t capacity, int64_t start_offset) {
  backlog_ = std::make_unique<Backlog>(capacity, start_offset);
  selected_db_ = -1;
}

void Feed::FreeBacklog() {
  if (backlog_) offset_ = backlog_->end_offset();
  backlog_.reset();
}

void Feed::Add(int db, std::span<const std::string> argv) {
  if (!active()) return;
  pending_.push_back({db, std::vector<std::string>(argv.begin(), argv.end())});
}

void Feed::Add(int db, std::span<const std::string_view> argv) {
  if (!active()) return;
  Op op{db, {}};
  op.argv.reserve(argv.size());
  for (auto a : argv) op.argv.emplace_back(a);
  pending_.push_back(std::move(op));
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

bool Feed::EndUnit() {
  if (pending_.empty()) return false;
  scratch_.clear();
  bool wrap = pending_.size() > 1;
  auto select = [&](int db) {
    if (db == selected_db_) return;
    std::string n = std::to_string(db);
    std::string_view argv[] = {"SELECT", n};
    EncodeCommand(argv, &scratch_);
    selected_db_ = db;
  };
  if (wrap) {
    select(pending_.front().db);
    std::string_view multi[] = {"MULTI"};
    EncodeCommand(multi, &scratch_);
  }
  for (const Op& op : pending_) {
    select(op.db);
    std::vector<std::string_view> views(op.argv.begin(), op.argv.end());
    EncodeCommand(views, &scratch_);
  }
  if (wrap) {
    std::string_view exec[] = {"EXEC"};
    EncodeCommand(exec, &scratch_);
  }
  pending_.clear();
  Emit(scratch_);
  return true;
}

void Feed::EmitRaw(std::span<const std::string_view> argv) {
  if (!active()) return;
  scratch_.clear();
  EncodeCommand(argv, &scratch_);
  Emit(scratch_);
}

}  // namespace kv::repl
