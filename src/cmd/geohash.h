// The geohash arithmetic of Redis 7.0's geohash.c and geohash_helper.c, with no server types:
// positions are 52-bit interleaved hashes (26 steps of latitude and longitude, latitudes within
// Web Mercator's +-85.05112878), and a radius or box search covers its area with the cell of
// the centre and its eight neighbours at a step chosen from the radius. Everything here follows
// Redis' floating-point steps one for one, since a last-bit difference would move a point at a
// search's edge or a distance's fourth decimal.
#pragma once

#include <array>
#include <cstdint>

namespace kv::cmd::geo {

constexpr double kLongMin = -180, kLongMax = 180;
constexpr double kLatMin = -85.05112878, kLatMax = 85.05112878;
constexpr int kStepMax = 26;

struct Range {
  double min, max;
};
constexpr Range kLongRange{kLongMin, kLongMax}, kLatRange{kLatMin, kLatMax};

// A cell: `step` bits of each coordinate, interleaved (latitude in the even bits). Step 0 is
// "no cell" (Redis' GZERO), which a search skips.
struct Cell {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool zero() const { return bits == 0 && step == 0; }
};

struct Area {
  Range lon, lat;
};

// Redis' geohashEncode over the given ranges; false outside them or outside the Mercator limits.
bool Encode(Range lon_r, Range lat_r, double lon, double lat, int step, Cell* cell);
// The area a cell covers (geohashDecode with the Mercator ranges).
Area DecodeCell(Cell cell);
// A stored score to its position: the centre of its step-26 cell, clamped (decodeGeohash).
void DecodeScore(double score, double* lon, double* lat);
// The cell's bits moved to a 52-bit score's top (geohashAlign52Bits).
inline uint64_t Align52(Cell c) { return c.bits << (52 - c.step * 2); }

// Haversine distance in meters (geohashGetDistance, with its same-meridian shortcut).
double Distance(double lon1, double lat1, double lon2, double lat2);
// The distance between two latitudes on one meridian (geohashGetLatDistance).
double LatDistance(double lat1, double lat2);

// What a search covers: a circle of `radius` or a `width` x `height` box around (lon, lat), in
// units of `conversion` meters.
struct Shape {
  bool box = false;
  double lon = 0, lat = 0;
  double radius = 0, width = 0, height = 0;
  double conversion = 1;
};

// The cells to scan for a shape (geohashCalculateAreasByShapeWGS84): the centre's cell, then
// north, south, east, west, north-east, north-west, south-east, south-west, the ones that cannot
// hold a match zeroed.
std::array<Cell, 9> SearchCells(const Shape& shape);
// Whether the point at (lon, lat) is inside the shape; *dist gets its distance from the centre
// in meters (geohashGetDistanceIfInRadiusWGS84 / geohashGetDistanceIfInRectangle).
bool WithinShape(const Shape& shape, double lon, double lat, double* dist);

}  // namespace kv::cmd::geo
