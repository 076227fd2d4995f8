// Readers for the other compact blobs RDB files embed: Redis' intset (sets of integers, still
// written by Redis 7.0), and the ziplist and zipmap encodings of files from older Redis versions
// (which Redis 7.0 still loads). Plus the intset writer. Every reader checks each field against
// the blob's bounds and answers Corruption instead of reading outside it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kv::persist {

// Intset blob: encoding (u32 LE: 2, 4 or 8 bytes per member), length (u32 LE), then the members
// in ascending order, little-endian. Visits members in stored order; checks that they ascend.
Status ForEachIntsetMember(std::string_view blob, const std::function<Status(int64_t)>& fn);

// Builds an intset blob of `n` ascending members `at(i)` at the narrowest width holding them.
std::string BuildIntset(size_t n, const std::function<int64_t(size_t)>& at);

// Ziplist: zlbytes (u32), zltail (u32), zllen (u16), entries (prevlen, encoding, data), 0xFF.
// Integer entries are passed as decimal text. Checked as deeply as Redis checks a ziplist it
// loads: each entry's prevlen must be its predecessor's size, zltail must be the last entry's
// offset, zllen (unless 65535) the entry count, and no entry may reach past the terminator.
Status ForEachZiplistEntry(std::string_view blob,
                           const std::function<Status(std::string_view)>& fn);

// Zipmap (hashes of RDB files before version 4): a count byte, then (key, value) pairs with
// 1- or 5-byte lengths and a free-space byte before each value, then 0xFF.
Status ForEachZipmapPair(std::string_view blob,
                         const std::function<Status(std::string_view, std::string_view)>& fn);

}  // namespace kv::persist
