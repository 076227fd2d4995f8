// The LIST command family with Redis 7.0 semantics (t_list.c), without the blocking commands:
// LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET LREM LTRIM LINSERT LPOS LMOVE
// RPOPLPUSH LMPOP. Argument checks come in Redis' order (some commands look the key up before
// parsing, some after), replies follow its RESP2/RESP3 null shapes, and an emptied list is
// deleted with a "del" event. The pop/move cores are exported in list_ops.h for the blocking
// variants.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/context.h"
#include "cmd/key_finders.h"
#include "cmd/list_ops.h"
#include "cmd/registry.h"
#include "common/strutil.h"
#include "store/list_type.h"

namespace kv::cmd {
namespace {

using store::Entry;
using store::ListValue;
using store::ObjType;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// ---- Shared helpers ---------------------------------------------------------------------------

std::string_view CommandName(const Context& c) { return c.spec ? c.spec->name : c.arg(0); }

// lookupKeyWrite + checkType: the list at `key`, or null when missing. Answers WRONGTYPE and sets
// *wrongtype when the key holds another type.
ListValue* LookupWriteList(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupWrite(key);
  *wrongtype = e && e->value.type() != ObjType::kList;
  if (*wrongtype) {
    c.Error(OpStatus::kWrongType);
    return nullptr;
  }
  return e ? e->value.As<ListValue>() : nullptr;
}

// lookupKeyRead + checkType, counting hits and misses.
ListValue* LookupReadList(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupReadOfType(key, ObjType::kList, wrongtype);
  return e ? e->value.As<ListValue>() : nullptr;
}

// Adds an empty list at `key` (Redis' dbAdd, which fires "new").
ListValue* CreateList(Context& c, std::string_view key) {
  auto list = std::make_unique<ListValue>(c.ks.limits().list_max_listpack_size,
                                          c.ks.limits().list_compress_depth);
  Entry* e = c.ks.Set(c.session.db, key, store::Value::Object(ObjType::kList, std::move(list)));
  c.Notify(kNotifyNew, "new", key);
  return e->value.As<ListValue>();
}

// Deletes `key` when its list is empty, with the "del" event. Returns whether it did.
bool DeleteIfEmpty(Context& c, std::string_view key, const ListValue* list) {
  if (list->Size() != 0) return false;
  c.db().Delete(key);
  c.Notify(kNotifyGeneric, "del", key);
  return true;
}

// Redis' listElementsRemoved: the pop event, the delete of an emptied list, the modified key and
// one dirty count per element. `list` is invalid afterwards when the key was deleted.
void ElementsRemoved(Context& c, std::string_view key, const ListValue* list, bool left, size_t n) {
  c.Notify(kNotifyList, left ? "lpop" : "rpop", key);
  DeleteIfEmpty(c, key, list);
  c.hooks.KeyModified(c.session.db, key);
  c.dirty += n;
}

// getRangeLongFromObjectOrReply: an integer in [lo, hi]; `msg` replaces every error text.
bool ParseRange(Context& c, std::string_view s, int64_t lo, int64_t hi, int64_t* v,
                std::string_view msg) {
  std::optional<int64_t> r = ParseInt64(s);
  if (!r || *r < lo || *r > hi) {
    c.Error(msg);
    return false;
  }
  *v = *r;
  return true;
}

// LEFT or RIGHT (any case); otherwise a syntax error.
bool ParseWhere(Context& c, std::string_view s, bool* left) {
  if (EqualsIgnoreCase(s, "left")) {
    *left = true;
  } else if (EqualsIgnoreCase(s, "right")) {
    *left = false;
  } else {
    c.Error(OpStatus::kSyntax);
    return false;
  }
  return true;
}

// Resolves Redis' inclusive, negative-friendly [start, end] against a list of `len` elements
// into a first index and a count (0 when the range is empty).
void ClampRange(int64_t start, int64_t end, int64_t len, int64_t* first, int64_t* n) {
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) {
    *first = *n = 0;
    return;
  }
  if (end >= len) end = len - 1;
  *first = start;
  *n = end - start + 1;
}

// Answers n elements from `first` (towards the tail, or back from first+n-1 when `reverse`).
void ReplyElements(Context& c, const ListValue& l, size_t first, size_t n, bool reverse) {
  c.out.Array(n);
  l.VisitRange(first, n, reverse, [&](std::string_view e) { c.out.Bulk(e); });
}

// Pops from a non-empty list: answers in `shape`, then the events and the key delete.
void PopFrom(Context& c, std::string_view key, ListValue* l, bool left, int64_t count,
             PopReply shape) {
  size_t n = std::min(static_cast<size_t>(count), l->Size());
  bool keyed = shape == PopReply::kKeyElement || shape == PopReply::kKeyElements;
  if (keyed) {
    c.out.Array(2);
    c.out.Bulk(key);
  }
  if (shape == PopReply::kElement || shape == PopReply::kKeyElement) {
    n = 1;
    c.out.Bulk(left ? l->PopFront() : l->PopBack());
  } else {
    ReplyElements(c, *l, left ? 0 : l->Size() - n, n, !left);
    if (left) l->EraseFront(n);
    else l->EraseBack(n);
  }
  if (keyed) {
    c.rewrite = std::vector<std::string>{left ? "LPOP" : "RPOP", std::string(key)};
    if (shape == PopReply::kKeyElements) c.rewrite->push_back(std::to_string(n));
  }
  ElementsRemoved(c, key, l, left, n);
}

}  // namespace

// ---- Exported cores (list_ops.h) ----------------------------------------------------------------

ListOpResult ListPop(Context& c, std::string_view key, bool left, int64_t count, PopReply shape) {
  bool wrongtype;
  ListValue* l = LookupWriteList(c, key, &wrongtype);
  if (wrongtype) return ListOpResult::kWrongType;
  if (!l || l->Size() == 0) return ListOpResult::kNoData;
  PopFrom(c, key, l, left, count, shape);
  return ListOpResult::kDone;
}

ListOpResult ListPopFirst(Context& c, std::span<const std::string_view> keys, bool left,
                          int64_t count, PopReply shape) {
  for (std::string_view key : keys) {
    ListOpResult r = ListPop(c, key, left, count, shape);
    if (r != ListOpResult::kNoData) return r;
  }
  return ListOpResult::kNoData;
}

ListOpResult ListMove(Context& c, std::string_view src, std::string_view dst, bool from_left,
                      bool to_left, MovePropagation prop) {
  bool wrongtype;
  ListValue* s = LookupWriteList(c, src, &wrongtype);
  if (wrongtype) return ListOpResult::kWrongType;
  if (!s || s->Size() == 0) return ListOpResult::kNoData;
  // Looked up before the pop, so a one-element rotation (src == dst) finds the list itself.
  ListValue* d = LookupWriteList(c, dst, &wrongtype);
  if (wrongtype) return ListOpResult::kWrongType;
  std::string value = from_left ? s->PopFront() : s->PopBack();
  if (!d) d = CreateList(c, dst);
  c.hooks.KeyModified(c.session.db, dst);
  if (to_left) d->PushFront(value);
  else d->PushBack(value);
  c.Notify(kNotifyList, to_left ? "lpush" : "rpush", dst);
  c.out.Bulk(value);
  c.Notify(kNotifyList, from_left ? "lpop" : "rpop", src);
  DeleteIfEmpty(c, src, s);
  c.hooks.KeyModified(c.session.db, src);
  c.dirty++;
  if (prop == MovePropagation::kLmove) {
    c.rewrite = std::vector<std::string>{"LMOVE", std::string(src), std::string(dst),
                                         from_left ? "LEFT" : "RIGHT", to_left ? "LEFT" : "RIGHT"};
  } else if (prop == MovePropagation::kRpoplpush) {
    c.rewrite = std::vector<std::string>{"RPOPLPUSH", std::string(src), std::string(dst)};
  }
  return ListOpResult::kDone;
}

namespace {

// ---- Push and pop -----------------------------------------------------------------------------

// LPUSH/RPUSH/LPUSHX/RPUSHX key element [element ...]: the X forms only push onto a list that
// exists. Answers the new length; one dirty count per element.
void PushGeneric(Context& c, bool left, bool only_existing) {
  std::string_view key = c.arg(1);
  bool wrongtype;
  ListValue* l = LookupWriteList(c, key, &wrongtype);
  if (wrongtype) return;
  if (!l) {
    if (only_existing) {
      c.out.Int(0);
      return;
    }
    l = CreateList(c, key);
  }
  for (size_t j = 2; j < c.argc(); j++) {
    if (left) l->PushFront(c.arg(j));
    else l->PushBack(c.arg(j));
  }
  c.out.Int(static_cast<int64_t>(l->Size()));
  c.Changed(key, kNotifyList, left ? "lpush" : "rpush");
  c.dirty += c.argc() - 3;
}

void LPush(Context& c) { PushGeneric(c, true, false); }
void RPush(Context& c) { PushGeneric(c, false, false); }
void LPushX(Context& c) { PushGeneric(c, true, true); }
void RPushX(Context& c) { PushGeneric(c, false, true); }

// LPOP/RPOP key [count]. Without a count: the element, or a null bulk. With one: an array, a null
// array for a missing key (RESP3: null either way), and an empty array for count 0 on a list.
void PopGeneric(Context& c, bool left) {
  if (c.argc() > 3) {
    c.Error(WrongArity(CommandName(c)));
    return;
  }
  bool has_count = c.argc() == 3;
  int64_t count = 1;
  if (has_count && !ParseRange(c, c.arg(2), 0, kInt64Max, &count, ErrorText(OpStatus::kPositive))) {
    return;
  }
  std::string_view key = c.arg(1);
  bool wrongtype;
  ListValue* l = LookupWriteList(c, key, &wrongtype);
  if (wrongtype) return;
  if (!l) {
    if (has_count) c.out.NullArray();
    else c.out.Null();
    return;
  }
  if (count == 0) {
    c.out.EmptyArray();
    return;
  }
  PopFrom(c, key, l, left, count, has_count ? PopReply::kElements : PopReply::kElement);
}

void LPop(Context& c) { PopGeneric(c, true); }
void RPop(Context& c) { PopGeneric(c, false); }

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]: pops from the first non-empty list and
// propagates as LPOP/RPOP key <n>. Null array when every list is empty.
void LMPop(Context& c) {
  int64_t numkeys;
  if (!ParseRange(c, c.arg(1), 1, kInt64Max, &numkeys, "numkeys should be greater than 0")) {
    return;
  }
  if (numkeys >= static_cast<int64_t>(c.argc()) - 2) {  // no room left for LEFT|RIGHT
    c.Error(OpStatus::kSyntax);
    return;
  }
  size_t where_idx = 2 + static_cast<size_t>(numkeys);
  bool left;
  if (!ParseWhere(c, c.arg(where_idx), &left)) return;
  int64_t count = -1;
  for (size_t j = where_idx + 1; j < c.argc(); j++) {
    if (count == -1 && EqualsIgnoreCase(c.arg(j), "count") && j + 1 < c.argc()) {
      if (!ParseRange(c, c.arg(++j), 1, kInt64Max, &count, "count should be greater than 0")) {
        return;
      }
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  auto keys = c.args.subspan(2, static_cast<size_t>(numkeys));
  ListOpResult r = ListPopFirst(c, keys, left, count == -1 ? 1 : count, PopReply::kKeyElements);
  if (r == ListOpResult::kNoData) c.out.NullArray();
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
void LMove(Context& c) {
  bool from_left, to_left;
  if (!ParseWhere(c, c.arg(3), &from_left) || !ParseWhere(c, c.arg(4), &to_left)) return;
  if (ListMove(c, c.arg(1), c.arg(2), from_left, to_left) == ListOpResult::kNoData) {
    c.out.Null();
  }
}

// RPOPLPUSH source destination: LMOVE source destination RIGHT LEFT.
void RPopLPush(Context& c) {
  if (ListMove(c, c.arg(1), c.arg(2), false, true) == ListOpResult::kNoData) c.out.Null();
}

// ---- Reads by index -----------------------------------------------------------------------------

void LLen(Context& c) {
  bool wrongtype;
  ListValue* l = LookupReadList(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  c.out.Int(l ? static_cast<int64_t>(l->Size()) : 0);
}

// LRANGE key start stop: the indexes are parsed before the lookup.
void LRange(Context& c) {
  int64_t start, end;
  if (!c.ParseInt(c.arg(2), &start) || !c.ParseInt(c.arg(3), &end)) return;
  bool wrongtype;
  ListValue* l = LookupReadList(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  int64_t first = 0, n = 0;
  if (l) ClampRange(start, end, static_cast<int64_t>(l->Size()), &first, &n);
  if (n == 0) c.out.EmptyArray();
  else ReplyElements(c, *l, static_cast<size_t>(first), static_cast<size_t>(n), false);
}

// An index that counts from the tail when negative; false when outside the list.
bool ResolveIndex(int64_t index, size_t size, size_t* out) {
  int64_t len = static_cast<int64_t>(size);
  if (index < 0) index += len;
  if (index < 0 || index >= len) return false;
  *out = static_cast<size_t>(index);
  return true;
}

// LINDEX key index: the key is looked up first (a missing key answers null whatever the index).
void LIndex(Context& c) {
  bool wrongtype;
  ListValue* l = LookupReadList(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  if (!l) {
    c.out.Null();
    return;
  }
  int64_t index;
  if (!c.ParseInt(c.arg(2), &index)) return;
  size_t i;
  if (ResolveIndex(index, l->Size(), &i)) c.out.Bulk(l->At(i));
  else c.out.Null();
}

// LSET key index element: "no such key" comes before the index check.
void LSet(Context& c) {
  std::string_view key = c.arg(1);
  bool wrongtype;
  ListValue* l = LookupWriteList(c, key, &wrongtype);
  if (wrongtype) return;
  if (!l) {
    c.Error(OpStatus::kNoSuchKey);
    return;
  }
  int64_t index;
  if (!c.ParseInt(c.arg(2), &index)) return;
  size_t i;
  if (!ResolveIndex(index, l->Size(), &i)) {
    c.Error(OpStatus::kOutOfRange);
    return;
  }
  l->Set(i, c.arg(3));
  c.out.Ok();
  c.Changed(key, kNotifyList, "lset");
}

// ---- Removal and insertion ----------------------------------------------------------------------

// LREM key count element: count > 0 removes the first matches from the head, < 0 from the tail,
// 0 all. (Redis 7.0 negates INT64_MIN to itself, which also means "all, from the tail".)
void LRem(Context& c) {
  int64_t count;
  if (!c.ParseInt(c.arg(2), &count)) return;
  std::string_view key = c.arg(1);
  bool wrongtype;
  ListValue* l = LookupWriteList(c, key, &wrongtype);
  if (wrongtype) return;
  if (!l) {
    c.out.Int(0);
    return;
  }
  bool from_tail = count < 0;
  size_t limit = count == kInt64Min ? 0 : static_cast<size_t>(from_tail ? -count : count);
  size_t removed = l->Remove(c.arg(3), limit, from_tail);
  if (removed > 0) {
    c.hooks.KeyModified(c.session.db, key);
    c.Notify(kNotifyList, "lrem", key);
    c.dirty += removed;
  }
  DeleteIfEmpty(c, key, l);
  c.out.Int(static_cast<int64_t>(removed));
}

// LTRIM key start stop: always fires "ltrim" on an existing list, but counts (and so
// propagates) only when elements were removed.
void LTrim(Context& c) {
  int64_t start, end;
  if (!c.ParseInt(c.arg(2), &start) || !c.ParseInt(c.arg(3), &end)) return;
  std::string_view key = c.arg(1);
  bool wrongtype;
  ListValue* l = LookupWriteList(c, key, &wrongtype);
  if (wrongtype) return;
  if (!l) {
    c.out.Ok();
    return;
  }
  int64_t len = static_cast<int64_t>(l->Size()), first, n;
  ClampRange(start, end, len, &first, &n);
  size_t ltrim = static_cast<size_t>(n == 0 ? len : first);
  size_t rtrim = static_cast<size_t>(n == 0 ? 0 : len - first - n);
  l->EraseFront(ltrim);
  l->EraseBack(rtrim);
  c.Notify(kNotifyList, "ltrim", key);
  DeleteIfEmpty(c, key, l);
  c.hooks.KeyModified(c.session.db, key);
  c.dirty += ltrim + rtrim;
  c.out.Ok();
}

// LINSERT key BEFORE|AFTER pivot element: the new length, 0 for a missing key, -1 when the pivot
// is not found. BEFORE/AFTER is checked before the key.
void LInsert(Context& c) {
  bool after;
  if (EqualsIgnoreCase(c.arg(2), "after")) {
    after = true;
  } else if (EqualsIgnoreCase(c.arg(2), "before")) {
    after = false;
  } else {
    c.Error(OpStatus::kSyntax);
    return;
  }
  std::string_view key = c.arg(1);
  bool wrongtype;
  ListValue* l = LookupWriteList(c, key, &wrongtype);
  if (wrongtype) return;
  if (!l) {
    c.out.Int(0);
    return;
  }
  if (!l->InsertAtPivot(c.arg(3), c.arg(4), after)) {
    c.out.Int(-1);
    return;
  }
  c.Changed(key, kNotifyList, "linsert");
  c.out.Int(static_cast<int64_t>(l->Size()));
}

// ---- LPOS ---------------------------------------------------------------------------------------

struct LposOpts {
  int64_t rank = 1;
  int64_t count = -1;  // -1: COUNT not given
  int64_t maxlen = 0;  // 0: scan everything
};

bool ParseLposOpts(Context& c, LposOpts* o) {
  for (size_t j = 3; j < c.argc(); j++) {
    std::string_view opt = c.arg(j);
    bool more = j + 1 < c.argc();
    if (EqualsIgnoreCase(opt, "rank") && more) {
      if (!c.ParseInt(c.arg(++j), &o->rank)) return false;
      if (o->rank == 0) {
        c.Error("RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
                "or use negative to start from the end of the list");
        return false;
      }
    } else if (EqualsIgnoreCase(opt, "count") && more) {
      if (!ParseRange(c, c.arg(++j), 0, kInt64Max, &o->count, "COUNT can't be negative")) {
        return false;
      }
    } else if (EqualsIgnoreCase(opt, "maxlen") && more) {
      if (!ParseRange(c, c.arg(++j), 0, kInt64Max, &o->maxlen, "MAXLEN can't be negative")) {
        return false;
      }
    } else {
      c.Error(OpStatus::kSyntax);
      return false;
    }
  }
  return true;
}

// Indexes (as LINDEX counts them) of the matches LPOS reports. A negative rank scans from the
// tail. RANK INT64_MIN reproduces Redis 7.0's overflow: every match qualifies and COUNT never
// stops the scan.
std::vector<int64_t> LposMatches(const ListValue& l, std::string_view ele, const LposOpts& o) {
  bool from_tail = o.rank < 0;
  bool min_rank = o.rank == kInt64Min;
  int64_t rank = min_rank ? 1 : (from_tail ? -o.rank : o.rank);
  bool all = o.count != -1;  // with COUNT: every match from `rank` on, up to count (0: all)
  int64_t len = static_cast<int64_t>(l.Size()), index = 0, matches = 0;
  std::vector<int64_t> found;
  l.Scan(from_tail, [&](std::string_view e) {
    if (o.maxlen != 0 && index >= o.maxlen) return false;
    if (e == ele && ++matches >= rank) {
      found.push_back(from_tail ? len - index - 1 : index);
      if (!all) return false;
      if (!min_rank && o.count != 0 && matches - rank + 1 >= o.count) return false;
    }
    index++;
    return true;
  });
  return found;
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]: options are checked before the
// key. Without COUNT: the index or null; with it: an array (empty for a missing key).
void LPos(Context& c) {
  LposOpts o;
  if (!ParseLposOpts(c, &o)) return;
  bool wrongtype;
  ListValue* l = LookupReadList(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  std::vector<int64_t> found;
  if (l) found = LposMatches(*l, c.arg(2), o);
  if (o.count == -1) {
    if (found.empty()) c.out.Null();
    else c.out.Int(found[0]);
    return;
  }
  c.out.Array(found.size());
  for (int64_t i : found) c.out.Int(i);
}

}  // namespace

// Arity, flags and key positions are those Redis 7.0's COMMAND INFO reports. LMPOP's keys follow
// its numkeys argument (movablekeys), which COMMAND INFO reports as 0 0 0.
void RegisterListCommands(CommandTable& t) {
  const uint32_t kW = kWrite | kDenyOom;
  static const CommandRow kRows[] = {
      {"lpush", -3, kW | kFast, 1, 1, 1, LPush, "Prepend one or multiple elements to a list",
       "1.0.0"},
      {"rpush", -3, kW | kFast, 1, 1, 1, RPush, "Append one or multiple elements to a list",
       "1.0.0"},
      {"lpushx", -3, kW | kFast, 1, 1, 1, LPushX,
       "Prepend an element to a list, only if the list exists", "2.2.0"},
      {"rpushx", -3, kW | kFast, 1, 1, 1, RPushX,
       "Append an element to a list, only if the list exists", "2.2.0"},
      {"lpop", -2, kWrite | kFast, 1, 1, 1, LPop, "Remove and get the first elements in a list",
       "1.0.0"},
      {"rpop", -2, kWrite | kFast, 1, 1, 1, RPop, "Remove and get the last elements in a list",
       "1.0.0"},
      {"llen", 2, kReadOnly | kFast, 1, 1, 1, LLen, "Get the length of a list", "1.0.0"},
      {"lrange", 4, kReadOnly, 1, 1, 1, LRange, "Get a range of elements from a list", "1.0.0"},
      {"lindex", 3, kReadOnly, 1, 1, 1, LIndex, "Get an element from a list by its index",
       "1.0.0"},
      {"lset", 4, kW, 1, 1, 1, LSet, "Set the value of an element in a list by its index",
       "1.0.0"},
      {"lrem", 4, kWrite, 1, 1, 1, LRem, "Remove elements from a list", "1.0.0"},
      {"ltrim", 4, kWrite, 1, 1, 1, LTrim, "Trim a list to the specified range", "1.0.0"},
      {"linsert", 5, kW, 1, 1, 1, LInsert,
       "Insert an element before or after another element in a list", "2.2.0"},
      {"lpos", -3, kReadOnly, 1, 1, 1, LPos, "Return the index of matching elements on a list",
       "6.0.6"},
      {"lmove", 5, kW, 1, 2, 1, LMove,
       "Pop an element from a list, push it to another list and return it", "6.2.0"},
      {"rpoplpush", 3, kW, 1, 2, 1, RPopLPush,
       "Remove the last element in a list, prepend it to another list and return it", "1.2.0"},
      {"lmpop", -4, kWrite, 0, 0, 0, LMPop, "Pop elements from a list", "7.0.0",
       NumkeysAt1Keys},
  };
  AddRows(t, kRows, "list");
}

}  // namespace kv::cmd
