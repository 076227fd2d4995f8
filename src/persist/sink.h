// Byte sinks and sources for RDB streams: the writer emits into a Sink (a file, a socket, a
// string, later a registered buffer of the data plane), the loader reads from a Source (a mapped
// file or any byte buffer). Neither knows what is on the other side.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kv::persist {

class Sink {
 public:
  virtual ~Sink() = default;
  // Takes all of `len` bytes or fails.
  virtual Status Write(const void* data, size_t len) = 0;
  // Writing in place, for a sink whose bytes end up in memory it owns (the snapshot ring): a
  // writable window of at most `max` bytes (at least one) for the bytes that follow, waiting
  // for room if need be; Commit(n) then takes the window's first n bytes, and the window is
  // gone. A sink without windows returns an empty one (the default): use Write.
  virtual Result<std::span<uint8_t>> Window(size_t max) {
    (void)max;
    return std::span<uint8_t>();
  }
  virtual Status Commit(size_t n) {
    return n == 0 ? Status::Ok() : Status::Invalid("this sink takes no windows");
  }
};

// Appends to a string (DUMP payloads, tests).
class StringSink : public Sink {
 public:
  Status Write(const void* data, size_t len) override {
    out_.append(static_cast<const char*>(data), len);
    return Status::Ok();
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

// rdb-save-incremental-fsync and aof-rewrite-incremental-fsync: a file being saved is synced
// every this many bytes (Redis' REDIS_AUTOSYNC_BYTES), so that the kernel never holds a whole
// snapshot's dirty pages to flush at once.
constexpr uint64_t kAutoSyncBytes = 4 << 20;

// Writes to a file descriptor (a file or a blocking socket), retrying short writes and EINTR.
// Does not own the descriptor.
class FdSink : public Sink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  Status Write(const void* data, size_t len) override;
  uint64_t written() const { return written_; }
  // Syncs the file each time `bytes` (0: never) were written since the last sync, as Redis'
  // rioSetAutoSync: after the Write that reaches the mark. `sync` (fdatasync when null) is the
  // call made; a failed one fails that Write.
  void SetAutoSync(uint64_t bytes, std::function<int(int)> sync = nullptr) {
    autosync_ = bytes;
    sync_ = std::move(sync);
  }
  uint64_t syncs() const { return syncs_; }

 private:
  int fd_;
  uint64_t written_ = 0;
  uint64_t autosync_ = 0;
  uint64_t unsynced_ = 0;
  uint64_t syncs_ = 0;
  std::function<int(int)> sync_;
};

// A readable byte stream. Read hands out views that stay valid until the next call, so a mapped
// file is parsed in place while a network source may reuse one buffer.
class Source {
 public:
  virtual ~Source() = default;
  // Exactly `n` bytes, or an error (Corruption "unexpected end" at the end of the data).
  virtual Result<std::string_view> Read(size_t n) = 0;
  // Consumes `n` bytes without looking at them (in pieces, so a stream never holds them all).
  virtual Status Skip(uint64_t n) {
    while (n > 0) {
      size_t piece = static_cast<size_t>(std::min<uint64_t>(n, 1 << 20));
      KV_TRY(Read(piece).status());
      n -= piece;
    }
    return Status::Ok();
  }
  // Bytes consumed so far.
  virtual uint64_t offset() const = 0;
  // Bytes left, when the source knows (a stream does not: UINT64_MAX).
  virtual uint64_t remaining() const { return UINT64_MAX; }
  // All of the data when it is in memory (a mapping), else empty.
  virtual std::string_view whole() const { return {}; }
  // The CRC-64 of the first offset() bytes, from a source that computes it as the bytes arrive
  // (off the reader's thread); nullopt from others, for which the loader computes it itself.
  virtual std::optional<uint64_t> CrcSoFar() const { return std::nullopt; }
};

// A source over bytes in memory (a mapping, a RESTORE payload). Views point into the memory.
class MemorySource : public Source {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  Result<std::string_view> Read(size_t n) override {
    if (data_.size() - pos_ < n) {
      return Status::Corruption("unexpected end of data: wanted " + std::to_string(n) +
                                " bytes, " + std::to_string(data_.size() - pos_) + " left");
    }
    std::string_view v = data_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  uint64_t offset() const override { return pos_; }
  uint64_t remaining() const override { return data_.size() - pos_; }
  std::string_view whole() const override { return data_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Wraps a source and keeps the CRC-64 of every byte read through it (for streams, which cannot be
// checksummed in one piece).
class CrcSource : public Source {
 public:
  explicit CrcSource(Source& inner) : inner_(inner) {}
  Result<std::string_view> Read(size_t n) override;
  uint64_t offset() const override { return inner_.offset(); }
  uint64_t remaining() const override { return inner_.remaining(); }
  uint64_t crc() const { return crc_; }

 private:
  Source& inner_;
  uint64_t crc_ = 0;
};

}  // namespace kv::persist
