// The replication buffer: the stream of writes in a list of blocks that the backlog and every
// replica's socket share, as Redis 7.0's shared replication buffer. The backlog is the list
// from its first block on; a replica reads it through a Cursor, which keeps the blocks from its
// place on alive. So two replicas cost one copy of the stream, and a replica that lags (or
// waits for its snapshot) keeps the history it needs: the backlog then holds more than its
// configured size, and a replica that reconnects can resync partially from it.
//
// Offsets count stream bytes since the replication ID began: end_offset() is Redis'
// master_repl_offset, the bytes held are [end_offset() - histlen(), end_offset()). The oldest
// blocks go once the rest holds more than `capacity` bytes and no replica needs them (the
// owner says from which offset on they are needed: set_needed_from). Whole blocks, so
// histlen() may pass the capacity by up to a block, as in Redis. A block that leaves the list
// lives on while a cursor (of a replica being closed) still holds it.
//
// Thread safety: Append, Resize, Trim and CursorAt run under one lock (the keyspace lock).
// A Cursor is used by one thread at a time, without that lock: blocks are append-only, their
// filled length and their successor are published with release stores.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kv::repl {

class Backlog {
 public:
  // The size of a block (Redis' PROTO_REPLY_CHUNK_BYTES). A big write spans several, so the
  // backlog trims to within a block of its size whatever the writes were.
  static constexpr size_t kBlockBytes = 16 * 1024;

  // The bytes the backlog's blocks take from the allocator, shared with its blocks: a block
  // that a cursor keeps alive past the backlog's trim (or past the backlog) still counts until
  // it is freed, as Redis' repl_buffer_mem does.
  using MemoryCounter = std::shared_ptr<std::atomic<size_t>>;

  struct Block {
    struct Free {
      void operator()(char* p) const;
    };
    Block(int64_t start, size_t cap, MemoryCounter counter);
    ~Block();
    const int64_t start;  // the stream offset of data[0]
    const size_t cap;
    const std::unique_ptr<char, Free> data;
    std::atomic<size_t> used{0};
    std::shared_ptr<Block> next;  // set once, before has_next
    std::atomic<bool> has_next{false};
    // What the block and its data take from the allocator (as used_memory counts it), added to
    // `counter` when made and taken off when freed.
    size_t footprint = 0;
    MemoryCounter counter;
  };

  // A reader's place in the stream: one replica's socket.
  class Cursor {
   public:
    Cursor() = default;
    bool valid() const { return block_ != nullptr; }
    // The offset of the next byte to read.
    int64_t offset() const { return block_->start + static_cast<int64_t>(pos_); }
    // The bytes readable now in one piece (empty when the reader has caught up).
    std::string_view Readable();
    void Consume(size_t n) { pos_ += n; }

   private:
    friend class Backlog;
    std::shared_ptr<Block> block_;
    size_t pos_ = 0;
  };

  Backlog(size_t capacity, int64_t start_offset, size_t block_bytes = kBlockBytes);
  ~Backlog();
  Backlog(const Backlog&) = delete;
  Backlog& operator=(const Backlog&) = delete;

  void Append(std::string_view data);
  // Changes the capacity (CONFIG SET repl-backlog-size) and trims to it.
  void Resize(size_t capacity);
  // Drops the oldest blocks the capacity and the replicas allow (Append does it too; the
  // primary's cron does it after a replica moved on or went).
  void Trim();
  // The replicas need the stream from `offset` on (INT64_MAX: none needs any).
  void set_needed_from(int64_t offset) { needed_from_ = offset; }

  int64_t end_offset() const { return end_; }
  size_t histlen() const { return static_cast<size_t>(end_ - head_->start); }
  size_t capacity() const { return capacity_; }
  // What the blocks take from the allocator, the blocks a cursor alone still holds included
  // (INFO mem_total_replication_buffers; Redis' repl_buffer_mem).
  size_t memory() const { return memory_->load(std::memory_order_relaxed); }
  // The part of memory() past what a backlog of capacity() bytes takes (the capacity and its
  // blocks' overhead): the replicas' share, which maxmemory does not count. As Redis'
  // freeMemoryGetNotCountedMemory, whether replicas are attached or not: blocks a replica
  // that went held are trimmed a while later, and must not count meanwhile either.
  size_t MemoryPastCapacity() const;
  // Redis' repl_backlog_first_byte_offset (1-based, as INFO shows it).
  int64_t first_byte_offset() const { return head_->start + 1; }
  // True when the bytes [offset, end_offset()) are all held.
  bool Covers(int64_t offset) const { return offset <= end_ && offset >= head_->start; }
  // Appends the bytes [offset, end_offset()) to *out; false when not all are held.
  bool CopySince(int64_t offset, std::string* out) const;
  // A cursor at `offset`, which Covers.
  Cursor CursorAt(int64_t offset) const;

 private:
  // A block of `cap` bytes from `start` on, its footprint measured and counted.
  std::shared_ptr<Block> MakeBlock(int64_t start, size_t cap);

  size_t capacity_;
  const size_t block_bytes_;
  int64_t end_;
  MemoryCounter memory_;
  std::shared_ptr<Block> head_;
  Block* tail_ = nullptr;
  size_t block_overhead_ = 0;  // a full block's footprint less its capacity
  int64_t needed_from_ = INT64_MAX;
};

}  // namespace kv::repl
