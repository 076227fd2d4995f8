// Generators for SORT and SORT_RO, over whatever lists, sets and sorted sets the other families
// left in k0..k7, with BY and GET patterns reading those keys too; and SORT BY nosort with LIMIT
// over a list and a sorted set of their own, whose order is known, so replies compare exactly.
#include <algorithm>

#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

Args SortArgs(Gen& g, bool read_only) {
  Args a{read_only ? "SORT_RO" : "SORT", g.Key()};
  static const char* kBy[] = {"k*", "nosort", "k*->m1", "w_*"};
  static const char* kGet[] = {"#", "k*", "k*->m2", "w_*"};
  if (g.Chance(30)) {
    a.push_back("BY");
    a.push_back(kBy[g.Pick(std::size(kBy))]);
  }
  if (g.Chance(30)) {
    a.push_back("LIMIT");
    a.push_back(g.Int());
    a.push_back(g.Int());
  }
  for (int i = static_cast<int>(g.Pick(3)); i > 0; i--) {
    a.push_back("GET");
    a.push_back(kGet[g.Pick(std::size(kGet))]);
  }
  if (g.Chance(30)) a.push_back(g.Chance(50) ? "ASC" : "DESC");
  bool alpha = g.Chance(50);
  if (alpha) a.push_back("ALPHA");
  if (!read_only && g.Chance(25)) {
    std::string dst = g.Key();
    // ALPHA by external values leaves ties in an order Redis does not define (see below), so
    // such a result is never stored: the two datasets would part.
    bool by_values = a.size() > 3 && a[2] == "BY" && a[3].find('*') != std::string::npos;
    if (!(alpha && by_values)) {
      a.push_back("STORE");
      a.push_back(dst);
    }
  }
  return a;
}

// The list and sorted set only the generators below touch (k0..k7 may hold a set).
constexpr const char* kNoSortList = "sort_l";
constexpr const char* kNoSortZset = "sort_z";

// LIMIT arguments around the collections' sizes: windows at both ends, past the end, negative.
std::string LimitArg(Gen& g) {
  static const char* kArgs[] = {"0", "1", "2", "3", "5", "10", "40", "-1", "-2"};
  return g.Chance(15) ? g.Int() : kArgs[g.Pick(std::size(kArgs))];
}

// SORT BY nosort: Redis reads a list's or sorted set's LIMIT range only, from the tail for DESC.
Args NoSortArgs(Gen& g) {
  bool read_only = g.Chance(25);
  Args a{read_only ? "SORT_RO" : "SORT", g.Chance(50) ? kNoSortList : kNoSortZset, "BY",
         g.Chance(50) ? "nosort" : "nokey"};
  if (g.Chance(85)) {
    a.push_back("LIMIT");
    a.push_back(LimitArg(g));
    a.push_back(LimitArg(g));
  }
  static const char* kGet[] = {"#", "w_*", "k*"};
  for (int i = static_cast<int>(g.Pick(3)); i > 0; i--) {
    a.push_back("GET");
    a.push_back(kGet[g.Pick(std::size(kGet))]);
  }
  if (g.Chance(40)) a.push_back("DESC");
  if (g.Chance(25)) a.push_back("ALPHA");
  if (!read_only && g.Chance(20)) {
    a.push_back("STORE");
    a.push_back(g.Key());
  }
  return a;
}

Args NoSortFeed(Gen& g) {
  if (g.Chance(50)) {
    Args a{g.Chance(50) ? "RPUSH" : "LPUSH", kNoSortList};
    for (int i = 1 + static_cast<int>(g.Pick(3)); i > 0; i--) {
      a.push_back(g.Chance(50) ? g.Member() : g.Value());
    }
    return a;
  }
  return {"ZADD", kNoSortZset, std::to_string(g.Pick(20)), g.Chance(50) ? g.Member() : g.Value()};
}

// Orders neither server defines, for k0..k7 (which may hold a set): "BY <pattern without *>"
// leaves a set in table order, and ALPHA by external values breaks no ties (Redis' sortCompare),
// leaving them in a set's table order or, with LIMIT, pqsort's. Such replies compare as a
// multiset, or with LIMIT (where even the subset depends on the order) by their size. Only the
// dedicated list and sorted set keep an order both servers share.
std::string SortNormalizer(const Args& cmd, const Reply& r) {
  if (cmd.size() > 1 && (cmd[1] == kNoSortList || cmd[1] == kNoSortZset)) return r.raw;
  bool unordered_by = false, alpha_by_values = false, alpha = false, limit = false;
  for (size_t i = 2; i < cmd.size(); i++) {
    if (cmd[i] == "BY" && i + 1 < cmd.size()) {
      unordered_by = cmd[i + 1].find('*') == std::string::npos;
      alpha_by_values = !unordered_by;
    }
    alpha = alpha || cmd[i] == "ALPHA";
    limit = limit || cmd[i] == "LIMIT";
  }
  if (!unordered_by && !(alpha && alpha_by_values)) return r.raw;
  return limit ? TypeOnly(cmd, r) : SortedElements(cmd, r);
}

}  // namespace

void AddSortGens(GenTable* t) {
  t->gens.push_back({3, [](Gen& g) { return SortArgs(g, false); }});
  t->gens.push_back({1, [](Gen& g) { return SortArgs(g, true); }});
  t->gens.push_back({1, [](Gen& g) {
    return Args{"MSET", "w_" + g.Member(), g.Int(), "w_" + g.Member(), g.Value()};
  }});
  t->gens.push_back({6, NoSortFeed});
  t->gens.push_back({5, NoSortArgs});
  t->normalizers["SORT"] = SortNormalizer;
  t->normalizers["SORT_RO"] = SortNormalizer;
}

}  // namespace kv::test
