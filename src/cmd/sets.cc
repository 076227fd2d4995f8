// The SET command family with Redis 7.0 semantics (t_set.c): membership, random members,
// SMOVE, the set algebra (SINTER/SUNION/SDIFF, their STORE forms and SINTERCARD) and SSCAN.
// Replies (RESP3 '~' where Redis uses set replies), error texts, keyspace events and
// replication rewrites follow Redis 7.0; each handler's comment notes the non-obvious parts.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/context.h"
#include "cmd/key_finders.h"
#include "cmd/registry.h"
#include "common/strutil.h"
#include "store/set_type.h"

namespace kv::cmd {
namespace {

using store::Entry;
using store::ObjType;
using store::SetValue;
using store::Value;

// ---- Shared helpers ---------------------------------------------------------------------------

SetValue* AsSet(Entry* e) { return e ? e->value.As<SetValue>() : nullptr; }

size_t MaxIntset(const Context& c) { return c.ks.limits().set_max_intset_entries; }

// A write lookup that insists on a set; answers WRONGTYPE and sets *wrongtype otherwise.
SetValue* LookupWriteSet(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupWrite(key);
  *wrongtype = e && e->value.type() != ObjType::kSet;
  if (*wrongtype) {
    c.Error(OpStatus::kWrongType);
    return nullptr;
  }
  return AsSet(e);
}

// A read lookup (hits, misses, keymiss events). False, having answered WRONGTYPE, when the key
// holds another type; *set is null when the key does not exist.
bool LookupReadSet(Context& c, std::string_view key, SetValue** set) {
  bool wrongtype;
  *set = AsSet(c.LookupReadOfType(key, ObjType::kSet, &wrongtype));
  return !wrongtype;
}

// Redis' dbAdd: a new key fires "new" (class n) before the command's own event.
SetValue* AddSetKey(Context& c, std::string_view key, std::unique_ptr<SetValue> s) {
  SetValue* raw = s.get();
  c.ks.Set(c.session.db, key, Value::Object(ObjType::kSet, std::move(s)));
  c.Notify(kNotifyNew, "new", key);
  return raw;
}

// Removes a set that became empty, with Redis' "del" event.
void DeleteEmptied(Context& c, std::string_view key) {
  c.ks.ServerDelete(c.session.db, key);
  c.Notify(kNotifyGeneric, "del", key);
}

void ReplyMembers(Context& c, const SetValue& s) {
  c.out.Set(s.Size());
  s.ForEachMember([&](std::string_view m) { c.out.Bulk(m); });
}

void ReplyStrings(Context& c, const std::vector<std::string>& v, bool as_set) {
  if (as_set)
    c.out.Set(v.size());
  else
    c.out.Array(v.size());
  for (const std::string& m : v) c.out.Bulk(m);
}

// The *STORE commands' end (Redis' setKey / dbDelete): a non-empty result replaces `dst`
// (dropping its TTL, whatever its type) and answers its size; an empty one deletes `dst`.
void StoreResult(Context& c, std::string_view dst, std::unique_ptr<SetValue> result,
                 std::string_view event) {
  size_t n = result->Size();
  if (n == 0) {
    c.out.Int(0);
    if (c.ks.ServerDelete(c.session.db, dst)) c.Changed(dst, kNotifyGeneric, "del");
    return;
  }
  bool existed = c.LookupWrite(dst) != nullptr;
  c.ks.Set(c.session.db, dst, Value::Object(ObjType::kSet, std::move(result)));
  if (!existed) c.Notify(kNotifyNew, "new", dst);
  c.out.Int(static_cast<int64_t>(n));
  c.Changed(dst, kNotifySet, event);
}

// ---- SADD SREM SMOVE --------------------------------------------------------------------------

// SADD key member [member ...]: one "sadd" event, dirty counts the members added.
void SAdd(Context& c) {
  std::string_view key = c.arg(1);
  bool wrongtype;
  SetValue* s = LookupWriteSet(c, key, &wrongtype);
  if (wrongtype) return;
  if (!s) s = AddSetKey(c, key, SetValue::CreateFor(c.arg(2)));
  int64_t added = 0;
  for (size_t j = 2; j < c.argc(); j++) {
    if (s->Add(c.arg(j), MaxIntset(c))) added++;
  }
  if (added) {
    c.Changed(key, kNotifySet, "sadd");
    c.dirty += added - 1;
  }
  c.out.Int(added);
}

// SREM key member [member ...]: stops at the member that empties the set, which is deleted
// ("srem" then "del").
void SRem(Context& c) {
  std::string_view key = c.arg(1);
  bool wrongtype;
  SetValue* s = LookupWriteSet(c, key, &wrongtype);
  if (wrongtype) return;
  int64_t deleted = 0;
  bool emptied = false;
  for (size_t j = 2; s && j < c.argc() && !emptied; j++) {
    if (!s->Remove(c.arg(j))) continue;
    deleted++;
    emptied = s->Size() == 0;
  }
  if (deleted) {
    if (emptied) c.db().Delete(key);
    c.Changed(key, kNotifySet, "srem");
    c.dirty += deleted - 1;
    if (emptied) c.Notify(kNotifyGeneric, "del", key);
  }
  c.out.Int(deleted);
}

// SMOVE source destination member. A missing source answers 0 before any type check of the
// destination; source == destination only reports membership. Propagated as is.
void SMove(Context& c) {
  std::string_view src_key = c.arg(1), dst_key = c.arg(2), member = c.arg(3);
  Entry* src_e = c.LookupWrite(src_key);
  Entry* dst_e = c.LookupWrite(dst_key);
  if (!src_e) {
    c.out.Int(0);
    return;
  }
  if (src_e->value.type() != ObjType::kSet || (dst_e && dst_e->value.type() != ObjType::kSet)) {
    c.Error(OpStatus::kWrongType);
    return;
  }
  SetValue* src = AsSet(src_e);
  SetValue* dst = AsSet(dst_e);
  if (src == dst) {
    c.out.Int(src->Contains(member) ? 1 : 0);
    return;
  }
  if (!src->Remove(member)) {
    c.out.Int(0);
    return;
  }
  c.Changed(src_key, kNotifySet, "srem");
  if (src->Size() == 0) DeleteEmptied(c, src_key);
  if (!dst) dst = AddSetKey(c, dst_key, SetValue::CreateFor(member));
  if (dst->Add(member, MaxIntset(c))) c.Changed(dst_key, kNotifySet, "sadd");
  c.out.Int(1);
}

// ---- SISMEMBER SMISMEMBER SCARD ---------------------------------------------------------------

void SIsMember(Context& c) {
  SetValue* s;
  if (!LookupReadSet(c, c.arg(1), &s)) return;
  c.out.Int(s && s->Contains(c.arg(2)) ? 1 : 0);
}

// A missing key is an empty set: a row of zeros.
void SMIsMember(Context& c) {
  SetValue* s;
  if (!LookupReadSet(c, c.arg(1), &s)) return;
  c.out.Array(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++) c.out.Int(s && s->Contains(c.arg(j)) ? 1 : 0);
}

void SCard(Context& c) {
  SetValue* s;
  if (!LookupReadSet(c, c.arg(1), &s)) return;
  c.out.Int(s ? static_cast<int64_t>(s->Size()) : 0);
}

// ---- Set algebra ------------------------------------------------------------------------------

// Looks every key up for reading, as Redis does (missing keys are null: empty sets). False,
// having answered WRONGTYPE, at the first key of another type.
bool LookupSets(Context& c, std::span<const std::string_view> keys, std::vector<SetValue*>* sets) {
  sets->reserve(keys.size());
  for (std::string_view key : keys) {
    SetValue* s;
    if (!LookupReadSet(c, key, &s)) return false;
    sets->push_back(s);
  }
  return true;
}

enum class InterMode { kReply, kStore, kCard };

// Members of the smallest set that every other set holds; SINTERCARD stops counting at
// `limit` (0: no limit). The same set met again is skipped, which also keeps the walk of
// sets[0] free of lookups into its own table.
std::vector<std::string> Intersect(std::vector<SetValue*>& sets, InterMode mode, uint64_t limit,
                                   uint64_t* card) {
  std::stable_sort(sets.begin(), sets.end(),
                   [](SetValue* a, SetValue* b) { return a->Size() < b->Size(); });
  std::vector<std::string> found;
  *card = 0;
  sets[0]->ForEachMember([&](std::string_view m) {
    if (limit && *card >= limit) return;
    for (size_t j = 1; j < sets.size(); j++) {
      if (sets[j] != sets[0] && !sets[j]->Contains(m)) return;
    }
    ++*card;
    if (mode != InterMode::kCard) found.emplace_back(m);
  });
  return found;
}

// Redis' sinterGenericCommand for SINTER/SMEMBERS (a set reply), SINTERSTORE and SINTERCARD.
void InterGeneric(Context& c, std::span<const std::string_view> keys, InterMode mode,
                  std::string_view dst = {}, uint64_t limit = 0) {
  std::vector<SetValue*> sets;
  if (!LookupSets(c, keys, &sets)) return;
  uint64_t card = 0;
  std::vector<std::string> found;
  if (std::find(sets.begin(), sets.end(), nullptr) == sets.end()) {
    found = Intersect(sets, mode, limit, &card);
  }
  switch (mode) {
    case InterMode::kCard:
      c.out.Int(static_cast<int64_t>(card));
      break;
    case InterMode::kReply:
      ReplyStrings(c, found, /*as_set=*/true);
      break;
    case InterMode::kStore: {
      auto result = SetValue::CreateIntSet();
      for (const std::string& m : found) result->Add(m, MaxIntset(c));
      StoreResult(c, dst, std::move(result), "sinterstore");
      break;
    }
  }
}

enum class SetOp { kUnion, kDiff };

// SDIFF's two algorithms, chosen as Redis does. They can leave the result in different
// encodings (the second adds the whole first set before removing), so the choice matters.
void Diff(const std::vector<SetValue*>& sets, SetValue* out, size_t max_intset) {
  if (!sets[0]) return;
  uint64_t algo_one = 0, algo_two = 0;
  for (SetValue* s : sets) {
    if (!s) continue;
    algo_one += sets[0]->Size();
    algo_two += s->Size();
  }
  if (algo_one / 2 <= algo_two) {
    // Each member of the first set that no other set holds.
    sets[0]->ForEachMember([&](std::string_view m) {
      for (size_t j = 1; j < sets.size(); j++) {
        if (sets[j] == sets[0] || (sets[j] && sets[j]->Contains(m))) return;
      }
      out->Add(m, max_intset);
    });
    return;
  }
  // The first set, minus every member of the others.
  sets[0]->ForEachMember([&](std::string_view m) { out->Add(m, max_intset); });
  for (size_t j = 1; j < sets.size() && out->Size() > 0; j++) {
    if (sets[j]) sets[j]->ForEachMember([&](std::string_view m) { out->Remove(m); });
  }
}

// Redis' sunionDiffGenericCommand: the result starts as an empty intset and grows through
// setTypeAdd, so its encoding (and the reply order of small integer results) follows Redis.
void UnionDiffGeneric(Context& c, std::span<const std::string_view> keys, SetOp op,
                      std::string_view dst = {}, bool store = false) {
  std::vector<SetValue*> sets;
  if (!LookupSets(c, keys, &sets)) return;
  auto result = SetValue::CreateIntSet();
  if (op == SetOp::kUnion) {
    for (SetValue* s : sets) {
      if (s) s->ForEachMember([&](std::string_view m) { result->Add(m, MaxIntset(c)); });
    }
  } else {
    Diff(sets, result.get(), MaxIntset(c));
  }
  if (!store) {
    ReplyMembers(c, *result);
    c.ks.FreeServerValue(Value::Object(ObjType::kSet, std::move(result)));
    return;
  }
  StoreResult(c, dst, std::move(result), op == SetOp::kUnion ? "sunionstore" : "sdiffstore");
}

std::span<const std::string_view> ArgsFrom(const Context& c, size_t i) { return c.args.subspan(i); }

// SMEMBERS is SINTER of one key in Redis 7.0.
void SInter(Context& c) { InterGeneric(c, ArgsFrom(c, 1), InterMode::kReply); }
void SInterStore(Context& c) { InterGeneric(c, ArgsFrom(c, 2), InterMode::kStore, c.arg(1)); }
void SUnion(Context& c) { UnionDiffGeneric(c, ArgsFrom(c, 1), SetOp::kUnion); }
void SUnionStore(Context& c) { UnionDiffGeneric(c, ArgsFrom(c, 2), SetOp::kUnion, c.arg(1), true); }
void SDiff(Context& c) { UnionDiffGeneric(c, ArgsFrom(c, 1), SetOp::kDiff); }
void SDiffStore(Context& c) { UnionDiffGeneric(c, ArgsFrom(c, 2), SetOp::kDiff, c.arg(1), true); }

// SINTERCARD numkeys key [key ...] [LIMIT limit]. Both numbers answer their own message for
// any bad value, non-integers included, as in Redis.
void SInterCard(Context& c) {
  auto numkeys = ParseInt64(c.arg(1));
  if (!numkeys || *numkeys < 1) {
    c.Error("numkeys should be greater than 0");
    return;
  }
  if (*numkeys > static_cast<int64_t>(c.argc()) - 2) {
    c.Error("Number of keys can't be greater than number of args");
    return;
  }
  int64_t limit = 0;
  for (size_t j = 2 + *numkeys; j < c.argc(); j++) {
    if (EqualsIgnoreCase(c.arg(j), "limit") && j + 1 < c.argc()) {
      auto l = ParseInt64(c.arg(++j));
      if (!l || *l < 0) {
        c.Error("LIMIT can't be negative");
        return;
      }
      limit = *l;
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  InterGeneric(c, c.args.subspan(2, *numkeys), InterMode::kCard, {}, limit);
}

// ---- SPOP SRANDMEMBER -------------------------------------------------------------------------

// SPOP key count. The count is validated before the key is looked up. Popping the whole set
// answers like SUNION of it and propagates as DEL (Redis 7.0 sends DEL whatever
// lazyfree-lazy-server-del says); otherwise the pop propagates as one
// "SREM key member" per popped member, as Redis 7.0 does (the feed wraps more than one in
// MULTI/EXEC).
void SPopCount(Context& c) {
  std::string_view key = c.arg(1);
  auto count = ParseInt64(c.arg(2));
  if (!count || *count < 0) {
    c.Error(OpStatus::kPositive);
    return;
  }
  bool wrongtype;
  SetValue* s = LookupWriteSet(c, key, &wrongtype);
  if (wrongtype) return;
  if (!s || *count == 0) {
    c.out.Set(0);
    return;
  }
  uint64_t size = s->Size();
  c.Changed(key, kNotifySet, "spop");
  if (static_cast<uint64_t>(*count) >= size) {
    c.dirty += size - 1;
    UnionDiffGeneric(c, c.args.subspan(1, 1), SetOp::kUnion);
    DeleteEmptied(c, key);
    c.rewrite = std::vector<std::string>{"DEL", std::string(key)};
    return;
  }
  c.dirty += *count - 1;
  std::vector<std::string> popped = s->PopRandom(*count, MaxIntset(c));
  ReplyStrings(c, popped, /*as_set=*/true);
  c.propagate.reserve(popped.size());
  for (std::string& m : popped) c.propagate.push_back({"SREM", std::string(key), std::move(m)});
}

// SPOP key [count]: one member, propagated as SREM key member.
void SPop(Context& c) {
  if (c.argc() == 3) return SPopCount(c);
  if (c.argc() > 3) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  std::string_view key = c.arg(1);
  bool wrongtype;
  SetValue* s = LookupWriteSet(c, key, &wrongtype);
  if (wrongtype) return;
  if (!s) {
    c.out.Null();
    return;
  }
  std::string member = s->RandomMember();
  s->Remove(member);
  c.Changed(key, kNotifySet, "spop");
  c.rewrite = std::vector<std::string>{"SREM", std::string(key), member};
  c.out.Bulk(member);
  if (s->Size() == 0) DeleteEmptied(c, key);
}

// SRANDMEMBER key count: negative counts may repeat members (and come in random order), at most
// kMaxRandomRepeats of them; positive ones are distinct, with Redis' strategies
// (SetValue::RandomDistinct). Array replies.
void SRandMemberCount(Context& c) {
  auto count = ParseInt64(c.arg(2));
  if (!count) {
    c.Error(OpStatus::kNotInteger);
    return;
  }
  if (*count == INT64_MIN) {
    c.Error(CountOutOfRange(-INT64_MAX, INT64_MAX));
    return;
  }
  SetValue* s;
  if (!LookupReadSet(c, c.arg(1), &s)) return;
  if (!s || *count == 0) {
    c.out.Array(0);
    return;
  }
  if (*count < -kMaxRandomRepeats) {
    c.Error(CountOutOfRange(-kMaxRandomRepeats, INT64_MAX));
    return;
  }
  if (*count < 0 || *count == 1) {
    uint64_t n = *count < 0 ? -*count : 1;
    c.out.Array(n);
    for (uint64_t i = 0; i < n; i++) c.out.Bulk(s->RandomMember());
    return;
  }
  ReplyStrings(c, s->RandomDistinct(*count), /*as_set=*/false);
}

void SRandMember(Context& c) {
  if (c.argc() == 3) return SRandMemberCount(c);
  if (c.argc() > 3) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  SetValue* s;
  if (!LookupReadSet(c, c.arg(1), &s)) return;
  if (s)
    c.out.Bulk(s->RandomMember());
  else
    c.out.Null();
}

// ---- SSCAN ------------------------------------------------------------------------------------

// SSCAN key cursor [MATCH pattern] [COUNT count]. The cursor is checked before the lookup and
// the options after it (a missing key answers the empty scan whatever they say). An intset is
// returned whole with cursor 0; a hashtable walks up to COUNT members (10*COUNT buckets at
// most), then MATCH filters them, as in Redis.
void SScan(Context& c) {
  uint64_t cursor;
  if (!ParseScanCursor(c.arg(2), &cursor)) {
    c.Error(OpStatus::kInvalidCursor);
    return;
  }
  SetValue* s;
  if (!LookupReadSet(c, c.arg(1), &s)) return;
  Context::CollectionScanOptions opt;
  if (s && !c.ParseCollectionScanOptions(&opt)) return;
  std::vector<std::string> found;
  if (s) {
    auto collect = [&](std::string_view m) { found.emplace_back(m); };
    int64_t max_steps = opt.count > INT64_MAX / 10 ? INT64_MAX : opt.count * 10;
    do {
      cursor = s->Scan(cursor, collect);
    } while (cursor && max_steps-- && static_cast<int64_t>(found.size()) < opt.count);
  } else {
    cursor = 0;
  }
  if (opt.use_pattern) {
    std::erase_if(found, [&](const std::string& m) { return !GlobMatch(opt.pattern, m); });
  }
  c.out.Array(2);
  c.out.Bulk(std::to_string(cursor));
  ReplyStrings(c, found, /*as_set=*/false);
}

}  // namespace

void RegisterSetCommands(CommandTable& t) {
  const uint32_t kW = kWrite | kDenyOom;
  const uint32_t kR = kReadOnly;
  static const CommandRow kRows[] = {
      {"sadd", -3, kW | kFast, 1, 1, 1, SAdd, "Add one or more members to a set", "1.0.0"},
      {"srem", -3, kWrite | kFast, 1, 1, 1, SRem, "Remove one or more members from a set", "1.0.0"},
      {"sismember", 3, kR | kFast, 1, 1, 1, SIsMember,
       "Determine if a given value is a member of a set", "1.0.0"},
      {"smismember", -3, kR | kFast, 1, 1, 1, SMIsMember,
       "Returns the membership associated with the given elements for a set", "6.2.0"},
      {"smembers", 2, kR, 1, 1, 1, SInter, "Get all the members in a set", "1.0.0"},
      {"scard", 2, kR | kFast, 1, 1, 1, SCard, "Get the number of members in a set", "1.0.0"},
      {"spop", -2, kWrite | kFast, 1, 1, 1, SPop,
       "Remove and return one or multiple random members from a set", "1.0.0"},
      {"srandmember", -2, kR, 1, 1, 1, SRandMember, "Get one or multiple random members from a set",
       "1.0.0"},
      {"smove", 4, kWrite | kFast, 1, 2, 1, SMove, "Move a member from one set to another",
       "1.0.0"},
      {"sinter", -2, kR, 1, -1, 1, SInter, "Intersect multiple sets", "1.0.0"},
      {"sintercard", -3, kR, 0, 0, 0, SInterCard,
       "Intersect multiple sets and return the cardinality of the result", "7.0.0",
       NumkeysAt1Keys},
      {"sunion", -2, kR, 1, -1, 1, SUnion, "Add multiple sets", "1.0.0"},
      {"sdiff", -2, kR, 1, -1, 1, SDiff, "Subtract multiple sets", "1.0.0"},
      {"sinterstore", -3, kW, 1, -1, 1, SInterStore,
       "Intersect multiple sets and store the resulting set in a key", "1.0.0"},
      {"sunionstore", -3, kW, 1, -1, 1, SUnionStore,
       "Add multiple sets and store the resulting set in a key", "1.0.0"},
      {"sdiffstore", -3, kW, 1, -1, 1, SDiffStore,
       "Subtract multiple sets and store the resulting set in a key", "1.0.0"},
      {"sscan", -3, kR, 1, 1, 1, SScan, "Incrementally iterate Set elements", "2.8.0"},
  };
  AddRows(t, kRows, "set");
}

}  // namespace kv::cmd
