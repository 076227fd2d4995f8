// Generators for the bitmap commands (strings as bit arrays): offsets near byte edges and past
// the end, every BITFIELD type width and overflow mode, BIT and BYTE ranges, and bad
// arguments of each kind.
#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

// Keys of their own most of the time (the shared ones mostly hold collections by the time a
// bitmap command comes), so the bit logic runs on strings; the shared ones for WRONGTYPE.
std::string BitKey(Gen& g) { return g.Chance(80) ? "bm" + std::to_string(g.Pick(4)) : g.Key(); }

std::string BitOffset(Gen& g) {
  static const char* kOffsets[] = {"0",  "1",   "7",    "8",  "9",   "15",         "16",  "63",
                                   "64", "100", "1000", "-1", "abc", "4294967296", "1.5", ""};
  if (g.Chance(70)) return std::to_string(g.Pick(200));
  return kOffsets[g.Pick(std::size(kOffsets))];
}

std::string FieldType(Gen& g) {
  static const char* kBad[] = {"i0", "u0", "u64", "i65", "x8", "", "i", "u-1", "I8", "u8x"};
  if (g.Chance(8)) return kBad[g.Pick(std::size(kBad))];
  bool sign = g.Chance(50);
  size_t bits = 1 + g.Pick(sign ? 64 : 63);
  return (sign ? "i" : "u") + std::to_string(bits);
}

std::string FieldOffset(Gen& g) {
  if (g.Chance(30)) return "#" + std::to_string(g.Pick(10));
  if (g.Chance(5)) return g.Chance(50) ? "#-1" : "-3";
  return std::to_string(g.Pick(120));
}

std::string FieldValue(Gen& g) {
  static const char* kValues[] = {"0",
                                  "1",
                                  "-1",
                                  "127",
                                  "128",
                                  "-128",
                                  "255",
                                  "256",
                                  "100",
                                  "-100",
                                  "9223372036854775807",
                                  "-9223372036854775808",
                                  "abc",
                                  "1.5"};
  return kValues[g.Pick(std::size(kValues))];
}

std::string RangeArg(Gen& g) {
  static const char* kArgs[] = {"0",   "1",    "-1",  "2", "-2", "5",  "-5", "10",
                                "100", "-100", "abc", "7", "8",  "15", "16", "-9"};
  return kArgs[g.Pick(std::size(kArgs))];
}

std::string Unit(Gen& g) {
  static const char* kUnits[] = {"BIT", "BYTE", "bit", "byte", "bits"};
  return kUnits[g.Pick(std::size(kUnits))];
}

}  // namespace

void AddBitmapGens(GenTable* t) {
  t->gens.insert(
      t->gens.end(),
      {
          {3,
           [](Gen& g) {
             return Args{"SET", BitKey(g), g.Value()};
           }},
          {2,
           [](Gen& g) {
             return Args{"APPEND", BitKey(g), g.Value()};
           }},
          {8,
           [](Gen& g) {
             return Args{"SETBIT", BitKey(g), BitOffset(g),
                         g.Chance(90) ? std::to_string(g.Pick(2)) : g.Int()};
           }},
          {5,
           [](Gen& g) {
             return Args{"GETBIT", BitKey(g), BitOffset(g)};
           }},
          {5,
           [](Gen& g) {
             Args a{"BITCOUNT", BitKey(g)};
             size_t n = g.Pick(5);
             if (n >= 1) a.push_back(RangeArg(g));
             if (n >= 2) a.push_back(RangeArg(g));
             if (n >= 3) a.push_back(Unit(g));
             return a;
           }},
          {5,
           [](Gen& g) {
             Args a{"BITPOS", BitKey(g), g.Chance(90) ? std::to_string(g.Pick(2)) : g.Int()};
             size_t n = g.Pick(5);
             if (n >= 1) a.push_back(RangeArg(g));
             if (n >= 2) a.push_back(RangeArg(g));
             if (n >= 3) a.push_back(Unit(g));
             return a;
           }},
          {4,
           [](Gen& g) {
             static const char* kOps[] = {"AND", "OR", "XOR", "NOT", "and", "nand"};
             Args a{"BITOP", kOps[g.Pick(std::size(kOps))], BitKey(g), BitKey(g)};
             size_t more = g.Pick(3);
             for (size_t i = 0; i < more; i++) a.push_back(BitKey(g));
             return a;
           }},
          {6,
           [](Gen& g) {
             static const char* kOverflow[] = {"WRAP", "SAT", "FAIL", "sat", "bad"};
             Args a{g.Chance(85) ? "BITFIELD" : "BITFIELD_RO", BitKey(g)};
             size_t ops = g.Pick(4);
             for (size_t i = 0; i < ops; i++) {
               switch (g.Pick(g.Chance(3) ? 5 : 4)) {
                 case 0:
                   a.insert(a.end(), {"GET", FieldType(g), FieldOffset(g)});
                   break;
                 case 1:
                   a.insert(a.end(), {"SET", FieldType(g), FieldOffset(g), FieldValue(g)});
                   break;
                 case 2:
                   a.insert(a.end(), {"INCRBY", FieldType(g), FieldOffset(g), FieldValue(g)});
                   break;
                 case 3:
                   a.insert(a.end(), {"OVERFLOW", kOverflow[g.Pick(std::size(kOverflow))]});
                   break;
                 default:
                   a.push_back(g.Chance(50) ? "GET" : "NOPE");  // short or unknown
               }
             }
             return a;
           }},
      });
}

}  // namespace kv::test
