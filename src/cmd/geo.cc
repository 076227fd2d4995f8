// Geo (Redis 7.0 geo.c and geohash.c), first part: GEOADD GEOPOS GEODIST GEOHASH. Positions live
// in sorted sets, the score being the 52-bit interleaved geohash of the longitude and latitude
// (latitudes within +-85.05112878, Web Mercator's), so scores are the ones Redis computes;
// GEOADD runs as the ZADD it rewrites itself to, and is propagated as that ZADD.
#include <algorithm>
#include <cmath>
#include <optional>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cmd/command.h"
#include "cmd/context.h"
#include "cmd/registry.h"
#include "cmd/zset_cmds.h"
#include "common/strutil.h"

namespace kv::cmd {
namespace {

using store::Entry;
using store::ObjType;

constexpr double kLongMin = -180, kLongMax = 180;
constexpr double kLatMin = -85.05112878, kLatMax = 85.05112878;
constexpr int kStep = 26;
constexpr double kEarthRadius = 6372797.560856;  // meters, as Redis

struct Range {
  double min, max;
};

uint64_t Interleave64(uint32_t xlo, uint32_t ylo) {
  static const uint64_t B[] = {0x5555555555555555ULL, 0x3333333333333333ULL, 0x0F0F0F0F0F0F0F0FULL,
                               0x00FF00FF00FF00FFULL, 0x0000FFFF0000FFFFULL};
  static const unsigned S[] = {1, 2, 4, 8, 16};
  uint64_t x = xlo, y = ylo;
  for (int i = 4; i >= 0; i--) {
    x = (x | (x << S[i])) & B[i];
    y = (y | (y << S[i])) & B[i];
  }
  return x | (y << 1);
}

uint64_t Deinterleave64(uint64_t interleaved) {
  static const uint64_t B[] = {0x5555555555555555ULL, 0x3333333333333333ULL, 0x0F0F0F0F0F0F0F0FULL,
                               0x00FF00FF00FF00FFULL, 0x0000FFFF0000FFFFULL, 0x00000000FFFFFFFFULL};
  static const unsigned S[] = {0, 1, 2, 4, 8, 16};
  uint64_t x = interleaved, y = interleaved >> 1;
  for (int i = 0; i < 6; i++) {
    x = (x | (x >> S[i])) & B[i];
    y = (y | (y >> S[i])) & B[i];
  }
  return x | (y << 32);
}

// Redis' geohashEncode with the given ranges; false outside them.
bool Encode(Range lon_r, Range lat_r, double lon, double lat, uint64_t* bits) {
  if (lon > kLongMax || lon < kLongMin || lat > kLatMax || lat < kLatMin) return false;
  if (lat < lat_r.min || lat > lat_r.max || lon < lon_r.min || lon > lon_r.max) return false;
  double lat_offset = (lat - lat_r.min) / (lat_r.max - lat_r.min);
  double lon_offset = (lon - lon_r.min) / (lon_r.max - lon_r.min);
  lat_offset *= static_cast<double>(1ULL << kStep);
  lon_offset *= static_cast<double>(1ULL << kStep);
  *bits = Interleave64(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(lon_offset));
  return true;
}

// A score back to the centre of its cell (Redis' decodeGeohash), clamped to the limits.
void Decode(double score, double* lon, double* lat) {
  uint64_t sep = Deinterleave64(static_cast<uint64_t>(score));
  auto ilat = static_cast<uint32_t>(sep);
  auto ilon = static_cast<uint32_t>(sep >> 32);
  double cells = static_cast<double>(1ULL << kStep);
  double lat_scale = kLatMax - kLatMin, lon_scale = kLongMax - kLongMin;
  double lat_min = kLatMin + (ilat * 1.0 / cells) * lat_scale;
  double lat_max = kLatMin + ((ilat + 1) * 1.0 / cells) * lat_scale;
  double lon_min = kLongMin + (ilon * 1.0 / cells) * lon_scale;
  double lon_max = kLongMin + ((ilon + 1) * 1.0 / cells) * lon_scale;
  *lon = std::clamp((lon_min + lon_max) / 2, kLongMin, kLongMax);
  *lat = std::clamp((lat_min + lat_max) / 2, kLatMin, kLatMax);
}

double DegRad(double ang) { return ang * (M_PI / 180.0); }

// Haversine distance in meters (Redis' geohashGetDistance).
double Distance(double lon1, double lat1, double lon2, double lat2) {
  double lon1r = DegRad(lon1), lon2r = DegRad(lon2);
  double v = std::sin((lon2r - lon1r) / 2);
  if (v == 0.0) return kEarthRadius * std::fabs(DegRad(lat2) - DegRad(lat1));
  double lat1r = DegRad(lat1), lat2r = DegRad(lat2);
  double u = std::sin((lat2r - lat1r) / 2);
  double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadius * std::asin(std::sqrt(a));
}

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
    for (int k = 0; k < 2; k++) {
      auto v = ParseDouble(c.arg(i + k));
      if (!v) {
        c.Error("value is not a valid float");
        return;
      }
      xy[k] = *v;
    }
    if (xy[0] < kLongMin || xy[0] > kLongMax || xy[1] < kLatMin || xy[1] > kLatMax) {
      char msg[160];
      snprintf(msg, sizeof(msg), "-ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
      c.Error(msg);
      return;
    }
    uint64_t bits = 0;
    Encode({kLongMin, kLongMax}, {kLatMin, kLatMax}, xy[0], xy[1], &bits);
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

// The zset at key for reading: null when missing (nothing answered), WRONGTYPE answered when
// another type (*wrongtype set).
const store::ZSetValue* ReadZset(Context& c, std::string_view key, bool* wrongtype) {
  Entry* e = c.LookupReadOfType(key, ObjType::kZSet, wrongtype);
  return e ? e->value.As<store::ZSetValue>() : nullptr;
}

// A member's position, decoded from its score; nullopt when the zset or the member is missing.
std::optional<std::pair<double, double>> Position(const store::ZSetValue* z,
                                                  std::string_view member) {
  std::optional<double> score = z ? z->Score(member) : std::nullopt;
  if (!score) return std::nullopt;
  std::pair<double, double> lonlat;
  Decode(*score, &lonlat.first, &lonlat.second);
  return lonlat;
}

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
    auto [lon, lat] = *pos;
    // Redis' addReplyHumanLongDouble: a bulk string in RESP2, a double in RESP3.
    c.out.Array(2);
    for (double v : {lon, lat}) {
      std::string text = HumanDouble(v);
      if (c.out.proto() == 2) {
        c.out.Bulk(text);
      } else {
        c.out.Raw("," + text + "\r\n");
      }
    }
  }
}

void GeoDist(Context& c) {
  double to_meter = 1;
  if (c.argc() == 5) {
    std::string_view u = c.arg(4);
    if (EqualsIgnoreCase(u, "m")) {
      to_meter = 1;
    } else if (EqualsIgnoreCase(u, "km")) {
      to_meter = 1000;
    } else if (EqualsIgnoreCase(u, "ft")) {
      to_meter = 0.3048;
    } else if (EqualsIgnoreCase(u, "mi")) {
      to_meter = 1609.34;
    } else {
      c.Error("unsupported unit provided. please use M, KM, FT, MI");
      return;
    }
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
  char buf[128];
  int n = snprintf(buf, sizeof(buf), "%.4f",
                   Distance(p1->first, p1->second, p2->first, p2->second) / to_meter);
  c.out.Bulk(std::string_view(buf, static_cast<size_t>(n)));
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
    uint64_t bits = 0;
    Encode({-180, 180}, {-90, 90}, pos->first, pos->second, &bits);
    char buf[11];
    for (int i = 0; i < 11; i++) {
      int idx = i == 10 ? 0 : static_cast<int>((bits >> (52 - (i + 1) * 5)) & 0x1f);
      buf[i] = kAlphabet[idx];
    }
    c.out.Bulk(std::string_view(buf, 11));
  }
}

}  // namespace

void RegisterGeoCommands(CommandTable& t) {
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
  };
  AddRows(t, kRows, "geo");
}

}  // namespace kv::cmd
