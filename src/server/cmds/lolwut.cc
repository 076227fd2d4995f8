// LOLWUT [VERSION version] [version arguments...]: Redis 7.0's computer art command.
//
// As in Redis 7.0 (lolwut.c): VERSION 5 (or 4.9) draws Georg Nees' "Schotter" with braille
// characters, VERSION 6 (or 5.9) a city skyline in terminal colours, and any other version,
// the default included (7.0.15 has no art of its own), only the version line. The art is random
// on every call, as Redis' is (it uses rand()). The argument parsing, limits, canvas sizes and
// line layout follow Redis exactly; the closing line names kvstore instead of Redis, for
// example "... Redis ver. 7.0.15" becomes "... kvstore ver. 0.1.0 (Redis ver. 7.0.15
// compatible)", so tools matching "Redis ver." still find it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cmd/context.h"
#include "common/strutil.h"
#include "common/version.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;

std::string VersionLine() {
  return std::string("kvstore ver. ") + kKvstoreVersion + " (Redis ver. " + kRedisCompatVersion +
         " compatible)\n";
}

// A per-thread generator standing in for rand(): Next() in [0, 2^31 - 1).
int Rand() {
  thread_local std::minstd_rand gen{std::random_device{}()};
  return static_cast<int>(gen() - gen.min());
}
float RandUnit() {
  return static_cast<float>(Rand()) / static_cast<float>(std::minstd_rand::max());
}

// A grid of small colour values; drawing outside it is ignored, reading outside it gives 0.
class Canvas {
 public:
  Canvas(int width, int height, uint8_t bg)
      : width_(width), height_(height), pixels_(static_cast<size_t>(width) * height, bg) {}
  int width() const { return width_; }
  int height() const { return height_; }
  void Set(int x, int y, int color) {
    if (x < 0 || x >= width_ || y < 0 || y >= height_) return;
    pixels_[static_cast<size_t>(y) * width_ + x] = static_cast<uint8_t>(color);
  }
  int Get(int x, int y) const {
    if (x < 0 || x >= width_ || y < 0 || y >= height_) return 0;
    return pixels_[static_cast<size_t>(y) * width_ + x];
  }
  // Bresenham's line from (x1, y1) to (x2, y2), both ends included.
  void Line(int x1, int y1, int x2, int y2, int color) {
    int dx = std::abs(x2 - x1), dy = std::abs(y2 - y1);
    int sx = x1 < x2 ? 1 : -1, sy = y1 < y2 ? 1 : -1;
    int err = dx - dy;
    for (;;) {
      Set(x1, y1, color);
      if (x1 == x2 && y1 == y2) break;
      int e2 = err * 2;
      if (e2 > -dy) err -= dy, x1 += sx;
      if (e2 < dx) err += dx, y1 += sy;
    }
  }
  // A square of side `size` centred on (x, y), rotated by `angle` radians: its corners lie on a
  // circle, starting at 45 degrees.
  void Square(int x, int y, float size, float angle, int color) {
    size = std::round(size / 1.4142135623f);
    int px[4], py[4];
    float k = static_cast<float>(M_PI / 4) + angle;
    for (int j = 0; j < 4; j++) {
      px[j] = static_cast<int>(std::round(std::sin(k) * size + x));
      py[j] = static_cast<int>(std::round(std::cos(k) * size + y));
      k += static_cast<float>(M_PI / 2);
    }
    for (int j = 0; j < 4; j++) Line(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
  }

 private:
  int width_, height_;
  std::vector<uint8_t> pixels_;
};

// Parses the optional integer arguments args[first..]; false once it has answered an error.
bool ParseLongs(Context& c, size_t first, std::initializer_list<int64_t*> out) {
  size_t i = first;
  for (int64_t* v : out) {
    if (i >= c.argc()) break;
    if (!c.ParseInt(c.arg(i++), v)) return false;
  }
  return true;
}

// ---- VERSION 5: Schotter ------------------------------------------------------------------

// Each character shows 2x4 pixels as a braille pattern (U+2800 plus the dot bits).
std::string RenderBraille(const Canvas& cv) {
  std::string text;
  for (int y = 0; y < cv.height(); y += 4) {
    for (int x = 0; x < cv.width(); x += 2) {
      static constexpr int kDots[8][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 0},
                                          {1, 1}, {1, 2}, {0, 3}, {1, 3}};
      int bits = 0;
      for (int b = 0; b < 8; b++) {
        if (cv.Get(x + kDots[b][0], y + kDots[b][1])) bits |= 1 << b;
      }
      int code = 0x2800 + bits;
      text += static_cast<char>(0xE0 | (code >> 12));
      text += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      text += static_cast<char>(0x80 | (code & 0x3F));
    }
    if (y != cv.height() - 1) text += '\n';  // Redis' test, so the last row ends in '\n' too
  }
  return text;
}

// Rows of squares, more disordered (rotated and shifted) the lower they are.
Canvas DrawSchotter(int cols, int per_row, int per_col) {
  int width = cols * 2;
  int padding = width > 4 ? 2 : 0;
  float side = static_cast<float>(width - padding * 2) / per_row;
  Canvas cv(width, static_cast<int>(side * per_col + padding * 2), 0);
  for (int y = 0; y < per_col; y++) {
    for (int x = 0; x < per_row; x++) {
      int sx = static_cast<int>(x * side + side / 2 + padding);
      int sy = static_cast<int>(y * side + side / 2 + padding);
      float angle = 0;
      if (y > 1) {
        float r[3];
        for (float& v : r) v = RandUnit() / per_col * y;
        for (float& v : r) {
          if (Rand() % 2) v = -v;
        }
        angle = r[0];
        sx += static_cast<int>(r[1] * side / 3);
        sy += static_cast<int>(r[2] * side / 3);
      }
      cv.Square(sx, sy, side, angle, 1);
    }
  }
  return cv;
}

// LOLWUT VERSION 5 [columns [squares-per-row [squares-per-col]]], args from `first`.
void Lolwut5(Context& c, size_t first) {
  int64_t cols = 66, per_row = 8, per_col = 12;
  if (!ParseLongs(c, first, {&cols, &per_row, &per_col})) return;
  cols = std::clamp<int64_t>(cols, 1, 1000);
  per_row = std::clamp<int64_t>(per_row, 1, 200);
  per_col = std::clamp<int64_t>(per_col, 1, 200);
  std::string out = RenderBraille(DrawSchotter(cols, per_row, per_col));
  out += "\nGeorg Nees - schotter, plotter on paper, 1968. " + VersionLine();
  c.out.Verbatim(out, "txt");
}

// ---- VERSION 6: skyline -------------------------------------------------------------------

// Four grays of the standard colour terminal, foreground and background, one space per pixel.
std::string RenderColors(const Canvas& cv) {
  static constexpr const char* kEscape[] = {"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"};
  std::string text;
  for (int y = 0; y < cv.height(); y++) {
    for (int x = 0; x < cv.width(); x++) {
      int color = cv.Get(x, y);
      text += "\033[";
      text += kEscape[color <= 3 ? color : 0];
      text += " \033[0m";
    }
    if (y != cv.height() - 1) text += '\n';
  }
  return text;
}

struct Skyscraper {
  int xoff, width, height;
  bool windows;
  int color;
};

// A building standing on the bottom row; its roof is two pixels narrower on each side. Windows
// (two pixels wide, one tall) take a random gray away from the walls.
void DrawSkyscraper(Canvas& cv, const Skyscraper& s) {
  int starty = cv.height() - 1, endy = starty - s.height + 1;
  for (int y = starty; y >= endy; y--) {
    for (int x = s.xoff; x < s.xoff + s.width; x++) {
      if (y == endy && (x <= s.xoff + 1 || x >= s.xoff + s.width - 2)) continue;
      int color = s.color;
      if (s.windows && x > s.xoff + 1 && x < s.xoff + s.width - 2 && y > endy + 1 &&
          y < starty - 1) {
        int relx = x - (s.xoff + 1), rely = y - (endy + 1);
        if ((relx / 2) % 2 && rely % 2) {
          do color = 1 + Rand() % 2;
          while (color == s.color);
          if (relx % 2) color = cv.Get(x - 1, y);  // both pixels of a window alike
        }
      }
      cv.Set(x, y, color);
    }
  }
}

// Two background layers of plain buildings (the lighter behind), then a foreground with windows.
void DrawSkyline(Canvas& cv) {
  int h = cv.height();
  for (int color = 2; color >= 1; color--) {
    for (int offset = -10; offset < cv.width();) {
      offset += Rand() % 8;
      Skyscraper s{offset, 10 + Rand() % 9, 0, false, color};
      s.height = h / 2 + (Rand() % h) / (color == 2 ? 2 : 3);
      DrawSkyscraper(cv, s);
      offset += color == 2 ? s.width / 2 : s.width + 1;
    }
  }
  for (int offset = -10; offset < cv.width();) {
    offset += Rand() % 8;
    Skyscraper s{offset, 5 + Rand() % 14, 0, true, 0};
    if (s.width % 4) s.width += s.width % 3;
    s.height = h / 3 + (Rand() % h) / 2;
    DrawSkyscraper(cv, s);
    offset += s.width + 5;
  }
}

// LOLWUT VERSION 6 [columns [rows]], args from `first`.
void Lolwut6(Context& c, size_t first) {
  int64_t cols = 80, rows = 20;
  if (!ParseLongs(c, first, {&cols, &rows})) return;
  cols = std::clamp<int64_t>(cols, 1, 1000);
  rows = std::clamp<int64_t>(rows, 1, 1000);
  Canvas cv(cols, rows, 3);
  DrawSkyline(cv);
  std::string out = RenderColors(cv);
  out +=
      "\nDedicated to the 8 bit game developers of past and present.\n"
      "Original 8 bit image from Plaguemon by hikikomori. " +
      VersionLine();
  c.out.Verbatim(out, "txt");
}

void Lolwut(Context& c) {
  std::string version = kRedisCompatVersion;
  size_t first = 1;  // the version's own arguments
  if (c.argc() >= 3 && EqualsIgnoreCase(c.arg(1), "version")) {
    int64_t v;
    if (!c.ParseInt(c.arg(2), &v)) return;
    version = std::to_string(static_cast<uint32_t>(v)) + ".0.0";  // Redis' "%u.0.0"
    first = 3;
  }
  // Redis compares the leading characters: 5.x but 5.9, and 4.9, are version 5.
  auto starts = [&](const char* p) { return version.compare(0, 2, p) == 0; };
  bool nine = version.size() > 2 && version[2] == '9';
  if ((starts("5.") && !nine) || (starts("4.") && nine)) {
    Lolwut5(c, first);
  } else if ((starts("6.") && !nine) || (starts("5.") && nine)) {
    Lolwut6(c, first);
  } else {
    c.out.Verbatim(VersionLine(), "txt");
  }
}

}  // namespace

void RegisterLolwutCommand(cmd::CommandTable& t) {
  t.Add({.name = "lolwut",
         .arity = -1,
         .flags = cmd::kReadOnly | cmd::kFast,
         .handler = Lolwut,
         .group = "server",
         .summary = "Display some computer art and the Redis version",
         .since = "5.0.0"});
}

}  // namespace kv::server
