#include "transport/fabric/buffer_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace kv::transport::fabric {
namespace {

// The mapping of /proc/self/smaps that contains `addr`: its header line ("start-end perms ...")
// and its VmFlags line.
struct Mapping {
  std::string perms;
  std::string vm_flags;
  bool found = false;
};

Mapping MappingAt(const void* addr) {
  auto a = reinterpret_cast<uintptr_t>(addr);
  std::ifstream smaps("/proc/self/smaps");
  Mapping m;
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long start = 0, end = 0;
    char perms[8] = {};
    if (sscanf(line.c_str(), "%lx-%lx %7s", &start, &end, perms) == 3 &&
        line.find('-') < line.find(' ')) {
      inside = a >= start && a < end;
      if (inside) {
        m.perms = perms;
        m.found = true;
      }
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) m.vm_flags = line;
  }
  return m;
}

bool HasFlag(const std::string& vm_flags, const std::string& flag) {
  std::istringstream in(vm_flags);
  std::string f;
  while (in >> f) {
    if (f == flag) return true;
  }
  return false;
}

bool KernelHasHugePages() { return access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0; }

// A region of a huge page or more starts on a huge-page boundary, asks for huge pages, is
// zero-filled, and keeps its guard pages on both sides.
TEST(TransportBuffers, LargeRegionsAreHugePageAlignedAndGuarded) {
  const size_t size = 4 * AlignedBuffer::kHugePage + 4096;
  auto b = AlignedBuffer::Allocate(size, /*guard=*/true);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % AlignedBuffer::kHugePage, 0u);
  EXPECT_EQ(b->size(), size);
  for (size_t i = 0; i < b->size(); i += 4096) ASSERT_EQ(b->data()[i], 0) << i;
  b->data()[0] = 1;
  b->data()[b->size() - 1] = 1;

  const long page = sysconf(_SC_PAGESIZE);
  Mapping before = MappingAt(b->data() - page);
  Mapping inside = MappingAt(b->data());
  Mapping after = MappingAt(b->data() + b->size());
  ASSERT_TRUE(before.found && inside.found && after.found);
  EXPECT_EQ(before.perms, "---p");
  EXPECT_EQ(inside.perms, "rw-p");
  EXPECT_EQ(after.perms, "---p");
  if (KernelHasHugePages()) {
    EXPECT_TRUE(HasFlag(inside.vm_flags, "hg")) << inside.vm_flags;
  }
}

// Small regions stay page-aligned ordinary memory.
TEST(TransportBuffers, SmallRegionsAreOrdinaryPages) {
  auto b = AlignedBuffer::Allocate(64 * 1024);
  ASSERT_TRUE(b.ok());
  const long page = sysconf(_SC_PAGESIZE);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % static_cast<uintptr_t>(page), 0u);
  Mapping m = MappingAt(b->data());
  ASSERT_TRUE(m.found);
  EXPECT_EQ(m.perms, "rw-p");
  EXPECT_FALSE(HasFlag(m.vm_flags, "hg")) << m.vm_flags;
}

// All of the process's mapped bytes, from /proc/self/maps.
size_t MappedBytes() {
  std::ifstream maps("/proc/self/maps");
  size_t total = 0;
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long start = 0, end = 0;
    if (sscanf(line.c_str(), "%lx-%lx", &start, &end) == 2) total += end - start;
  }
  return total;
}

// Releasing a region unmaps all of it, guards included, and the slack mapped for the
// alignment went at allocation: allocating and releasing leaves the address space as it was.
TEST(TransportBuffers, ReleaseUnmapsTheWholeRegion) {
  auto once = [] {
    uint8_t* data = nullptr;
    {
      auto b = AlignedBuffer::Allocate(3 * AlignedBuffer::kHugePage, /*guard=*/true);
      ASSERT_TRUE(b.ok());
      data = b->data();
    }
    EXPECT_FALSE(MappingAt(data).found);
  };
  once();  // the C library's own first-use mappings (the stream buffers) come before `before`
  size_t before = MappedBytes();
  for (int i = 0; i < 8; ++i) once();
  EXPECT_LT(MappedBytes(), before + AlignedBuffer::kHugePage);
}

}  // namespace
}  // namespace kv::transport::fabric
