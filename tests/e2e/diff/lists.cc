// Generators for the list commands. Lists are deterministic, so no normaliser is needed: every
// reply must match Redis byte for byte. Elements come mostly from the small member vocabulary,
// so LREM/LPOS/LINSERT find matches; indexes and counts mix small signed values with invalid
// and extreme ones.
#include <string>

#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

std::string Elem(Gen& g) { return g.Chance(65) ? g.Member() : g.Value(); }

// A small signed index most of the time, else anything from Gen::Int (huge, invalid...).
std::string Index(Gen& g) {
  return g.Chance(75) ? std::to_string(static_cast<int>(g.Pick(13)) - 6) : g.Int();
}

// Counts for pops: mostly 0..4, sometimes invalid or huge.
std::string Count(Gen& g) { return g.Chance(75) ? std::to_string(g.Pick(5)) : g.Int(); }

std::string Where(Gen& g) {
  if (g.Chance(3)) return "middle";
  static const char* kWhere[] = {"LEFT", "RIGHT", "left", "Right"};
  return kWhere[g.Pick(4)];
}

Args Push(Gen& g, const char* cmd) {
  Args a{cmd, g.Key()};
  size_t n = 1 + g.Pick(4);
  for (size_t i = 0; i < n; i++) a.push_back(Elem(g));
  return a;
}

Args Pop(Gen& g, const char* cmd) {
  Args a{cmd, g.Key()};
  if (g.Chance(50)) a.push_back(Count(g));
  return a;
}

Args Lpos(Gen& g) {
  Args a{"LPOS", g.Key(), Elem(g)};
  if (g.Chance(40)) {
    a.push_back("RANK");
    a.push_back(g.Chance(80) ? std::to_string(static_cast<int>(g.Pick(7)) - 3) : g.Int());
  }
  if (g.Chance(40)) {
    a.push_back("COUNT");
    a.push_back(g.Chance(85) ? std::to_string(g.Pick(4)) : g.Int());
  }
  if (g.Chance(25)) {
    a.push_back("MAXLEN");
    a.push_back(g.Chance(85) ? std::to_string(g.Pick(6)) : g.Int());
  }
  if (g.Chance(3)) a.push_back("RANK");  // an option without its value
  return a;
}

Args Lmpop(Gen& g) {
  size_t keys = 1 + g.Pick(3);
  Args a{"LMPOP", g.Chance(90) ? std::to_string(keys) : g.Int()};
  for (size_t i = 0; i < keys; i++) a.push_back(g.Key());
  a.push_back(Where(g));
  if (g.Chance(50)) {
    a.push_back("COUNT");
    a.push_back(g.Chance(80) ? std::to_string(1 + g.Pick(4)) : g.Int());
  }
  return a;
}

Args Linsert(Gen& g) {
  static const char* kWhere[] = {"BEFORE", "AFTER", "before", "after", "BETWEEN"};
  return Args{"LINSERT", g.Key(), kWhere[g.Pick(5)], Elem(g), Elem(g)};
}

Args Ltrim(Gen& g) {
  // Mostly gentle trims (drop a couple of elements at either end) so lists survive a while.
  if (g.Chance(70)) {
    return Args{"LTRIM", g.Key(), std::to_string(g.Pick(3)),
                std::to_string(-1 - static_cast<int>(g.Pick(3)))};
  }
  return Args{"LTRIM", g.Key(), Index(g), Index(g)};
}

}  // namespace

void AddListGens(GenTable* t) {
  t->gens.insert(t->gens.end(), {
      {8, [](Gen& g) { return Push(g, "LPUSH"); }},
      {8, [](Gen& g) { return Push(g, "RPUSH"); }},
      {2, [](Gen& g) { return Push(g, "LPUSHX"); }},
      {2, [](Gen& g) { return Push(g, "RPUSHX"); }},
      {4, [](Gen& g) { return Pop(g, "LPOP"); }},
      {4, [](Gen& g) { return Pop(g, "RPOP"); }},
      {3, [](Gen& g) { return Args{"LLEN", g.Key()}; }},
      {5, [](Gen& g) { return Args{"LRANGE", g.Key(), Index(g), Index(g)}; }},
      {3, [](Gen& g) { return Args{"LINDEX", g.Key(), Index(g)}; }},
      {3, [](Gen& g) { return Args{"LSET", g.Key(), Index(g), Elem(g)}; }},
      {3, [](Gen& g) { return Args{"LREM", g.Key(), Index(g), Elem(g)}; }},
      {2, [](Gen& g) { return Ltrim(g); }},
      {3, [](Gen& g) { return Linsert(g); }},
      {4, [](Gen& g) { return Lpos(g); }},
      {3, [](Gen& g) { return Args{"LMOVE", g.Key(), g.Key(), Where(g), Where(g)}; }},
      {2, [](Gen& g) { return Args{"RPOPLPUSH", g.Key(), g.Key()}; }},
      {3, [](Gen& g) { return Lmpop(g); }},
  });
}

}  // namespace kv::test
