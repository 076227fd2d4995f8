// Registered memory: page-aligned buffers, carved into equal 64-byte-aligned slots and
// registered once per link with exactly the access they need:
//  * the receive ring: FI_REMOTE_WRITE (the only remotely accessible memory of a link);
//  * the sender's staging slots: FI_WRITE (source of RDMA writes);
//  * control-message buffers: FI_SEND | FI_RECV.
// Registration happens at link setup, never per chunk. The memory itself (AlignedBuffer) can
// outlive a link and be registered again for the next one; each registration gets a new key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "common/status.h"
#include "transport/fabric/fabric_setup.h"

namespace kv::transport::fabric {

// Anonymous page-aligned memory (mmap), zero-filled and touched, so FI_MR_ALLOCATED holds.
// With `guard`, an inaccessible page sits on each side: some providers do not check a remote
// write against the registration's bounds (shm with CMA, measured: see hostile_test.cc), and a
// write just past the ring must fault rather than land in a neighbour.
class AlignedBuffer {
 public:
  static constexpr size_t kHugePage = 2 << 20;
  AlignedBuffer() = default;
  static Result<AlignedBuffer> Allocate(size_t size, bool guard = false);
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        guard_(std::exchange(o.guard_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void Release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t guard_ = 0;  // bytes of guard on each side
};

// `count` slots of `slot_size` bytes (rounded up to 64) in one registered region.
class RegisteredSlots {
 public:
  RegisteredSlots() = default;
  // Remotely accessible regions (FI_REMOTE_*) get guard pages.
  static Result<RegisteredSlots> Create(FabricContext& ctx, size_t slot_size, size_t count,
                                        uint64_t access);

  uint8_t* slot(size_t i) const { return mem_.data() + i * stride_; }
  size_t slot_size() const { return slot_size_; }
  size_t stride() const { return stride_; }
  size_t count() const { return count_; }
  uint8_t* base() const { return mem_.data(); }
  size_t bytes() const { return stride_ * count_; }
  void* desc() const { return desc_; }
  fid_mr* mr() const { return mr_.get(); }
  uint64_t key() const { return mr_ ? fi_mr_key(mr_.get()) : 0; }
  // Closes the registration (the memory stays valid until destruction).
  void Deregister() { mr_.reset(); desc_ = nullptr; }

 private:
  AlignedBuffer mem_;
  MrPtr mr_;  // declared after mem_: deregistered before the memory is unmapped
  void* desc_ = nullptr;
  size_t slot_size_ = 0, stride_ = 0, count_ = 0;
};

}  // namespace kv::transport::fabric
