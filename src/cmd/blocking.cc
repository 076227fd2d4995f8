// The blocking list and sorted-set commands: BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP BZPOPMIN
// BZPOPMAX BZMPOP. Each tries its non-blocking core (list_ops.h, zset_ops.h) and, when there is
// nothing to take, asks the dispatcher to park the client (Context::block); the dispatcher runs
// the command again when one of its keys changes, or answers null at the timeout. Inside
// MULTI/EXEC they answer null at once, as in Redis.
#include <string>
#include <vector>

#include "cmd/context.h"
#include "cmd/key_finders.h"
#include "cmd/list_ops.h"
#include "cmd/registry.h"
#include "cmd/zset_ops.h"
#include "common/strutil.h"

namespace kv::cmd {
namespace {

// Waits on `keys`, or answers the timeout reply now when blocking is not allowed.
void BlockOrNull(Context& c, std::span<const std::string_view> keys, int64_t deadline,
                 bool null_array, store::ObjType type = store::ObjType::kList) {
  if (c.session.deny_blocking) {
    if (null_array) c.out.NullArray();
    else c.out.Null();
    return;
  }
  BlockRequest req;
  req.keys.assign(keys.begin(), keys.end());
  req.deadline_ms = deadline;
  req.null_array = null_array;
  req.type = type;
  c.block = std::move(req);
}

// BLPOP/BRPOP key [key ...] timeout
void BlockingPop(Context& c, bool left) {
  int64_t deadline;
  if (!c.ParseBlockTimeout(c.arg(c.argc() - 1), &deadline)) return;
  auto keys = c.args.subspan(1, c.argc() - 2);
  if (ListPopFirst(c, keys, left, 1, PopReply::kKeyElement) == ListOpResult::kNoData) {
    BlockOrNull(c, keys, deadline, true);
  }
}

void BLPop(Context& c) { BlockingPop(c, true); }
void BRPop(Context& c) { BlockingPop(c, false); }

bool ParseSide(Context& c, std::string_view s, bool* left) {
  if (EqualsIgnoreCase(s, "left")) *left = true;
  else if (EqualsIgnoreCase(s, "right")) *left = false;
  else {
    c.Error(OpStatus::kSyntax);
    return false;
  }
  return true;
}

void BlockingMove(Context& c, std::string_view src, std::string_view dst, bool from_left,
                  bool to_left, std::string_view timeout, MovePropagation prop) {
  int64_t deadline;
  if (!c.ParseBlockTimeout(timeout, &deadline)) return;
  if (ListMove(c, src, dst, from_left, to_left, prop) == ListOpResult::kNoData) {
    BlockOrNull(c, std::span<const std::string_view>(&src, 1), deadline, false);
  }
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
void BLMove(Context& c) {
  bool from_left, to_left;
  if (!ParseSide(c, c.arg(3), &from_left) || !ParseSide(c, c.arg(4), &to_left)) return;
  BlockingMove(c, c.arg(1), c.arg(2), from_left, to_left, c.arg(5), MovePropagation::kLmove);
}

// BRPOPLPUSH source destination timeout
void BRPopLPush(Context& c) {
  BlockingMove(c, c.arg(1), c.arg(2), false, true, c.arg(3), MovePropagation::kRpoplpush);
}

// The arguments after the timeout of BLMPOP/BZMPOP: numkeys key [key ...] WHERE [COUNT count],
// checked in Redis' order (numkeys, where, options).
struct MpopArgs {
  std::span<const std::string_view> keys;
  bool first_side = true;  // LEFT / MIN
  int64_t count = 1;
};

// Redis' getRangeLongFromObjectOrReply with a message: it answers `msg` for a non-integer too.
bool ParseRangedInt(Context& c, std::string_view s, int64_t lo, const char* msg, int64_t* v) {
  auto n = ParseInt64(s);
  if (!n || *n < lo) {
    c.Error(msg);
    return false;
  }
  *v = *n;
  return true;
}

bool ParseMpop(Context& c, size_t numkeys_idx, const char* first, const char* second,
               MpopArgs* a) {
  int64_t numkeys;
  if (!ParseRangedInt(c, c.arg(numkeys_idx), 1, "numkeys should be greater than 0", &numkeys)) {
    return false;
  }
  if (numkeys >= static_cast<int64_t>(c.argc() - numkeys_idx - 1)) {  // no room for WHERE
    c.Error(OpStatus::kSyntax);
    return false;
  }
  size_t where = numkeys_idx + 1 + static_cast<size_t>(numkeys);
  if (EqualsIgnoreCase(c.arg(where), first)) a->first_side = true;
  else if (EqualsIgnoreCase(c.arg(where), second)) a->first_side = false;
  else {
    c.Error(OpStatus::kSyntax);
    return false;
  }
  bool have_count = false;
  for (size_t j = where + 1; j < c.argc(); j++) {
    if (!have_count && EqualsIgnoreCase(c.arg(j), "count") && j + 1 < c.argc()) {
      if (!ParseRangedInt(c, c.arg(++j), 1, "count should be greater than 0", &a->count)) {
        return false;
      }
      have_count = true;
    } else {
      c.Error(OpStatus::kSyntax);
      return false;
    }
  }
  a->keys = c.args.subspan(numkeys_idx + 1, static_cast<size_t>(numkeys));
  return true;
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
void BLMPop(Context& c) {
  MpopArgs a;
  if (!ParseMpop(c, 2, "left", "right", &a)) return;
  int64_t deadline;
  if (!c.ParseBlockTimeout(c.arg(1), &deadline)) return;
  if (ListPopFirst(c, a.keys, a.first_side, a.count, PopReply::kKeyElements) ==
      ListOpResult::kNoData) {
    BlockOrNull(c, a.keys, deadline, true);
  }
}

// Pops as ZsetPop does and propagates what Redis propagates: ZPOPMIN/ZPOPMAX key [count].
// False when there was nothing to pop (and nothing was answered).
bool ZPopAndRewrite(Context& c, std::span<const std::string_view> keys, bool min, int64_t count,
                    const ZPopShape& shape, bool with_count) {
  // ZsetPop answers "nothing" itself; a blocking pop must wait instead, so it only pops when
  // some key exists (empty sorted sets never do). A key of another type answers WRONGTYPE.
  bool any = false;
  for (std::string_view k : keys) any = any || c.LookupWrite(k) != nullptr;
  if (!any) return false;
  ZPopResult r = ZsetPop(c, keys, min, count, shape);
  if (r.key_index < 0) return true;  // WRONGTYPE was answered
  std::vector<std::string> argv = {min ? "ZPOPMIN" : "ZPOPMAX", std::string(keys[r.key_index])};
  if (with_count) argv.push_back(Int64ToString(r.popped));
  c.rewrite = std::move(argv);
  return true;
}

// BZPOPMIN/BZPOPMAX key [key ...] timeout
void BlockingZPop(Context& c, bool min) {
  int64_t deadline;
  if (!c.ParseBlockTimeout(c.arg(c.argc() - 1), &deadline)) return;
  auto keys = c.args.subspan(1, c.argc() - 2);
  ZPopShape shape{.emit_key = true, .nested = false, .nil_when_empty = true};
  if (!ZPopAndRewrite(c, keys, min, -1, shape, false)) {
    BlockOrNull(c, keys, deadline, true, store::ObjType::kZSet);
  }
}

void BZPopMin(Context& c) { BlockingZPop(c, true); }
void BZPopMax(Context& c) { BlockingZPop(c, false); }

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
void BZMPop(Context& c) {
  MpopArgs a;
  if (!ParseMpop(c, 2, "min", "max", &a)) return;
  int64_t deadline;
  if (!c.ParseBlockTimeout(c.arg(1), &deadline)) return;
  ZPopShape shape{.emit_key = true, .nested = true, .nil_when_empty = true};
  if (!ZPopAndRewrite(c, a.keys, a.first_side, a.count, shape, true)) {
    BlockOrNull(c, a.keys, deadline, true, store::ObjType::kZSet);
  }
}

}  // namespace

void RegisterBlockingCommands(CommandTable& t) {
  struct Row {
    const char* name;
    int arity;
    uint32_t flags;
    int first, last, step;
    Handler fn;
    const char* group;
    const char* summary;
    const char* since;
    KeyFinder getkeys = nullptr;
  };
  static const Row kRows[] = {
      {"blpop", -3, kWrite | kNoScript | kBlocking, 1, -2, 1, BLPop, "list",
       "Remove and get the first element in a list, or block until one is available", "2.0.0"},
      {"brpop", -3, kWrite | kNoScript | kBlocking, 1, -2, 1, BRPop, "list",
       "Remove and get the last element in a list, or block until one is available", "2.0.0"},
      {"blmove", 6, kWrite | kDenyOom | kNoScript | kBlocking, 1, 2, 1, BLMove, "list",
       "Pop an element from a list, push it to another list and return it; or block until one "
       "is available", "6.2.0"},
      {"brpoplpush", 4, kWrite | kDenyOom | kNoScript | kBlocking, 1, 2, 1, BRPopLPush, "list",
       "Pop an element from a list, push it to another list and return it; or block until one "
       "is available", "2.2.0"},
      {"blmpop", -5, kWrite | kBlocking, 0, 0, 0, BLMPop, "list",
       "Pop elements from a list, or block until one is available", "7.0.0", NumkeysAt2Keys},
      {"bzpopmin", -3, kWrite | kFast | kNoScript | kBlocking, 1, -2, 1, BZPopMin, "sorted-set",
       "Remove and return the member with the lowest score from one or more sorted sets, or "
       "block until one is available", "5.0.0"},
      {"bzpopmax", -3, kWrite | kFast | kNoScript | kBlocking, 1, -2, 1, BZPopMax, "sorted-set",
       "Remove and return the member with the highest score from one or more sorted sets, or "
       "block until one is available", "5.0.0"},
      {"bzmpop", -5, kWrite | kBlocking, 0, 0, 0, BZMPop, "sorted-set",
       "Remove and return members with scores in a sorted set or block until one is available",
       "7.0.0", NumkeysAt2Keys},
  };
  for (const Row& r : kRows) {
    t.Add({.name = r.name, .arity = r.arity, .flags = r.flags, .first_key = r.first,
           .last_key = r.last, .key_step = r.step, .handler = r.fn, .getkeys = r.getkeys,
           .group = r.group, .summary = r.summary, .since = r.since});
  }
}

}  // namespace kv::cmd
