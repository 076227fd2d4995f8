#include "resp/parser.h"

#include <climits>
#include <cstring>
#include <optional>

#include "common/strutil.h"

namespace kv::resp {

namespace {
// Lengths in request headers: the common case (1-18 plain digits) without the general parser,
// which handles signs, leading zeros and overflow exactly as Redis does.
std::optional<int64_t> ParseLength(std::string_view s) {
  if (!s.empty() && s.size() <= 18 && s[0] >= '1' && s[0] <= '9') {
    int64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return ParseInt64(s);
      v = v * 10 + (c - '0');
    }
    return v;
  }
  return ParseInt64(s);
}
}  // namespace

void RequestParser::Reset() {
  pos_ = 0;
  multibulk_left_ = -1;
  bulk_len_ = -1;
  offsets_.clear();
}

namespace {
template <typename Vec>
void ReleaseIfLonger(Vec& v, size_t keep) {
  if (v.capacity() > keep) Vec().swap(v);
}
}  // namespace

void RequestParser::ReleaseArgLists(size_t keep) {
  if (pos_ != 0) return;  // a request is half parsed: its offsets are in use
  ReleaseIfLonger(offsets_, keep);
  ReleaseIfLonger(args_, keep);
  ReleaseIfLonger(inline_args_, keep);
}

RequestParser::Result RequestParser::Fail(std::string msg) {
  error_ = std::move(msg);
  Reset();
  return kError;
}

size_t RequestParser::BytesWanted() const {
  if (bulk_len_ < 0) return 0;
  return pos_ + static_cast<size_t>(bulk_len_) + 2;
}

RequestParser::Result RequestParser::ParseInline(const char* buf, size_t len) {
  const char* nl = static_cast<const char*>(memchr(buf, '\n', len));
  if (!nl) {
    if (len > kInlineMax) return Fail("Protocol error: too big inline request");
    return kIncomplete;
  }
  size_t line_len = nl - buf;
  std::string_view line(buf, line_len);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto split = SplitArgs(line);
  if (!split) return Fail("Protocol error: unbalanced quotes in request");
  inline_args_ = std::move(*split);
  args_.clear();
  for (const auto& a : inline_args_) args_.emplace_back(a);
  request_size_ = line_len + 1;
  Reset();
  return kComplete;
}

RequestParser::Result RequestParser::Parse(const char* buf, size_t len,
                                           const ParserLimits& limits) {
  if (pos_ == 0 && multibulk_left_ < 0) {
    if (len == 0) return kIncomplete;
    if (buf[0] != '*') return ParseInline(buf, len);
    const char* nl = static_cast<const char*>(memchr(buf, '\r', len));
    if (!nl) {
      if (len > kInlineMax) return Fail("Protocol error: too big mbulk count string");
      return kIncomplete;
    }
    size_t hdr = nl - buf;
    if (hdr + 2 > len) return kIncomplete;  // need the '\n' too
    auto n = ParseLength(std::string_view(buf + 1, hdr - 1));
    if (!n || *n > INT_MAX) return Fail("Protocol error: invalid multibulk length");
    if (!limits.authenticated && *n > 10)
      return Fail("Protocol error: unauthenticated multibulk length");
    pos_ = hdr + 2;
    if (*n <= 0) {
      // "*0" and "*-1" are empty requests: consumed, nothing to run.
      args_.clear();
      request_size_ = pos_;
      Reset();
      return kComplete;
    }
    multibulk_left_ = *n;
    offsets_.clear();
    offsets_.reserve(static_cast<size_t>(std::min<int64_t>(*n, 1024)));
  }

  while (multibulk_left_ > 0) {
    if (bulk_len_ < 0) {
      if (pos_ >= len) return kIncomplete;
      const char* start = buf + pos_;
      const char* nl = static_cast<const char*>(memchr(start, '\r', len - pos_));
      if (!nl) {
        if (len - pos_ > kInlineMax) return Fail("Protocol error: too big bulk count string");
        return kIncomplete;
      }
      size_t hdr = nl - start;
      if (pos_ + hdr + 2 > len) return kIncomplete;
      if (start[0] != '$') {
        return Fail(std::string("Protocol error: expected '$', got '") + start[0] + "'");
      }
      auto n = ParseLength(std::string_view(start + 1, hdr - 1));
      if (!n || *n < 0 || *n > limits.max_bulk_len || *n > kMaxBulkLen)
        return Fail("Protocol error: invalid bulk length");
      if (!limits.authenticated && *n > 16384)
        return Fail("Protocol error: unauthenticated bulk length");
      bulk_len_ = *n;
      pos_ += hdr + 2;
    }
    // The payload is followed by CRLF, which (like Redis) we skip without checking.
    if (len - pos_ < static_cast<size_t>(bulk_len_) + 2) return kIncomplete;
    offsets_.emplace_back(pos_, static_cast<size_t>(bulk_len_));
    pos_ += static_cast<size_t>(bulk_len_) + 2;
    bulk_len_ = -1;
    multibulk_left_--;
  }

  args_.clear();
  args_.reserve(offsets_.size());
  for (const auto& [off, n] : offsets_) args_.emplace_back(buf + off, n);
  request_size_ = pos_;
  Reset();
  return kComplete;
}

}  // namespace kv::resp
