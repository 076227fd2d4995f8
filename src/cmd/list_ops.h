// The non-blocking cores of the list pops and moves (Redis 7.0 t_list.c), shared by the LIST
// commands in lists.cc and by the blocking variants (BLPOP BRPOP BLMPOP BLMOVE BRPOPLPUSH), which
// call them at once when a key already has data, and again when a blocked client's key gets
// data. Each core looks its keys up for writing, answers the client, fires Redis' keyspace
// events (lpop/rpop, lpush/rpush, new, del), marks the keys modified, counts dirty like Redis
// (one per element moved) and deletes a list it empties.
//
// Defined in lists.cc (no .cc of its own). Same threading as Context: one command, keyspace lock
// held.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "cmd/context.h"

namespace kv::cmd {

// The reply a pop writes, by the command it serves.
enum class PopReply {
  kElement,      // LPOP/RPOP key:        the element (bulk)
  kElements,     // LPOP/RPOP key count:  array of the elements
  kKeyElement,   // BLPOP/BRPOP:          [key, element]
  kKeyElements,  // LMPOP/BLMPOP:         [key, [element ...]]
};

enum class ListOpResult {
  kDone,       // popped or moved; the reply is written
  kNoData,     // no list at the key(s): nothing written, nothing changed (block, or answer null)
  kWrongType,  // a key holds another type: WRONGTYPE written, nothing changed
};

// Pops min(count, length) elements (count >= 1) from the head (`left`) or tail of the list at
// `key`, in pop order, and answers in `shape`. For the key-carrying shapes (the BLPOP/BRPOP and
// LMPOP/BLMPOP families) it also sets c.rewrite to what Redis propagates instead: "LPOP key"
// (kKeyElement) or "LPOP key <n popped>" (kKeyElements), RPOP for the tail.
ListOpResult ListPop(Context& c, std::string_view key, bool left, int64_t count, PopReply shape);

// ListPop on the first of `keys` holding a list, in order (missing keys are skipped). A key of
// another type met before that answers WRONGTYPE, as Redis does.
ListOpResult ListPopFirst(Context& c, std::span<const std::string_view> keys, bool left,
                          int64_t count, PopReply shape);

// What a move propagates as.
enum class MovePropagation {
  kAsIs,       // the command itself (LMOVE, RPOPLPUSH)
  kLmove,      // BLMOVE: "LMOVE src dst LEFT|RIGHT LEFT|RIGHT"
  kRpoplpush,  // BRPOPLPUSH: "RPOPLPUSH src dst"
};

// LMOVE's core: pops from `src` (head when from_left), pushes onto `dst` (head when to_left;
// created when missing, and src == dst rotates) and answers the element. Checks src's type, then
// dst's, before changing anything.
ListOpResult ListMove(Context& c, std::string_view src, std::string_view dst, bool from_left,
                      bool to_left, MovePropagation prop = MovePropagation::kAsIs);

}  // namespace kv::cmd
