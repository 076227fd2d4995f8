#include "repl/backlog.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace kv::repl {

namespace {

// Allocates a block's shared state (the block and its reference counts, one allocation) with
// malloc and notes the usable size it got, so that the block's footprint is what used_memory
// counts for it.
template <class T>
struct MeasuredAlloc {
  using value_type = T;
  explicit MeasuredAlloc(size_t* usable) : usable(usable) {}
  template <class U>
  MeasuredAlloc(const MeasuredAlloc<U>& o) : usable(o.usable) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    void* p = std::malloc(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    *usable = malloc_usable_size(p);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U>
  bool operator==(const MeasuredAlloc<U>&) const {
    return true;
  }
  size_t* usable;  // written by allocate, only while the block is made
};

}  // namespace

void Backlog::Block::Free::operator()(char* p) const { std::free(p); }

Backlog::Block::Block(int64_t start, size_t cap, MemoryCounter counter)
    : start(start),
      cap(cap),
      data(cap ? static_cast<char*>(std::malloc(cap)) : nullptr),
      counter(std::move(counter)) {
  if (cap && data == nullptr) throw std::bad_alloc();
}

Backlog::Block::~Block() {
  counter->fetch_sub(footprint, std::memory_order_relaxed);
  // Freed one after the other, not by recursion: a long list must not exhaust the stack.
  std::shared_ptr<Block> n = std::move(next);
  while (n && n.use_count() == 1) n = std::move(n->next);
}

std::shared_ptr<Backlog::Block> Backlog::MakeBlock(int64_t start, size_t cap) {
  size_t shell = 0;
  auto block = std::allocate_shared<Block>(MeasuredAlloc<Block>(&shell), start, cap, memory_);
  block->footprint = shell + (block->data ? malloc_usable_size(block->data.get()) : 0);
  memory_->fetch_add(block->footprint, std::memory_order_relaxed);
  // A full block's overhead; until one is made, the first (empty) block's shared state.
  if (cap == block_bytes_ || block_overhead_ == 0) block_overhead_ = block->footprint - cap;
  return block;
}

size_t Backlog::MemoryPastCapacity() const {
  // As Redis: the capacity, and the overhead of the blocks it takes (one more for the block
  // being filled).
  size_t counted = capacity_ + (capacity_ / block_bytes_ + 1) * block_overhead_;
  size_t held = memory();
  return held > counted ? held - counted : 0;
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
      end_(start_offset),
      memory_(std::make_shared<std::atomic<size_t>>(0)) {
  head_ = MakeBlock(start_offset, 0);
  tail_ = head_.get();
}

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
    auto block = MakeBlock(end_, block_bytes_);
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
