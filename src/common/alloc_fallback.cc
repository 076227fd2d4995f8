// What AllocatedBytes() answers in a program that does not count its allocations (the tests,
// the tools, sanitizer builds): glibc's mallinfo2(), which walks the heap. Weak, so that the
// counting wrappers of alloc_count.cc, linked into kvstore-server, take their place there.
#include <malloc.h>

#include "common/alloc_count.h"

namespace kv {

__attribute__((weak)) size_t AllocatedBytes() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

__attribute__((weak)) bool AllocationsCounted() { return false; }

}  // namespace kv
