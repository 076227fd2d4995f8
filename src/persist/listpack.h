// Redis' listpack: the compact encoding RDB version 10 uses for small hashes and sorted sets and
// for the nodes of lists. Layout: total bytes (u32 LE), element count (u16 LE, 65535 = unknown),
// the entries, and a 0xFF terminator. Each entry is an encoding byte (small integers and short
// lengths inline), its data, and its own size again as a "backlen" varint so the listpack can be
// walked from either end. Strings that are canonical integers are stored as integers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kv::persist {

// Appends entries to a listpack under construction. Reusable: Finish, then Clear.
class ListpackBuilder {
 public:
  ListpackBuilder() { Clear(); }
  // Adds a string; canonical integers (Redis' string2ll) are stored in integer encodings.
  void Add(std::string_view s);
  void AddInt(int64_t v);
  // Completes the header and terminator; the bytes stay valid until the next call.
  std::string_view Finish();
  void Clear();
  size_t count() const { return count_; }
  size_t bytes() const { return buf_.size() + 1; }

 private:
  std::string buf_;
  size_t count_ = 0;
};

// Visits every element of a listpack in order; integer entries are passed as decimal text (the
// view is valid only during the call). Every entry is checked against the bounds of `blob`
// (header size, encodings, lengths, backlens, terminator, element count); a malformed listpack
// gives Corruption without reading outside `blob`. `fn` may stop the walk by returning an error.
Status ForEachListpackEntry(std::string_view blob,
                            const std::function<Status(std::string_view)>& fn);

}  // namespace kv::persist
