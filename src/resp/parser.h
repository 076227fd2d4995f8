// Incremental RESP request parser.
//
// The caller keeps the bytes of the current request, from its first byte, in one contiguous
// buffer and calls Parse() each time more bytes arrive; the parser remembers how far it got, so a
// request is scanned once however it is split. On kComplete, args() holds slices into that buffer
// (or into the parser, for inline commands) valid until the buffer changes or Parse() is called
// again; request_size() says how many bytes the request took.
//
// Limits and error texts follow Redis 7.0 (networking.c): "Protocol error: ..." replies, after
// which the connection is closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kv::resp {

struct ParserLimits {
  int64_t max_bulk_len = 512LL * 1024 * 1024;  // proto-max-bulk-len
  bool authenticated = true;                    // unauthenticated clients get tighter limits
};

class RequestParser {
 public:
  enum Result { kComplete, kIncomplete, kError };

  static constexpr size_t kInlineMax = 64 * 1024;  // PROTO_INLINE_MAX_SIZE
  // The longest argument, whatever proto-max-bulk-len allows: the longest string a value holds
  // (store's Value::kMaxStrLen), so no argument is ever cut short where it is stored.
  static constexpr int64_t kMaxBulkLen = 4294967295;

  // Parses the request starting at buf[0]. `len` is all the bytes available so far.
  Result Parse(const char* buf, size_t len, const ParserLimits& limits);

  const std::vector<std::string_view>& args() const { return args_; }
  size_t request_size() const { return request_size_; }
  // The protocol error, without the leading "-ERR ".
  const std::string& error() const { return error_; }
  // While inside a bulk payload: how many bytes, counted from the request's first byte, the
  // request needs at least (0 otherwise). Lets the caller size its read buffer for big values.
  size_t BytesWanted() const;
  // While inside a big bulk payload (32 KiB or more, Redis' PROTO_MBULK_BIG_ARG): where it
  // starts in the request, else 0. Redis keeps such a payload alone in its query buffer, so
  // CLIENT LIST's qbuf counts from there.
  size_t BigBulkStart() const { return bulk_len_ >= 32 * 1024 ? pos_ : 0; }
  // True when the parser holds state from a partially received request.
  bool InProgress() const { return pos_ != 0; }
  // Forgets a partially parsed request; the next Parse starts over from the buffer it is given.
  void Reset();
  // Between requests: gives back the room of argument lists longer than `keep` entries that a
  // request of many arguments left (Redis frees a command's argv once it ran).
  void ReleaseArgLists(size_t keep);

 private:
  Result ParseInline(const char* buf, size_t len);
  Result Fail(std::string msg);

  size_t pos_ = 0;              // next byte to look at, relative to the request start
  int64_t multibulk_left_ = -1;  // args still to read; -1: header not read yet
  int64_t bulk_len_ = -1;        // length of the bulk being read; -1: its header not read yet
  std::vector<std::pair<size_t, size_t>> offsets_;  // (offset, length) of each argument
  std::vector<std::string_view> args_;
  std::vector<std::string> inline_args_;
  size_t request_size_ = 0;
  std::string error_;
};

}  // namespace kv::resp
