// Loads an RDB stream (versions 1 to 11; everything Redis 7.0 writes and loads) into a keyspace:
// the header, AUX fields, SELECTDB/RESIZEDB, expire times in seconds and milliseconds, IDLE and
// FREQ, FUNCTION2 (the library codes are handed back) and MODULE_AUX (skipped with a warning:
// kvstore has no modules),
// every value type, EOF and the CRC-64 trailer.
//
// A source that holds the whole stream in memory (a mapped file) is parsed in place, and its
// checksum is computed by a second thread while the main thread builds values. On any error the
// load stops with Corruption naming the offset of the failure, the key being read and what was
// expected; keys inserted so far stay in the keyspace (the caller decides whether to keep them).
// Keys are inserted a few behind the read position (rdb_loader.cc): the last ones read before
// the failure are not.
// Not thread-safe; the keyspace must not be used by anyone else during the load.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "persist/sink.h"
#include "store/keyspace.h"

namespace kv::persist {

struct RdbLoadOptions {
  // Keys whose expire time is at or before now_ms are dropped (a primary does this; a replica
  // keeps them, since its primary will send their DELs).
  bool drop_expired = true;
  int64_t now_ms = 0;
  // A key already in the keyspace is replaced (DEBUG RELOAD MERGE); otherwise it is an error.
  bool replace_existing = false;
  // Verify the CRC-64 trailer (skipped anyway when the file carries a zero checksum).
  bool verify_checksum = true;
  // Walk the stream without building anything (keys are counted, not added): checks its
  // structure and checksum and finds where it ends (RdbLoadResult::bytes).
  bool skim = false;
  // Called every `progress_bytes` of the stream (or 128 records, whichever comes first) with
  // the offset reached: Redis' loading-process-events-interval-bytes.
  std::function<void(uint64_t offset)> progress;
  uint64_t progress_bytes = 2 << 20;
  // Asked after each progress call: true ends the load with a kClosed status (a shutdown
  // requested while the server loads).
  std::function<bool()> stop;
  // key-load-delay: microseconds to sleep after each key (DebugKeyDelay).
  int key_load_delay_us = 0;
  // Receives warnings (skipped module data).
  std::function<void(const std::string&)> warn;
  // Told of each key dropped as expired (drop_expired), with its database.
  std::function<void(int db, std::string_view key)> on_expired;
  // Bytes may follow the checksum: an AOF's RDB preamble, whose command tail comes after it
  // (RdbLoadResult::bytes says where the RDB ends). Otherwise they make the file corrupt.
  bool trailing_data = false;
};

struct RdbLoadResult {
  int version = 0;
  std::map<std::string, std::string> aux;  // AUX fields as found (repl-id, repl-offset, ...)
  uint64_t keys_loaded = 0;
  uint64_t expired_skipped = 0;
  uint64_t empty_skipped = 0;
  uint64_t module_values_skipped = 0;
  std::vector<std::string> functions;  // FUNCTION2 records: library codes, in file order
  uint64_t bytes = 0;
};

Status LoadRdb(Source& src, store::Keyspace& ks, const RdbLoadOptions& opts,
               RdbLoadResult* result);

}  // namespace kv::persist
