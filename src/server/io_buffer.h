// A growable byte buffer with a consumed prefix, for connection input and output.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

namespace kv::server {

class IoBuffer {
 public:
  IoBuffer() = default;
  ~IoBuffer() { free(data_); }
  IoBuffer(const IoBuffer&) = delete;
  IoBuffer& operator=(const IoBuffer&) = delete;

  const char* data() const { return data_ + start_; }
  size_t size() const { return end_ - start_; }
  bool empty() const { return end_ == start_; }
  size_t capacity() const { return cap_; }
  std::string_view view() const { return {data(), size()}; }

  // Returns space for at least `min_free` bytes after the data; Commit() what was written.
  // Returns nullptr when the memory cannot be had (the caller drops the connection).
  char* WritableTail(size_t min_free);
  size_t tail_room() const { return cap_ - end_; }
  void Commit(size_t n) { end_ += n; }
  void Consume(size_t n);
  void Clear() { start_ = end_ = 0; }
  // Gives memory back when a big buffer is idle.
  void ShrinkIfIdle(size_t keep);
  // Reallocates the buffer to hold max(`cap`, size()) bytes, the data moved to its start; a
  // buffer resized to 0 is freed. False when the memory cannot be had (the buffer is as it was).
  bool Resize(size_t cap);

 private:
  char* data_ = nullptr;
  size_t start_ = 0, end_ = 0, cap_ = 0;
};

inline char* IoBuffer::WritableTail(size_t min_free) {
  if (cap_ - end_ >= min_free) return data_ + end_;
  size_t used = size();
  if (start_ > 0 && cap_ - used >= min_free && start_ >= used) {
    memmove(data_, data_ + start_, used);
  } else {
    size_t ncap = cap_ ? cap_ : 4096;
    while (ncap - used < min_free) ncap *= 2;
    if (!Resize(ncap)) return nullptr;
  }
  start_ = 0;
  end_ = used;
  return data_ + end_;
}

inline void IoBuffer::Consume(size_t n) {
  start_ += n;
  if (start_ == end_) start_ = end_ = 0;
}

inline bool IoBuffer::Resize(size_t cap) {
  size_t used = size();
  cap = std::max(cap, used);
  if (cap == cap_ && start_ == 0) return true;
  char* n = nullptr;
  if (cap > 0) {
    n = static_cast<char*>(malloc(cap));
    if (!n) return false;
    if (used) memcpy(n, data_ + start_, used);
  }
  free(data_);
  data_ = n;
  cap_ = cap;
  start_ = 0;
  end_ = used;
  return true;
}

inline void IoBuffer::ShrinkIfIdle(size_t keep) {
  if (empty() && cap_ > keep) {
    free(data_);
    data_ = nullptr;
    cap_ = 0;
    start_ = end_ = 0;
  }
}

}  // namespace kv::server
