#include "transport/fabric/buffer_pool.h"

#include <sys/mman.h>

#include <unistd.h>

#include <cerrno>

namespace kv::transport::fabric {

Result<AlignedBuffer> AlignedBuffer::Allocate(size_t size, bool guard) {
  AlignedBuffer b;
  if (size == 0) return b;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size = (size + page - 1) / page * page;
  size_t g = guard ? page : 0;
  // Regions of a huge page or more start on a huge-page boundary and ask for transparent huge
  // pages: a provider that copies through them (shm's CMA pins and walks every page of each
  // chunk) then walks 2 MiB pages instead of 4 KiB ones.
  size_t align = size >= kHugePage ? kHugePage : page;
  size_t span = size + 2 * g + (align - page);
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Status::FromErrno("mmap registered buffer", errno);
  auto* raw = static_cast<uint8_t*>(p);
  auto addr = reinterpret_cast<uintptr_t>(raw) + g;
  auto* base = reinterpret_cast<uint8_t*>((addr + align - 1) & ~(align - 1)) - g;
  // Unmap the slack on both sides, so that the mapping is exactly [guard][data][guard].
  if (base > raw) munmap(raw, static_cast<size_t>(base - raw));
  uint8_t* end = base + size + 2 * g;
  if (raw + span > end) munmap(end, static_cast<size_t>(raw + span - end));
  if (g > 0 && (mprotect(base, g, PROT_NONE) != 0 ||
                mprotect(base + g + size, g, PROT_NONE) != 0)) {
    int err = errno;
    munmap(base, size + 2 * g);
    return Status::FromErrno("mprotect guard page", err);
  }
  if (align == kHugePage) madvise(base + g, size, MADV_HUGEPAGE);  // a hint: errors are harmless
  // Touch every page: registration must find memory that is really there (FI_MR_ALLOCATED).
  for (size_t off = 0; off < size; off += page) static_cast<volatile uint8_t*>(base + g)[off] = 0;
  b.data_ = base + g;
  b.size_ = size;
  b.guard_ = g;
  return b;
}

void AlignedBuffer::Release() {
  if (data_ != nullptr) munmap(data_ - guard_, size_ + 2 * guard_);
  data_ = nullptr;
}

AlignedBuffer::~AlignedBuffer() { Release(); }

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    Release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    guard_ = std::exchange(o.guard_, 0);
  }
  return *this;
}

Result<RegisteredSlots> RegisteredSlots::Create(FabricContext& ctx, size_t slot_size,
                                                size_t count, uint64_t access) {
  RegisteredSlots r;
  r.slot_size_ = slot_size;
  r.stride_ = (slot_size + 63) & ~size_t{63};
  r.count_ = count;
  bool remote = (access & (FI_REMOTE_WRITE | FI_REMOTE_READ)) != 0;
  auto mem = AlignedBuffer::Allocate(r.stride_ * count, remote);
  if (!mem.ok()) return mem.status();
  r.mem_ = std::move(*mem);
  auto mr = ctx.Register(r.mem_.data(), r.mem_.size(), access);
  if (!mr.ok()) return mr.status();
  r.mr_ = std::move(*mr);
  r.desc_ = ctx.Desc(r.mr_.get());
  return r;
}

}  // namespace kv::transport::fabric
