#include "server/memtest.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kv::server {
namespace {

using Word = uintptr_t;
constexpr size_t kPage = 4096;
constexpr size_t kBackupBytes = 1 << 20;  // a chunk: saved, tested, put back
constexpr int kMaxRegions = 200000;
constexpr Word kOneZero = static_cast<Word>(0xaaaaaaaaaaaaaaaaULL);
constexpr Word kZeroOne = static_cast<Word>(0x5555555555555555ULL);

void Put(int fd, const char* s) {
  if (write(fd, s, strlen(s)) < 0) return;
}

// xorshift: rand() is not async-signal-safe.
Word Next(Word* state) {
  Word x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

// Each word holds its own address, and its complement: stuck or crossed address lines.
int Addressing(volatile Word* m, size_t words) {
  int errors = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < words; i++)
      m[i] = pass ? ~reinterpret_cast<Word>(&m[i]) : reinterpret_cast<Word>(&m[i]);
    for (size_t i = 0; i < words; i++) {
      Word want = pass ? ~reinterpret_cast<Word>(&m[i]) : reinterpret_cast<Word>(&m[i]);
      if (m[i] != want) errors++;
    }
  }
  return errors;
}

// The two halves of the chunk get the same pattern, then are compared (Redis' fill-and-compare:
// a bit that does not hold its value shows as a difference).
int FillCompare(volatile Word* m, size_t words, Word v1, Word v2, Word* seed, bool random) {
  size_t half = words / 2;
  for (size_t i = 0; i < half; i++) {
    Word v = random ? Next(seed) : (i & 1 ? v2 : v1);
    m[i] = v;
    m[i + half] = v;
  }
  int errors = 0;
  for (int times = 0; times < 4; times++) {
    for (size_t i = 0; i < half; i++) {
      if (m[i] != m[i + half]) errors++;
    }
  }
  return errors;
}

// Redis' memtest_preserving_test with one pass: page-aligned regions of two pages or more.
int PreservingTest(Word* region, size_t bytes, Word* backup, Word* seed) {
  if (bytes % kPage != 0 || bytes < 2 * kPage) return 0;
  int errors = 0;
  Word* p = region;
  size_t left = bytes;
  while (left) {
    if (left == kPage) {  // a last single page: test it with the one before
      left += kPage;
      p -= kPage / sizeof(Word);
    }
    size_t len = left > kBackupBytes ? kBackupBytes : left;
    if ((len / kPage) % 2) len -= kPage;  // an even number of pages: two equal halves
    size_t words = len / sizeof(Word);
    memcpy(backup, p, len);
    volatile Word* v = p;
    errors += Addressing(v, words);
    errors += FillCompare(v, words, 0, 0, seed, /*random=*/true);
    errors += FillCompare(v, words, ~Word{0}, ~Word{0}, seed, false);
    errors += FillCompare(v, words, 0, 0, seed, false);
    errors += FillCompare(v, words, kOneZero, kZeroOne, seed, false);
    memcpy(p, backup, len);
    left -= len;
    p += words;
  }
  return errors;
}

// Parses "start-end perms offset dev inode name" lines of /proc/self/maps.
bool ParseLine(char* line, Word* start, Word* end) {
  char* dash = strchr(line, '-');
  if (!dash) return false;
  *dash = '\0';
  char* rest = strchr(dash + 1, ' ');
  if (!rest) return false;
  *rest++ = '\0';
  if (strstr(rest, "stack") || strstr(rest, "vdso") || strstr(rest, "vsyscall")) return false;
  if (!strstr(rest, "00:00") || !strstr(rest, "rw")) return false;
  *start = strtoul(line, nullptr, 16);
  *end = strtoul(dash + 1, nullptr, 16);
  return true;
}

struct Region {
  Word start, size;
};

// The other threads must not run while their memory is overwritten (even for a moment): each
// is sent a signal whose handler parks it for good (the process is dying anyway).
std::atomic<int> g_parked{0};
void Park(int) {
  g_parked.fetch_add(1);
  for (;;) pause();
}

void ParkOtherThreads() {
  struct sigaction act = {};
  sigfillset(&act.sa_mask);
  act.sa_handler = Park;
  const int sig = SIGRTMAX - 1;
  sigaction(sig, &act, nullptr);
  int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY);
  if (dir < 0) return;
  pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  int sent = 0;
  char buf[4096];
  long n;
  while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<dirent64*>(buf + off);
      off += d->d_reclen;
      pid_t tid = static_cast<pid_t>(atoi(d->d_name));
      if (tid <= 0 || tid == self) continue;
      if (syscall(SYS_tgkill, getpid(), tid, sig) == 0) sent++;
    }
  }
  close(dir);
  // Each parks as soon as the kernel runs it: wait for that, a second at most.
  timespec tick{0, 1000000};
  for (int i = 0; i < 1000 && g_parked.load() < sent; i++) nanosleep(&tick, nullptr);
}

}  // namespace

int TestAnonymousMappings(int fd) {
  ParkOtherThreads();
  // Outside every region tested: its own mapping, and a region that holds it is skipped.
  auto* backup = static_cast<Word*>(
      mmap(nullptr, kBackupBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  auto* regions =
      static_cast<Region*>(mmap(nullptr, sizeof(Region) * kMaxRegions, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (backup == MAP_FAILED || regions == MAP_FAILED) return 0;
  int maps = open("/proc/self/maps", O_RDONLY);
  if (maps < 0) return 0;
  // This thread's stack is in use (a thread's stack is an anonymous mapping of its own).
  Word here = reinterpret_cast<Word>(&maps);
  auto skip = [&](Word s, Word e, Word addr, Word len) { return addr < e && addr + len > s; };
  int n = 0;
  char buf[8192], line[1024];
  size_t line_len = 0;
  ssize_t got;
  while ((got = read(maps, buf, sizeof(buf))) > 0) {
    for (ssize_t i = 0; i < got; i++) {
      if (buf[i] != '\n') {
        if (line_len + 1 < sizeof(line)) line[line_len++] = buf[i];
        continue;
      }
      line[line_len] = '\0';
      line_len = 0;
      Word s, e;
      if (!ParseLine(line, &s, &e) || n == kMaxRegions) continue;
      if (skip(s, e, here, 1) || skip(s, e, reinterpret_cast<Word>(backup), kBackupBytes) ||
          skip(s, e, reinterpret_cast<Word>(regions), sizeof(Region) * kMaxRegions)) {
        continue;
      }
      regions[n++] = {s, e - s};
      char msg[128];
      snprintf(msg, sizeof(msg), "*** Preparing to test memory region %lx (%lu bytes)\n",
               static_cast<unsigned long>(s), static_cast<unsigned long>(e - s));
      Put(fd, msg);
    }
  }
  int errors = 0;
  Word seed = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < n; i++) {
    Put(fd, ".");
    errors +=
        PreservingTest(reinterpret_cast<Word*>(regions[i].start), regions[i].size, backup, &seed);
    Put(fd, errors ? "E" : "O");
  }
  Put(fd, "\n");
  close(maps);  // only now: its buffers may live in a region tested
  return errors;
}

}  // namespace kv::server
