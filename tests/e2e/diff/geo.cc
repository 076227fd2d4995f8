// Generators for the geo commands of kvstore so far (GEOADD GEOPOS GEODIST GEOHASH): positions
// anywhere on the map and at its limits, invalid ones, every unit, and members that are absent.
#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

std::string GeoKey(Gen& g) { return g.Chance(85) ? "geo" + std::to_string(g.Pick(3)) : g.Key(); }

std::string Lon(Gen& g) {
  static const char* kEdges[] = {"-180", "180", "0", "180.0001", "-200", "abc", "13.361389"};
  if (g.Chance(10)) return kEdges[g.Pick(std::size(kEdges))];
  return std::to_string(static_cast<double>(g.Pick(3600000)) / 10000.0 - 180.0);
}

std::string Lat(Gen& g) {
  static const char* kEdges[] = {"85.05112878", "-85.05112878", "0", "85.06", "-90", "x", "38.1"};
  if (g.Chance(10)) return kEdges[g.Pick(std::size(kEdges))];
  return std::to_string(static_cast<double>(g.Pick(1700000)) / 10000.0 - 85.0);
}

}  // namespace

void AddGeoGens(GenTable* t) {
  t->gens.insert(t->gens.end(), {
                                    {6,
                                     [](Gen& g) {
                                       Args a{"GEOADD", GeoKey(g)};
                                       static const char* kOpts[] = {"NX", "XX", "CH"};
                                       for (size_t i = g.Pick(3); i > 0; i--)
                                         a.push_back(kOpts[g.Pick(3)]);
                                       for (size_t i = 1 + g.Pick(3); i > 0; i--) {
                                         a.push_back(Lon(g));
                                         a.push_back(Lat(g));
                                         a.push_back(g.Member());
                                       }
                                       if (g.Chance(5))
                                         a.pop_back();  // a position without its member
                                       return a;
                                     }},
                                    {3,
                                     [](Gen& g) {
                                       return Args{"GEOPOS", GeoKey(g), g.Member(), g.Member()};
                                     }},
                                    {3,
                                     [](Gen& g) {
                                       static const char* kUnits[] = {"m",  "km", "ft",
                                                                      "mi", "KM", "yd"};
                                       Args a{"GEODIST", GeoKey(g), g.Member(), g.Member()};
                                       if (g.Chance(60))
                                         a.push_back(kUnits[g.Pick(std::size(kUnits))]);
                                       return a;
                                     }},
                                    {3,
                                     [](Gen& g) {
                                       return Args{"GEOHASH", GeoKey(g), g.Member(), g.Member()};
                                     }},
                                    {1,
                                     [](Gen& g) {
                                       return Args{"ZRANGE", GeoKey(g), "0", "-1", "WITHSCORES"};
                                     }},
                                });
}

}  // namespace kv::test
