#include "repl/backlog.h"

#include <algorithm>
#include <cstring>

namespace kv::repl {

Backlog::Block::~Block() {
  // Freed one after the other, not by recursion: a long list must not exhaust the stack.
  std::shared_ptr<Block> n = std::move(next);
  while (n && n.use_count() == 1) n = std::move(n->next);
}

std::string_view Backlog::Cursor::Readable() {
  for (;;) {
    // has_next first: once it is set, `used` is final.
    bool last = !block_->has_next.load(std::memory_order_acquire);
    size_t used = block_->used.load(std::memory_order_acquire);
    if (pos_ < used) return {block_->data.get() + pos_, used - pos_};
    if (last) return {};
    block_ = block_->next;
    pos_ = 0;
  }
}

// The first block is empty, so that a cursor always has a block to stand on.
Backlog::Backlog(size_t capacity, int64_t start_offset, size_t block_bytes)
    : capacity_(capacity),
      block_bytes_(std::max<size_t>(block_bytes, 1)),
      head_(std::make_shared<Block>(start_offset, 0)),
      tail_(head_.get()),
      end_(start_offset) {}

Backlog::~Backlog() {
  // Blocks a cursor still holds stay alive with it; the rest go here.
  std::shared_ptr<Block> n = std::move(head_);
  while (n && n.use_count() == 1) n = std::move(n->next);
}

void Backlog::Append(std::string_view data) {
  while (!data.empty()) {
    size_t used = tail_->used.load(std::memory_order_relaxed);
    size_t n = std::min(data.size(), tail_->cap - used);
    if (n > 0) {
      memcpy(tail_->data.get() + used, data.data(), n);
      tail_->used.store(used + n, std::memory_order_release);
      data.remove_prefix(n);
      end_ += static_cast<int64_t>(n);
      continue;
    }
    auto block = std::make_shared<Block>(end_, block_bytes_);
    memory_ += block->cap;
    Block* fresh = block.get();
    tail_->next = std::move(block);
    tail_->has_next.store(true, std::memory_order_release);
    tail_ = fresh;
  }
  Trim();
}

void Backlog::Resize(size_t capacity) {
  capacity_ = capacity;
  Trim();
}

void Backlog::Trim() {
  // As Redis' incrementalTrimReplicationBacklog: the first block goes when the rest still
  // holds more than the capacity and no replica needs it.
  for (;;) {
    size_t used = head_->used.load(std::memory_order_relaxed);
    if (head_.get() == tail_ || histlen() - used <= capacity_ ||
        head_->start + static_cast<int64_t>(used) > needed_from_) {
      break;
    }
    memory_ -= head_->cap;
    head_ = head_->next;  // the old first block goes (its `next` is still held here)
  }
}

bool Backlog::CopySince(int64_t offset, std::string* out) const {
  if (!Covers(offset)) return false;
  Cursor c = CursorAt(offset);
  for (std::string_view s = c.Readable(); !s.empty(); s = c.Readable()) {
    out->append(s);
    c.Consume(s.size());
  }
  return true;
}

Backlog::Cursor Backlog::CursorAt(int64_t offset) const {
  Cursor c;
  c.block_ = head_;
  while (c.block_.get() != tail_ &&
         offset >= c.block_->start + static_cast<int64_t>(c.block_->used.load())) {
    c.block_ = c.block_->next;
  }
  c.pos_ = static_cast<size_t>(offset - c.block_->start);
  return c;
}

}  // namespace kv::repl
