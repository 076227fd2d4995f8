// kvstore-sync-floor: what moving a dataset from a primary's memory into a replica's costs on
// this machine at the least, in CPU-seconds, whatever the server's code around it. A full sync
// over the shm data plane does each of these steps at least once per byte of the snapshot:
//   1. the forked snapshot child copies every value (scattered 1 KB objects it reaches through
//      the keyspace) into the link's staging ring;
//   2. the provider copies the ring across processes (shm: process_vm_readv by the replica);
//   3. the replica's kernel hands it fresh, zeroed pages for the dataset it loads;
//   4. the replica's loader allocates each value and copies its bytes in.
// Each step runs alone, in a process of its own, on buffers laid out like the sync's; the table
// gives CPU-seconds per GB of values (medians of --runs) and their sum: the floor under the
// sync's "CPU-s per GB in all" column of bench/repl_bench.py, before any parsing, hashing,
// checksums or link protocol. Then all four at once, in two processes that share the machine
// as a primary and its replica do, and (not summed) what fresh memory beyond the first
// dataset's worth costs: on a VM that hands freed pages back to its host, most of a replica's
// memory. Not a comparison with redis-server: Redis pays the same steps (it writes to a socket
// instead of a ring and reads from one).
//
// Usage: kvstore-sync-floor [--values N] [--size BYTES] [--runs R]
#include <malloc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr size_t kRing = 4 << 20;   // the staging and receive rings
constexpr size_t kPiece = 1 << 20;  // one cross-process copy (a data-link chunk at most)
#ifdef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;  // Linux 5.14
#endif

struct Options {
  size_t values = 1000000;
  size_t size = 1000;
  int runs = 3;
};

double CpuSeconds(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

// Runs `step` in a fresh child (so that every step starts from a fresh heap) and returns the
// `n` numbers it reports through a pipe; empty when the child failed.
std::vector<double> InChildN(size_t n, const std::function<std::vector<double>()>& step) {
  int p[2];
  if (pipe(p) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    std::vector<double> v = step();
    ssize_t bytes = static_cast<ssize_t>(n * sizeof(double));
    _exit(v.size() == n && write(p[1], v.data(), bytes) == bytes ? 0 : 1);
  }
  close(p[1]);
  std::vector<double> v(n);
  ssize_t bytes = static_cast<ssize_t>(n * sizeof(double));
  bool ok = pid > 0 && read(p[0], v.data(), bytes) == bytes;
  close(p[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  for (double x : v) {
    if (x < 0) return {};
  }
  return v;
}

double InChild(const std::function<double()>& step) {
  auto v = InChildN(1, [&] { return std::vector<double>{step()}; });
  return v.empty() ? -1 : v[0];
}

// In a child whose memory another process will read with process_vm_readv: lets any process
// of this user do so (Yama's ptrace_scope 1 allows only ancestors, and the reader is a
// sibling), then says so on `ready`.
void AllowReaders(int ready) {
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
  if (write(ready, "r", 1) != 1) _exit(1);
}

bool AwaitReady(int ready) {
  char b;
  return read(ready, &b, 1) == 1;
}

void FillRandom(uint8_t* p, size_t n, std::mt19937_64& rng) {
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    memcpy(p + i, &v, 8);
  }
}

// A dataset of separately allocated values of random bytes, listed in an order unrelated to
// their addresses (as the keyspace's hash order is).
std::vector<uint8_t*> MakeDataset(const Options& o, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t*> values(o.values);
  for (auto& v : values) {
    v = static_cast<uint8_t*>(malloc(o.size));
    FillRandom(v, o.size, rng);
  }
  std::shuffle(values.begin(), values.end(), rng);
  return values;
}

uint8_t* SharedRing() {
  void* r = mmap(nullptr, kRing, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return r == MAP_FAILED ? nullptr : static_cast<uint8_t*>(r);
}

// The snapshot child's part: every value copied into the ring in turn; its CPU-seconds.
double CopyIntoRing(const std::vector<uint8_t*>& values, size_t size, uint8_t* ring) {
  double start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  size_t at = 0;
  for (uint8_t* v : values) {
    if (at + size > kRing) at = 0;
    memcpy(ring + at, v, size);
    at += size;
  }
  return CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - start;
}

// Step 1: the dataset copied by a forked child into a shared ring.
double DatasetThenChildCopy(const Options& o) {
  std::vector<uint8_t*> values = MakeDataset(o, 1);
  uint8_t* ring = SharedRing();
  if (ring == nullptr) return -1;
  return InChild([&] { return CopyIntoRing(values, o.size, ring); });
}

// Step 1, in a process of its own (its dataset goes with it).
double ForkedChildCopy(const Options& o) {
  return InChild([&] { return DatasetThenChildCopy(o); });
}

// Step 2: the receiving process copies the sender's ring into its own, piece by piece, as
// shm's cross-memory attach does for a write.
double CrossProcessCopy(const Options& o) {
  int go[2], ready[2];
  if (pipe(go) != 0 || pipe(ready) != 0) return -1;
  auto* source = static_cast<uint8_t*>(malloc(kRing));
  std::mt19937_64 rng(2);
  FillRandom(source, kRing, rng);
  pid_t peer = fork();
  if (peer == 0) {
    AllowReaders(ready[1]);
    close(go[1]);
    char b;
    ssize_t r = read(go[0], &b, 1);  // holds the source until the copier is done
    _exit(r >= 0 ? 0 : 1);
  }
  close(go[0]);
  double s = peer > 0 && AwaitReady(ready[0]) ? InChild([&] {
    std::vector<uint8_t> ring(kRing);
    memset(ring.data(), 0, kRing);
    double start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
    size_t total = o.values * o.size;
    for (size_t done = 0, at = 0; done < total;) {
      size_t n = std::min(kPiece, total - done);
      if (at + n > kRing) at = 0;
      iovec local{ring.data() + at, n};
      iovec remote{source + at, n};
      if (process_vm_readv(peer, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(n)) return -1.0;
      done += n;
      at += n;
    }
    return CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - start;
  })
                                              : -1;
  close(go[1]);
  close(ready[0]);
  close(ready[1]);
  if (peer > 0) waitpid(peer, nullptr, 0);
  free(source);
  return s;
}

// Step 3: fresh anonymous memory for the dataset, faulted in (zeroed by the kernel) in one call
// per range, as the replica's receive thread populates its chunk buffers.
// CPU-seconds to map and fault in `n` bytes of fresh anonymous memory; negative on failure.
double Populate(size_t n) {
  double start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  void* m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return -1.0;
  if (madvise(m, n, kPopulateWrite) != 0) {
    auto* p = static_cast<volatile uint8_t*>(m);
    for (size_t i = 0; i < n; i += 4096) p[i] = 1;  // kernels before 5.14
  }
  return CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - start;
}

double FreshPages(const Options& o) {
  return InChild([&] { return Populate(o.values * o.size); });
}

// Not a step of its own: what two more datasets' worth of fresh memory costs after the first,
// per dataset. Where the kernel keeps little freed memory at hand (a VM that reports free
// pages to its host gives them back, and faulting them in again is the host's work billed to
// this process), a sync's replica pays this rather than step 3.
double MoreFreshPages(const Options& o) {
  return InChild([&] {
    size_t n = o.values * o.size;
    if (Populate(n) < 0) return -1.0;
    double a = Populate(n), b = Populate(n);
    return a < 0 || b < 0 ? -1.0 : (a + b) / 2;
  });
}

// Step 4: one allocation and one copy per value out of a receive ring, into memory the heap
// already holds (its pages are step 3's).
double AllocateAndCopy(const Options& o) {
  return InChild([&] {
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, -1);  // freed memory stays in the heap, faulted in
    std::vector<uint8_t*> values(o.values);
    for (auto& v : values) v = static_cast<uint8_t*>(calloc(1, o.size));
    for (auto* v : values) free(v);
    std::vector<uint8_t> ring(kRing);
    std::mt19937_64 rng(3);
    FillRandom(ring.data(), kRing, rng);
    double start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
    size_t at = 0;
    for (auto& v : values) {
      if (at + o.size > kRing) at = 0;
      v = static_cast<uint8_t*>(malloc(o.size));
      memcpy(v, ring.data() + at, o.size);
      at += o.size;
    }
    double s = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - start;
    uint64_t sum = 0;
    for (auto* v : values) sum += v[0];  // the copies are used, so they stay
    return sum == UINT64_MAX ? -1.0 : s;
  });
}

// All of it at once, as a sync overlaps it: a forked child copies the dataset into a shared
// ring while a receiving process copies that ring across, 1 MiB at a time, and copies each
// value out of it into fresh memory (populated a piece at a time; values packed one after the
// other, the cheapest allocation there is). The two processes share the machine's cores and
// memory as a primary and its replica do. Returns the sender's and the receiver's CPU-seconds
// and the receiver's wall time.
std::vector<double> Overlapped(const Options& o) {
  return InChildN(3, [&]() -> std::vector<double> {
    std::vector<uint8_t*> values = MakeDataset(o, 4);
    uint8_t* ring = SharedRing();
    int go[2], done[2], rs[2], rr[2], ready[2];
    if (ring == nullptr || pipe(go) || pipe(done) || pipe(rs) || pipe(rr) || pipe(ready)) {
      return {};
    }
    auto report = [](int fd, std::vector<double> v) {
      ssize_t bytes = static_cast<ssize_t>(v.size() * sizeof(double));
      return write(fd, v.data(), bytes) == bytes;
    };
    pid_t sender = fork();
    if (sender == 0) {
      AllowReaders(ready[1]);
      close(done[1]);  // its end comes when the parent and the receiver close theirs
      close(rr[1]);
      char b;
      if (read(go[0], &b, 1) != 1) _exit(1);
      bool ok = report(rs[1], {CopyIntoRing(values, o.size, ring)});
      ok = read(done[0], &b, 1) >= 0 && ok;  // the receiver reads this process' ring
      _exit(ok ? 0 : 1);
    }
    close(rs[1]);
    if (sender < 0 || !AwaitReady(ready[0])) return {};
    pid_t receiver = fork();
    if (receiver == 0) {
      close(done[1]);
      char b;
      if (read(go[0], &b, 1) != 1) _exit(1);
      double start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
      timespec t0;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      size_t total = o.values * o.size;
      std::vector<uint8_t> local(kRing);
      auto* dataset = static_cast<uint8_t*>(
          mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (dataset == MAP_FAILED) _exit(1);
      for (size_t done_bytes = 0, at = 0; done_bytes < total;) {
        size_t n = std::min(kPiece, total - done_bytes);
        if (at + n > kRing) at = 0;
        iovec li{local.data() + at, n};
        iovec ri{ring + at, n};
        if (process_vm_readv(sender, &li, 1, &ri, 1, 0) != static_cast<ssize_t>(n)) _exit(1);
        (void)madvise(dataset + done_bytes, n, kPopulateWrite);
        for (size_t off = 0; off < n; off += o.size) {
          memcpy(dataset + done_bytes + off, local.data() + at + off, std::min(o.size, n - off));
        }
        done_bytes += n;
        at += n;
      }
      timespec t1;
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
      _exit(report(rr[1], {CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - start, wall}) ? 0 : 1);
    }
    close(rr[1]);
    std::vector<double> r(3, -1);
    bool ok = sender > 0 && receiver > 0 && write(go[1], "gg", 2) == 2 &&
              read(rs[0], &r[0], sizeof(double)) == sizeof(double) &&
              read(rr[0], &r[1], 2 * sizeof(double)) == 2 * sizeof(double);
    close(done[1]);
    int s1 = 0, s2 = 0;
    if (sender > 0) waitpid(sender, &s1, 0);
    if (receiver > 0) waitpid(receiver, &s2, 0);
    if (!ok || !WIFEXITED(s1) || WEXITSTATUS(s1) || !WIFEXITED(s2) || WEXITSTATUS(s2)) return {};
    return r;
  });
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (i + 1 >= argc) return false;
    long long v = atoll(argv[++i]);
    if (v <= 0) return false;
    if (a == "--values") {
      o->values = static_cast<size_t>(v);
    } else if (a == "--size") {
      o->size = static_cast<size_t>(v);
    } else if (a == "--runs") {
      o->runs = static_cast<int>(v);
    } else {
      return false;
    }
  }
  return o->size >= 8 && o->size <= kPiece;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) {
    fprintf(stderr,
            "usage: kvstore-sync-floor [--values N] [--size BYTES (8..1048576)] [--runs R]\n");
    return 2;
  }
  struct Step {
    const char* name;
    double (*run)(const Options&);
    std::vector<double> seconds;
  };
  Step steps[] = {{"forked child copies the values into a ring", ForkedChildCopy, {}},
                  {"cross-process copy of the ring (process_vm_readv)", CrossProcessCopy, {}},
                  {"fresh zeroed pages for the replica's dataset", FreshPages, {}},
                  {"malloc and copy of each value out of a ring", AllocateAndCopy, {}}};
  std::vector<double> sender, receiver, both, wall, more;
  double gb = static_cast<double>(o.values) * o.size / 1e9;
  fprintf(stderr, "%zu values x %zu bytes (%.2f GB), %d runs of each step\n", o.values, o.size, gb,
          o.runs);
  for (int r = 0; r < o.runs; r++) {
    for (Step& s : steps) {
      double v = s.run(o);
      if (v < 0) {
        fprintf(stderr, "kvstore-sync-floor: step '%s' failed\n", s.name);
        return 1;
      }
      s.seconds.push_back(v);
      fprintf(stderr, "  run %d/%d %-52s %.3f CPU-s\n", r + 1, o.runs, s.name, v);
    }
    more.push_back(MoreFreshPages(o));
    if (more.back() < 0) {
      fprintf(stderr, "kvstore-sync-floor: the further fresh memory could not be had\n");
      return 1;
    }
    fprintf(stderr, "  run %d/%d %-52s %.3f CPU-s\n", r + 1, o.runs,
            "fresh pages beyond the first dataset's worth", more.back());
    auto all = Overlapped(o);
    if (all.empty()) {
      fprintf(stderr, "kvstore-sync-floor: the overlapped run failed\n");
      return 1;
    }
    sender.push_back(all[0]);
    receiver.push_back(all[1]);
    both.push_back(all[0] + all[1]);
    wall.push_back(all[2]);
    fprintf(stderr, "  run %d/%d %-52s %.3f + %.3f CPU-s in %.3f s\n", r + 1, o.runs, "all at once",
            all[0], all[1], all[2]);
  }
  auto row = [&](const char* name, double cpu) {
    printf("%-58s %7.3f %9.3f\n", name, cpu, cpu / gb);
  };
  printf("%-58s %7s %9s\n", "step (medians)", "CPU-s", "CPU-s/GB");
  double total = 0;
  for (const Step& s : steps) {
    total += Median(s.seconds);
    row(s.name, Median(s.seconds));
  }
  row("sum: the floor of a sync's CPU, each step alone", total);
  row("fresh pages beyond the first dataset's worth (not summed)", Median(more));
  row("all at once: the sender (step 1)", Median(sender));
  row("all at once: the receiver (steps 2-4, values packed)", Median(receiver));
  row("all at once: both", Median(both));
  printf("%-58s %7.3f s (%.2f GB/s)\n", "all at once: the receiver's wall time", Median(wall),
         gb / Median(wall));
  return 0;
}
