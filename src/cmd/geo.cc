// Geo (Redis 7.0 geo.c): GEOADD GEOPOS GEODIST GEOHASH here, the searches in geo_search.cc, the
// geohash arithmetic in geohash.cc. Positions live in sorted sets, the score being the 52-bit
// interleaved geohash of the longitude and latitude (latitudes within +-85.05112878, Web
// Mercator's), so scores are the ones Redis computes; GEOADD runs as the ZADD it rewrites itself
// to, and is propagated as that ZADD.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cmd/command.h"
#include "cmd/geo_cmds.h"
#include "cmd/key_finders.h"
#include "cmd/context.h"
#include "cmd/registry.h"
#include "cmd/zset_cmds.h"
#include "common/strutil.h"

namespace kv::cmd {
namespace geo {

using store::Entry;
using store::ObjType;

namespace {

// Redis' ld2string(LD_STR_HUMAN): "%.17Lf" without trailing zeros.
std::string HumanDouble(double d) {
  char buf[128];
  int n = snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(d));
  std::string s(buf, static_cast<size_t>(n));
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace

bool ParseLonLat(Context& c, std::string_view lon, std::string_view lat, double* xy) {
  std::string_view args[2] = {lon, lat};
  for (int k = 0; k < 2; k++) {
    auto v = ParseDouble(args[k]);
    if (!v) {
      c.Error("value is not a valid float");
      return false;
    }
    xy[k] = *v;
  }
  if (xy[0] < kLongMin || xy[0] > kLongMax || xy[1] < kLatMin || xy[1] > kLatMax) {
    // Room for two doubles in full (%f of 1e308 is 316 characters): Redis formats the message
    // without a limit.
    char msg[768];
    snprintf(msg, sizeof(msg), "-ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
    c.Error(msg);
    return false;
  }
  return true;
}

double ParseUnit(Context& c, std::string_view u) {
  if (EqualsIgnoreCase(u, "m")) return 1;
  if (EqualsIgnoreCase(u, "km")) return 1000;
  if (EqualsIgnoreCase(u, "ft")) return 0.3048;
  if (EqualsIgnoreCase(u, "mi")) return 1609.34;
  c.Error("unsupported unit provided. please use M, KM, FT, MI");
  return -1;
}

void ReplyCoordinate(Context& c, double v) {
  std::string text = HumanDouble(v);
  if (c.out.proto() == 2) {
    c.out.Bulk(text);
  } else {
    c.out.Raw("," + text + "\r\n");
  }
}

void ReplyDistance(Context& c, double d) {
  // to_chars with a precision prints what printf's "%.4f" prints, several times faster.
  char buf[400];
  auto r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::fixed, 4);
  c.out.Bulk(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
}

namespace {

void GeoAdd(Context& c) {
  size_t longidx = 2;
  bool nx = false, xx = false;
  for (; longidx < c.argc(); longidx++) {
    std::string_view opt = c.arg(longidx);
    if (EqualsIgnoreCase(opt, "nx")) {
      nx = true;
    } else if (EqualsIgnoreCase(opt, "xx")) {
      xx = true;
    } else if (!EqualsIgnoreCase(opt, "ch")) {
      break;
    }
  }
  if ((c.argc() - longidx) % 3 != 0 || (xx && nx)) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  // ZADD key [options] score member ..., the score the position's geohash.
  std::vector<std::string> argv = {"zadd"};
  for (size_t i = 1; i < longidx; i++) argv.emplace_back(c.arg(i));
  for (size_t i = longidx; i < c.argc(); i += 3) {
    double xy[2];
    if (!ParseLonLat(c, c.arg(i), c.arg(i + 1), xy)) return;
    Cell cell;
    Encode(kLongRange, kLatRange, xy[0], xy[1], kStepMax, &cell);
    uint64_t bits = Align52(cell);
    argv.push_back(std::to_string(bits));
    argv.emplace_back(c.arg(i + 2));
  }
  std::vector<std::string_view> views(argv.begin(), argv.end());
  Context z(views, c.out, c.ks, c.session, c.hooks, c.stats, c.now_ms);
  z.spec = c.spec;
  zset::ZaddCommand(z);
  c.dirty += z.dirty;
  c.rewrite = std::move(argv);  // replicas and the AOF get the ZADD, as from Redis
}

}  // namespace

const store::ZSetValue* ReadZset(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupReadOfType(key, ObjType::kZSet, wrongtype);
  return e ? e->value.As<store::ZSetValue>() : nullptr;
}

std::optional<std::pair<double, double>> Position(const store::ZSetValue* z,
                                                  std::string_view member) {
  std::optional<double> score = z ? z->Score(member) : std::nullopt;
  if (!score) return std::nullopt;
  std::pair<double, double> lonlat;
  DecodeScore(*score, &lonlat.first, &lonlat.second);
  return lonlat;
}

namespace {

void GeoPos(Context& c) {
  bool wrongtype;
  const store::ZSetValue* z = ReadZset(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  c.out.Array(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++) {
    auto pos = Position(z, c.arg(j));
    if (!pos) {
      c.out.NullArray();
      continue;
    }
    c.out.Array(2);
    ReplyCoordinate(c, pos->first);
    ReplyCoordinate(c, pos->second);
  }
}

void GeoDist(Context& c) {
  double to_meter = 1;
  if (c.argc() == 5) {
    to_meter = ParseUnit(c, c.arg(4));
    if (to_meter < 0) return;
  } else if (c.argc() > 5) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  bool wrongtype;
  const store::ZSetValue* z = ReadZset(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  auto p1 = Position(z, c.arg(2)), p2 = Position(z, c.arg(3));
  if (!p1 || !p2) {
    c.out.Null();
    return;
  }
  ReplyDistance(c, Distance(p1->first, p1->second, p2->first, p2->second) / to_meter);
}

void GeoHash(Context& c) {
  static const char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  bool wrongtype;
  const store::ZSetValue* z = ReadZset(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  c.out.Array(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++) {
    auto pos = Position(z, c.arg(j));
    if (!pos) {
      c.out.Null();
      continue;
    }
    // Our latitudes span +-85.05; a standard geohash spans +-90: decode, then encode again.
    Cell cell;
    Encode({-180, 180}, {-90, 90}, pos->first, pos->second, kStepMax, &cell);
    uint64_t bits = cell.bits;
    char buf[11];
    for (int i = 0; i < 11; i++) {
      int idx = i == 10 ? 0 : static_cast<int>((bits >> (52 - (i + 1) * 5)) & 0x1f);
      buf[i] = kAlphabet[idx];
    }
    c.out.Bulk(std::string_view(buf, 11));
  }
}

}  // namespace
}  // namespace geo

void RegisterGeoCommands(CommandTable& t) {
  using namespace geo;  // NOLINT(build/namespaces): the handlers
  static const CommandRow kRows[] = {
      {"geoadd", -5, kWrite | kDenyOom, 1, 1, 1, GeoAdd,
       "Add one or more geospatial items in the geospatial index represented using a sorted set",
       "3.2.0"},
      {"geopos", -2, kReadOnly, 1, 1, 1, GeoPos,
       "Returns longitude and latitude of members of a geospatial index", "3.2.0"},
      {"geodist", -4, kReadOnly, 1, 1, 1, GeoDist,
       "Returns the distance between two members of a geospatial index", "3.2.0"},
      {"geohash", -2, kReadOnly, 1, 1, 1, GeoHash,
       "Returns members of a geospatial index as standard geohash strings", "3.2.0"},
      {"georadius", -6, kWrite | kDenyOom, 1, 1, 1, GeoRadius,
       "Query a sorted set representing a geospatial index to fetch members matching a given "
       "maximum distance from a point",
       "3.2.0", GeoradiusKeys},
      {"georadius_ro", -6, kReadOnly, 1, 1, 1, GeoRadiusRo, "A read-only variant for GEORADIUS",
       "3.2.10"},
      {"georadiusbymember", -5, kWrite | kDenyOom, 1, 1, 1, GeoRadiusByMember,
       "Query a sorted set representing a geospatial index to fetch members matching a given "
       "maximum distance from a member",
       "3.2.0", GeoradiusKeys},
      {"georadiusbymember_ro", -5, kReadOnly, 1, 1, 1, GeoRadiusByMemberRo,
       "A read-only variant for GEORADIUSBYMEMBER", "3.2.10"},
      {"geosearch", -7, kReadOnly, 1, 1, 1, GeoSearch,
       "Query a sorted set representing a geospatial index to fetch members inside an area of a "
       "box or a circle.",
       "6.2.0"},
      {"geosearchstore", -8, kWrite | kDenyOom, 1, 2, 1, GeoSearchStore,
       "Query a sorted set representing a geospatial index to fetch members inside an area of a "
       "box or a circle, and store the result in another key.",
       "6.2.0"},
  };
  AddRows(t, kRows, "geo");
}

}  // namespace kv::cmd
