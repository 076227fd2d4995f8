#include "common/cpu_affinity.h"

#include <cctype>
#include <cstdlib>
#include <mutex>

namespace kv {
namespace {

// The number at `*p` (digits only, as Redis' next_num); false when there is none.
bool Number(std::string_view s, size_t* p, int* out) {
  if (*p >= s.size() || !isdigit(static_cast<unsigned char>(s[*p]))) return false;
  long v = 0;
  while (*p < s.size() && isdigit(static_cast<unsigned char>(s[*p]))) {
    v = v * 10 + (s[*p] - '0');
    if (v >= CPU_SETSIZE) return false;
    (*p)++;
  }
  *out = static_cast<int>(v);
  return true;
}

struct Lists {
  std::mutex mu;
  bool set = false;
  std::optional<cpu_set_t> server, bio;
  cpu_set_t original;
};
Lists& lists() {
  static Lists l;
  return l;
}

}  // namespace

std::optional<cpu_set_t> ParseCpuList(std::string_view list) {
  if (list.empty()) return std::nullopt;
  cpu_set_t set;
  CPU_ZERO(&set);
  size_t p = 0;
  while (true) {
    int a, b, stride = 1;
    if (!Number(list, &p, &a)) return std::nullopt;
    b = a;
    if (p < list.size() && list[p] == '-') {
      p++;
      if (!Number(list, &p, &b)) return std::nullopt;
      if (p < list.size() && list[p] == ':') {
        p++;
        if (!Number(list, &p, &stride) || stride == 0) return std::nullopt;
      }
    }
    if (a > b) return std::nullopt;
    for (; a <= b; a += stride) CPU_SET(a, &set);
    if (p == list.size()) break;
    if (list[p] != ',') return std::nullopt;
    p++;
  }
  return set;
}

void PinThisThread(const std::string& list) {
  if (auto set = ParseCpuList(list)) sched_setaffinity(0, sizeof(*set), &*set);
}

void SetThreadCpuLists(const std::string& server_list, const std::string& bio_list) {
  Lists& l = lists();
  std::lock_guard lock(l.mu);
  l.set = true;
  l.server = ParseCpuList(server_list);
  l.bio = ParseCpuList(bio_list);
  CPU_ZERO(&l.original);
  if (sched_getaffinity(0, sizeof(l.original), &l.original) != 0) l.set = false;
}

void PinThreadForRole(ThreadRole role) {
  Lists& l = lists();
  std::lock_guard lock(l.mu);
  if (!l.set) return;
  const std::optional<cpu_set_t>& list = role == ThreadRole::kServer ? l.server : l.bio;
  // A background thread started by a pinned serving thread inherited server_cpulist: without
  // a bio_cpulist of its own it goes back to what the process had.
  const cpu_set_t& set = list ? *list : l.original;
  if (list || role == ThreadRole::kBackground) sched_setaffinity(0, sizeof(set), &set);
}

}  // namespace kv
