// The geo searches (Redis 7.0 geo.c's georadiusGeneric): GEORADIUS, GEORADIUSBYMEMBER, their _RO
// forms, GEOSEARCH and GEOSEARCHSTORE. A search scans the score ranges of the nine cells that
// cover its shape (geohash.h) in Redis' order, keeps the points inside the shape, then sorts,
// cuts and answers or stores them as Redis does, so unsorted replies come in Redis' order too.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cmd/geo_cmds.h"
#include "cmd/zset_cmds.h"
#include "common/strutil.h"

namespace kv::cmd::geo {
namespace {

enum SearchFlags : int {
  kFromCoords = 1 << 0,   // GEORADIUS: around coordinates
  kFromMember = 1 << 1,   // GEORADIUSBYMEMBER: around a member
  kNoStore = 1 << 2,      // the _RO forms: no STORE or STOREDIST
  kSearch = 1 << 3,       // GEOSEARCH's arguments
  kSearchStore = 1 << 4,  // GEOSEARCHSTORE: the destination first, STOREDIST without a key
};

enum class Sort { kNone, kAsc, kDesc };

struct Point {
  std::string member;
  double lon, lat, dist, score;
};

// Redis' extractDistanceOrReply: <radius> <unit>.
bool ParseRadius(Context& c, std::string_view radius, std::string_view unit, Shape* s) {
  auto v = ParseDouble(radius);
  if (!v) {
    c.Error("need numeric radius");
    return false;
  }
  if (*v < 0) {
    c.Error("radius cannot be negative");
    return false;
  }
  s->radius = *v;
  s->conversion = ParseUnit(c, unit);
  return s->conversion >= 0;
}

// Redis' extractBoxOrReply: <width> <height> <unit>.
bool ParseBox(Context& c, std::string_view width, std::string_view height, std::string_view unit,
              Shape* s) {
  auto w = ParseDouble(width);
  if (!w) {
    c.Error("need numeric width");
    return false;
  }
  auto h = ParseDouble(height);
  if (!h) {
    c.Error("need numeric height");
    return false;
  }
  if (*h < 0 || *w < 0) {
    c.Error("height or width cannot be negative");
    return false;
  }
  s->width = *w;
  s->height = *h;
  s->conversion = ParseUnit(c, unit);
  return s->conversion >= 0;
}

// membersOfAllNeighbors: the points of each cell's score range [min, max) that lie inside the
// shape, cell after cell; with `limit` (COUNT ... ANY) it stops once that many are found.
std::vector<Point> Collect(const store::ZSetValue& z, const Shape& shape, size_t limit) {
  std::array<Cell, 9> cells = SearchCells(shape);
  std::vector<Point> pts;
  size_t last = 0;
  for (size_t i = 0; i < cells.size(); i++) {
    if (cells[i].zero()) continue;
    // Huge radii make neighbours coincide; Redis skips one equal to the last scanned (never
    // comparing with the centre, as its last index starts at 0).
    if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step) continue;
    if (!pts.empty() && limit && pts.size() >= limit) break;
    Cell next = cells[i];
    next.bits++;
    auto min = static_cast<double>(Align52(cells[i]));
    auto max = static_cast<double>(Align52(next));
    z.VisitFrom([min](std::string_view, double s) { return s < min; },
                [&](std::string_view m, double score) {
                  if (!(score < max)) return false;
                  double lon, lat, dist = 0;
                  DecodeScore(score, &lon, &lat);
                  if (WithinShape(shape, lon, lat, &dist)) {
                    pts.push_back({std::string(m), lon, lat, dist, score});
                  }
                  return !(limit && pts.size() >= limit);
                });
    last = i;
  }
  return pts;
}

// Answers 0 after deleting `dst` (a search stored nothing), or an empty array.
void ReplyNothing(Context& c, std::string_view dst) {
  if (dst.data() == nullptr) {
    c.out.Array(0);
    return;
  }
  if (c.ks.ServerDelete(c.session.db, dst)) c.Changed(dst, kNotifyGeneric, "del");
  c.out.Int(0);
}

void Store(Context& c, std::string_view dst, const std::vector<Point>& pts, size_t n,
           bool storedist, bool geosearch) {
  if (n == 0) {
    ReplyNothing(c, dst);
    return;
  }
  std::vector<store::ZEntry> items;
  items.reserve(n);
  for (size_t i = 0; i < n; i++) {
    items.push_back({pts[i].member, storedist ? pts[i].dist : pts[i].score});
  }
  std::sort(items.begin(), items.end(), [](const store::ZEntry& a, const store::ZEntry& b) {
    return store::ZLess(a.score, a.member, b.score, b.member);
  });
  zset::StoreKey(c, dst, store::ZSetValue::FromSorted(items, c.ks.limits()));
  c.Changed(dst, kNotifyZset, geosearch ? "geosearchstore" : "georadiusstore");
  c.dirty += n - 1;  // Redis counts every stored member
  c.out.Int(static_cast<int64_t>(n));
}

void Generic(Context& c, size_t src, int flags) {
  bool wrongtype;
  const store::ZSetValue* z = ReadZset(c, c.arg(src), &wrongtype);
  if (wrongtype) return;

  Shape shape;
  std::string_view dst;  // the destination key, when storing
  bool storedist = false;
  size_t base;
  if (flags & kFromCoords) {
    base = 6;
    double xy[2];
    if (!ParseLonLat(c, c.arg(2), c.arg(3), xy)) return;
    shape.lon = xy[0];
    shape.lat = xy[1];
    if (!ParseRadius(c, c.arg(4), c.arg(5), &shape)) return;
  } else if (flags & kFromMember) {
    base = 5;
    // Without the key Redis parses only the options, to know which empty reply to give.
    if (z) {
      auto pos = Position(z, c.arg(2));
      if (!pos) {
        c.Error("could not decode requested zset member");
        return;
      }
      shape.lon = pos->first;
      shape.lat = pos->second;
      if (!ParseRadius(c, c.arg(3), c.arg(4), &shape)) return;
    }
  } else {
    base = 2;
    if (flags & kSearchStore) {
      base = 3;
      dst = c.arg(1);
    }
  }

  bool withdist = false, withhash = false, withcoord = false, any = false;
  bool frommember = false, fromloc = false, byradius = false, bybox = false;
  Sort sort = Sort::kNone;
  int64_t count = 0;  // 0: no limit
  const bool search = flags & kSearch;
  const bool store_opts = !(flags & kNoStore) && !search;
  for (size_t i = base; i < c.argc(); i++) {
    std::string_view a = c.arg(i);
    size_t left = c.argc() - i - 1;  // arguments after this one
    if (EqualsIgnoreCase(a, "withdist")) {
      withdist = true;
    } else if (EqualsIgnoreCase(a, "withhash")) {
      withhash = true;
    } else if (EqualsIgnoreCase(a, "withcoord")) {
      withcoord = true;
    } else if (EqualsIgnoreCase(a, "any")) {
      any = true;
    } else if (EqualsIgnoreCase(a, "asc")) {
      sort = Sort::kAsc;
    } else if (EqualsIgnoreCase(a, "desc")) {
      sort = Sort::kDesc;
    } else if (EqualsIgnoreCase(a, "count") && left >= 1) {
      auto v = ParseInt64(c.arg(++i));
      if (!v) {
        c.Error(OpStatus::kNotInteger);
        return;
      }
      if (*v <= 0) {
        c.Error("COUNT must be > 0");
        return;
      }
      count = *v;
    } else if (EqualsIgnoreCase(a, "store") && left >= 1 && store_opts) {
      dst = c.arg(++i);
      storedist = false;
    } else if (EqualsIgnoreCase(a, "storedist") && left >= 1 && store_opts) {
      dst = c.arg(++i);
      storedist = true;
    } else if (EqualsIgnoreCase(a, "storedist") && search && (flags & kSearchStore)) {
      storedist = true;
    } else if (EqualsIgnoreCase(a, "frommember") && left >= 1 && search && !fromloc) {
      frommember = true;
      if (!z) {  // no source key: parse on, answer when done
        i++;
        continue;
      }
      auto pos = Position(z, c.arg(++i));
      if (!pos) {
        c.Error("could not decode requested zset member");
        return;
      }
      shape.lon = pos->first;
      shape.lat = pos->second;
    } else if (EqualsIgnoreCase(a, "fromlonlat") && left >= 2 && search && !frommember) {
      double xy[2];
      if (!ParseLonLat(c, c.arg(i + 1), c.arg(i + 2), xy)) return;
      shape.lon = xy[0];
      shape.lat = xy[1];
      fromloc = true;
      i += 2;
    } else if (EqualsIgnoreCase(a, "byradius") && left >= 2 && search && !bybox) {
      if (!ParseRadius(c, c.arg(i + 1), c.arg(i + 2), &shape)) return;
      shape.box = false;
      byradius = true;
      i += 2;
    } else if (EqualsIgnoreCase(a, "bybox") && left >= 3 && search && !byradius) {
      if (!ParseBox(c, c.arg(i + 1), c.arg(i + 2), c.arg(i + 3), &shape)) return;
      shape.box = true;
      bybox = true;
      i += 3;
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
  }

  if (dst.data() != nullptr && (withdist || withhash || withcoord)) {
    c.Error(std::string((flags & kSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
            " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
    return;
  }
  if (search && !(frommember || fromloc)) {
    c.Error("exactly one of FROMMEMBER or FROMLONLAT can be specified for " +
            std::string(c.arg(0)));
    return;
  }
  if (search && !(byradius || bybox)) {
    c.Error("exactly one of BYRADIUS and BYBOX can be specified for " + std::string(c.arg(0)));
    return;
  }
  if (any && !count) {
    c.Error("the ANY argument requires COUNT argument");
    return;
  }
  if (!z) {
    ReplyNothing(c, dst);
    return;
  }
  // COUNT returns the nearest ones unless ANY asks for whichever come first.
  if (count != 0 && sort == Sort::kNone && !any) sort = Sort::kAsc;

  std::vector<Point> pts = Collect(*z, shape, any ? static_cast<size_t>(count) : 0);
  if (pts.empty() && dst.data() == nullptr) {
    c.out.Array(0);
    return;
  }
  size_t n = count == 0 || pts.size() < static_cast<uint64_t>(count) ? pts.size()
                                                                     : static_cast<size_t>(count);
  if (sort != Sort::kNone) {
    // glibc's qsort, which Redis calls, is a stable merge sort; for a cut (Redis' pqsort) only
    // ties could order differently.
    auto less = [sort](const Point& a, const Point& b) {
      return sort == Sort::kAsc ? a.dist < b.dist : a.dist > b.dist;
    };
    if (n == pts.size()) {
      std::stable_sort(pts.begin(), pts.end(), less);
    } else {
      std::partial_sort(pts.begin(), pts.begin() + static_cast<std::ptrdiff_t>(n), pts.end(), less);
    }
  }
  for (size_t i = 0; i < n; i++) pts[i].dist /= shape.conversion;

  if (dst.data() != nullptr) {
    Store(c, dst, pts, n, storedist, search);
    return;
  }
  size_t options = (withdist ? 1 : 0) + (withhash ? 1 : 0) + (withcoord ? 1 : 0);
  c.out.Array(n);
  for (size_t i = 0; i < n; i++) {
    const Point& p = pts[i];
    if (options) c.out.Array(options + 1);
    c.out.Bulk(p.member);
    if (withdist) ReplyDistance(c, p.dist);
    if (withhash) c.out.Int(static_cast<int64_t>(p.score));
    if (withcoord) {
      c.out.Array(2);
      ReplyCoordinate(c, p.lon);
      ReplyCoordinate(c, p.lat);
    }
  }
}

}  // namespace

void GeoRadius(Context& c) { Generic(c, 1, kFromCoords); }
void GeoRadiusRo(Context& c) { Generic(c, 1, kFromCoords | kNoStore); }
void GeoRadiusByMember(Context& c) { Generic(c, 1, kFromMember); }
void GeoRadiusByMemberRo(Context& c) { Generic(c, 1, kFromMember | kNoStore); }
void GeoSearch(Context& c) { Generic(c, 1, kSearch); }
void GeoSearchStore(Context& c) { Generic(c, 2, kSearch | kSearchStore); }

}  // namespace kv::cmd::geo
