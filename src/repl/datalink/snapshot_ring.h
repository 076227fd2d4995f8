// A byte ring in memory shared between the primary and its forked snapshot child, for a full
// resync over the data link: the child serializes the RDB into the ring, and the data link's
// thread in the primary writes it to the replica straight from the ring (the ring is registered
// with the link once), with no pipe and no staging copy in between.
//
// Offsets are byte counts from the start of the snapshot: the child has produced [0, head); the
// primary has released [0, tail) (the replica acknowledged those bytes). Bytes in [tail, head)
// stay in the ring, so a rebuilt link can resend from any offset in that range. The child waits
// for space, the primary for bytes, each on a futex in the shared page (timed, so that neither
// hangs on the other's death).
//
// Threads: Write() and Finish() by the child (one producer); the rest by the primary's data-link
// thread (one consumer), except Abandon(), which any primary thread may call.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "common/status.h"
#include "persist/sink.h"

namespace kv::repl {

class SnapshotRing {
 public:
  // A ring of `capacity` bytes (rounded up to whole pages), mapped shared: create it before the
  // fork so that the child inherits it.
  static Result<std::unique_ptr<SnapshotRing>> Create(size_t capacity);
  ~SnapshotRing();
  SnapshotRing(const SnapshotRing&) = delete;
  SnapshotRing& operator=(const SnapshotRing&) = delete;

  // Child: appends all `len` bytes, waiting for space; Closed once the primary abandoned it.
  // With `stall_ms` >= 0, a wait for space longer than that fails (IoError): the replica's
  // link stopped taking bytes.
  Status Write(const void* data, size_t len, int stall_ms = -1);
  // Child, writing in place: the free space at the head, at most `max` bytes (at least one:
  // waits for space as Write does, `stall_ms` likewise), to fill and then Commit.
  Result<std::span<uint8_t>> Reserve(size_t max, int stall_ms = -1);
  // Child: the first n bytes of the last Reserve's space are produced.
  void Commit(size_t n);
  // Child: the snapshot is complete (ok) or failed; nothing follows.
  void Finish(bool ok);

  // Primary: the bytes produced from offset `from` on (contiguous: at most up to the ring's
  // wrap point); empty when there are none yet.
  std::span<const uint8_t> Readable(uint64_t from) const;
  // Primary: waits up to `timeout_ms` for bytes past `from` or for the end.
  void WaitForBytes(uint64_t from, int timeout_ms);
  // Primary: frees the ring's space below `offset` (acknowledged by the replica).
  void Release(uint64_t offset);
  // Primary: stop feeding the ring (the link is gone); the child's next Write fails.
  void Abandon();

  // Set once Finish() was called: every byte is in [0, produced()).
  bool finished() const;
  bool failed() const;
  uint64_t produced() const;
  uint64_t released() const;
  // The data area, for registering with the link.
  std::span<const uint8_t> memory() const { return {data_, capacity_}; }

 private:
  struct Shared;  // the header page: offsets, state and futex words
  SnapshotRing(Shared* shared, uint8_t* data, size_t capacity, size_t mapped)
      : shared_(shared), data_(data), capacity_(capacity), mapped_(mapped) {}

  Shared* shared_;
  uint8_t* data_;
  size_t capacity_;
  size_t mapped_;
};

// The child's sink into a ring; its windows are the ring's free space, so the RDB writer
// serializes straight into the ring. `stall_ms`: see SnapshotRing::Write.
class RingSink : public persist::Sink {
 public:
  explicit RingSink(SnapshotRing& ring, int stall_ms = -1) : ring_(ring), stall_ms_(stall_ms) {}
  Status Write(const void* data, size_t len) override { return ring_.Write(data, len, stall_ms_); }
  Result<std::span<uint8_t>> Window(size_t max) override { return ring_.Reserve(max, stall_ms_); }
  Status Commit(size_t n) override {
    ring_.Commit(n);
    return Status::Ok();
  }

 private:
  SnapshotRing& ring_;
  int stall_ms_;
};

}  // namespace kv::repl
