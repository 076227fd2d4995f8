// Generators for COMMAND GETKEYS over the movable-key commands (numkeys, SORT ... STORE, GEORADIUS
// ... STORE), with numkeys values that Redis' two key-finding paths read differently: string2ll for
// the key specs, atoi for the legacy fallback ("02", "+1", " 1", "1x", overflowing values).
#include <string>

#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

std::string Numkeys(Gen& g, size_t keys) {
  static const char* kOdd[] = {"0",  "-1", "02", "+1", " 1", "1x", "abc", "", "9",
                               "4294967297", "99999999999999999999", "-4294967295", "2.0"};
  return g.Chance(50) ? std::to_string(keys) : kOdd[g.Pick(std::size(kOdd))];
}

void AddKeys(Gen& g, Args* a, size_t n) {
  for (size_t i = 0; i < n; i++) a->push_back(g.Key());
}

// COMMAND GETKEYS <cmd> [timeout] [dst] numkeys key... [tail options]
Args NumkeysGetKeys(Gen& g) {
  static const char* kCmds[] = {"ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD", "SINTERCARD", "LMPOP",
                                "ZMPOP", "BLMPOP", "BZMPOP", "ZUNIONSTORE", "ZINTERSTORE",
                                "ZDIFFSTORE"};
  std::string cmd = kCmds[g.Pick(std::size(kCmds))];
  Args a{"COMMAND", "GETKEYS", cmd};
  if (cmd[0] == 'B') a.push_back(g.Chance(80) ? "0" : "x");
  if (cmd.ends_with("STORE")) a.push_back("dst");
  size_t keys = g.Pick(4);
  a.push_back(Numkeys(g, keys + g.Pick(2)));
  AddKeys(g, &a, keys);
  static const char* kTail[] = {"LEFT", "MIN", "WEIGHTS", "LIMIT", "1", "COUNT"};
  for (size_t i = g.Pick(3); i > 0; i--) a.push_back(kTail[g.Pick(std::size(kTail))]);
  return a;
}

Args SortGetKeys(Gen& g) {
  Args a{"COMMAND", "GETKEYS", g.Chance(70) ? "SORT" : "SORT_RO", g.Key()};
  static const char* kWords[] = {"STORE", "store", "GET", "BY", "LIMIT", "ALPHA", "DESC", "#"};
  for (size_t i = g.Pick(6); i > 0; i--) {
    a.push_back(g.Chance(70) ? kWords[g.Pick(std::size(kWords))] : g.Key());
  }
  return a;
}

// GEORADIUS[BYMEMBER]'s key specs search STORE and STOREDIST as keywords from a fixed index.
Args GeoradiusGetKeys(Gen& g) {
  bool member = g.Chance(50);
  Args a{"COMMAND", "GETKEYS", member ? "GEORADIUSBYMEMBER" : "GEORADIUS", g.Key()};
  for (int i = member ? 3 : 4; i > 0; i--) a.push_back(g.Chance(80) ? "1" : "store");
  static const char* kWords[] = {"STORE", "storedist", "ASC", "COUNT", "WITHDIST"};
  for (size_t i = g.Pick(5); i > 0; i--) {
    a.push_back(g.Chance(60) ? kWords[g.Pick(std::size(kWords))] : g.Key());
  }
  return a;
}

}  // namespace

void AddCommandKeysGens(GenTable* t) {
  t->gens.push_back({2, NumkeysGetKeys});
  t->gens.push_back({1, SortGetKeys});
  t->gens.push_back({1, GeoradiusGetKeys});
}

}  // namespace kv::test
