// Streaming RDB writer (format version 10, loadable by Redis 7.0): header and AUX fields,
// databases with RESIZEDB, expire times, optional IDLE/FREQ, every value type, EOF and the
// CRC-64 trailer. Output goes through a 1 MiB buffer to any Sink, so the same code writes a file,
// a replication socket or a DUMP payload; a sink with windows (Sink::Window, the snapshot ring)
// is written in place instead, with no buffer and no copy in between.
//
// Compression: strings over 20 bytes are LZF-compressed when `compression` is on and it saves at
// least 4 bytes (Redis' rule). Incompressible data is detected cheaply: after a string fails to
// compress, the next ones are stored raw for a growing stretch (doubling up to 256 strings) before
// compression is tried again, so a dataset of random bytes costs almost no compression time and
// any other dataset loses at most a few strings' worth of savings.
//
// Not thread-safe; the keyspace must not change while a database is being written (a forked
// child, or the keyspace lock held).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "persist/sink.h"
#include "store/keyspace.h"

namespace kv::persist {

struct RdbWriteOptions {
  bool compression = true;
  bool checksum = true;
  // Per-key access metadata, as Redis writes it under LRU or LFU maxmemory policies.
  enum class Access { kNone, kIdle, kFreq } access = Access::kNone;
  // Encoding parameters: list-max-listpack-size sizes the quicklist nodes written.
  store::EncodingLimits limits;
  // Called every 1024 keys and after every ~8 MiB written, with the bytes and keys written so
  // far.
  std::function<void(uint64_t bytes, uint64_t keys)> progress;
  // Called every 64 keys, so that even a slow walk reaches it often (the replication child
  // keeps its waiting replicas' connections alive from it).
  std::function<void()> tick;
  // rdb-key-save-delay: microseconds to sleep after each key (DebugKeyDelay).
  int key_save_delay_us = 0;
  // The function libraries' codes, written after the AUX fields as FUNCTION2 records.
  std::vector<std::string> functions;
  // False: no keys, only the header and the functions (a replica's rdb-filter-only).
  bool keys = true;
  // SaveRdbFile syncs the file every this many bytes (0: once, at the end): kAutoSyncBytes
  // under rdb-save-incremental-fsync.
  uint64_t autosync_bytes = 0;
};

class RdbWriter {
 public:
  RdbWriter(Sink& sink, RdbWriteOptions opts);

  // "REDIS0010" followed by AUX fields (name, value) in the given order, then the options'
  // function libraries.
  Status WriteHeader(const std::vector<std::pair<std::string, std::string>>& aux);
  // One FUNCTION2 record per library code.
  Status WriteFunctions(const std::vector<std::string>& codes);
  // SELECTDB, RESIZEDB and every key of `db` (expired ones included, as Redis does).
  Status WriteDb(int index, store::Db& db, const store::Keyspace& ks);
  // EOF and the checksum (zero when checksums are off), then flushes.
  Status WriteEnd();

  // The value-type byte and the serialized value (a DUMP payload's body).
  Status WriteObject(const store::Value& v);
  Status Flush();

  uint64_t bytes_written() const { return bytes_ + used_; }
  uint64_t keys_written() const { return keys_; }
  uint64_t checksum() const { return crc_; }

 private:
  static uint8_t TypeOf(const store::Value& v);
  void PutValue(const store::Value& v);
  void Put(const void* p, size_t n);
  void PutByte(uint8_t b) { Put(&b, 1); }
  void PutLen(uint64_t len);
  void PutString(std::string_view s);
  void PutInt(int64_t v);  // an integer as a string object (encoded when it fits 32 bits)
  bool TryCompress(std::string_view s);
  void PutList(const store::Collection& list);
  // Writes an inner node of a compressed list as an LZF blob; false (nothing written) when
  // it does not compress enough.
  bool PutCompressedNode(std::string_view lp);
  void PutSet(const store::Collection& set);
  void PutZSet(const store::Collection& zset);
  void PutHash(const store::Collection& hash);
  void PutStream(const store::Collection& stream);
  Status FlushIfFull();
  // Flushes, then makes room for more: the sink's next window, or the buffer. False on an error.
  bool NextWindow();

  Sink& sink_;
  RdbWriteOptions opts_;
  Status status_;  // the first sink error; writing stops there
  // The bytes not yet flushed: win_[0, used_) of a window of win_size_ bytes, the sink's own
  // (in_place_) or own_.
  uint8_t* win_ = nullptr;
  size_t win_size_ = 0, used_ = 0;
  bool in_place_ = true;  // until the sink turns out to have no windows
  std::unique_ptr<uint8_t[]> own_;
  std::string scratch_;
  uint64_t bytes_ = 0, keys_ = 0, crc_ = 0, next_progress_ = 0;
  uint32_t skip_compress_ = 0, skip_stretch_ = 0;  // the incompressible-data back-off
};

}  // namespace kv::persist
