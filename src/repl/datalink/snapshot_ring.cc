#include "repl/datalink/snapshot_ring.h"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <new>
#include <string>

#include "common/clock.h"

namespace kv::repl {

// Lives in the first page of the mapping. Each side writes its own cache line; the futex words
// are shared (not FUTEX_PRIVATE), as the two sides are different processes.
struct SnapshotRing::Shared {
  // The child's line.
  alignas(64) std::atomic<uint64_t> head{0};
  std::atomic<uint32_t> state{0};      // kProducing, kComplete or kFailed
  std::atomic<uint32_t> bytes_seq{0};  // bumped after head or state moves
  std::atomic<uint32_t> consumer_waiting{0};
  // The primary's line.
  alignas(64) std::atomic<uint64_t> tail{0};
  std::atomic<uint32_t> abandoned{0};
  pid_t owner = 0;                     // the primary (the producer's parent); set before the fork
  std::atomic<uint32_t> space_seq{0};  // bumped after tail moves or on Abandon
  std::atomic<uint32_t> producer_waiting{0};
};

namespace {

constexpr uint32_t kProducing = 0, kComplete = 1, kFailed = 2;
constexpr int kProducerWaitMs = 100;

static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the ring's atomics must work across processes");

void FutexWait(std::atomic<uint32_t>& word, uint32_t expected, int timeout_ms) {
  timespec ts{timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1000000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

// Bumps `seq` and wakes its waiter if one said it sleeps on it.
void Signal(std::atomic<uint32_t>& seq, const std::atomic<uint32_t>& waiting) {
  seq.fetch_add(1);
  if (waiting.load()) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&seq), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
  }
}

// Sleeps on `seq` unless `ready()` holds; the waiting flag is raised before the last check, so
// a Signal that follows the check finds it (and one between the load and the wait changes the
// word, which ends the wait at once).
template <typename Ready>
void Await(std::atomic<uint32_t>& seq, std::atomic<uint32_t>& waiting, int timeout_ms,
           Ready ready) {
  uint32_t seen = seq.load();
  waiting.store(1);
  if (!ready()) FutexWait(seq, seen, timeout_ms);
  waiting.store(0);
}

}  // namespace

Result<std::unique_ptr<SnapshotRing>> SnapshotRing::Create(size_t capacity) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  capacity = std::max(page, (capacity + page - 1) / page * page);
  size_t mapped = page + capacity;
  void* map = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return Status::FromErrno("mmap snapshot ring", errno);
  auto* shared = new (map) Shared();
  shared->owner = getpid();
  return std::unique_ptr<SnapshotRing>(
      new SnapshotRing(shared, static_cast<uint8_t*>(map) + page, capacity, mapped));
}

SnapshotRing::~SnapshotRing() {
  shared_->~Shared();
  munmap(shared_, mapped_);
}

Result<std::span<uint8_t>> SnapshotRing::Reserve(size_t max, int stall_ms) {
  Shared& s = *shared_;
  int64_t waiting_since = -1;
  for (;;) {
    if (s.abandoned.load()) return Status::Closed("the data link no longer takes the snapshot");
    uint64_t head = s.head.load(std::memory_order_relaxed);
    uint64_t space = capacity_ - (head - s.tail.load(std::memory_order_acquire));
    if (space > 0) {
      size_t at = static_cast<size_t>(head % capacity_);
      size_t n = std::min({std::max<size_t>(max, 1), static_cast<size_t>(space), capacity_ - at});
      return std::span<uint8_t>(data_ + at, n);
    }
    // A primary that died before the child asked for its death signal frees nothing.
    if (getppid() != s.owner) return Status::Closed("the primary is gone");
    if (stall_ms >= 0) {
      int64_t now = MonoMs();
      if (waiting_since < 0) waiting_since = now;
      if (now - waiting_since >= stall_ms) {
        return Status::IoError("the replica's data link took no snapshot bytes for " +
                               std::to_string(now - waiting_since) + " ms");
      }
    }
    Await(s.space_seq, s.producer_waiting, kProducerWaitMs,
          [&] { return s.tail.load() != head - capacity_ || s.abandoned.load(); });
  }
}

void SnapshotRing::Commit(size_t n) {
  Shared& s = *shared_;
  s.head.store(s.head.load(std::memory_order_relaxed) + n, std::memory_order_release);
  Signal(s.bytes_seq, s.consumer_waiting);
}

Status SnapshotRing::Write(const void* data, size_t len, int stall_ms) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (len > 0) {
    KV_TRY_ASSIGN(space, Reserve(len, stall_ms));
    memcpy(space.data(), p, space.size());
    Commit(space.size());
    p += space.size();
    len -= space.size();
  }
  return Status::Ok();
}

void SnapshotRing::Finish(bool ok) {
  shared_->state.store(ok ? kComplete : kFailed);
  Signal(shared_->bytes_seq, shared_->consumer_waiting);
}

std::span<const uint8_t> SnapshotRing::Readable(uint64_t from) const {
  uint64_t head = shared_->head.load(std::memory_order_acquire);
  if (from >= head) return {};
  size_t at = static_cast<size_t>(from % capacity_);
  size_t n = static_cast<size_t>(std::min<uint64_t>(head - from, capacity_ - at));
  return {data_ + at, n};
}

void SnapshotRing::WaitForBytes(uint64_t from, int timeout_ms) {
  Shared& s = *shared_;
  Await(s.bytes_seq, s.consumer_waiting, timeout_ms,
        [&] { return s.head.load() > from || s.state.load() != kProducing; });
}

void SnapshotRing::Release(uint64_t offset) {
  Shared& s = *shared_;
  offset = std::min(offset, s.head.load(std::memory_order_acquire));
  if (offset <= s.tail.load(std::memory_order_relaxed)) return;
  s.tail.store(offset, std::memory_order_release);
  Signal(s.space_seq, s.producer_waiting);
}

void SnapshotRing::Abandon() {
  shared_->abandoned.store(1);
  Signal(shared_->space_seq, shared_->producer_waiting);
}

bool SnapshotRing::finished() const { return shared_->state.load() != kProducing; }
bool SnapshotRing::failed() const { return shared_->state.load() == kFailed; }
uint64_t SnapshotRing::produced() const { return shared_->head.load(); }
uint64_t SnapshotRing::released() const { return shared_->tail.load(); }

}  // namespace kv::repl
