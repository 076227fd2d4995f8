#include "transport/fabric/buffer_pool.h"

#include <sys/mman.h>

#include <cerrno>

namespace kv::transport::fabric {

Result<AlignedBuffer> AlignedBuffer::Allocate(size_t size) {
  AlignedBuffer b;
  if (size == 0) return b;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Status::FromErrno("mmap registered buffer", errno);
  // Touch every page: registration must find memory that is really there (FI_MR_ALLOCATED).
  for (size_t off = 0; off < size; off += 4096) static_cast<volatile uint8_t*>(p)[off] = 0;
  b.data_ = static_cast<uint8_t*>(p);
  b.size_ = size;
  return b;
}

AlignedBuffer::~AlignedBuffer() {
  if (data_ != nullptr) munmap(data_, size_);
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

Result<RegisteredSlots> RegisteredSlots::Create(FabricContext& ctx, size_t slot_size,
                                                size_t count, uint64_t access) {
  RegisteredSlots r;
  r.slot_size_ = slot_size;
  r.stride_ = (slot_size + 63) & ~size_t{63};
  r.count_ = count;
  size_t bytes = (r.stride_ * count + 4095) & ~size_t{4095};
  auto mem = AlignedBuffer::Allocate(bytes);
  if (!mem.ok()) return mem.status();
  r.mem_ = std::move(*mem);
  auto mr = ctx.Register(r.mem_.data(), r.mem_.size(), access);
  if (!mr.ok()) return mr.status();
  r.mr_ = std::move(*mr);
  r.desc_ = ctx.Desc(r.mr_.get());
  return r;
}

}  // namespace kv::transport::fabric
