// What the string commands (strings.cc) share with the commands that work on strings as bit
// arrays (bitmaps.cc) or as HyperLogLogs (hyperloglog.cc): the write lookup that insists on a
// string, and storing a key as Redis' setKey and dbOverwrite do, with the "new" event for a key
// they create. Defined in strings.cc, except the LCS handler, which string_lcs.cc defines and
// strings.cc registers. Nothing outside cmd/ includes it. Same threading as Context: one
// command, keyspace lock held.
#pragma once

#include <string_view>

#include "cmd/context.h"

namespace kv::cmd {

// A write lookup that insists on a string; answers WRONGTYPE and sets *wrongtype otherwise.
store::Entry* LookupWriteString(Context& c, std::string_view key, bool* wrongtype);
// Redis 7.0's dbAdd fires the "new" event (class n) for every key it creates.
void NotifyNew(Context& c, std::string_view key);
// Redis' setKey: stores `v` at `key`, dropping the TTL unless keep_ttl. `exists` is the result
// of the caller's LookupWrite.
store::Entry* SetKey(Context& c, std::string_view key, store::Value v, bool keep_ttl, bool exists);
// Replaces the value of `e` in place (keeping its TTL, as dbOverwrite) or adds a new key when
// `e` is null. Returns the key's entry.
store::Entry* StoreKeepTtl(Context& c, store::Entry* e, std::string_view key, store::Value v);

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN] (string_lcs.cc).
void Lcs(Context& c);

}  // namespace kv::cmd
