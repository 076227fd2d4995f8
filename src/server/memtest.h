// The fast memory test of a crash report (crash-memcheck-enabled), as Redis runs it: every
// writable anonymous mapping of the process (but the crashing thread's stack) is tested in
// place, a chunk at a time, each chunk saved first and put back after, so the report can say
// whether the crash may have come from broken memory. The process' other threads are parked
// first (for good: the process is on its way out).
#pragma once

namespace kv::server {

// Writes "*** Preparing to test memory region ..." for each region, a "." then "O" (or "E" for
// errors) as each is tested, and returns the number of errors found. Only async-signal-safe
// calls: for a crash handler. `fd` is where the lines go.
int TestAnonymousMappings(int fd);

}  // namespace kv::server
