// CPU pinning by Redis' cpulist parameters (server_cpulist, bio_cpulist, bgsave_cpulist,
// aof_rewrite_cpulist). Each thread pins itself when it starts, as in Redis: the serving
// threads (the main thread, the poll groups and every thread they start) to server_cpulist,
// the background ones (the AOF's fsync thread, lazy freeing) to bio_cpulist, and a forked child
// to the list for its kind.
#pragma once

#include <sched.h>

#include <optional>
#include <string>
#include <string_view>

namespace kv {

// A cpulist as taskset reads it: "0,2,3", "0,2-3", "0-20:2" (a range with a stride). Nullopt
// when it is empty or malformed: Redis then leaves the thread's affinity as it is, and so does
// PinThisThread.
std::optional<cpu_set_t> ParseCpuList(std::string_view list);

// Pins the calling thread to `list`; nothing happens for an empty or malformed one.
void PinThisThread(const std::string& list);

enum class ThreadRole { kServer, kBackground };

// Records the lists for each role and the process' affinity before any pinning (what a
// background thread keeps when bio_cpulist is empty, as Redis' bio threads, which start before
// its main thread pins itself). Call once, before threads start.
void SetThreadCpuLists(const std::string& server_list, const std::string& bio_list);
// Pins the calling thread as its role says (no lists set: nothing changes). Any thread.
void PinThreadForRole(ThreadRole role);

}  // namespace kv
