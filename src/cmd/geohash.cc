// Redis 7.0's geohash arithmetic (geohash.c, geohash_helper.c); see geohash.h.
#include "cmd/geohash.h"

#include <algorithm>
#include <cmath>

namespace kv::cmd::geo {
namespace {

constexpr double kEarthRadius = 6372797.560856;  // meters, as Redis
constexpr double kMercatorMax = 20037726.37;

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

double DegRad(double ang) { return ang * (M_PI / 180.0); }
double RadDeg(double ang) { return ang / (M_PI / 180.0); }

// One cell east (d > 0) or west (geohash_move_x): longitude is in the odd bits.
void MoveX(Cell* c, int d) {
  if (d == 0) return;
  uint64_t x = c->bits & 0xaaaaaaaaaaaaaaaaULL;
  uint64_t y = c->bits & 0x5555555555555555ULL;
  uint64_t zz = 0x5555555555555555ULL >> (64 - c->step * 2);
  if (d > 0) {
    x = x + (zz + 1);
  } else {
    x = x | zz;
    x = x - (zz + 1);
  }
  x &= (0xaaaaaaaaaaaaaaaaULL >> (64 - c->step * 2));
  c->bits = x | y;
}

// One cell north (d > 0) or south (geohash_move_y).
void MoveY(Cell* c, int d) {
  if (d == 0) return;
  uint64_t x = c->bits & 0xaaaaaaaaaaaaaaaaULL;
  uint64_t y = c->bits & 0x5555555555555555ULL;
  uint64_t zz = 0xaaaaaaaaaaaaaaaaULL >> (64 - c->step * 2);
  if (d > 0) {
    y = y + (zz + 1);
  } else {
    y = y | zz;
    y = y - (zz + 1);
  }
  y &= (0x5555555555555555ULL >> (64 - c->step * 2));
  c->bits = x | y;
}

// The centre and its neighbours in the order SearchCells returns them.
std::array<Cell, 9> Neighbours(Cell centre) {
  static const int kMoves[9][2] = {{0, 0}, {0, 1},  {0, -1}, {1, 0},  {-1, 0},
                                   {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
  std::array<Cell, 9> cells;
  for (int i = 0; i < 9; i++) {
    cells[i] = centre;
    MoveX(&cells[i], kMoves[i][0]);
    MoveY(&cells[i], kMoves[i][1]);
  }
  return cells;
}

enum { kCentre, kNorth, kSouth, kEast, kWest, kNorthEast, kNorthWest, kSouthEast, kSouthWest };

// geohashEstimateStepsByRadius: the step whose cells are about the radius' size.
int EstimateSteps(double range_meters, double lat) {
  if (range_meters == 0) return 26;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    step++;
  }
  step -= 2;  // so that the range fits in most cases
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  return std::clamp(step, 1, 26);
}

}  // namespace

bool Encode(Range lon_r, Range lat_r, double lon, double lat, int step, Cell* cell) {
  if (lon > kLongMax || lon < kLongMin || lat > kLatMax || lat < kLatMin) return false;
  cell->bits = 0;
  cell->step = static_cast<uint8_t>(step);
  if (lat < lat_r.min || lat > lat_r.max || lon < lon_r.min || lon > lon_r.max) return false;
  double lat_offset = (lat - lat_r.min) / (lat_r.max - lat_r.min);
  double lon_offset = (lon - lon_r.min) / (lon_r.max - lon_r.min);
  lat_offset *= static_cast<double>(1ULL << step);
  lon_offset *= static_cast<double>(1ULL << step);
  cell->bits = Interleave64(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(lon_offset));
  return true;
}

Area DecodeCell(Cell cell) {
  uint64_t sep = Deinterleave64(cell.bits);
  auto ilat = static_cast<uint32_t>(sep);
  auto ilon = static_cast<uint32_t>(sep >> 32);
  double cells = static_cast<double>(1ULL << cell.step);
  double lat_scale = kLatMax - kLatMin, lon_scale = kLongMax - kLongMin;
  Area a;
  a.lat.min = kLatMin + (ilat * 1.0 / cells) * lat_scale;
  a.lat.max = kLatMin + ((ilat + 1) * 1.0 / cells) * lat_scale;
  a.lon.min = kLongMin + (ilon * 1.0 / cells) * lon_scale;
  a.lon.max = kLongMin + ((ilon + 1) * 1.0 / cells) * lon_scale;
  return a;
}

void DecodeScore(double score, double* lon, double* lat) {
  Area a = DecodeCell({static_cast<uint64_t>(score), kStepMax});
  *lon = std::clamp((a.lon.min + a.lon.max) / 2, kLongMin, kLongMax);
  *lat = std::clamp((a.lat.min + a.lat.max) / 2, kLatMin, kLatMax);
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadius * std::fabs(DegRad(lat2) - DegRad(lat1));
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  double lon1r = DegRad(lon1), lon2r = DegRad(lon2);
  double v = std::sin((lon2r - lon1r) / 2);
  if (v == 0.0) return LatDistance(lat1, lat2);
  double lat1r = DegRad(lat1), lat2r = DegRad(lat2);
  double u = std::sin((lat2r - lat1r) / 2);
  double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadius * std::asin(std::sqrt(a));
}

std::array<Cell, 9> SearchCells(const Shape& s) {
  // geohashBoundingBox: half the height and width in meters, the longitude span taken at the
  // edge nearer the pole.
  double height = s.conversion * (s.box ? s.height / 2 : s.radius);
  double width = s.conversion * (s.box ? s.width / 2 : s.radius);
  const double lat_delta = RadDeg(height / kEarthRadius);
  const double long_delta_top = RadDeg(width / kEarthRadius / std::cos(DegRad(s.lat + lat_delta)));
  const double long_delta_bottom =
      RadDeg(width / kEarthRadius / std::cos(DegRad(s.lat - lat_delta)));
  bool southern = s.lat < 0;
  double min_lon = southern ? s.lon - long_delta_bottom : s.lon - long_delta_top;
  double max_lon = southern ? s.lon + long_delta_bottom : s.lon + long_delta_top;
  double min_lat = s.lat - lat_delta, max_lat = s.lat + lat_delta;

  double radius_meters =
      s.box ? std::sqrt((s.width / 2) * (s.width / 2) + (s.height / 2) * (s.height / 2)) : s.radius;
  radius_meters *= s.conversion;
  int steps = EstimateSteps(radius_meters, s.lat);

  Cell centre;
  Encode(kLongRange, kLatRange, s.lon, s.lat, steps, &centre);
  std::array<Cell, 9> cells = Neighbours(centre);
  Area area = DecodeCell(centre);

  // A step too fine near the edge of the area would leave part of the shape outside the nine
  // cells: one step coarser then.
  bool decrease =
      DecodeCell(cells[kNorth]).lat.max < max_lat || DecodeCell(cells[kSouth]).lat.min > min_lat ||
      DecodeCell(cells[kEast]).lon.max < max_lon || DecodeCell(cells[kWest]).lon.min > min_lon;
  if (steps > 1 && decrease) {
    steps--;
    Encode(kLongRange, kLatRange, s.lon, s.lat, steps, &centre);
    cells = Neighbours(centre);
    area = DecodeCell(centre);
  }

  // Neighbours on a side the shape does not reach are not scanned.
  if (steps >= 2) {
    auto zero = [&](std::initializer_list<int> which) {
      for (int i : which) cells[i] = Cell{};
    };
    if (area.lat.min < min_lat) zero({kSouth, kSouthWest, kSouthEast});
    if (area.lat.max > max_lat) zero({kNorth, kNorthEast, kNorthWest});
    if (area.lon.min < min_lon) zero({kWest, kSouthWest, kNorthWest});
    if (area.lon.max > max_lon) zero({kEast, kSouthEast, kNorthEast});
  }
  return cells;
}

bool WithinShape(const Shape& s, double lon, double lat, double* dist) {
  if (!s.box) {
    *dist = Distance(s.lon, s.lat, lon, lat);
    return *dist <= s.radius * s.conversion;
  }
  // The latitude leg first: it is the cheaper one.
  if (LatDistance(lat, s.lat) > s.height * s.conversion / 2) return false;
  if (Distance(lon, lat, s.lon, lat) > s.width * s.conversion / 2) return false;
  *dist = Distance(s.lon, s.lat, lon, lat);
  return true;
}

}  // namespace kv::cmd::geo
