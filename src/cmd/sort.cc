// SORT and SORT_RO (Redis 7.0 sort.c): sort the elements of a list, set or sorted set
// numerically or lexicographically, optionally by external keys (BY pattern, "key->field" for
// hash fields), fetch external values (GET), page the result (LIMIT) and store it as a list
// (STORE, SORT only).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cmd/context.h"
#include "cmd/key_finders.h"
#include "cmd/registry.h"
#include "common/strutil.h"
#include "store/hash_type.h"
#include "store/list_type.h"
#include "store/zset_type.h"

namespace kv::cmd {
namespace {

struct SortOptions {
  std::optional<std::string> by;  // BY pattern; a pattern without '*' means "do not sort"
  std::vector<std::string> gets;
  int64_t offset = 0, count = -1;
  bool desc = false, alpha = false;
  std::optional<std::string> store;
};

bool ParseSortOptions(Context& c, bool read_only, SortOptions* o) {
  for (size_t j = 2; j < c.argc(); j++) {
    std::string_view a = c.arg(j);
    size_t left = c.argc() - j - 1;
    if (EqualsIgnoreCase(a, "asc")) {
      o->desc = false;
    } else if (EqualsIgnoreCase(a, "desc")) {
      o->desc = true;
    } else if (EqualsIgnoreCase(a, "alpha")) {
      o->alpha = true;
    } else if (EqualsIgnoreCase(a, "limit") && left >= 2) {
      if (!c.ParseInt(c.arg(j + 1), &o->offset) || !c.ParseInt(c.arg(j + 2), &o->count)) {
        return false;
      }
      j += 2;
    } else if (EqualsIgnoreCase(a, "store") && left >= 1 && !read_only) {
      o->store = std::string(c.arg(++j));
    } else if (EqualsIgnoreCase(a, "by") && left >= 1) {
      o->by = std::string(c.arg(++j));
      // A pattern reaches keys the arguments do not name: only a user who may read any key
      // may give one (Redis' fix of CVE-2023-41053).
      if (o->by->find('*') != std::string::npos && !c.hooks.ReadsAnyKey(c)) {
        c.Error("BY option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
    } else if (EqualsIgnoreCase(a, "get") && left >= 1) {
      if (!c.hooks.ReadsAnyKey(c)) {
        c.Error("GET option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
      o->gets.emplace_back(c.arg(++j));
    } else {
      c.Error(OpStatus::kSyntax);
      return false;
    }
  }
  return true;
}

// Redis' lookupKeyByPattern: the first '*' of `pattern` becomes `elem`; "key->field" reads a
// hash field, otherwise the key's string value; "#" is the element itself.
std::optional<std::string> LookupByPattern(Context& c, std::string_view pattern,
                                           std::string_view elem) {
  if (pattern == "#") return std::string(elem);
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  size_t arrow = pattern.find("->", star + 1);
  bool field_form = arrow != std::string_view::npos && arrow + 2 < pattern.size();
  std::string_view key_pat = field_form ? pattern.substr(0, arrow) : pattern;
  std::string key = std::string(key_pat.substr(0, star)) + std::string(elem) +
                    std::string(key_pat.substr(star + 1));
  store::Entry* e = c.ks.Lookup(c.session.db, key, c.now_ms);
  if (!e) return std::nullopt;
  if (field_form) {
    if (e->value.type() != store::ObjType::kHash) return std::nullopt;
    auto v = e->value.As<store::HashValue>()->Get(pattern.substr(arrow + 2));
    if (!v) return std::nullopt;
    return std::string(*v);
  }
  if (!e->value.is_string()) return std::nullopt;
  return e->value.ToString();
}

struct SortItem {
  std::string elem;
  double score = 0;
  std::optional<std::string> cmp;  // ALPHA BY value
};

// compareStringObjects: bytes, shorter first on a common prefix.
int CompareBytes(std::string_view a, std::string_view b) {
  int r = a.compare(b);
  return r < 0 ? -1 : r > 0 ? 1 : 0;
}

// Fills scores or compare values; false (error answered) when a score is not a number.
bool PrepareItems(Context& c, const SortOptions& o, std::vector<SortItem>* items) {
  for (SortItem& it : *items) {
    std::optional<std::string> by;
    if (o.by) by = LookupByPattern(c, *o.by, it.elem);
    const std::string* src = o.by ? (by ? &*by : nullptr) : &it.elem;
    if (o.alpha) {
      if (o.by && by) it.cmp = std::move(by);
      continue;
    }
    if (!src) continue;  // missing BY value: score 0
    errno = 0;
    char* end = nullptr;
    it.score = strtod(src->c_str(), &end);
    if (*end != '\0' || errno == ERANGE || std::isnan(it.score)) {
      c.Error("One or more scores can't be converted into double");
      return false;
    }
  }
  return true;
}

void SortItems(const SortOptions& o, std::vector<SortItem>* items) {
  auto cmp = [&](const SortItem& a, const SortItem& b) {
    int r;
    if (!o.alpha) {
      r = a.score > b.score ? 1 : a.score < b.score ? -1 : CompareBytes(a.elem, b.elem);
    } else if (o.by) {
      if (!a.cmp || !b.cmp) r = a.cmp == b.cmp ? 0 : (!a.cmp ? -1 : 1);
      else r = CompareBytes(*a.cmp, *b.cmp);
    } else {
      r = CompareBytes(a.elem, b.elem);
    }
    return (o.desc ? -r : r) < 0;
  };
  std::stable_sort(items->begin(), items->end(), cmp);
}

// The half-open range of `n` sorted elements that LIMIT selects, clamped as Redis does (an
// offset past the end selects nothing; a negative count runs to the end; no overflow).
struct Range {
  size_t start, end;
};

Range LimitRange(const SortOptions& o, size_t n) {
  size_t start = o.offset <= 0 ? 0 : std::min<uint64_t>(static_cast<uint64_t>(o.offset), n);
  size_t end =
      o.count < 0 ? n : start + std::min<uint64_t>(static_cast<uint64_t>(o.count), n - start);
  return {start, end};
}

// With nothing to sort, a list or sorted set is read over the LIMIT range only, in its own order
// (from the tail for DESC), as Redis' sortCommand does: SORT BY nokey LIMIT 0 5 on a long list
// reads five elements, not the whole list.
void LoadUnsortedRange(const store::Value& v, const SortOptions& o, std::vector<SortItem>* items) {
  size_t n = v.object()->Size();
  Range r = LimitRange(o, n);
  size_t k = r.end - r.start;
  if (k == 0) return;
  items->reserve(k);
  if (v.type() == store::ObjType::kList) {
    v.As<store::ListValue>()->VisitRange(
        o.desc ? n - r.end : r.start, k, o.desc,
        [&](std::string_view e) { items->push_back({std::string(e)}); });
    return;
  }
  v.As<store::ZSetValue>()->Visit(o.desc ? n - 1 - r.start : r.start, o.desc,
                                  [&](std::string_view m, double) {
                                    items->push_back({std::string(m)});
                                    return items->size() < k;
                                  });
}

void Sort(Context& c, bool read_only) {
  SortOptions o;
  if (!ParseSortOptions(c, read_only, &o)) return;
  store::Entry* e = c.LookupRead(c.arg(1));
  store::ObjType type = e ? e->value.type() : store::ObjType::kList;  // missing: an empty list
  if (type != store::ObjType::kList && type != store::ObjType::kSet &&
      type != store::ObjType::kZSet) {
    c.Error(OpStatus::kWrongType);
    return;
  }
  // Redis converts a sorted set to its skiplist encoding before sorting it (visible through
  // OBJECT ENCODING), so kvstore does too.
  if (type == store::ObjType::kZSet) e->value.As<store::ZSetValue>()->ConvertToSkiplist();
  bool dontsort = o.by && o.by->find('*') == std::string::npos;
  // An unsorted set would come out in table order; when the result is stored, or read by a
  // script, Redis sorts it so that replicas (and the script's effects) get the same list.
  if (dontsort && type == store::ObjType::kSet && (o.store || c.session.script)) {
    dontsort = false;
    o.alpha = true;
    o.by.reset();
  }
  std::vector<SortItem> items;
  Range range;
  if (dontsort && type != store::ObjType::kSet) {
    if (e) LoadUnsortedRange(e->value, o, &items);
    range = {0, items.size()};  // LIMIT is applied already
  } else {
    if (e) {
      e->value.object()->ForEach(
          [&](std::string_view v, std::string_view) { items.push_back({std::string(v)}); });
    }
    if (!dontsort) {
      if (!PrepareItems(c, o, &items)) return;
      SortItems(o, &items);
    }
    range = LimitRange(o, items.size());
  }
  std::vector<std::optional<std::string>> gets;
  for (size_t i = range.start; i < range.end; i++) {
    if (o.gets.empty()) {
      gets.emplace_back(items[i].elem);
    } else {
      for (const auto& g : o.gets) gets.push_back(LookupByPattern(c, g, items[i].elem));
    }
  }
  if (!o.store) {
    c.out.Array(gets.size());
    for (const auto& g : gets) {
      if (g) c.out.Bulk(*g);
      else c.out.Null();
    }
    return;
  }
  std::string_view dst = *o.store;
  if (gets.empty()) {
    if (c.ks.ServerDelete(c.session.db, dst)) c.Changed(dst, kNotifyGeneric, "del");
  } else {
    // Redis' SORT STORE makes its list with the quicklist defaults (fill -2, no compression),
    // whatever list-max-listpack-size and list-compress-depth say.
    auto list = std::make_unique<store::ListValue>();
    for (const auto& g : gets) list->PushBack(g ? *g : "");
    c.ks.Set(c.session.db, dst, store::Value::Object(store::ObjType::kList, std::move(list)));
    c.Changed(dst, kNotifyList, "sortstore");
  }
  c.out.Int(static_cast<int64_t>(gets.size()));
}

void SortCmd(Context& c) { Sort(c, false); }
void SortRo(Context& c) { Sort(c, true); }

}  // namespace

void RegisterSortCommands(CommandTable& t) {
  t.Add({.name = "sort", .arity = -2, .flags = kWrite | kDenyOom, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = SortCmd, .getkeys = SortKeys, .group = "generic",
         .acl_categories = "set sortedset list dangerous",
         .summary = "Sort the elements in a list, set or sorted set", .since = "1.0.0"});
  t.Add({.name = "sort_ro", .arity = -2, .flags = kReadOnly, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = SortRo, .getkeys = SortRoKeys, .group = "generic",
         .acl_categories = "set sortedset list dangerous",
         .summary = "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
         .since = "7.0.0"});
}

}  // namespace kv::cmd
