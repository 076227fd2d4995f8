// The differential test's command generator: a seeded source of random commands drawn from
// weighted per-family generators, plus per-command normalisers for what Redis itself leaves
// nondeterministic. Each command family adds its generators in its own file (diff/*.cc).
#pragma once

#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/support/resp_client.h"

namespace kv::test {

using Args = std::vector<std::string>;

// Randomness and the shared vocabulary of keys and values. Keys are shared by every family
// ("k0".."k7"), so commands of one type meet keys of another and WRONGTYPE paths run too.
class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}

  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool Chance(int percent) { return Pick(100) < static_cast<size_t>(percent); }
  std::string Key() { return "k" + std::to_string(Pick(8)); }
  // Strings of many shapes: empty, integers, floats, binary, long.
  std::string Value();
  // Integer-ish arguments, valid and not (counts, indexes, offsets).
  std::string Int();
  std::string Float();
  // Relative TTLs are long (seconds, or the same in ms) so no key expires during a run.
  std::string Ttl() { return std::to_string(1000 + Pick(100000)); }
  // TTL arguments that are invalid or extreme (never a short, racy expiry).
  std::string BadTtl();
  // A far-future absolute time, so the result does not depend on when the test runs.
  std::string AbsTime(bool ms) { return ms ? "4102444800000" : "4102444800"; }
  // A small member/field vocabulary, so collections get repeated members.
  std::string Member() { return "m" + std::to_string(Pick(12)); }

 private:
  std::mt19937 rng_;
};

struct WeightedGen {
  int weight;
  std::function<Args(Gen&)> make;
};

// Turns a reply into the string compared between the servers.
using Normalizer = std::function<std::string(const Args& cmd, const Reply& reply)>;

struct GenTable {
  std::vector<WeightedGen> gens;
  std::map<std::string, Normalizer> normalizers;  // by upper-case command name
};

// Normalisers for common cases.
std::string SortedElements(const Args& cmd, const Reply& r);  // arrays/sets: order ignored
std::string SortedPairs(const Args& cmd, const Reply& r);     // flat pairs or maps: order ignored
std::string TypeOnly(const Args& cmd, const Reply& r);        // random results: shape only

// One per family, each in diff/<family>.cc.
void AddStringAndKeyGens(GenTable* t);
void AddBitmapGens(GenTable* t);
void AddHyperLogLogGens(GenTable* t);
void AddGeoGens(GenTable* t);
void AddStreamGens(GenTable* t);
void AddHashGens(GenTable* t);
void AddListGens(GenTable* t);
void AddSetGens(GenTable* t);
void AddZsetGens(GenTable* t);
void AddSortGens(GenTable* t);
void AddCommandKeysGens(GenTable* t);  // COMMAND GETKEYS of the movable-key commands

// diff/geo.cc, for the geo searches' own differential test: a position (longitude, latitude)
// near one of a few clusters or anywhere (sometimes invalid, unless `valid`), and one random search
// (GEORADIUS[BYMEMBER][_RO], GEOSEARCH[STORE]) over the keys geo0..geo2, FROMMEMBER and BYMEMBER
// naming Member()s.
void RandomGeoPosition(Gen& g, Args* a, bool valid = false);
Args RandomGeoSearch(Gen& g);

}  // namespace kv::test
