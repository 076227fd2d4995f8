// Generators for the geo commands: positions anywhere on the map, at its limits and in clusters
// (around Sicily, the antimeridian, the far north and the south) so that searches find things,
// invalid positions, every unit, absent members, and the searches with every option in any
// order: radius and box shapes from zero to half the planet, sorting, COUNT [ANY], and STORE /
// STOREDIST whose destinations the generators then read back.
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

void RandomGeoPosition(Gen& g, Args* a, bool valid) {
  static const double kCentres[][2] = {{13.36, 38.11}, {179.5, 0.5}, {10, 80}, {-70, -60}};
  if (g.Chance(30) && !valid) {
    a->push_back(Lon(g));
    a->push_back(Lat(g));
    return;
  }
  const double* c = kCentres[g.Pick(std::size(kCentres))];
  double lon = c[0] + static_cast<double>(g.Pick(40000)) / 10000.0 - 2;
  double lat = c[1] + static_cast<double>(g.Pick(40000)) / 10000.0 - 2;
  if (lon > 180) lon -= 360;
  a->push_back(std::to_string(lon));
  a->push_back(std::to_string(lat));
}

namespace {

std::string Unit(Gen& g) {
  static const char* kUnits[] = {"m", "km", "ft", "mi", "KM", "km", "km", "yd"};
  return kUnits[g.Pick(std::size(kUnits))];
}

// A distance in kilometres: mostly tens to hundreds, sometimes zero, huge or invalid.
std::string Distance(Gen& g) {
  static const char* kOdd[] = {"0", "-1", "abc", "5000", "12000", "20000", "1e-3", "inf"};
  if (g.Chance(10)) return kOdd[g.Pick(std::size(kOdd))];
  return std::to_string(1 + g.Pick(400));
}

// Distances are in kilometres; other units scale them so shapes stay comparable.
void Radius(Gen& g, Args* a) {
  std::string unit = Unit(g);
  std::string d = Distance(g);
  if ((unit == "m" || unit == "ft") && !d.empty() && isdigit(d[0])) d += "000";
  a->push_back(d);
  a->push_back(unit);
}

void Box(Gen& g, Args* a) {
  std::string unit = Unit(g);
  for (int i = 0; i < 2; i++) {
    std::string d = Distance(g);
    if ((unit == "m" || unit == "ft") && !d.empty() && isdigit(d[0])) d += "000";
    a->push_back(d);
  }
  a->push_back(unit);
}

std::string Dest(Gen& g) { return "gdst" + std::to_string(g.Pick(2)); }

// The options every search takes, in a random order; `store` adds STORE/STOREDIST with a key.
void SearchOptions(Gen& g, bool with_opts, bool store, Args* a) {
  for (size_t i = g.Pick(5); i > 0; i--) {
    switch (g.Pick(store ? 8 : 7)) {
      case 0:
        if (with_opts) a->push_back("WITHDIST");
        break;
      case 1:
        if (with_opts) a->push_back("WITHHASH");
        break;
      case 2:
        if (with_opts) a->push_back("WITHCOORD");
        break;
      case 3:
        a->push_back(g.Chance(50) ? "ASC" : "DESC");
        break;
      case 4:
      case 5:
        a->push_back("COUNT");
        a->push_back(g.Chance(90) ? std::to_string(1 + g.Pick(6)) : g.Int());
        if (g.Chance(30)) a->push_back("ANY");
        break;
      case 6:
        if (g.Chance(10)) a->push_back(g.Chance(50) ? "ANY" : "BOGUS");
        break;
      case 7:
        a->push_back(g.Chance(50) ? "STORE" : "STOREDIST");
        a->push_back(Dest(g));
        break;
    }
  }
}

Args GeoRadius(Gen& g) {
  bool ro = g.Chance(25);
  Args a{ro ? "GEORADIUS_RO" : "GEORADIUS", GeoKey(g)};
  RandomGeoPosition(g, &a);
  Radius(g, &a);
  SearchOptions(g, !g.Chance(30), !ro || g.Chance(10), &a);
  return a;
}

Args GeoRadiusByMember(Gen& g) {
  bool ro = g.Chance(25);
  Args a{ro ? "GEORADIUSBYMEMBER_RO" : "GEORADIUSBYMEMBER", GeoKey(g), g.Member()};
  Radius(g, &a);
  SearchOptions(g, !g.Chance(30), !ro || g.Chance(10), &a);
  return a;
}

Args GeoSearch(Gen& g) {
  bool store = g.Chance(30);
  Args a{store ? "GEOSEARCHSTORE" : "GEOSEARCH"};
  if (store) a.push_back(Dest(g));
  a.push_back(GeoKey(g));
  Args from, by;
  if (g.Chance(40)) {
    from = {"FROMMEMBER", g.Member()};
  } else {
    from = {"FROMLONLAT"};
    RandomGeoPosition(g, &from);
  }
  if (g.Chance(50)) {
    by = {"BYRADIUS"};
    Radius(g, &by);
  } else {
    by = {"BYBOX"};
    Box(g, &by);
  }
  if (g.Chance(5)) from.clear();  // one of them missing
  if (g.Chance(5)) by.clear();
  if (g.Chance(50)) std::swap(from, by);
  a.insert(a.end(), from.begin(), from.end());
  a.insert(a.end(), by.begin(), by.end());
  SearchOptions(g, !store || g.Chance(10), false, &a);
  if (store && g.Chance(40)) a.push_back("STOREDIST");
  return a;
}

}  // namespace

Args RandomGeoSearch(Gen& g) {
  switch (g.Pick(3)) {
    case 0:
      return GeoRadius(g);
    case 1:
      return GeoRadiusByMember(g);
    default:
      return GeoSearch(g);
  }
}

void AddGeoGens(GenTable* t) {
  t->gens.insert(t->gens.end(), {
                                    {6,
                                     [](Gen& g) {
                                       Args a{"GEOADD", GeoKey(g)};
                                       static const char* kOpts[] = {"NX", "XX", "CH"};
                                       for (size_t i = g.Pick(3); i > 0; i--)
                                         a.push_back(kOpts[g.Pick(3)]);
                                       for (size_t i = 1 + g.Pick(3); i > 0; i--) {
                                         RandomGeoPosition(g, &a);
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
                                       Args a{"GEODIST", GeoKey(g), g.Member(), g.Member()};
                                       if (g.Chance(60)) a.push_back(Unit(g));
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
                                    {4, GeoRadius},
                                    {3, GeoRadiusByMember},
                                    {5, GeoSearch},
                                    {2,
                                     [](Gen& g) {
                                       return Args{"ZRANGE", Dest(g), "0", "-1", "WITHSCORES"};
                                     }},
                                });
}

}  // namespace kv::test
