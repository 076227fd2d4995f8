// The bytes the process has allocated with malloc (and new) and not freed: what INFO reports as
// used_memory and what maxmemory is checked against. Counted at each allocation and free with
// the allocator's own usable size, as Redis' zmalloc counts (alloc_count.cc replaces malloc,
// free and their relatives with wrappers of glibc's). Only kvstore-server links the wrappers
// (the kv_alloc_count object library); elsewhere alloc_fallback.cc answers from mallinfo2().
#pragma once

#include <cstddef>

namespace kv {

// The bytes in use now. Exact, and cheap enough to read before every command.
size_t AllocatedBytes();
// False where the wrappers are not linked (tests, tools) or left out (sanitizers bring their own
// allocator): AllocatedBytes() then answers from mallinfo2(), which is slower.
bool AllocationsCounted();

}  // namespace kv
