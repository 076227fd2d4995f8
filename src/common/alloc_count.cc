#include "common/alloc_count.h"

#include <errno.h>
#include <malloc.h>

#include <atomic>
#include <climits>
#include <cstdint>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KV_NO_ALLOC_COUNT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define KV_NO_ALLOC_COUNT 1
#endif
#endif

namespace kv {

#ifndef KV_NO_ALLOC_COUNT
namespace {
// One counter a thread (shared when there are more threads than slots), each on its own cache
// line: a free on another thread than the allocation's makes a slot negative, the sum is right.
constexpr unsigned kSlots = 8;
struct alignas(64) Slot {
  std::atomic<int64_t> bytes{0};
};
Slot g_slots[kSlots];
std::atomic<unsigned> g_next_slot{0};
thread_local unsigned t_slot = UINT_MAX;

inline void Count(int64_t delta) {
  if (t_slot == UINT_MAX) t_slot = g_next_slot.fetch_add(1, std::memory_order_relaxed) % kSlots;
  g_slots[t_slot].bytes.fetch_add(delta, std::memory_order_relaxed);
}
inline int64_t Usable(void* p) { return p ? static_cast<int64_t>(malloc_usable_size(p)) : 0; }
}  // namespace

size_t AllocatedBytes() {
  int64_t sum = 0;
  for (const Slot& s : g_slots) sum += s.bytes.load(std::memory_order_relaxed);
  return sum > 0 ? static_cast<size_t>(sum) : 0;
}

bool AllocationsCounted() { return true; }
#endif

}  // namespace kv

#ifndef KV_NO_ALLOC_COUNT
// glibc documents replacing malloc this way; its own functions under their internal names do
// the work. Every allocation of the process goes through here, libraries' included.
extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  void* p = __libc_malloc(n);
  kv::Count(kv::Usable(p));
  return p;
}

void free(void* p) {
  if (p == nullptr) return;
  kv::Count(-kv::Usable(p));
  __libc_free(p);
}

void* calloc(size_t n, size_t size) {
  void* p = __libc_calloc(n, size);
  kv::Count(kv::Usable(p));
  return p;
}

void* realloc(void* p, size_t n) {
  int64_t before = kv::Usable(p);
  void* q = __libc_realloc(p, n);
  if (q != nullptr) {
    kv::Count(kv::Usable(q) - before);
  } else if (p != nullptr && n == 0) {
    kv::Count(-before);  // realloc(p, 0) freed p
  }
  return q;
}

void* memalign(size_t align, size_t n) {
  void* p = __libc_memalign(align, n);
  kv::Count(kv::Usable(p));
  return p;
}

void* aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

int posix_memalign(void** out, size_t align, size_t n) {
  if (align % sizeof(void*) != 0 || (align & (align - 1)) != 0) return EINVAL;
  void* p = memalign(align, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t n) { return memalign(4096, n); }

void* pvalloc(size_t n) { return memalign(4096, (n + 4095) & ~static_cast<size_t>(4095)); }
}
#endif
