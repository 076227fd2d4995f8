// The command files of Redis 7.0's AOF: reading the commands of an incremental (or command-form
// base) file, and writing the dataset as commands for a base file without the RDB preamble.
//
// Reading follows Redis' loadSingleAppendOnlyFile: lines starting with '#' are annotations
// (aof-timestamp-enabled's "#TS:" lines) and skipped; every command is a multibulk array
// ("*<argc>", then "$<len>" and the bytes, each followed by CRLF); anything else is a format
// error; data that ends inside a command is a truncation, reported with the offset of the last
// complete command. The reader parses a mapped file in place: arguments are views into it.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "persist/sink.h"
#include "store/keyspace.h"

namespace kv::persist {

class AofCommandReader {
 public:
  explicit AofCommandReader(std::string_view data) : data_(data) {}

  enum class Next { kCommand, kEnd, kTruncated, kFormatError };
  // The next command's arguments (views into the data).
  Next Read(std::vector<std::string_view>* argv);
  // Where the next command starts: after the last complete one (and any annotations).
  uint64_t offset() const { return pos_; }
  // What a format error found, for the log.
  const std::string& error() const { return error_; }

 private:
  // One line ending in '\n' (Redis reads them with fgets into a 1024-byte buffer); false at
  // the end of the data.
  bool Line(std::string_view* line);

  std::string_view data_;
  uint64_t pos_ = 0;
  std::string error_;
};

// Redis' AOF_REWRITE_ITEMS_PER_CMD: a collection is rebuilt by commands of at most 64 items.
constexpr size_t kAofRewriteItemsPerCmd = 64;

struct AofCommandsOptions {
  // aof-timestamp-enabled: a "#TS:<unix time>" annotation first.
  bool timestamp = false;
  int64_t now_s = 0;
  int key_save_delay_us = 0;
  // Called every 1024 keys with the keys written so far.
  std::function<void(uint64_t keys)> progress;
  // The function libraries' codes, written first as FUNCTION LOAD commands.
  std::vector<std::string> functions;
};

// The dataset as Redis' rewriteAppendOnlyFileRio writes it: FUNCTION LOAD per library, then per
// non-empty db a SELECT, then per
// key SET / RPUSH / SADD / ZADD / HMSET (in batches of 64 items) and PEXPIREAT for a TTL.
Status WriteAofCommands(store::Keyspace& ks, Sink& sink, const AofCommandsOptions& opts,
                        uint64_t* keys_written);

// Appends a command in RESP multibulk form.
void AppendAofCommand(std::string* out, std::initializer_list<std::string_view> argv);

}  // namespace kv::persist
