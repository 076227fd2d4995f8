// Generators for the stream commands so far (XADD XLEN XRANGE XREVRANGE XDEL XTRIM XSETID and
// XREAD without BLOCK): explicit IDs (auto IDs would differ between the servers) growing mostly
// forward, "<ms>-*", odd and invalid IDs, MAXLEN/MINID with = ~ LIMIT, NOMKSTREAM, ranges with
// exclusive bounds, node limits changed on the fly (so nodes split at Redis' points), and DUMP
// of the streams, whose bytes must be Redis' exactly.
#include <string>

#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

std::string StreamKey(Gen& g) { return g.Chance(85) ? "st" + std::to_string(g.Pick(3)) : g.Key(); }

// IDs near a moving front, so most XADDs succeed and ranges hit entries.
std::string Id(Gen& g) {
  static const char* kOdd[] = {"0-0",
                               "0-1",
                               "-",
                               "+",
                               "abc",
                               "1-x",
                               "18446744073709551615-18446744073709551615",
                               "5",
                               " 7",
                               "+9",
                               "3-",
                               "-1",
                               "99999999999999999999"};
  if (g.Chance(8)) return kOdd[g.Pick(std::size(kOdd))];
  std::string ms = std::to_string(g.Pick(200));
  if (g.Chance(25)) return ms;
  return ms + "-" + std::to_string(g.Pick(4));
}

std::string AddId(Gen& g) {
  static int front = 0;  // both servers see the same sequence; only the values matter
  if (g.Chance(10)) return Id(g);
  front += 1 + static_cast<int>(g.Pick(3));
  if (g.Chance(20)) return std::to_string(front) + "-*";
  return std::to_string(front) + "-" + std::to_string(g.Pick(3));
}

std::string RangeBound(Gen& g) {
  std::string id = Id(g);
  if (g.Chance(20)) return "(" + id;
  return g.Chance(20) ? (g.Chance(50) ? "-" : "+") : id;
}

void Fields(Gen& g, Args* a) {
  static const char* kFields[] = {"f", "g", "name", "1", "-5", "temp"};
  size_t n = 1 + g.Pick(3);
  bool same = g.Chance(60);  // the master entry's fields, so SAMEFIELDS entries appear
  for (size_t i = 0; i < n; i++) {
    a->push_back(same ? std::string(kFields[i]) : kFields[g.Pick(std::size(kFields))]);
    a->push_back(g.Chance(70) ? std::to_string(g.Pick(100000)) : g.Value());
  }
}

void Trim(Gen& g, Args* a) {
  bool maxlen = g.Chance(60);
  a->push_back(maxlen ? "MAXLEN" : "MINID");
  if (g.Chance(60)) a->push_back(g.Chance(50) ? "~" : "=");
  a->push_back(maxlen ? (g.Chance(90) ? std::to_string(g.Pick(30)) : g.Int()) : Id(g));
  if (g.Chance(15)) {
    a->push_back("LIMIT");
    a->push_back(g.Chance(80) ? std::to_string(g.Pick(20)) : g.Int());
  }
}

Args XAdd(Gen& g) {
  Args a{"XADD", StreamKey(g)};
  if (g.Chance(5)) a.push_back("NOMKSTREAM");
  if (g.Chance(15)) Trim(g, &a);
  a.push_back(AddId(g));
  Fields(g, &a);
  if (g.Chance(3)) a.pop_back();  // a field without its value
  return a;
}

Args XRange(Gen& g) {
  bool rev = g.Chance(40);
  Args a{rev ? "XREVRANGE" : "XRANGE", StreamKey(g), RangeBound(g), RangeBound(g)};
  if (!rev && g.Chance(60)) a = {"XRANGE", a[1], g.Chance(50) ? "-" : a[2], "+"};
  if (rev && g.Chance(60)) a = {"XREVRANGE", a[1], "+", g.Chance(50) ? "-" : a[3]};
  if (g.Chance(40)) {
    a.push_back("COUNT");
    a.push_back(g.Chance(85) ? std::to_string(g.Pick(8)) : g.Int());
  }
  return a;
}

Args XRead(Gen& g) {
  Args a{"XREAD"};
  if (g.Chance(40)) {
    a.push_back("COUNT");
    a.push_back(g.Chance(85) ? std::to_string(g.Pick(5)) : g.Int());
  }
  if (g.Chance(3)) a.push_back(g.Chance(50) ? "NOACK" : "GROUP");
  a.push_back("STREAMS");
  size_t n = 1 + g.Pick(3);
  for (size_t i = 0; i < n; i++) a.push_back(StreamKey(g));
  for (size_t i = 0; i < n; i++) a.push_back(g.Chance(15) ? "$" : (g.Chance(3) ? ">" : Id(g)));
  if (g.Chance(4)) a.pop_back();  // unbalanced
  return a;
}

}  // namespace

void AddStreamGens(GenTable* t) {
  t->gens.insert(t->gens.end(),
                 {
                     {14, XAdd},
                     {6, XRange},
                     {2,
                      [](Gen& g) {
                        return Args{"XLEN", StreamKey(g)};
                      }},
                     {3,
                      [](Gen& g) {
                        Args a{"XDEL", StreamKey(g)};
                        for (size_t i = 1 + g.Pick(3); i > 0; i--) a.push_back(Id(g));
                        return a;
                      }},
                     {3,
                      [](Gen& g) {
                        Args a{"XTRIM", StreamKey(g)};
                        if (g.Chance(90)) Trim(g, &a);
                        return a;
                      }},
                     {2,
                      [](Gen& g) {
                        Args a{"XSETID", StreamKey(g),
                               g.Chance(70) ? std::to_string(300 + g.Pick(100)) : Id(g)};
                        if (g.Chance(40)) {
                          a.push_back("ENTRIESADDED");
                          a.push_back(g.Chance(80) ? std::to_string(g.Pick(500)) : g.Int());
                        }
                        if (g.Chance(30)) {
                          a.push_back("MAXDELETEDID");
                          a.push_back(Id(g));
                        }
                        return a;
                      }},
                     {3, XRead},
                     // Only streams: other types' payloads differ in encodings (not in content).
                     {2,
                      [](Gen& g) {
                        return Args{"DUMP", "st" + std::to_string(g.Pick(3))};
                      }},
                     {1,
                      [](Gen& g) {
                        static const char* kEntries[] = {"2", "3", "5", "100", "0"};
                        static const char* kBytes[] = {"0", "60", "200", "4096"};
                        return g.Chance(50) ? Args{"CONFIG", "SET", "stream-node-max-entries",
                                                   kEntries[g.Pick(std::size(kEntries))]}
                                            : Args{"CONFIG", "SET", "stream-node-max-bytes",
                                                   kBytes[g.Pick(std::size(kBytes))]};
                      }},
                 });
}

}  // namespace kv::test
