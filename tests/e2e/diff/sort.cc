// Generators for SORT and SORT_RO, over whatever lists, sets and sorted sets the other families
// left in k0..k7, with BY and GET patterns reading those keys too.
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
  if (g.Chance(50)) a.push_back("ALPHA");
  if (!read_only && g.Chance(25)) {
    a.push_back("STORE");
    a.push_back(g.Key());
  }
  return a;
}

// "BY <pattern without *>" leaves a set in table order, which Redis does not fix.
std::string SortNormalizer(const Args& cmd, const Reply& r) {
  for (size_t i = 2; i + 1 < cmd.size(); i++) {
    if ((cmd[i] == "BY") && cmd[i + 1].find('*') == std::string::npos) {
      return SortedElements(cmd, r);
    }
  }
  return r.raw;
}

}  // namespace

void AddSortGens(GenTable* t) {
  t->gens.push_back({3, [](Gen& g) { return SortArgs(g, false); }});
  t->gens.push_back({1, [](Gen& g) { return SortArgs(g, true); }});
  t->gens.push_back({1, [](Gen& g) {
    return Args{"MSET", "w_" + g.Member(), g.Int(), "w_" + g.Member(), g.Value()};
  }});
  t->normalizers["SORT"] = SortNormalizer;
  t->normalizers["SORT_RO"] = SortNormalizer;
}

}  // namespace kv::test
