// The replication backlog: the last `capacity` bytes of the replication stream, kept so that a
// replica that lost its link can continue from the offset it reached (PSYNC) instead of
// resyncing the whole dataset.
//
// Offsets count stream bytes since the replication ID began: end_offset() is Redis'
// master_repl_offset, the bytes held are [end_offset() - histlen(), end_offset()). Not
// thread-safe (the keyspace lock covers it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kv::repl {

class Backlog {
 public:
  Backlog(size_t capacity, int64_t start_offset);

  void Append(std::string_view data);
  // Changes the capacity, keeping the most recent bytes that fit.
  void Resize(size_t capacity);

  int64_t end_offset() const { return end_; }
  size_t histlen() const { return len_; }
  size_t capacity() const { return buf_.size(); }
  // Redis' repl_backlog_first_byte_offset (1-based, as INFO shows it).
  int64_t first_byte_offset() const { return end_ - static_cast<int64_t>(len_) + 1; }
  // True when the bytes [offset, end_offset()) are all held.
  bool Covers(int64_t offset) const {
    return offset <= end_ && offset >= end_ - static_cast<int64_t>(len_);
  }
  // Appends the bytes [offset, end_offset()) to *out; false when not all are held.
  bool CopySince(int64_t offset, std::string* out) const;

 private:
  std::vector<char> buf_;
  size_t head_ = 0;  // where the next byte goes
  size_t len_ = 0;   // bytes held (<= capacity)
  int64_t end_;
};

}  // namespace kv::repl
