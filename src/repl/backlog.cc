#include "repl/backlog.h"

#include <algorithm>
#include <cstring>

namespace kv::repl {

Backlog::Backlog(size_t capacity, int64_t start_offset)
    : buf_(std::max<size_t>(capacity, 1)), end_(start_offset) {}

void Backlog::Append(std::string_view data) {
  end_ += static_cast<int64_t>(data.size());
  size_t cap = buf_.size();
  if (data.size() >= cap) {  // only the tail fits
    memcpy(buf_.data(), data.data() + data.size() - cap, cap);
    head_ = 0;
    len_ = cap;
    return;
  }
  size_t first = std::min(data.size(), cap - head_);
  memcpy(buf_.data() + head_, data.data(), first);
  memcpy(buf_.data(), data.data() + first, data.size() - first);
  head_ = (head_ + data.size()) % cap;
  len_ = std::min(cap, len_ + data.size());
}

bool Backlog::CopySince(int64_t offset, std::string* out) const {
  if (!Covers(offset)) return false;
  size_t n = static_cast<size_t>(end_ - offset);
  size_t cap = buf_.size();
  size_t start = (head_ + cap - n) % cap;
  size_t first = std::min(n, cap - start);
  out->append(buf_.data() + start, first);
  out->append(buf_.data(), n - first);
  return true;
}

void Backlog::Resize(size_t capacity) {
  capacity = std::max<size_t>(capacity, 1);
  if (capacity == buf_.size()) return;
  std::string keep;
  size_t n = std::min(len_, capacity);
  CopySince(end_ - static_cast<int64_t>(n), &keep);
  buf_.assign(capacity, '\0');
  memcpy(buf_.data(), keep.data(), n);
  len_ = n;
  head_ = n % capacity;
}

}  // namespace kv::repl
