// Whole snapshots: an RDB of the keyspace written to any sink or atomically to a file, and an RDB
// file loaded by mapping it into memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "persist/rdb_loader.h"
#include "persist/rdb_writer.h"
#include "persist/sink.h"
#include "store/keyspace.h"

namespace kv::persist {

using AuxFields = std::vector<std::pair<std::string, std::string>>;

// What Redis 7.0 puts in the header: redis-ver, redis-bits, ctime, used-mem, then (when the
// server has replication state) repl-stream-db, repl-id, repl-offset, and aof-base.
struct SnapshotInfo {
  std::string version;  // reported as redis-ver
  int64_t used_memory = 0;
  bool has_repl = false;
  int repl_stream_db = 0;
  std::string repl_id;
  int64_t repl_offset = 0;
  bool aof_base = false;  // the base of an AOF ("aof-base" 1)
};
AuxFields StandardAux(const SnapshotInfo& info);

struct SaveStats {
  uint64_t bytes = 0;
  uint64_t keys = 0;
};

// Writes a complete RDB stream (header, every non-empty db, EOF, checksum) to `sink`.
Status WriteRdb(store::Keyspace& ks, Sink& sink, const RdbWriteOptions& opts,
                const AuxFields& aux, SaveStats* stats);

// Saves to `path` without ever leaving a partial file there: writes "temp-<pid>.rdb" in the
// same directory, fsyncs it, renames it over `path`, and fsyncs the directory. On failure the
// temp file is removed and `path` is untouched.
Status SaveRdbFile(store::Keyspace& ks, const std::string& path, const RdbWriteOptions& opts,
                   const AuxFields& aux, SaveStats* stats);

// Writes a file at `path` without ever leaving a partial one there: `write` fills a temporary
// file in the same directory (`temp_name`, or "temp-<pid>.rdb"), which is fsynced and renamed
// over `path`, and the directory is fsynced. On failure the temporary file is removed.
// `autosync_bytes` (0: none) also syncs it every that many bytes while it is written.
Status SaveFileAtomic(const std::string& path, const std::function<Status(Sink&)>& write,
                      const std::string& temp_name = "", uint64_t autosync_bytes = 0);

// A whole file mapped read-only (an empty file maps to no bytes), unmapped on destruction.
class MappedFile {
 public:
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {static_cast<const char*>(p_), n_}; }

 private:
  MappedFile() = default;
  void* p_ = nullptr;
  size_t n_ = 0;
};

// Maps `path` and loads it. NotFound when there is no such file.
Status LoadRdbFile(const std::string& path, store::Keyspace& ks, const RdbLoadOptions& opts,
                   RdbLoadResult* result);

}  // namespace kv::persist
