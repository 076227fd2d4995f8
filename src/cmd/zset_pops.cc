// The sorted-set pops (Redis 7.0 genericZpopCommand): ZPOPMIN, ZPOPMAX, ZMPOP, and ZsetPop,
// which the blocking BZPOPMIN/BZPOPMAX/BZMPOP (blocking.cc) share.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "cmd/zset_cmds.h"
#include "cmd/zset_ops.h"
#include "common/strutil.h"

namespace kv::cmd::zset {
namespace {

// ZPOPMIN/ZPOPMAX key [count]: RESP3 nests the pairs only when a count was given.
void ZpopMinMax(Context& c, bool min) {
  if (c.argc() > 3) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  int64_t count = -1;
  if (c.argc() == 3 &&
      !ParseRangeLong(c, c.arg(2), 0, INT64_MAX, &count, ErrorText(OpStatus::kPositive))) {
    return;
  }
  ZPopShape shape;
  shape.nested = c.out.proto() >= 3 && count != -1;
  ZsetPop(c, c.args.subspan(1, 1), min, count, shape);
}

}  // namespace

void Zpopmin(Context& c) { ZpopMinMax(c, true); }
void Zpopmax(Context& c) { ZpopMinMax(c, false); }

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]; propagated as ZPOPMIN/ZPOPMAX key count.
void Zmpop(Context& c) {
  int64_t numkeys;
  if (!ParseRangeLong(c, c.arg(1), 1, INT64_MAX, &numkeys, "numkeys should be greater than 0")) {
    return;
  }
  if (numkeys >= static_cast<int64_t>(c.argc()) - 2) {  // no room for MIN|MAX
    c.Error(OpStatus::kSyntax);
    return;
  }
  size_t where = 2 + static_cast<size_t>(numkeys);
  bool min = EqualsIgnoreCase(c.arg(where), "min");
  if (!min && !EqualsIgnoreCase(c.arg(where), "max")) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  int64_t count = -1;
  for (size_t j = where + 1; j < c.argc(); j++) {
    if (count == -1 && EqualsIgnoreCase(c.arg(j), "count") && j + 1 < c.argc()) {
      if (!ParseRangeLong(c, c.arg(++j), 1, INT64_MAX, &count, "count should be greater than 0")) {
        return;
      }
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }
  if (count == -1) count = 1;
  ZPopShape shape{.emit_key = true, .nested = true, .nil_when_empty = true};
  ZPopResult r = ZsetPop(c, c.args.subspan(2, static_cast<size_t>(numkeys)), min, count, shape);
  if (r.key_index >= 0) {
    c.rewrite = std::vector<std::string>{
        min ? "ZPOPMIN" : "ZPOPMAX", std::string(c.arg(2 + r.key_index)), Int64ToString(r.popped)};
  }
}

}  // namespace kv::cmd::zset

namespace kv::cmd {

using namespace zset;  // the family's shared helpers (zset_cmds.h)

namespace {

// The array headers before the popped (member, score) pairs.
void ReplyPopHeader(Context& c, std::string_view key, size_t n, const ZPopShape& shape) {
  if (shape.emit_key && shape.nested) {  // [key, [[m, s], ...]]
    c.out.Array(2);
    c.out.Bulk(key);
    c.out.Array(n);
  } else if (shape.emit_key) {  // [key, m, s]
    c.out.Array(n * 2 + 1);
    c.out.Bulk(key);
  } else {  // [m, s, ...] or [[m, s], ...]
    c.out.Array(shape.nested ? n : n * 2);
  }
}

}  // namespace

ZPopResult ZsetPop(Context& c, std::span<const std::string_view> keys, bool min, int64_t count,
                   const ZPopShape& shape) {
  ZPopResult r;
  Entry* e = nullptr;
  size_t idx = 0;
  for (; idx < keys.size(); idx++) {
    bool wrongtype;
    e = LookupWriteZset(c, keys[idx], &wrongtype);
    if (wrongtype) return r;
    if (e) break;
  }
  if (!e) {
    if (shape.nil_when_empty)
      c.out.NullArray();
    else
      c.out.EmptyArray();
    return r;
  }
  if (count == 0) {
    c.out.EmptyArray();
    return r;
  }
  std::string_view key = keys[idx];
  ZSetValue* z = Zset(e);
  size_t llen = z->Size();
  size_t n = count < 0 ? 1 : static_cast<size_t>(std::min<uint64_t>(count, llen));
  ReplyPopHeader(c, key, n, shape);
  // The popped members are copied out, then removed together.
  Scored popped;
  z->Visit(min ? 0 : llen - 1, !min, [&](std::string_view m, double s) {
    popped.emplace_back(m, s);
    return popped.size() < n;
  });
  z->RemoveRange(min ? 0 : llen - n, min ? n : llen);
  c.Changed(key, kNotifyZset, min ? "zpopmin" : "zpopmax");
  for (const auto& [m, s] : popped) {
    if (shape.nested) c.out.Array(2);
    c.out.Bulk(m);
    c.out.Double(s);
  }
  r.key_index = static_cast<int>(idx);
  r.popped = static_cast<int64_t>(n);
  r.deleted = DeleteIfEmpty(c, key, e);
  return r;
}

}  // namespace kv::cmd
